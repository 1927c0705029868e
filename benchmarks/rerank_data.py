"""The Europe PMC search task of one part, built once and cached: the corpus and index of its articles
(query paragraphs deleted, caption stage applied as ingest does), its queries and their MiniLM vectors.

Used by train_rerank.py (tune part only) and bench_search.py --rerank (both parts). A cache folder holds
``corpus/`` (with ``index/``), ``queries.jsonl`` and ``qvec.npy``; it is rebuilt when absent.

    python benchmarks/rerank_data.py --part tune --every 1 --out /tmp/figlink-rerank/tune
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from common import QueryCache  # noqa: E402
from search_task import Query, load_split_task  # noqa: E402

from figlink.corpus import Corpus  # noqa: E402
from figlink.index import build_index  # noqa: E402
from figlink.index.embed import QUERY_PIECES, encode_queries  # noqa: E402
from figlink.model import Paper  # noqa: E402
from figlink.enrich import enrich  # noqa: E402


def part_files(part: str, every: int) -> list[Path]:
    from bench_inline_refs import europepmc_files
    from common import require_shared_data

    return europepmc_files(require_shared_data("the re-ranker task"), part, False)[::every]


class DiskCachedEmbedder(QueryCache):
    """An embedder with a text → vector cache kept in ``path`` (an .npz of texts and vectors), so that
    the articles shared by two builds (a part and its every-third subset) are embedded once; queries are
    embedded capped, as the searcher embeds them (not kept on disk)."""

    def __init__(self, inner, path: Path) -> None:
        self.inner, self.name, self.dim, self.path = inner, inner.name, inner.dim, path
        self.cache: dict[str, np.ndarray] = {}
        if path.exists():
            z = np.load(path, allow_pickle=False)
            self.cache = dict(zip(z["texts"].tolist(), z["vecs"]))

    def encode(self, texts):
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        for i in range(0, len(todo), 512):
            chunk = todo[i:i + 512]
            self.cache.update(zip(chunk, self.inner.encode(chunk)))
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def save(self) -> None:
        texts = list(self.cache)
        with open(self.path, "wb") as f:
            np.savez(f, texts=np.asarray(texts), vecs=np.stack([self.cache[t] for t in texts]))


def build_part(files: list[Path], out: Path, emb) -> dict:
    """Corpus, index, queries and query vectors of these articles under ``out`` (skipped when present)."""
    done = out / "done.json"
    if done.exists():
        return json.loads(done.read_text())
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    papers, queries, bad = load_split_task(files)
    corpus = out / "corpus"
    with Corpus(corpus) as c:
        for p in papers:
            p = enrich(p)  # the caption stage, as ingest runs it without images
            c.put_paper(p, hashlib.sha256(p.paper_id.encode()).hexdigest(), p.paper_id)
        c.commit()
    rep = build_index(corpus, emb)
    with open(out / "queries.jsonl", "w") as f:
        for q in queries:
            f.write(json.dumps(asdict(q)) + "\n")
    save_query_vectors(out, queries, emb)
    info = {"articles": len(papers), "bad": bad, "queries": len(queries), "figures": rep.figures,
            "panels": rep.panels, "build_s": round(time.perf_counter() - t0, 1)}
    done.write_text(json.dumps(info))
    return info


def save_query_vectors(out: Path, queries: list[Query], emb) -> None:
    """``qvec.npy``: the queries embedded as the searcher embeds them (at most QUERY_PIECES word pieces),
    with a marker file saying so."""
    texts = [q.text for q in queries]
    qvec = encode_queries(emb, texts) if emb is not None else np.zeros((len(queries), 0), np.float32)
    np.save(out / "qvec.npy", qvec)
    (out / "qvec.json").write_text(json.dumps({"query_pieces": QUERY_PIECES}))


def load_part(out: Path, emb=None) -> tuple[Path, list[Query], np.ndarray]:
    """The corpus folder, queries and query vectors of a built part. Query vectors of an older build
    (embedded at the model's full length) are embedded again, capped, when ``emb`` is given."""
    queries = [Query(**json.loads(line)) for line in open(out / "queries.jsonl")]
    marker = out / "qvec.json"
    capped = marker.exists() and json.loads(marker.read_text()).get("query_pieces") == QUERY_PIECES
    if not capped and emb is not None:
        save_query_vectors(out, queries, emb)
    return out / "corpus", queries, np.load(out / "qvec.npy")


def main() -> None:
    from figlink.index.embed import default_embedder

    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("tune", "check"), required=True)
    ap.add_argument("--every", type=int, default=1, help="take every n-th article of the part (name order)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cache", type=Path, help="text → vector cache (.npz), read and updated")
    a = ap.parse_args()
    emb = default_embedder()
    if a.cache is not None and emb is not None:
        emb = DiskCachedEmbedder(emb, a.cache)
    print(build_part(part_files(a.part, a.every), a.out, emb))
    if isinstance(emb, DiskCachedEmbedder):
        emb.save()


if __name__ == "__main__":
    main()

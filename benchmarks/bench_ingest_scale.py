"""Ingest at scale: the 1,823 Europe PMC dev articles through ``figlink ingest --workers 2``, end to end.

Rows of the table (each ingest a fresh ``figlink`` process; memory is the peak summed RSS of its whole
process tree, the writer and its workers):

- **1x**: the articles, no index: articles/s (wall, start-up included), peak memory.
- **2x, 4x** (``--scales``, e.g. ``1,2,4,8``): the articles and copies of each, every copy a distinct
  article (its ``<article-id>``s suffixed, its own file name), so kx the parsing and kx the papers written:
  memory must stay flat (issue 18: the peak at 4x within 1.10x of the peak at 1x).
- **index**: ``figlink index`` on the 1x corpus (BM25 + MiniLM, or BM25 only with ``--no-dense``); the
  end-to-end rate is articles / (ingest + index), what ``figlink ingest`` without ``--no-index`` does.
- **kill -9 + resume**: an ingest killed (SIGKILL to the ``figlink`` process) once half the inputs are
  committed, then run again; its corpus is compared with the clean 1x corpus: every paper's JSON, the
  figure rows, the inputs (path, hash, paper id, status), the distinct errors, and the search index (a
  BM25 index of each corpus asked 200 queries: the same hits in the same order).

Quality: papers and figures ingested by part (tune/check split of the articles by file name, as every
Europe PMC benchmark), with the figures the gold markup has; the baseline of the memory row is the same
run's 1x peak (ratio 4x / 1x).

    PYTHONPATH=src python benchmarks/bench_ingest_scale.py [--quick] [--src DIR] [--no-dense] [--keep DIR]
        [--scales 1,2,4]

``--quick`` takes every tenth article (183) and the larger runs on them. Skips (exit 0) without the dev data.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_inline_refs import europepmc_folder  # noqa: E402
from common import distinct_copy, figlink_peak, ingest_peak, print_table, require_shared_data  # noqa: E402

from figlink.corpus import Corpus  # noqa: E402
from figlink.eval.splits import doc_key, split_of  # noqa: E402

WORKERS = 2
N_QUERIES = 200


def _state(corpus: Path) -> dict:
    """What a corpus holds, independent of when it was written."""
    db = sqlite3.connect(f"file:{corpus / 'corpus.sqlite'}?mode=ro", uri=True)
    try:
        return {
            "papers": dict(db.execute("SELECT paper_id, json FROM papers")),
            "paper_paths": dict(db.execute("SELECT paper_id, input_path FROM papers")),
            "figures": db.execute("SELECT * FROM figures ORDER BY paper_id, figure_id").fetchall(),
            "inputs": db.execute("SELECT sha256, path, paper_id, status, stage, reason FROM inputs ORDER BY sha256"
                                 ).fetchall(),
            "errors": sorted(set(db.execute("SELECT path, stage, reason FROM errors"))),
            "error_rows": db.execute("SELECT COUNT(*) FROM errors").fetchone()[0],
        }
    finally:
        db.close()


def _queries(corpus: Path, n: int) -> list[str]:
    """``n`` queries: the first five words of every k-th caption, in paper order (deterministic)."""
    with Corpus(corpus, readonly=True) as c:
        caps = [f.caption for p in c.papers() for f in p.figures if f.caption]
    step = max(1, len(caps) // n)
    return [" ".join(re.findall(r"[A-Za-z]{3,}", cap)[:5]) for cap in caps[::step]][:n]


def _hits(corpus: Path, queries: list[str]) -> list[list[tuple]]:
    from figlink.index import Searcher

    s = Searcher(corpus)
    return [[(h.paper_id, h.figure_id, h.rank) for h in s.search(q, k=10)] for q in queries if q]


def _replicate(files: list[Path], dest: Path, copies: int) -> Path:
    dest.mkdir(parents=True)
    for c in range(copies):
        for f in files:
            data = f.read_bytes()
            name = f.name if c == 0 else f"{f.stem}-c{c}{f.suffix}"
            (dest / name).write_bytes(data if c == 0 else distinct_copy(data, c))
    return dest


def _kill_and_resume(src: Path, corpus: Path, n: int) -> dict:
    """Ingest ``src`` into ``corpus``, SIGKILL the figlink process once half the inputs are committed,
    then ingest again to the end."""
    import psutil

    proc = subprocess.Popen([sys.executable, "-m", "figlink.cli", "ingest", str(src), "--corpus", str(corpus),
                             "--workers", str(WORKERS), "--no-index"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done = 0
    while proc.poll() is None:
        try:
            with Corpus(corpus, readonly=True) as c:
                done = c.stats().inputs_done
        except (FileNotFoundError, sqlite3.OperationalError):
            done = 0
        if done >= n // 2:
            break
        time.sleep(0.1)
    workers = psutil.Process(proc.pid).children(recursive=True) if proc.poll() is None else []
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Corpus(corpus, readonly=True) as c:
        at_kill = c.stats().inputs_done
    time.sleep(2.0)
    lingering = [w for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
    for w in lingering:
        w.kill()
    peak, wall = figlink_peak(["ingest", str(src), "--corpus", str(corpus), "--workers", str(WORKERS), "--no-index"])
    return {"committed_at_kill": at_kill, "lingering_workers": len(lingering), "resume_wall": wall,
            "resume_peak": peak}


def _compare(clean: dict, resumed: dict, hits_clean: list, hits_resumed: list) -> list[list[str]]:
    same_papers = sum(resumed["papers"].get(k) == v for k, v in clean["papers"].items())
    return [
        ["papers (JSON equal)", f"{same_papers}/{len(clean['papers'])}", f"{len(resumed['papers'])} in resumed"],
        ["paper id → input path", "equal" if clean["paper_paths"] == resumed["paper_paths"] else "DIFFERENT", ""],
        ["figure rows", "equal" if clean["figures"] == resumed["figures"] else "DIFFERENT",
         f"{len(resumed['figures'])} rows"],
        ["inputs (path, hash, id, status)", "equal" if clean["inputs"] == resumed["inputs"] else "DIFFERENT",
         f"{len(resumed['inputs'])} rows"],
        ["errors (distinct)", "equal" if clean["errors"] == resumed["errors"] else "DIFFERENT",
         f"{len(resumed['errors'])} distinct, {resumed['error_rows']} log rows (one per run that met them)"],
        ["search index (BM25, top 10)", "equal" if hits_clean == hits_resumed else "DIFFERENT",
         f"{len(hits_clean)} queries"],
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="every tenth article")
    ap.add_argument("--src", type=Path, help="folder of the unpacked Europe PMC articles")
    ap.add_argument("--no-dense", action="store_true", help="index with BM25 only (no MiniLM)")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it")
    ap.add_argument("--scales", default="1,2,4", help="copies of the input per run, comma-separated (1 first)")
    args = ap.parse_args()
    data = require_shared_data("the ingest scale benchmark")
    src = args.src or europepmc_folder(data)
    files = sorted(src.glob("*.xml"))
    if args.quick:
        files = files[::10]
    n = len(files)
    work = args.keep or Path(tempfile.mkdtemp(prefix="figlink-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        scales = sorted({1, *(int(k) for k in args.scales.split(","))})
        rows, runs = [], {}
        for k in scales:
            xk = _replicate(files, work / f"x{k}", k)
            runs[k] = ingest_peak([str(xk)], work / f"c{k}", ["--workers", str(WORKERS), "--no-index"])
            if k > 1:
                shutil.rmtree(xk)
            peak, wall = runs[k]
            rows.append([f"{k}x: {k * n} articles", f"{k * n / wall:.1f}", f"{wall:.0f} s", f"{peak:,.0f} MB",
                         f"{peak / runs[1][0]:.2f}x"])
        peak1, wall1 = runs[1]
        x1 = work / "x1"
        dense_env = {"FIGLINK_EMBEDDER": "none"} if args.no_dense else {}
        index_dir = work / "c1-indexed"
        shutil.copytree(work / "c1", index_dir)
        peak_i, wall_i = figlink_peak(["index", "--corpus", str(index_dir)], env=dense_env)
        rows.append([f"index of 1x ({'BM25' if args.no_dense else 'BM25 + MiniLM'})", "-", f"{wall_i:.0f} s",
                     f"{peak_i:,.0f} MB", "-"])
        rows.append(["1x end to end (ingest + index)", f"{n / (wall1 + wall_i):.1f}", f"{wall1 + wall_i:.0f} s",
                     f"{max(peak1, peak_i):,.0f} MB", "-"])
        kill = _kill_and_resume(x1, work / "killed", n)
        rows.append([f"resume after kill -9 at {kill['committed_at_kill']}/{n}",
                     f"{(n - kill['committed_at_kill']) / kill['resume_wall']:.1f}", f"{kill['resume_wall']:.0f} s",
                     f"{kill['resume_peak']:,.0f} MB", f"{kill['lingering_workers']} workers left running"])
        print_table(f"figlink ingest --workers {WORKERS} on the Europe PMC dev articles (JATS, no images)",
                    ["run", "articles/s", "wall", "peak memory (process tree)", "vs 1x peak"], rows)

        with Corpus(work / "c1", readonly=True) as c:
            by_part = {"tune": [0, 0], "check": [0, 0]}
            for p in c.papers():
                part = by_part[split_of(doc_key(Path(c.db.execute(
                    "SELECT input_path FROM papers WHERE paper_id=?", (p.paper_id,)).fetchone()[0]).name))]
                part[0] += 1
                part[1] += len(p.figures)
            failed = c.stats().inputs_failed
        want = {"tune": 0, "check": 0}
        for f in files:
            want[split_of(doc_key(f.name))] += 1
        print_table("Ingested by part (1x)", ["part", "articles", "papers", "figures"],
                    [[part, str(want[part]), str(by_part[part][0]), str(by_part[part][1])] for part in by_part]
                    + [["failed inputs", "", str(failed), ""]])
        for k in scales[1:]:
            with Corpus(work / f"c{k}", readonly=True) as c:
                sk = c.stats()
            print(f"{k}x corpus: {sk.papers} papers, {sk.figures} figures, {sk.inputs_failed} failed inputs")

        os.environ["FIGLINK_EMBEDDER"] = "none"  # the comparison index: BM25 (the dense part is not needed)
        env = dict(os.environ)
        for corpus in (work / "c1", work / "killed"):
            subprocess.run([sys.executable, "-m", "figlink.cli", "index", "--corpus", str(corpus)], check=True,
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        queries = _queries(work / "c1", N_QUERIES)
        print_table("kill -9 + resume against the clean 1x run", ["compared", "result", "note"],
                    _compare(_state(work / "c1"), _state(work / "killed"), _hits(work / "c1", queries),
                             _hits(work / "killed", queries)))
        print(json.dumps({"articles": n, **{f"x{k}": list(runs[k]) for k in scales}, "index": [wall_i, peak_i],
                          "kill": kill}))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

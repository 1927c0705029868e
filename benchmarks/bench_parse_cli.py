"""End-to-end speed as users run it: ``figlink parse FILES --json > out`` against pubmed_parser (issue 15, row 7).

Input: a fixed subset of the Europe PMC articles (every k-th file in name order, 400 by default; see
``bench_inline_refs.europepmc_folder``), linked into one folder that ``figlink parse DIR`` reads.

Rows, each a fresh process timed on the wall clock from start to exit (interpreter start-up and imports
included), passes alternating between the tools, best of ``--repeat``:
- ``figlink parse DIR --json --workers 1 > out``: one process (metadata, figures, captions + caption stage,
  inline references with panels, JSON lines);
- ``figlink parse DIR --json > out``, the command as a user types it (``--workers auto``: forked workers,
  one per usable core), the same lines in the same order (the benchmark checks it); its CPU is that of
  all the processes;
- with ``--workers N`` (N > 1), also that many workers;
- where ``make native`` has compiled the hot modules (``src/figlink/_native``), one process without them too
  (``FIGLINK_NATIVE=0``);
- with ``--before SRC``, the same command run with another checkout's ``src`` folder first on the path
  (e.g. a ``git worktree`` of an earlier commit), given the files rather than the folder (earlier figlink
  refused folders): before and after, each against pubmed_parser of the same run;
- pubmed_parser in a CLI-equivalent script: per file ``parse_pubmed_xml`` + ``parse_pubmed_caption`` +
  ``parse_pubmed_paragraph(all_paragraph=True)``, one JSON line per file to stdout (it extracts less:
  no sentences, no panels, no caption analysis);
- ``figlink ingest DIR --corpus C --no-index`` (1 worker, and 2 workers), articles/s; with ``--ingest-index``
  also a default ingest, which builds the search index (MiniLM embeddings: minutes on 2 cores).
Target: figlink parse ≥ 2x pubmed_parser end to end.

Bytecode: every timed process reads and writes its .pyc files in one folder of the run's own (an untimed
first run of each command writes them), as installed packages start; ``--no-bytecode`` leaves it to the
environment (with PYTHONDONTWRITEBYTECODE=1 a source checkout compiles every module at each start, which
pubmed_parser, installed with its .pyc files, does not). The ingest rows run once each: they compile the
modules that ``parse`` does not import.

``--profile`` also runs ``figlink parse`` once under pyinstrument (installed into a private folder given by
``$FIGLINK_PROFILER_SITE``, default ``/tmp/figlink-profiler-site``, when the venv lacks it) and prints where
the time goes: start-up imports, lxml, the one walk for figures and xrefs, figures, inline references, the
caption stage, JSON encoding (wall-clock samples: on a loaded machine read them as shares).

    python benchmarks/bench_parse_cli.py [--files 400] [--repeat 3] [--quick] [--profile] [--no-ingest] [--ingest-index]
                                         [--before OTHER_CHECKOUT/src [--before-workers 1]] [--workers 2] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_inline_refs import europepmc_folder  # noqa: E402
from common import REPO, print_table, require_shared_data  # noqa: E402

PUBMED_SCRIPT = r"""
import json, sys
import pubmed_parser as pp
failed = 0
for path in sys.argv[1:]:
    try:
        rec = {"meta": pp.parse_pubmed_xml(path), "captions": pp.parse_pubmed_caption(path),
               "paragraphs": pp.parse_pubmed_paragraph(path, all_paragraph=True)}
    except Exception as e:
        failed += 1
        print(f"error: {path}: {e}", file=sys.stderr)
        continue
    sys.stdout.write(json.dumps(rec, default=str) + "\n")
sys.exit(1 if failed else 0)
"""


# Where the timed processes keep their bytecode (None: as the environment says). Installed packages carry
# their .pyc files (pubmed_parser's, in the venv), while a source checkout run with PYTHONDONTWRITEBYTECODE=1
# compiles every figlink module at each start (0.03-0.04 s of CPU). So the bench gives every process one
# bytecode folder of its own temporary folder (PYTHONPYCACHEPREFIX, written by an untimed first run of each
# command): both tools start as installed ones do, and nobody's checkout or venv is written to.
BYTECODE: "Path | None" = None


def env(src: Path = REPO / "src", extra: dict[str, str] | None = None) -> dict[str, str]:
    e = dict(os.environ, **(extra or {}))
    e["PYTHONPATH"] = os.pathsep.join([str(src)] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
    if BYTECODE is not None:
        e["PYTHONPYCACHEPREFIX"] = str(BYTECODE)
        e.pop("PYTHONDONTWRITEBYTECODE", None)
    return e


def timed(cmd: list[str], out: Path, src: Path = REPO / "src",
          extra: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the child) of one run; its exit status in ``timed.last_rc``.
    CPU time is what to compare on a shared machine, where the wall clock also counts other people's work."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with out.open("wb") as fh:
        timed.last_rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.DEVNULL, env=env(src, extra)).returncode
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


timed.last_rc = 0  # type: ignore[attr-defined]


def subset(folder: Path, n: int) -> list[Path]:
    files = sorted(folder.glob("*.xml"))
    step = max(1, len(files) // n)
    return files[::step][:n]


def profile(files: list[Path], work: Path) -> None:
    site = Path(os.environ.get("FIGLINK_PROFILER_SITE", "/tmp/figlink-profiler-site"))
    try:
        import pyinstrument  # noqa: F401
        extra = []
    except ImportError:
        if not (site / "pyinstrument").is_dir():
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(site), "pyinstrument==5.1.3"],
                           check=True)
        extra = [str(site)]
    e = env()
    e["PYTHONPATH"] = os.pathsep.join([e["PYTHONPATH"]] + extra)
    report = work / "profile.pyisession"
    cmd = [sys.executable, "-m", "pyinstrument", "--interval", "0.0005", "-r", "session", "-o", str(report),
           "-m", "figlink.cli", "parse", str(files[0].parent), "--json", "--workers", "1"]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e, check=False)
    text_report = REPO / "benchmarks" / "out" / "parse_profile.txt"
    text_report.parent.mkdir(parents=True, exist_ok=True)
    for p in extra:
        if p not in sys.path:
            sys.path.insert(0, p)
    from pyinstrument.renderers import ConsoleRenderer
    from pyinstrument.session import Session

    session = Session.load(str(report)) if report.exists() else None
    if session is not None:
        text_report.write_text(ConsoleRenderer(unicode=True, color=False).render(session), encoding="utf-8")
    # start-up: a bare interpreter, and the whole command on one article (imports + one parse)
    one = [sys.executable, "-m", "figlink.cli", "parse", str(files[0]), "--json"]
    t_one = min(timed(one, work / "o")[0] for _ in range(3))
    t_py = min(timed([sys.executable, "-c", "pass"], work / "o")[0] for _ in range(3))
    print(f"\nProfile of `figlink parse {len(files)} files --json` (pyinstrument; the tree is in "
          f"{text_report.relative_to(REPO)})")
    print(f"  wall of a bare interpreter: {t_py:.3f} s; `figlink parse` of one article: {t_one:.3f} s (start-up "
          f"and imports, one parse)")
    if session is not None:
        print(summarize(session.root_frame()))


# (bucket, predicate on (function, file)); the deepest matching frame on a stack decides the bucket
_BUCKETS = [
    ("start-up: imports", lambda f, p: f in ("<module>", "_find_and_load", "_call_with_frames_removed")),
    ("JSON encoding (Paper.to_json / to_dict)", lambda f, p: f in ("to_json", "to_dict") or "json/" in p),
    ("caption stage (split, normalize, keywords)", lambda f, p: f in ("caption_stage", "enrich_caption")),
    ("inline references (blocks, sentences, mentions)", lambda f, p: f in ("_inline_refs", "add_inline_refs")),
    ("figures (ids, labels, caption text)", lambda f, p: f == "_figures"),
    ("one walk: figures, figure xrefs, block holders", lambda f, p: f == "landmarks"),
    ("lxml parse (+ ref-list cut)", lambda f, p: f in ("parse_xml_bytes", "without_ref_lists")),
    ("rest of parse_jats (metadata, figures, captions)", lambda f, p: f == "parse_jats"),
    ("writing stdout", lambda f, p: f in ("write", "TextIOWrapper.write")),
]


def summarize(root) -> str:
    """Self time of every profiled frame (a pyinstrument ``Frame`` tree), put in the bucket of its deepest
    ancestor-or-self that names one (an import inside the caption stage counts as an import); the rest
    is the CLI (typer) and glue."""
    totals: dict[str, float] = {}

    def walk(frame, bucket: str) -> None:
        fn, path = frame.function or "", frame.file_path_short or ""
        for name, pred in _BUCKETS:
            if pred(fn, path):
                bucket = name
                break
        own = frame.time - sum(k.time for k in frame.children)
        totals[bucket] = totals.get(bucket, 0.0) + max(0.0, own)
        for k in frame.children:
            walk(k, bucket)

    if root is None:
        return "  (no samples)"
    walk(root, "CLI, typer and other")
    total = sum(totals.values())
    out = [f"  {'where':<50} {'seconds':>8} {'share':>7}"]
    for name, v in sorted(totals.items(), key=lambda kv: -kv[1]):
        out.append(f"  {name:<50} {v:>8.2f} {100 * v / max(total, 1e-9):>6.1f}%")
    out.append(f"  {'total (wall-clock samples)':<50} {total:>8.2f}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="100 files, one pass, no ingest with index")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--no-ingest", action="store_true")
    ap.add_argument("--ingest-index", action="store_true", help="also time an ingest that builds the search index")
    ap.add_argument("--workers", type=int, default=0, help="also time `figlink parse DIR --json --workers N` (0: not)")
    ap.add_argument("--before", type=Path, default=None,
                    help="src folder of another checkout to time in the same run (given the files, not the folder)")
    ap.add_argument("--before-workers", default=None, metavar="N",
                    help="pass --workers N to the --before checkout (1: one process; earlier figlink lacks it)")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="leave bytecode caching as the environment says (default: one cache folder for all runs)")
    args = ap.parse_args(argv)
    data = require_shared_data("the end-to-end parse benchmark")
    n = 100 if args.quick else args.files
    repeat = 1 if args.quick else args.repeat
    files = subset(europepmc_folder(data), n)
    work = Path(tempfile.mkdtemp(prefix="figlink-bench-cli-"))
    global BYTECODE
    BYTECODE = None if args.no_bytecode else work / "bytecode"
    try:
        src = work / "in"
        src.mkdir()
        for f in files:
            (src / f.name).symlink_to(f)
        args_files = [str(src / f.name) for f in files]
        script = work / "pubmed_cli.py"
        script.write_text(PUBMED_SCRIPT)
        parse_dir = [sys.executable, "-m", "figlink.cli", "parse", str(src), "--json"]
        runs = {"pubmed": ([sys.executable, str(script), *args_files], REPO / "src"),
                "figlink": ([*parse_dir, "--workers", "1"], REPO / "src"),
                "auto": (parse_dir, REPO / "src")}
        if args.workers > 1:
            runs["workers"] = ([*parse_dir, "--workers", str(args.workers)], REPO / "src")
        if (REPO / "src" / "figlink" / "_native" / "manifest.json").is_file():  # a compiled build: also without it
            runs["pure"] = ([*parse_dir, "--workers", "1"], REPO / "src")
        if args.before is not None:
            workers = [] if args.before_workers is None else ["--workers", args.before_workers]
            runs["before"] = ([sys.executable, "-m", "figlink.cli", "parse", *args_files, "--json", *workers],
                              args.before.resolve())
        best = {name: float("inf") for name in runs}
        cpu = {name: float("inf") for name in runs}
        rcs = {}
        extra = {"pure": {"FIGLINK_NATIVE": "0"}}
        if BYTECODE is not None:
            for name, (cmd, tree) in runs.items():  # untimed: writes the bytecode the timed runs read
                timed(cmd, work / f"{name}.jsonl", tree, extra.get(name))
        for _ in range(repeat):
            for name, (cmd, tree) in runs.items():
                t, c = timed(cmd, work / f"{name}.jsonl", tree, extra.get(name))
                best[name], cpu[name] = min(best[name], t), min(cpu[name], c)
                rcs[name] = timed.last_rc  # type: ignore[attr-defined]
        lines = {k: sum(1 for _ in (work / f"{k}.jsonl").open()) for k in best}
        labels = {"figlink": "figlink parse DIR --json --workers 1 > out",
                  "auto": "figlink parse DIR --json > out (--workers auto)",
                  "pure": "figlink parse DIR --json --workers 1 > out, .py files (FIGLINK_NATIVE=0)",
                  "before": f"before: {args.before} (parse FILES --json"
                            f"{'' if args.before_workers is None else ' --workers ' + args.before_workers})",
                  "workers": f"figlink parse DIR --json --workers {args.workers} > out"}
        rows = [[labels[name], f"{len(files) / best[name]:.1f} articles/s", f"{best[name]:.2f} s", f"{cpu[name]:.2f} s",
                 f"{lines[name]} JSON lines (exit {rcs[name]})",
                 f"{best['pubmed'] / best[name]:.2f}x wall, {cpu['pubmed'] / cpu[name]:.2f}x CPU (target >= 2x)"]
                for name in ("before", "pure", "figlink", "auto", "workers") if name in runs]
        rows.append(["pubmed_parser CLI-equivalent script", f"{len(files) / best['pubmed']:.1f} articles/s",
                     f"{best['pubmed']:.2f} s", f"{cpu['pubmed']:.2f} s",
                     f"{lines['pubmed']} JSON lines (exit {rcs['pubmed']})", "baseline"])
        if not args.no_ingest:
            for label, extra in (("figlink ingest DIR --no-index (1 worker)", ["--no-index"]),
                                 ("figlink ingest DIR --no-index --workers 2", ["--no-index", "--workers", "2"]),
                                 ("figlink ingest DIR (with the search index)", [])):
                if not extra and not args.ingest_index:
                    continue  # the MiniLM index build takes minutes: only on request
                corpus = work / f"corpus{len(rows)}"
                t, c = timed([sys.executable, "-m", "figlink.cli", "ingest", str(src), "--corpus", str(corpus), *extra],
                             work / "ingest.out")
                rows.append([label, f"{len(files) / t:.1f} articles/s", f"{t:.2f} s", f"{c:.2f} s",
                             f"exit {timed.last_rc}", ""])  # type: ignore[attr-defined]
                shutil.rmtree(corpus, ignore_errors=True)
        if "before" in runs:
            same = (work / "before.jsonl").read_bytes() == (work / "figlink.jsonl").read_bytes()
            print(f"output of before and after: {'byte-identical' if same else 'DIFFERENT'}")
        for name in ("pure", "auto", "workers"):
            if name in runs:
                same = (work / f"{name}.jsonl").read_bytes() == (work / "figlink.jsonl").read_bytes()
                print(f"output of one process and {labels[name]}: {'byte-identical' if same else 'DIFFERENT'}")
        print_table(f"End to end, one process per run, wall clock incl. start-up ({len(files)} Europe PMC articles, "
                    f"best of {repeat})", ["command", "throughput", "wall", "CPU", "output", "vs pubmed_parser"], rows)
        if args.profile:
            profile(files, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared helpers for the benchmarks: where the dev data is, timing, peak memory, table printing."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Sequence

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def shared_data() -> Path | None:
    """The development data folder (../shared/data or $FIGLINK_SHARED_DATA), or None when absent."""
    env = os.environ.get("FIGLINK_SHARED_DATA")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data"]:
        if cand.is_dir():
            os.environ["FIGLINK_SHARED_DATA"] = str(cand)  # figlink's model-rebuilding code reads only this
            return cand
    return None


def require_shared_data(what: str) -> Path:
    """The data folder, or a clean exit with a message when it is absent."""
    data = shared_data()
    if data is None:
        print(f"skipped: {what} needs ../shared/data (or FIGLINK_SHARED_DATA), which is absent")
        sys.exit(0)
    return data


class QueryCache:
    """``encode_query`` / ``encode_queries`` for the benchmarks' caching embedders (``self.inner``): a
    query is embedded as the searcher embeds it (``figlink.index.embed.encode_queries``: capped at
    ``QUERY_PIECES`` word pieces) and remembered apart from document texts."""

    inner: object
    dim: int

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        from figlink.index.embed import encode_queries

        cache: dict[str, np.ndarray] = self.__dict__.setdefault("query_cache", {})
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        for i in range(0, len(todo), 512):
            chunk = todo[i:i + 512]
            cache.update(zip(chunk, encode_queries(self.inner, chunk)))
        return np.stack([cache[t] for t in texts]) if len(texts) else np.zeros((0, self.dim), np.float32)

    def encode_query(self, query: str) -> np.ndarray:
        return self.encode_queries([query])[0]


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_peak(cmd: list[str], env: dict | None = None) -> tuple[float, float, int]:
    """Run ``cmd`` (``env`` added to this process's): the peak summed RSS (MB) of its whole process tree, its
    wall time (s), its exit status."""
    import subprocess

    import psutil

    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, **(env or {})})
    ps = psutil.Process(proc.pid)
    peak = 0.0
    while proc.poll() is None:
        try:
            rss = ps.memory_info().rss + sum(ch.memory_info().rss for ch in ps.children(recursive=True))
            peak = max(peak, rss / 2**20)
        except psutil.Error:
            pass
        time.sleep(0.05)
    return peak, time.perf_counter() - t, proc.returncode


def figlink_peak(args: list[str], env: dict | None = None) -> tuple[float, float]:
    """Run ``figlink ARGS`` in a child process (``env`` added to this one's): the peak summed RSS (MB) of its
    whole process tree and its wall time in seconds."""
    peak, wall, code = run_peak([sys.executable, "-m", "figlink.cli", *args], env)
    if code not in (0, 1):
        raise RuntimeError(f"figlink {args[0]} exited {code}")
    return peak, wall


def ingest_peak(sources: list[str], corpus: Path, args: list[str]) -> tuple[float, float]:
    """Run ``figlink ingest SOURCES --corpus CORPUS ARGS`` in a child process: the peak summed RSS (MB) of
    its whole process tree (workers, Ray's processes) and its wall time in seconds."""
    return figlink_peak(["ingest", *sources, "--corpus", str(corpus), *args])


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dir_size(p: Path) -> int:
    """Bytes of the regular files under ``p``."""
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "FIGLINK_TORCH_THREADS": "1"}


@contextlib.contextmanager
def serving(corpus: Path, one_core: bool = True, timeout: float = 300, core: int = 0,
            src: Optional[Path] = None) -> Iterator[tuple[str, "object"]]:
    """``figlink serve`` on a free loopback port, pinned to ``core`` with one thread per library
    (``one_core``), from another checkout's ``src`` folder when given; yields its base URL and process,
    and stops it afterwards."""
    import subprocess

    import httpx

    port = free_port()
    env = dict(os.environ, **(ONE_THREAD if one_core else {}), **({"PYTHONPATH": str(src)} if src else {}))
    cmd = [sys.executable, "-m", "figlink.cli", "serve", "--corpus", str(corpus), "--port", str(port)]
    if one_core and shutil.which("taskset"):
        cmd = ["taskset", "-c", str(core)] + cmd
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=30) as c:
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"figlink serve exited {proc.returncode}")
                try:
                    if c.get(url + "/api/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("figlink serve did not answer in time")
                time.sleep(0.25)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def tree_rss_mb(pid: int) -> float:
    """Resident memory (MB) of a process and its children."""
    import psutil

    ps = psutil.Process(pid)
    return (ps.memory_info().rss + sum(ch.memory_info().rss for ch in ps.children(recursive=True))) / 2**20


_ARTICLE_ID = re.compile(rb"(<article-id\b[^>]*>)\s*([^<]+?)\s*(</article-id>)")


def distinct_copy(data: bytes, copy: int) -> bytes:
    """A JATS article with every ``<article-id>`` (PMCID, DOI, PMID…) given the suffix ``-c<copy>``: a copy
    that is a paper of its own, where a plain copy is the same article (a reported duplicate)."""
    return _ARTICLE_ID.sub(lambda m: m.group(1) + m.group(2) + b"-c%d" % copy + m.group(3), data)


def timed(fn: Callable, items: Iterable, repeat: int = 1,
          before_pass: Callable[[], None] | None = None) -> tuple[list[float], list]:
    """Per-item latencies (seconds, best of ``repeat`` passes) and the last pass's outputs.

    ``before_pass`` runs before each pass (to empty caches, so no pass profits from an earlier one).
    """
    items = list(items)
    best = [float("inf")] * len(items)
    outs: list = []
    for _ in range(repeat):
        if before_pass is not None:
            before_pass()
        outs = []
        for i, it in enumerate(items):
            t = time.perf_counter()
            outs.append(fn(it))
            best[i] = min(best[i], time.perf_counter() - t)
    return best, outs


def latency_row(name: str, lat: Sequence[float], unit: str = "items", quality: str = "") -> list[str]:
    a = np.asarray(lat)
    total = float(a.sum())
    return [name, f"{len(a) / total:,.1f} {unit}/s" if total > 0 else "-",
            f"{np.percentile(a, 50) * 1e3:.2f} ms", f"{np.percentile(a, 99) * 1e3:.2f} ms", quality]


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A plain-text table (also pasted into issue notes)."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "+".join("-" * (w + 2) for w in widths)
    print(f"\n{title}")
    print("|" + "|".join(f" {h:<{w}} " for h, w in zip(header, widths)) + "|")
    print("|" + line + "|")
    for r in rows:
        print("|" + "|".join(f" {str(c):<{w}} " for c, w in zip(r, widths)) + "|")


# ------------------------------------------------------------------------ tune / check reporting

PARTS = ("tune", "check")
OUT = REPO / "benchmarks" / "out"


def add_part_args(ap, failures: bool = True) -> None:
    """The options every quality benchmark shares: ``--part tune|check|both``, ``--quick`` and (when the
    benchmark keeps per-item failures) ``--failures``, which writes the TUNE part's failures only."""
    ap.add_argument("--part", choices=("tune", "check", "both"), default="both",
                    help="which part of the split to score (default both, side by side)")
    ap.add_argument("--quick", action="store_true", help="a small deterministic subset, for a fast look")
    if failures:
        ap.add_argument("--failures", action="store_true",
                        help="write the tune part's failing items to benchmarks/out/<bench>_tune_failures.jsonl")


def parts_of(part: str) -> tuple[str, ...]:
    return PARTS if part == "both" else (part,)


def fmt_pct(x: float | None, n: int | None = None) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.1f}%" + (f" (n={n})" if n is not None else "")


def fmt_num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def split_table(title: str, rows: Sequence[Sequence[str]], parts: Sequence[str] = PARTS,
                baseline: str = "baseline") -> None:
    """A quality table with tune and check side by side and the same run's baseline.

    Each row is ``[measure, figlink tune, figlink check, baseline tune, baseline check, target]``; the
    columns of a part that was not run are left out."""
    keep = [0] + [1 + i for i, p in enumerate(PARTS) if p in parts] + \
        [3 + i for i, p in enumerate(PARTS) if p in parts] + [5]
    header = ["measure", "tune", "check", f"{baseline} tune", f"{baseline} check", "target (check)"]
    print_table(title, [header[i] for i in keep], [[str(r[i]) for i in keep] for r in rows])


def write_failures(bench: str, items: Iterable[dict]) -> Path:
    """The TUNE part's failing items as JSON lines (never the check part's: fixers debug from tune only)."""
    import json

    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{bench}_tune_failures.jsonl"
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for it in items:
            fh.write(json.dumps(it, ensure_ascii=False) + "\n")
            n += 1
    print(f"wrote {n} tune failures to {path.relative_to(REPO)}")
    return path


def cache_ocr(folder: Path | None = None) -> Path:
    """Cache figlink's full-image OCR (``read_text``) on disk, keyed by the pixels' MD5, so reruns of a
    vision benchmark skip the detector (the slow part). The folder is ``$FIGLINK_OCR_CACHE``, else
    ``folder``, else ``/tmp/figlink_ocr_cache``; keep it outside the repo. Returns it."""
    import hashlib
    import json

    import figlink.enrich.vision as vision
    from figlink.model import Box, OcrText

    folder = Path(os.environ.get("FIGLINK_OCR_CACHE") or folder or Path("/tmp") / "figlink_ocr_cache")
    folder.mkdir(parents=True, exist_ok=True)
    plain = vision.read_text

    def cached(rgb: np.ndarray, *args, **kwargs) -> list:
        if args or kwargs:
            return plain(rgb, *args, **kwargs)
        key = hashlib.md5(np.ascontiguousarray(rgb).tobytes() + str(rgb.shape).encode()).hexdigest()
        path = folder / f"{key}.json"
        if path.is_file():
            return [OcrText(text=t, bbox=Box.pixels(tuple(b)), score=s) for t, b, s in json.loads(path.read_text())]
        items = plain(rgb)
        path.write_text(json.dumps([[it.text, list(it.bbox), it.score] for it in items]))
        return items

    vision.read_text = cached  # type: ignore[assignment]
    return folder

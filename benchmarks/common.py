"""Shared helpers for the benchmarks: where the dev data is, timing, peak memory, table printing."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def shared_data() -> Path | None:
    """The development data folder (../shared/data or $FIGLINK_SHARED_DATA), or None when absent."""
    env = os.environ.get("FIGLINK_SHARED_DATA")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data"]:
        if cand.is_dir():
            return cand
    return None


def require_shared_data(what: str) -> Path:
    """The data folder, or a clean exit with a message when it is absent."""
    data = shared_data()
    if data is None:
        print(f"skipped: {what} needs ../shared/data (or FIGLINK_SHARED_DATA), which is absent")
        sys.exit(0)
    return data


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_peak(cmd: list[str], env: dict | None = None) -> tuple[float, float, int]:
    """Run ``cmd``: the peak summed RSS (MB) of its whole process tree, its wall time (s), its exit status."""
    import subprocess

    import psutil

    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
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


def ingest_peak(sources: list[str], corpus: Path, args: list[str]) -> tuple[float, float]:
    """Run ``figlink ingest SOURCES --corpus CORPUS ARGS`` in a child process: the peak summed RSS (MB) of
    its whole process tree (workers, Ray's processes) and its wall time in seconds."""
    peak, wall, code = run_peak([sys.executable, "-m", "figlink.cli", "ingest", *sources, "--corpus", str(corpus),
                                 *args])
    if code not in (0, 1):
        raise RuntimeError(f"figlink ingest exited {code}")
    return peak, wall


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
def serving(corpus: Path, one_core: bool = True, timeout: float = 300) -> Iterator[tuple[str, "object"]]:
    """``figlink serve`` on a free loopback port, pinned to core 0 with one thread per library
    (``one_core``); yields its base URL and process, and stops it afterwards."""
    import subprocess

    import httpx

    port = free_port()
    env = dict(os.environ, **(ONE_THREAD if one_core else {}))
    cmd = [sys.executable, "-m", "figlink.cli", "serve", "--corpus", str(corpus), "--port", str(port)]
    if one_core and shutil.which("taskset"):
        cmd = ["taskset", "-c", "0"] + cmd
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

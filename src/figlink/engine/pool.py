"""A process pool whose memory does not grow with the number of inputs.

``multiprocessing.Pool`` keeps a worker until it has run a fixed number of tasks, whatever that worker's
memory has become: a large input (a 3 MB JATS article parses to a tree ten times its size) raises the
worker's heap, and the allocator keeps those pages after the tree is freed, so each large input left a
worker bigger for the rest of its life; and two large inputs running at once added up. The longer the
run, the more often both happened together, so the peak grew with the input.

This pool bounds both:

- **a worker's size**: each result comes back with the worker's resident memory; a worker that has grown
  more than ``retire_mb`` past the smallest size any worker reported after a task is stopped and a fresh
  one started in its place;
- **large inputs at once**: a task whose input holds ``large_bytes`` bytes or more runs only while no other
  such task runs (the other workers take the small tasks after it meanwhile).

Results are yielded in task order, with at most ``window`` tasks handed out past the oldest result not
yet yielded; a worker that dies in a task gives that task a failed result (stage ``internal``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Iterable, Iterator, Optional

RETIRE_MB = 16.0  # a worker this much bigger than the smallest worker seen after a task is replaced
LARGE_BYTES = 1 << 20  # inputs of at least this many bytes run one at a time
_END = object()


def file_bytes(*paths: Optional[object]) -> int:
    """The bytes of an input's files (None and unreadable ones count 0: the task itself reports them), what
    its memory grows with: the ``size_of`` of :meth:`MemoryBoundedPool.map`."""
    total = 0
    for path in paths:
        if path is not None:
            try:
                total += os.path.getsize(str(path))
            except OSError:
                pass
    return total


def rss_mb() -> float:
    """Resident memory of this process now, in MB (the peak so far where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def _serve(conn: Connection, fn: Callable[[Any], Any]) -> None:
    """A worker: run ``fn`` on each item received, send back (index, result, resident MB); stop on None or
    when the pool has gone. Ctrl-C is the writer's to handle: it stops the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        i, item = msg
        out = fn(item)
        try:
            conn.send((i, out, rss_mb()))
        except (BrokenPipeError, OSError):
            return


@dataclass
class _Worker:
    proc: Any  # a multiprocessing process of the spawn context
    conn: Connection
    job: Optional[int] = None  # index of the task it runs
    large: bool = False


@dataclass
class PoolStats:
    """What a pool did: workers started (first ones included), how many were replaced for their size, and
    how many died in a task."""

    started: int = 0
    retired: int = 0
    died: int = 0


class MemoryBoundedPool:
    """Up to ``workers`` spawned processes (started as items arrive) running ``fn`` (a module-level
    function) on items, in order."""

    def __init__(self, fn: Callable[[Any], Any], workers: int, *, retire_mb: Optional[float] = None,
                 large_bytes: Optional[int] = None) -> None:
        self.fn = fn
        self.n = max(1, workers)
        self.retire_mb = RETIRE_MB if retire_mb is None else retire_mb
        self.large_bytes = LARGE_BYTES if large_bytes is None else large_bytes
        self.ctx = mp.get_context("spawn")
        self.workers: list[_Worker] = []
        self.floor: Optional[float] = None  # the smallest size a worker reported after a task
        self.stats = PoolStats()

    def _start(self) -> _Worker:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_serve, args=(child, self.fn), daemon=True)
        proc.start()
        child.close()
        self.stats.started += 1
        return _Worker(proc, parent)

    def _stop(self, w: _Worker) -> None:
        try:
            w.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        w.conn.close()
        w.proc.join(timeout=5)
        if w.proc.is_alive():
            w.proc.terminate()
            w.proc.join(timeout=5)

    def _too_big(self, size: float) -> bool:
        self.floor = size if self.floor is None else min(self.floor, size)
        return size > self.floor + self.retire_mb

    def map(self, items: Iterable[Any], size_of: Callable[[Any], int], window: int,
            failed: Callable[[Any, str], Any]) -> Iterator[Any]:
        """``fn(item)`` for each item, yielded in order; ``size_of(item)``: the bytes of its input;
        ``failed(item, reason)``: the result of an item whose worker died. Items are taken from ``items``
        only as the window moves (at most ``window`` past the oldest result not yet yielded)."""
        source = iter(items)
        pending: dict[int, Any] = {}  # index → item, from when it is taken until its result is yielded
        results: dict[int, Any] = {}
        todo: dict[int, bool] = {}  # index → large; handed out in order, but a large one may wait
        nxt, out, ended = 0, 0, False
        try:
            self.workers = []  # started as tasks arrive: a run of fewer items than workers spawns no idle ones
            while True:
                while not ended and nxt - out < window:
                    item = next(source, _END)
                    if item is _END:
                        ended = True
                        break
                    pending[nxt], todo[nxt] = item, size_of(item) >= self.large_bytes
                    nxt += 1
                if ended and out == nxt:
                    return
                self._hand_out(pending, todo)
                self._collect(pending, results, failed)
                while out in results:
                    del pending[out]
                    yield results.pop(out)
                    out += 1
        finally:
            for w in self.workers:
                if w.job is not None:  # stopped early: do not wait for tasks in flight
                    w.proc.terminate()
                self._stop(w)
            self.workers = []

    def _hand_out(self, items: dict[int, Any], todo: dict[int, bool]) -> None:
        large_running = any(w.large for w in self.workers if w.job is not None)
        idle = iter([w for w in self.workers if w.job is None])
        while True:
            i = next((i for i, large in todo.items() if not (large and large_running)), None)
            if i is None:
                return
            w = next(idle, None)
            if w is None:
                if len(self.workers) >= self.n:
                    return
                w = self._start()
                self.workers.append(w)
            w.job, w.large = i, todo.pop(i)
            large_running = large_running or w.large
            w.conn.send((i, items[i]))

    def _collect(self, items: dict[int, Any], results: dict[int, Any], failed: Callable[[Any, str], Any]) -> None:
        busy = [w for w in self.workers if w.job is not None]
        wait([w.conn for w in busy] + [w.proc.sentinel for w in busy])
        for k, w in enumerate(self.workers):
            if w.job is None:
                continue
            dead = False
            if w.conn.poll():
                try:
                    i, res, size = w.conn.recv()
                except (EOFError, OSError):
                    dead = True
            elif not w.proc.is_alive():
                dead = True
            else:
                continue
            if dead:
                w.proc.join(timeout=5)
                i, res = w.job, failed(items[w.job], f"worker process died (exit code {w.proc.exitcode})")
                self.stats.died += 1
            too_big = not dead and self._too_big(size)
            self.stats.retired += too_big
            results[i] = res
            w.job, w.large = None, False
            if dead or too_big:
                self._stop(w)
                self.workers[k] = self._start()

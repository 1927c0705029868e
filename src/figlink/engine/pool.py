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

What a worker costs is the caller's choice: spawned (a fresh interpreter that imports everything again: the
engine's, whose workers load models) or forked (a copy of the caller, cheap where the caller has already
imported what the tasks run: ``figlink parse``), and how many tasks go in one message (``chunk``: one
round trip per chunk instead of per task).
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
WINDOW_PER_WORKER = 16  # tasks a runner may run ahead of the oldest result not yet written, per worker
MIN_WINDOW = 32
_END = object()


def window(workers: int) -> int:
    """How many tasks a runner with ``workers`` workers may run ahead of the oldest unwritten result."""
    return max(MIN_WINDOW, WINDOW_PER_WORKER * max(1, workers))


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it, else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def fork_start() -> str:
    """``"fork"`` where a worker may be forked safely (the system has it and this process runs no other
    thread, whose locks a copy would inherit held), else ``"spawn"``: the ``start`` of a pool whose
    caller has imported what its function runs."""
    import threading

    return "fork" if "fork" in mp.get_all_start_methods() and threading.active_count() == 1 else "spawn"


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
    """A worker: run ``fn`` on each item of each chunk received, send back (results, resident MB); stop on
    None or when the pool has gone. Ctrl-C is the writer's to handle: it stops the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError):
            return
        if chunk is None:
            return
        out = [fn(item) for item in chunk]
        try:
            conn.send((out, rss_mb()))
        except (BrokenPipeError, OSError):
            return


@dataclass
class _Worker:
    proc: Any  # a multiprocessing process
    conn: Connection
    job: Optional[list[int]] = None  # indices of the tasks of the chunk it runs
    large: bool = False


@dataclass
class PoolStats:
    """What a pool did: workers started (first ones included), how many were replaced for their size, and
    how many died in a task."""

    started: int = 0
    retired: int = 0
    died: int = 0


class MemoryBoundedPool:
    """Up to ``workers`` processes (started as items arrive) running ``fn`` on items, in order.

    ``start``: how a worker process starts, ``"spawn"`` (a fresh interpreter that imports what ``fn``
    needs; ``fn`` must be a module-level function) or ``"fork"`` (a copy of this process: no imports to
    repeat, so import what ``fn`` runs before :meth:`map`; not where other threads run). ``chunk``: at most
    this many items per message to a worker (large ones go alone); a chunk whose worker died runs again,
    one item per message, so that only the item that kills a worker fails."""

    def __init__(self, fn: Callable[[Any], Any], workers: int, *, retire_mb: Optional[float] = None,
                 large_bytes: Optional[int] = None, start: str = "spawn", chunk: int = 1) -> None:
        self.fn = fn
        self.n = max(1, workers)
        self.retire_mb = RETIRE_MB if retire_mb is None else retire_mb
        self.large_bytes = LARGE_BYTES if large_bytes is None else large_bytes
        self.ctx: Any = mp.get_context(start)  # a fork or spawn context (typeshed's BaseContext lacks Process)
        self.chunk = max(1, chunk)
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
        todo: dict[int, bool] = {}  # index → runs alone (large, or retried); handed out in order
        large: set[int] = set()  # indices of large items not yet done: one at a time
        nxt, out, ended = 0, 0, False
        try:
            self.workers = []  # started as tasks arrive: a run of fewer items than workers spawns no idle ones
            while True:
                while not ended and nxt - out < window:
                    item = next(source, _END)
                    if item is _END:
                        ended = True
                        break
                    pending[nxt] = item
                    todo[nxt] = size_of(item) >= self.large_bytes
                    if todo[nxt]:
                        large.add(nxt)
                    nxt += 1
                if ended and out == nxt:
                    return
                self._hand_out(pending, todo, large, ended)
                self._collect(pending, results, todo, failed)
                while out in results:
                    del pending[out]
                    large.discard(out)
                    yield results.pop(out)
                    out += 1
        finally:
            for w in self.workers:
                if w.job is not None:  # stopped early: do not wait for tasks in flight
                    w.proc.terminate()
                self._stop(w)
            self.workers = []

    def _next_chunk(self, todo: dict[int, bool], large: set[int], large_running: bool, size: int) -> list[int]:
        """The next tasks to hand out: the first one that may run now, alone if it must, else with the
        small ones after it (up to ``size``)."""
        chunk: list[int] = []
        for i, alone in todo.items():
            if alone:
                if chunk or (i in large and large_running):
                    continue
                return [i]
            chunk.append(i)
            if len(chunk) == size:
                break
        return chunk

    def _hand_out(self, items: dict[int, Any], todo: dict[int, bool], large: set[int], ended: bool) -> None:
        large_running = any(w.large for w in self.workers if w.job is not None)
        idle = iter([w for w in self.workers if w.job is None])
        # once every item has been taken, what is left is shared out evenly, so no worker finishes alone
        size = min(self.chunk, -(-len(todo) // self.n)) if ended else self.chunk
        while True:
            job = self._next_chunk(todo, large, large_running, size)
            if not job:
                return
            w = next(idle, None)
            if w is None:
                if len(self.workers) >= self.n:
                    return
                w = self._start()
                self.workers.append(w)
            for i in job:
                del todo[i]
            w.job, w.large = job, job[0] in large
            large_running = large_running or w.large
            w.conn.send([items[i] for i in job])

    def _collect(self, items: dict[int, Any], results: dict[int, Any], todo: dict[int, bool],
                 failed: Callable[[Any, str], Any]) -> None:
        busy = [w for w in self.workers if w.job is not None]
        wait([w.conn for w in busy] + [w.proc.sentinel for w in busy])
        for k, w in enumerate(self.workers):
            if w.job is None:
                continue
            dead = False
            if w.conn.poll():
                try:
                    res, size = w.conn.recv()
                except (EOFError, OSError):
                    dead = True
            elif not w.proc.is_alive():
                dead = True
            else:
                continue
            job, w.job, w.large = w.job, None, False
            if dead:
                w.proc.join(timeout=5)
                self.stats.died += 1
                if len(job) == 1:
                    results[job[0]] = failed(items[job[0]], f"worker process died (exit code {w.proc.exitcode})")
                else:  # which of them killed it is not known: each runs again, alone
                    again = sorted({**todo, **dict.fromkeys(job, True)}.items())
                    todo.clear()
                    todo.update(again)  # in input order
            else:
                results.update(zip(job, res))
            too_big = not dead and self._too_big(size)
            self.stats.retired += too_big
            if dead or too_big:
                self._stop(w)
                self.workers[k] = self._start()

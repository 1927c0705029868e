"""The local engine's process pool: memory bounded per worker and across large inputs, results in order."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from figlink.corpus import Corpus
from figlink.engine.local import ingest, input_bytes
from figlink.engine.common import Task
from figlink.engine.pool import MemoryBoundedPool, rss_mb
from figlink.pipeline import PipelineOptions

JATS = Path(__file__).resolve().parents[1] / "samples" / "jats"
SRC = Path(__file__).resolve().parents[1] / "src"
_KEPT: list[bytearray] = []  # what a worker "keeps" after an item, as the allocator keeps a large tree's pages


def _hold(mb: int) -> tuple[int, float, float]:
    """Keep ``mb`` MB touched in this worker; return (pid, start, end)."""
    start = time.monotonic()
    if mb < 0:
        os._exit(3)
    if mb:
        _KEPT.append(bytearray(os.urandom(1024)) * (mb * 1024))
    time.sleep(0.05)
    return os.getpid(), start, time.monotonic()


def _failed(item: int, reason: str) -> str:
    return reason


def test_rss_is_this_process_and_sees_memory_kept():
    # in a fresh interpreter: in the test process, 64 MB may come from heap pages an earlier test freed and
    # the allocator kept resident, and then resident memory does not move
    probe = ("import os; from figlink.engine.pool import rss_mb; before = rss_mb(); "
             "block = bytearray(os.urandom(1024)) * (64 * 1024); print(rss_mb() - before)")
    grown = float(subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": str(SRC)}).stdout)
    assert 48 < grown < 96
    assert 0 < rss_mb() < 1e6


def test_a_worker_that_grew_is_replaced_and_the_others_keep_their_process():
    pool = MemoryBoundedPool(_hold, 2, retire_mb=16, large_bytes=1 << 40)
    items = [0, 0, 0, 64, 0, 0, 0, 0]
    got = list(pool.map(items, lambda mb: 0, window=4, failed=_failed))
    assert len(got) == len(items)
    assert pool.stats.retired == 1 and pool.stats.started == 3 and pool.stats.died == 0
    grown = got[3][0]
    assert all(pid != grown for pid, _, _ in got[4:])  # the 64 MB worker ran nothing after it
    assert len({pid for pid, _, _ in got}) == 3


def test_large_inputs_never_run_at_once():
    pool = MemoryBoundedPool(_hold, 2, retire_mb=1e9, large_bytes=10)
    sizes = {0: 0, 1: 100}
    items = [1, 1, 1, 0, 0, 0]
    got = list(pool.map(items, lambda mb: sizes[mb], window=8, failed=_failed))
    assert len(got) == len(items)
    large = sorted((s, e) for (pid, s, e), mb in zip(got, items) if mb == 1)
    assert len(large) == 3 and all(a[1] <= b[0] for a, b in zip(large, large[1:]))


def test_a_worker_that_dies_fails_its_item_only():
    pool = MemoryBoundedPool(_hold, 2, large_bytes=1 << 40)
    got = list(pool.map([0, -1, 0, 0], lambda mb: 0, window=4, failed=_failed))
    assert got[1] == "worker process died (exit code 3)"
    assert all(isinstance(r, tuple) for i, r in enumerate(got) if i != 1)
    assert pool.stats.died == 1


def test_input_bytes_of_a_real_article(tmp_path):
    art = JATS / "elife05031.xml"
    task = Task(str(art), None, "x", str(tmp_path), PipelineOptions(vision=False))
    assert input_bytes(task) == art.stat().st_size > 100_000
    assert input_bytes(Task(str(tmp_path / "gone.xml"), None, "y", str(tmp_path), task.options)) == 0


def test_ingest_with_every_worker_replaced_gives_the_same_corpus(tmp_path, monkeypatch):
    """The sample articles through two workers, once as usual and once with every worker replaced after
    each article and every article run alone: the same papers and figure rows."""
    import figlink.engine.pool as pool

    src = tmp_path / "src"
    shutil.copytree(JATS, src)
    ingest([src], tmp_path / "a", workers=2, options=PipelineOptions(vision=False), progress=False)
    monkeypatch.setattr(pool, "RETIRE_MB", -1e9)
    monkeypatch.setattr(pool, "LARGE_BYTES", 0)
    ingest([src], tmp_path / "b", workers=2, options=PipelineOptions(vision=False), progress=False)
    rows = []
    for name in ("a", "b"):
        with Corpus(tmp_path / name, readonly=True) as c:
            rows.append((c.db.execute("SELECT paper_id, json FROM papers ORDER BY 1").fetchall(),
                         c.db.execute("SELECT * FROM figures ORDER BY 1, 2").fetchall()))
    assert rows[0] == rows[1] and len(rows[0][0]) == len(list(JATS.glob("*.*xml")))


_SEEN_BY_FORKED = ["set in the test process before the pool started"]


def _ask(mb: int) -> tuple[int, str]:
    """(pid, what this process sees in ``_SEEN_BY_FORKED``); dies when ``mb`` < 0."""
    if mb < 0:
        os._exit(3)
    time.sleep(0.01)
    return os.getpid(), _SEEN_BY_FORKED[-1]


def test_forked_workers_start_from_this_process_and_chunks_come_back_in_order():
    _SEEN_BY_FORKED.append("changed after import")  # a spawned worker re-imports this module and would not see it
    try:
        pool = MemoryBoundedPool(_ask, 2, large_bytes=1 << 40, start="fork", chunk=8)
        got = list(pool.map(range(40), lambda mb: 0, window=32, failed=_failed))
    finally:
        _SEEN_BY_FORKED.pop()
    assert [seen for _, seen in got] == ["changed after import"] * 40
    assert pool.stats.started == 2 and len({pid for pid, _ in got} - {os.getpid()}) == 2
    # a chunk runs in one worker: the results of 0-7, 8-15, ... each come from one process
    assert all(len({pid for pid, _ in got[k:k + 8]}) == 1 for k in range(0, 32, 8))


def test_the_last_items_are_shared_out_evenly():
    """Ten items, all taken at once: five to each worker, not a chunk of eight to one and two to the other."""
    pool = MemoryBoundedPool(_ask, 2, large_bytes=1 << 40, start="fork", chunk=8)
    pids = [pid for pid, _ in pool.map(range(10), lambda mb: 0, window=32, failed=_failed)]
    assert len(set(pids[:5])) == len(set(pids[5:])) == 1 and pids[0] != pids[5]


def test_a_worker_that_dies_in_a_chunk_fails_only_the_item_that_killed_it():
    pool = MemoryBoundedPool(_ask, 2, large_bytes=1 << 40, start="fork", chunk=4)
    got = list(pool.map([0, 0, -1, 0, 0, 0, 0, 0, 0], lambda mb: 0, window=32, failed=_failed))
    assert got[2] == "worker process died (exit code 3)"
    assert all(isinstance(r, tuple) for i, r in enumerate(got) if i != 2)
    assert pool.stats.died == 2  # once with its chunk, once alone


def test_fork_is_not_used_while_another_thread_runs():
    import threading

    from figlink.engine.pool import fork_start

    if threading.active_count() == 1:  # an earlier test of the session may have left a thread running
        assert fork_start() == "fork"
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert fork_start() == "spawn"
    finally:
        stop.set()
        t.join()

"""The local engine: worker processes on one machine, one writer (the calling process).

Workers parse and enrich; the writer commits papers to the corpus in small transactions. A bad input
becomes an error record and the run goes on; a rerun skips inputs already done (by content hash).
Planning, the writer and the report are shared with the Ray engine (:mod:`figlink.engine.common`);
this module only decides where :func:`~figlink.engine.common.run_task` runs.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
from pathlib import Path
from typing import Iterable, Iterator

from figlink.engine.common import IngestReport, Result, Task, run_ingest, run_task, window
from figlink.pipeline import PipelineOptions


def process_pool_runner(workers: int):
    """A runner that maps :func:`run_task` over a pool of ``workers`` spawned processes (in this process
    when ``workers`` is 1 or there is one task), yielding results in task order with at most
    :func:`~figlink.engine.common.window` tasks handed out past the oldest result not yet yielded."""

    def run(tasks: list[Task]) -> Iterator[Result]:
        if workers <= 1 or len(tasks) <= 1:
            yield from map(run_task, tasks)
            return
        ctx = mp.get_context("spawn")
        slots = threading.Semaphore(window(workers))
        stop = threading.Event()

        def feed() -> Iterator[Task]:  # runs in the pool's task-handler thread, which may wait here
            for task in tasks:
                while not slots.acquire(timeout=0.1):
                    if stop.is_set():
                        return
                yield task

        with ctx.Pool(processes=min(workers, len(tasks)), maxtasksperchild=200) as pool:
            try:
                for result in pool.imap(run_task, feed(), chunksize=1):
                    slots.release()
                    yield result
            finally:
                stop.set()  # let the feeder end before the pool is terminated

    return run


def ingest(sources: Iterable[str | Path], corpus_dir: str | Path, workers: int = 1,
           options: PipelineOptions = PipelineOptions(), progress: bool = True) -> IngestReport:
    """Build or update the corpus at ``corpus_dir`` from ``sources`` (files and folders)."""
    return run_ingest(sources, corpus_dir, process_pool_runner(workers), options=options, progress=progress)


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))

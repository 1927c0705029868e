"""The local engine: worker processes on one machine, one writer (the calling process).

Workers parse and enrich; the writer commits papers to the corpus in small transactions. A bad input
becomes an error record and the run goes on; a rerun skips inputs already done (by content hash).
Planning, the writer and the report are shared with the Ray engine (:mod:`figlink.engine.common`);
this module only decides where :func:`~figlink.engine.common.run_task` runs.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path
from typing import Iterable, Iterator

from figlink.engine.common import IngestReport, Result, Task, run_ingest, run_task
from figlink.pipeline import PipelineOptions


def process_pool_runner(workers: int):
    """A runner that maps :func:`run_task` over a pool of ``workers`` spawned processes (in this process
    when ``workers`` is 1 or there is one task)."""

    def run(tasks: list[Task]) -> Iterator[Result]:
        if workers <= 1 or len(tasks) <= 1:
            yield from map(run_task, tasks)
            return
        ctx = mp.get_context("spawn")
        with ctx.Pool(processes=min(workers, len(tasks)), maxtasksperchild=200) as pool:
            yield from pool.imap_unordered(run_task, tasks, chunksize=1)

    return run


def ingest(sources: Iterable[str | Path], corpus_dir: str | Path, workers: int = 1,
           options: PipelineOptions = PipelineOptions(), progress: bool = True) -> IngestReport:
    """Build or update the corpus at ``corpus_dir`` from ``sources`` (files and folders)."""
    return run_ingest(sources, corpus_dir, process_pool_runner(workers), options=options, progress=progress)


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))

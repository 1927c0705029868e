"""The local engine: worker processes on one machine, one writer (the calling process).

Workers parse and enrich; the writer commits papers to the corpus in small transactions. A bad input
becomes an error record and the run goes on; a rerun skips inputs already done (by content hash).
Planning, the writer and the report are shared with the Ray engine (:mod:`figlink.engine.common`);
this module only decides where :func:`~figlink.engine.common.run_task` runs.
"""

from __future__ import annotations

from itertools import chain, islice
from pathlib import Path
from typing import Iterable, Iterator

from figlink.engine.common import IngestReport, Result, Task, run_ingest, run_task
from figlink.engine.pool import MemoryBoundedPool, file_bytes, usable_cores, window
from figlink.pipeline import PipelineOptions


def input_bytes(task: Task) -> int:
    """The bytes of a task's input (its files, or its figure-pairs line): what its memory grows with."""
    return len(task.pair.raw) if task.pair is not None else file_bytes(task.path, task.xml)


def _died(task: Task, reason: str) -> Result:
    return Result(task, stage="internal", reason=reason)


def process_pool_runner(workers: int):
    """A runner that maps :func:`run_task` over ``workers`` spawned processes (in this process when
    ``workers`` is 1 or there is one task), yielding results in task order with at most
    :func:`~figlink.engine.pool.window` tasks handed out past the oldest result not yet yielded. The pool
    (:class:`~figlink.engine.pool.MemoryBoundedPool`) replaces a worker that has grown and runs large
    inputs one at a time, so memory stays flat however many inputs there are."""

    def run(tasks: Iterable[Task]) -> Iterator[Result]:
        it = iter(tasks)
        head = list(islice(it, 2))
        if workers <= 1 or len(head) <= 1:
            yield from map(run_task, chain(head, it))
            return
        pool = MemoryBoundedPool(run_task, workers)
        yield from pool.map(chain(head, it), input_bytes, window(workers), _died)

    return run


def ingest(sources: Iterable[str | Path], corpus_dir: str | Path, workers: int = 1,
           options: PipelineOptions = PipelineOptions(), progress: bool = True) -> IngestReport:
    """Build or update the corpus at ``corpus_dir`` from ``sources`` (files and folders)."""
    return run_ingest(sources, corpus_dir, process_pool_runner(workers), options=options, progress=progress)


def default_workers() -> int:
    return min(4, usable_cores())

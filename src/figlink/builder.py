"""Sources to a searchable corpus in one call: ingest (parse + enrich, on an engine) → corpus → index.

>>> import figlink
>>> report = figlink.build(["papers/"], "corpus/", engine="local", workers=4)
>>> report.ingest.ok, report.ingest.failed, report.index.figures

``figlink ingest`` and ``figlink demo`` are this function with a progress bar and printed reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Optional

from figlink.engine.common import EngineError, IngestReport
from figlink.pipeline import PipelineOptions

if TYPE_CHECKING:
    from figlink.index.build import IndexReport

ENGINES = ("local", "ray")


@dataclass
class BuildReport:
    """What :func:`build` did: the ingest run, and the index update (None when not asked for)."""

    ingest: IngestReport
    index: Optional[IndexReport] = None

    @property
    def failed(self) -> int:
        """Inputs that failed (each recorded in the corpus with its stage and reason)."""
        return self.ingest.failed


def build(sources: Iterable[str | Path], corpus: str | Path, *, engine: str = "local", workers: int = 1,
          vision: bool = True, index: bool = True, address: Optional[str] = None, progress: bool = True,
          on_ingested: Optional[Callable[[IngestReport], None]] = None) -> BuildReport:
    """Build or update the corpus folder ``corpus`` from ``sources`` (files and folders), then its index.

    - ``engine``: ``"local"`` (``workers`` spawned processes) or ``"ray"`` (Ray tasks on a local Ray with
      ``workers`` CPUs, or on the cluster at ``address`` / ``$RAY_ADDRESS``); either way this process is
      the only writer, so the corpus is the same.
    - ``vision``: run the vision stage on figures with images; ``index``: update the search index after.
    - Resumable: inputs already ingested (same bytes) are skipped; a bad input is recorded (path, stage,
      reason) and the run goes on. ``on_ingested`` is called with the ingest report before indexing.

    Raises :class:`~figlink.engine.common.EngineError` for an unknown engine, or when Ray is missing or
    cannot be reached.
    """
    options = PipelineOptions(vision=vision)
    if engine == "local":
        from figlink.engine.local import ingest as run_local

        ingested = run_local(sources, corpus, workers=workers, options=options, progress=progress)
    elif engine == "ray":
        from figlink.engine.ray import ingest as run_ray

        ingested = run_ray(sources, corpus, workers=workers, options=options, progress=progress, address=address)
    else:
        raise EngineError(f"unknown engine {engine!r}: choose {' or '.join(ENGINES)}")
    if on_ingested is not None:
        on_ingested(ingested)
    report = BuildReport(ingested)
    if index:
        from figlink.index import build_index

        report.index = build_index(corpus)
    return report

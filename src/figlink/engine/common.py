"""What every engine shares: finding the sources, planning the tasks, running one task, and the writer.

An engine is only a *runner*: a function that takes the planned tasks and yields their results, in any
order, as they complete (``engine/local.py``: a process pool; ``engine/ray.py``: Ray tasks). Everything
else — walking folders, pairing PDFs with their XML, hashing inputs to skip the done ones, recording bad
inputs, committing to the corpus in small transactions from the calling process only, the progress bar
and the report — is here, so both engines build the same corpus from the same inputs.
"""

from __future__ import annotations

import hashlib
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

from figlink.corpus import Corpus, file_sha256
from figlink.errors import FiglinkError
from figlink.images import ImageFolder
from figlink.ingest import SUPPORTED_SUFFIXES, source_kind
from figlink.model import Paper
from figlink.pipeline import PipelineOptions, process_source

COMMIT_EVERY = 50
COMMIT_SECONDS = 2.0


class EngineError(RuntimeError):
    """The engine cannot run: unknown, not installed, or its cluster cannot be started or reached."""


@dataclass
class IngestReport:
    """What one ingest run did."""

    seen: int = 0
    skipped: int = 0
    ok: int = 0
    failed: int = 0
    seconds: float = 0.0
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (path, stage, reason)


@dataclass(frozen=True)
class Task:
    """One input to parse and enrich; ``path`` is also the name it is recorded under in the corpus."""

    path: str
    xml: Optional[str]
    sha256: str
    images: ImageFolder  # where the source's figure images go (the corpus's)
    options: PipelineOptions


@dataclass
class Result:
    """A task's outcome: a paper, or the stage that failed and why."""

    task: Task
    paper: Optional[Paper] = None
    stage: str = ""
    reason: str = ""


# A runner takes the tasks and yields one result per task, in completion order. It is closed (``close()``)
# when the writer stops early, so a generator's ``finally`` is where it stops its workers.
Runner = Callable[[list[Task]], Iterator[Result]]


@dataclass(frozen=True)
class Source:
    """One input: a file, or a PDF with the JATS XML of the same article (merged, MedICaT Appendix A)."""

    path: Path
    xml: Optional[Path] = None


def _pair_pdfs(files: list[Path]) -> list[Source]:
    """Pair ``X.pdf`` (or ``X-figures.pdf`` when there is no ``X.pdf``) with ``X.xml``/``X.nxml`` of the
    same folder; every other file is a source of its own."""
    by_key = {(f.parent, f.name.lower()): f for f in files}
    used: set[Path] = set()
    pairs: dict[Path, Path] = {}
    for f in files:
        if f.suffix.lower() != ".pdf":
            continue
        stem = f.stem[: -len("-figures")] if f.stem.lower().endswith("-figures") else f.stem
        if stem != f.stem and (f.parent, f"{stem}.pdf".lower()) in by_key:
            continue  # the article PDF takes the XML
        xml = by_key.get((f.parent, f"{stem}.xml".lower())) or by_key.get((f.parent, f"{stem}.nxml".lower()))
        if xml is not None and xml not in used:
            used.add(xml)
            pairs[f] = xml
    return [Source(f, pairs.get(f)) for f in files if f not in used]


def iter_sources(sources: Iterable[str | Path]) -> Iterator[Source]:
    """Files named, and supported files inside folders named (recursively, sorted), with PDFs paired
    with their XML; missing paths are yielded too, so that the run reports them."""
    for s in sources:
        p = Path(s)
        if p.is_dir():
            files = [f for f in sorted(p.rglob("*"))
                     if f.is_file() and not f.name.startswith(".") and f.name.lower().endswith(SUPPORTED_SUFFIXES)]
            yield from _pair_pdfs(files)
        else:
            yield Source(p)


def run_task(task: Task) -> Result:
    """Parse and enrich one input; every failure becomes a result with its stage, never an exception."""
    try:
        paper = process_source(task.path, xml=task.xml, images=task.images, options=task.options)
        return Result(task, paper=paper)
    except FiglinkError as e:
        return Result(task, stage=e.stage, reason=str(e))
    except MemoryError:
        return Result(task, stage="internal", reason="out of memory")
    except Exception as e:  # a bug or an unforeseen input must not stop the batch
        where = traceback.extract_tb(e.__traceback__)[-1]
        return Result(task, stage="internal",
                      reason=f"{type(e).__name__}: {e} (at {Path(where.filename).name}:{where.lineno})")


def progress_bar(enabled: bool = True):
    """The ingest progress bar on stderr (off when stderr is not a terminal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    return Progress(TextColumn("[bold]ingest"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                    TimeRemainingColumn(), transient=False, disable=not (enabled and sys.stderr.isatty()))


def plan(sources: Iterable[str | Path], corpus: Corpus, options: PipelineOptions,
         report: IngestReport) -> list[Task]:
    """The tasks to run: every source not done yet (by content hash). Unreadable and unsupported inputs are
    recorded as errors (stage ``read``) and committed."""
    done = corpus.done_hashes()
    images = corpus.image_folder()
    tasks: list[Task] = []
    for src in iter_sources(sources):
        path = src.path
        report.seen += 1
        try:
            if not path.exists():
                raise FileNotFoundError("no such file")
            if source_kind(path) is None:
                raise ValueError(f"unsupported input type: {path.name}")
            sha = file_sha256(path)
            if src.xml is not None:  # a pair is done when both files are unchanged
                sha = hashlib.sha256(f"{sha}+{file_sha256(src.xml)}".encode()).hexdigest()
        except (OSError, ValueError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            corpus.put_error(str(path), None, "read", reason)
            report.failed += 1
            report.failures.append((str(path), "read", reason))
            continue
        if sha in done:
            report.skipped += 1
            continue
        done.add(sha)  # the same bytes twice in one run are ingested once
        tasks.append(Task(str(path), None if src.xml is None else str(src.xml), sha, images, options))
    corpus.commit()
    return tasks


def run_ingest(sources: Iterable[str | Path], corpus_dir: str | Path, runner: Runner,
               options: PipelineOptions = PipelineOptions(), progress: bool = True) -> IngestReport:
    """Plan, run the tasks with ``runner``, and write each result to the corpus as it arrives.

    The calling process is the only writer: results are committed every ``COMMIT_EVERY`` results or
    ``COMMIT_SECONDS`` seconds, each batch one SQLite transaction, so a killed run loses at most the batch
    in flight and a rerun goes on from there.
    """
    t0 = time.perf_counter()
    report = IngestReport()
    corpus = Corpus(corpus_dir)
    try:
        tasks = plan(sources, corpus, options, report)
    except BaseException:
        corpus.close()
        raise
    last_commit = time.monotonic()
    pending = 0
    bar = progress_bar(progress)
    results = runner(tasks) if tasks else iter(())
    in_put = False  # between the first and last statement of one result's writes
    with bar:
        tid = bar.add_task("ingest", total=len(tasks), info="")
        try:
            for res in results:
                in_put = True
                if res.paper is not None:
                    corpus.put_paper(res.paper, res.task.sha256, res.task.path)
                    report.ok += 1
                else:
                    corpus.put_error(res.task.path, res.task.sha256, res.stage, res.reason)
                    report.failed += 1
                    report.failures.append((res.task.path, res.stage, res.reason))
                in_put = False
                pending += 1
                if pending >= COMMIT_EVERY or time.monotonic() - last_commit > COMMIT_SECONDS:
                    corpus.commit()
                    pending, last_commit = 0, time.monotonic()
                bar.update(tid, advance=1, info=f"{report.ok} ok, {report.failed} failed")
        finally:
            try:
                if in_put:  # stopped inside one result's writes (Ctrl-C): drop the batch, never half a paper
                    corpus.rollback()
                else:
                    corpus.commit()
                corpus.close()
            finally:
                close = getattr(results, "close", None)
                if close is not None:
                    close()  # stop the runner's workers when the writer stops early (error, Ctrl-C)
    report.seconds = time.perf_counter() - t0
    return report

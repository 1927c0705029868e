"""What every engine shares: finding the sources, planning the tasks, running one task, and the writer.

An engine is only a *runner*: a function that takes the planned tasks and yields their results *in task
order*, running at most a bounded window of tasks ahead of the oldest one not yet yielded
(``engine/local.py``: a process pool; ``engine/ray.py``: Ray tasks). Everything else — walking folders,
pairing PDFs with their XML, hashing inputs to skip the done ones, recording bad inputs, giving out paper
ids, committing to the corpus in small transactions from the calling process only, the progress bar and the
report — is here, so both engines build the same corpus from the same inputs.

Results are written in input order, whatever order the workers finish in: which of two inputs keeps a
contested paper id (:mod:`figlink.paper_ids`) never depends on timing, and since what a killed run had
committed is a prefix of the inputs, a rerun resumes into the corpus an uninterrupted run builds.
"""

from __future__ import annotations

import hashlib
import sys
import time
import traceback
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

from figlink.corpus import Corpus, file_sha256
from figlink.errors import FiglinkError
from figlink.images import discard
from figlink.ingest import source_kind
from figlink.ingest.pairs import PairLine, pair_id_of, pair_lines
from figlink.ingest.sources import iter_sources
from figlink.model import Paper
from figlink.pipeline import PipelineOptions, stage_pair, stage_source

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
    renamed: list[tuple[str, str, str, str]] = field(default_factory=list)  # (path, proposed id, stored id, holder)
    nodes: dict[str, int] = field(default_factory=dict)  # tasks run per node, when the runner says where


@dataclass(frozen=True)
class Task:
    """One input to parse and enrich; ``path`` is also the name it is recorded under in the corpus."""

    path: str
    xml: Optional[str]
    sha256: str
    staging: str  # the folder the source's figure images are saved in, until the writer publishes them
    options: PipelineOptions
    pair: Optional[PairLine] = None  # a line of a figure-pairs file (``path`` is then ``FILE:LINE``)


@dataclass
class Result:
    """A task's outcome: a paper, or the stage that failed and why."""

    task: Task
    paper: Optional[Paper] = None
    stage: str = ""
    reason: str = ""
    node: str = ""  # where it ran, when the runner knows (the Ray node id)


# A runner takes the tasks (an iterator: they are planned as the runner asks for them) and yields one
# result per task, in task order, never taking more than ``figlink.engine.pool.window(workers)`` tasks past
# the oldest one it has not yielded (so results waiting for a slow task stay few, and so does the plan). It is closed
# (``close()``) when the writer stops early, so a generator's ``finally`` is where it stops its workers.
Runner = Callable[[Iterable[Task]], Iterator[Result]]


@dataclass
class Plan:
    """What planning keeps while a run goes, all of it bounded by the tasks in flight (and the failures):
    the tasks handed out and not yet written, the later inputs with the same bytes as one of them (they
    share its outcome), and the failures of this run (a later copy of those bytes shares them too)."""

    in_flight: dict[str, str] = field(default_factory=dict)  # sha256 → path of its task, until written
    twins: dict[str, list[str]] = field(default_factory=dict)  # sha256 → paths of the later copies
    failed: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # sha256 → (path, stage, reason)


def run_task(task: Task) -> Result:
    """Parse and enrich one input; every failure becomes a result with its stage, never an exception."""
    try:
        if task.pair is not None:
            return Result(task, paper=stage_pair(task.pair, staging=Path(task.staging), options=task.options))
        paper = stage_source(task.path, xml=task.xml, staging=Path(task.staging), options=task.options)
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


def _record_failure(corpus: Corpus, report: IngestReport, name: str, stage: str, reason: str) -> None:
    corpus.put_error(name, None, stage, reason)
    report.failed += 1
    report.failures.append((name, stage, reason))


def _pair_sha256(line: PairLine, record: object) -> str:
    """A pairs line is done when its bytes and its image's bytes are unchanged."""
    h = hashlib.sha256(b"pairs\0" + line.raw)
    image = record.get("image") if isinstance(record, dict) else None
    if isinstance(image, str) and image.strip():
        path = Path(line.file).resolve().parent / image.strip()
        try:
            h.update(file_sha256(path).encode())
        except OSError:
            h.update(b"\0unreadable")  # the task reports why
    return h.hexdigest()


def _plan_pairs(path: Path, corpus: Corpus, options: PipelineOptions, report: IngestReport,
                seen_ids: set[str], state: Plan) -> Iterator[Task]:
    """One task per line of a figure-pairs file not done yet. A line whose figure id repeats an earlier
    line's (of any pairs file of this run) is an error of that line; a line that is not JSON goes to its
    task, which reports it; a line with the bytes of an earlier one is skipped."""
    for line in pair_lines(path):
        report.seen += 1
        try:
            record: object = line.decode()
        except FiglinkError:
            record = None
        pair_id = pair_id_of(record)
        if pair_id and pair_id in seen_ids:
            _record_failure(corpus, report, line.name, "parse", f"{pair_id}: id repeats an earlier line")
            continue
        seen_ids.add(pair_id)
        sha = _pair_sha256(line, record)
        if sha in state.in_flight or sha in state.failed or corpus.is_done(sha):
            report.skipped += 1
            continue
        state.in_flight[sha] = line.name
        yield Task(line.name, None, sha, str(corpus.staging_dir(sha)), options, pair=line)


def plan(sources: Iterable[str | Path], corpus: Corpus, options: PipelineOptions,
         report: IngestReport, state: Plan) -> Iterator[Task]:
    """The tasks to run, planned as they are asked for: every source not done yet (by content hash, asked
    of the corpus), in the order the sources are found. A later copy of a task's bytes is not run again
    but shares its outcome (a twin, kept in ``state`` while that task is in flight; once it is written,
    the corpus or ``state.failed`` says the outcome). Unreadable and unsupported inputs are recorded as
    errors (stage ``read``), committed with the writer's next batch."""
    corpus.clear_staging()
    pair_ids: set[str] = set()
    for src in iter_sources(sources):
        path = src.path
        if path.is_file() and source_kind(path) == "pairs":
            try:
                yield from _plan_pairs(path, corpus, options, report, pair_ids, state)
            except (FiglinkError, OSError) as e:
                report.seen += 1
                _record_failure(corpus, report, str(path), "read", str(e))
            continue
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
            _record_failure(corpus, report, str(path), "read", reason)
            continue
        if sha in state.in_flight:  # the same bytes twice in one run are parsed once; the copy shares the outcome
            state.twins.setdefault(sha, []).append(str(path))
            continue
        if sha in state.failed:
            _fail_twin(corpus, report, str(path), *state.failed[sha])
            continue
        if corpus.is_done(sha):
            report.skipped += 1
            continue
        state.in_flight[sha] = str(path)
        yield Task(str(path), None if src.xml is None else str(src.xml), sha, str(corpus.staging_dir(sha)), options)


def _fail_twin(corpus: Corpus, report: IngestReport, twin: str, path: str, stage: str, reason: str) -> None:
    """Record the failure of an input whose bytes are those of the failed input ``path``."""
    _record_failure(corpus, report, twin, stage, f"{reason} (the same bytes as {path})")


def _write(corpus: Corpus, res: Result, state: Plan, report: IngestReport) -> None:
    """Write one result: the paper under the id :meth:`Corpus.claim_id` gives it (its images published), or
    the failure; then the outcome of the inputs with the same bytes."""
    task = res.task
    state.in_flight.pop(task.sha256, None)
    twins = state.twins.pop(task.sha256, [])
    paper, stage, reason = res.paper, res.stage, res.reason
    if paper is not None:
        claim = corpus.claim_id(paper, task.path)
        if claim.duplicate:
            ids = ", ".join(f"{k} {v}" for k, v in (("PMCID", paper.pmcid), ("DOI", paper.doi)) if v)
            reason = (f"the same article ({ids}) as {claim.holder}, stored as paper {paper.paper_id}; not "
                      f"stored again (to update that paper, replace {claim.holder} and ingest again)")
            paper, stage = None, "duplicate"
        elif claim.paper_id is not None and claim.paper_id != paper.paper_id:
            natural = paper.paper_id
            note = f"paper id {natural} is held by another paper (from {claim.holder}); stored as {claim.paper_id}"
            paper = replace(paper, paper_id=claim.paper_id, warnings=[*paper.warnings, note])
            report.renamed.append((task.path, natural, claim.paper_id, claim.holder or ""))
    if paper is not None:
        corpus.put_paper(paper, task.sha256, task.path, staged=Path(task.staging))
        report.ok += 1
        report.skipped += len(twins)  # the same bytes: that paper
        return
    discard(Path(task.staging))
    corpus.put_error(task.path, task.sha256, stage, reason)
    report.failed += 1
    report.failures.append((task.path, stage, reason))
    state.failed[task.sha256] = (task.path, stage, reason)
    for twin in twins:
        _fail_twin(corpus, report, twin, task.path, stage, reason)


def run_ingest(sources: Iterable[str | Path], corpus_dir: str | Path, runner: Runner,
               options: PipelineOptions = PipelineOptions(), progress: bool = True) -> IngestReport:
    """Plan, run the tasks with ``runner``, and write each result to the corpus as it arrives (in task order).

    The calling process is the only writer: results are committed every ``COMMIT_EVERY`` results or
    ``COMMIT_SECONDS`` seconds, each batch one SQLite transaction, so a killed run loses at most the batch
    in flight and a rerun goes on from there.
    """
    t0 = time.perf_counter()
    report = IngestReport()
    corpus = Corpus(corpus_dir)
    state = Plan()
    try:
        tasks = plan(sources, corpus, options, report, state)
        first = next(tasks, None)  # the runner (a Ray cluster…) starts only when there is something to do
    except BaseException:
        corpus.close()
        raise
    last_commit = time.monotonic()
    pending = 0
    bar = progress_bar(progress)
    results = runner(chain([first], tasks)) if first is not None else iter(())
    in_put = False  # between the first and last statement of one result's writes
    with bar:
        tid = bar.add_task("ingest", total=None, info="")
        try:
            for res in results:
                in_put = True
                if res.node:
                    report.nodes[res.node] = report.nodes.get(res.node, 0) + 1
                _write(corpus, res, state, report)
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

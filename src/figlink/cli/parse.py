"""``figlink parse``: papers in, one Paper JSON line (or a table) per input out.

The command most often run on many files in a shell loop, so its start-up is kept to what parsing needs:
it reads its arguments with :mod:`argparse` and writes plain lines, without typer, rich or pydantic (typer
imports pydantic, about 0.4 s of a start-up that was 0.6 s). ``figlink parse`` reaches it before the
typer application is built (:func:`figlink.cli.main`); the typer application forwards its own ``parse``
to :func:`main` too, so there is one definition of the command. Folders stand for the supported files
inside them (recursively, sorted, PDFs paired with their XML: :func:`figlink.ingest.sources.iter_sources`,
as ``figlink ingest`` reads them).

Every failure is one line on stderr (``error: PATH: STAGE: reason``); the other inputs still parse and the
exit status is 1 when any failed, 2 for a usage error. ``--workers N`` parses in N processes (the engine's
:class:`~figlink.engine.pool.MemoryBoundedPool`: a worker that dies fails its input with one line); the
output is the same lines in the same order, each written as soon as it and every one before it are done.
The default, ``--workers auto``, is one process per usable core (at most :data:`MAX_AUTO_WORKERS`) when the
inputs are work enough to be worth forking for (:func:`_enough_to_fork`), else this process alone, as with
``--images``.

The workers are made cheap to start and to feed: this process parses the first input itself (which
imports and compiles everything parsing needs), then forks the workers as copies of itself where the system
allows it (:func:`~figlink.engine.pool.fork_start`; spawned processes import it all again), and hands them
:data:`CHUNK` inputs per message; each worker sends back the finished JSON lines of a chunk at once.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from functools import partial
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, NoReturn, Optional, Sequence, TextIO

if TYPE_CHECKING:
    from figlink.images import ImageFolder
    from figlink.ingest.sources import Source
    from figlink.model import Paper

CHUNK = 8  # inputs per message to a worker (fewer at the end of a run, so the workers finish together)
MAX_AUTO_WORKERS = 8  # ``--workers auto`` starts at most this many (each holds a parsed article's memory)
# ``--workers auto`` forks workers for inputs that hold this many bytes in all (about 15 JATS articles, two
# PDFs: work of 60 ms or more, where two workers gain more than forking them costs), or are this many
FORK_BYTES = 2 << 20
FORK_INPUTS = 64


def one_line(text: object) -> str:
    """``text`` on one line: every run of white space (line breaks included) made one space."""
    return " ".join(str(text).split())


class _Arguments(argparse.ArgumentParser):
    """argparse with usage errors on one line and Click's exit code for them (2)."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {one_line(message)} (see {self.prog} --help)\n")
        sys.exit(2)


def arguments(prog: str = "figlink parse") -> argparse.ArgumentParser:
    """The command's arguments."""
    ap = _Arguments(prog=prog, description="Parse papers into the figlink data model; bad inputs are "
                                           "reported and the others still parse.")
    ap.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                    help="JATS .xml/.nxml, PMC OA .tar.gz or PDF files, or folders of them.")
    ap.add_argument("--xml", type=Path, default=None, help="JATS XML of the PDF, to merge with it.")
    ap.add_argument("--json", dest="as_json", action="store_true", help="Print one Paper JSON per input (JSON lines).")
    ap.add_argument("--pretty", action="store_true", help="Indent the JSON.")
    ap.add_argument("--images", type=Path, default=None, help="Save figure images under this folder.")
    ap.add_argument("--workers", type=_workers, default=None, metavar="N",
                    help="Parse in N processes, or 'auto' (the default): one per usable core, but one for a "
                         "few small inputs or with --images (output in input order all the same).")
    return ap


def _workers(text: str) -> Optional[int]:
    """``auto`` (None) or a whole number of at least 1 (argparse type)."""
    if text == "auto":
        return None
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a whole number of at least 1, got {text!r}")
    return int(text)


def auto_workers() -> int:
    """What ``--workers auto`` means on this machine: one worker per usable core, at most
    :data:`MAX_AUTO_WORKERS`."""
    from figlink.engine.pool import usable_cores

    return min(MAX_AUTO_WORKERS, usable_cores())


def main(argv: Optional[Sequence[str]] = None, prog: str = "figlink parse") -> int:
    """Run ``figlink parse`` with ``argv`` (the arguments after ``parse``); the exit status."""
    args = arguments(prog).parse_args(argv)
    if not args.paths:
        sys.stderr.write(f"error: Missing argument 'PATH...'. (see {prog} --help)\n")
        return 2
    if args.workers is not None and args.workers > 1 and args.images is not None:
        sys.stderr.write(f"error: --images writes one folder from one process: use it with --workers 1 "
                         f"(see {prog} --help)\n")
        return 2
    try:
        return run(args.paths, xml=args.xml, as_json=args.as_json, pretty=args.pretty, images=args.images,
                   workers=args.workers)
    except Exception as e:  # a bug outside any one input (listing a folder, writing stdout): one line
        sys.stderr.write(f"error: {one_line(f'internal: {type(e).__name__}: {e}')}\n")
        return 1


@dataclass(frozen=True)
class _Outcome:
    """What one input gave: its JSON line, or its paper (for the table), or its one-line error."""

    path: Path
    json: Optional[str] = None
    paper: Optional[Paper] = None
    error: Optional[str] = None


def _outcome(source: Source, xml: Optional[Path], as_json: bool, pretty: bool,
             images: Optional[ImageFolder] = None, paper_id: Optional[Callable[[Paper], str]] = None) -> _Outcome:
    """Parse one input (in a worker process, or in this one); a failure is the input's error line."""
    from figlink.errors import FiglinkError
    from figlink.pipeline import process_source

    path = source.path
    try:
        paper = process_source(path, xml=source.xml or xml, images=images, paper_id=paper_id)
    except FiglinkError as e:
        return _failed(source, f"{e.stage}: {e}")
    except Exception as e:  # a bug on one input must not stop the others
        return _failed(source, f"internal: {type(e).__name__}: {e}")
    if as_json:
        return _Outcome(path, json=paper.to_json(indent=2 if pretty else None) + "\n")
    return _Outcome(path, paper=paper)


def _failed(source: Source, reason: str) -> _Outcome:
    return _Outcome(source.path, error=f"error: {one_line(f'{source.path}: {reason}')}\n")


def _died(source: Source, reason: str) -> _Outcome:
    """The outcome of an input whose worker process died (a crash in a native library)."""
    return _failed(source, f"internal: {reason}")


def _source_bytes(source: Source) -> int:
    from figlink.engine.pool import file_bytes

    return file_bytes(source.path, source.xml)


def run(paths: Sequence[Path], xml: Optional[Path] = None, as_json: bool = False, pretty: bool = False,
        images: Optional[Path] = None, out: Optional[TextIO] = None, err: Optional[TextIO] = None,
        workers: Optional[int] = 1) -> int:
    """Parse every input that ``paths`` names, in ``workers`` processes (None: as ``--workers auto`` says;
    more than 1 not with ``images``); 1 when any failed, else 0."""
    from figlink.images import ImageFolder
    from figlink.ingest.sources import iter_sources
    from figlink.paper_ids import variants

    if workers is not None and workers > 1 and images is not None:
        raise ValueError("images are saved by one process: use workers=1")
    out = out or sys.stdout
    err = err or sys.stderr
    failed = 0
    given: set[str] = set()  # ids given in this call: two inputs never share an images folder

    def unique_id(paper: Paper) -> str:
        pid = next(v for v in variants(paper.paper_id) if v not in given)
        if pid != paper.paper_id:
            err.write(f"warning: {one_line(f'{paper.paper_id} is the id of an earlier input of this call; stored as {pid}')}\n")
        given.add(pid)
        return pid

    folder = None if images is None else ImageFolder(images)
    parse_one = partial(_outcome, xml=xml, as_json=as_json, pretty=pretty, images=folder,
                        paper_id=None if folder is None else unique_id)
    sources: Iterator[Source] = iter_sources(paths, pairs=False)
    if workers is None:
        head: list[Source] = []
        enough = images is None and _enough_to_fork(sources, head)
        sources = chain(head, sources)
        workers = auto_workers() if enough else 1
    if workers == 1:
        outcomes: Iterable[_Outcome] = map(parse_one, sources)
    else:
        outcomes = _in_processes(parse_one, sources, workers)
    for done in outcomes:
        if done.error is not None:
            failed += 1
            err.write(done.error)
        elif done.json is not None:
            out.write(done.json)
        elif done.paper is not None:
            _print_table(done.paper, out)
            for w in done.paper.warnings:
                err.write(f"warning: {one_line(f'{done.path}: {w}')}\n")
    out.flush()
    return 1 if failed else 0


def _enough_to_fork(sources: Iterator[Source], head: list[Source]) -> bool:
    """Whether the inputs are work enough for ``--workers auto`` to fork workers: at least two that hold
    :data:`FORK_BYTES` bytes in all (parsing time grows with the bytes), or :data:`FORK_INPUTS` of them.
    The inputs it looked at are appended to ``head`` (no more than it needed)."""
    total = 0
    for source in sources:
        head.append(source)
        total += _source_bytes(source)
        if len(head) >= 2 and (total >= FORK_BYTES or len(head) >= FORK_INPUTS):
            return True
    return False


def _in_processes(parse_one: Callable[[Source], _Outcome], sources: Iterator[Source],
                  workers: int) -> Iterator[_Outcome]:
    """``parse_one`` of each source, in order: the first one here (it imports and compiles what parsing
    needs), the others in ``workers`` processes forked after it where the system allows it, so that they
    start with all of that."""
    from figlink.engine.pool import MemoryBoundedPool, fork_start, window

    first = next(sources, None)
    if first is None:
        return
    yield parse_one(first)
    pool = MemoryBoundedPool(parse_one, workers, start=fork_start(), chunk=CHUNK)
    yield from pool.map(sources, _source_bytes, window(workers), _died)


def _print_table(paper: Paper, out: TextIO) -> None:
    """The paper's figures as a table (rich is imported only here: ``--json`` never needs it)."""
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{paper.paper_id} — {paper.title or ''}", title_justify="left")
    for col in ("figure", "label", "caption", "refs", "panels cited"):
        t.add_column(col, overflow="fold")
    for f in paper.figures:
        panels = sorted({p for r in f.inline_refs for p in r.panels})
        t.add_row(f.figure_id, f.label or "", (f.caption[:80] + "…") if len(f.caption) > 80 else f.caption,
                  str(len(f.inline_refs)), ",".join(panels))
    console = Console(file=out)
    console.print(t)
    console.print(f"license: {paper.license.spdx} (open: {paper.license.open})  doi: {paper.doi}")


__all__ = ["arguments", "auto_workers", "main", "run"]

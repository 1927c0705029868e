"""What every ``figlink`` command shares: the two consoles, one-line errors and failure lines.

Every failure is one line on stderr, whatever the terminal: the error console never wraps (a rich console
writing to a pipe or a file would wrap at 80 columns), and :func:`one_line` folds the line breaks of
messages that come from elsewhere (a library's exception, a file name).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from figlink.cli.parse import one_line

if TYPE_CHECKING:
    from figlink.corpus import Corpus

err = Console(stderr=True, soft_wrap=True, highlight=False)
out = Console()


def print_failures(failures: list[tuple[str, str, str]]) -> None:
    """One line per failed item (name, stage, reason), never wrapped; names are not read as markup."""
    for item, stage, reason in failures:
        err.print(f"[red]failed:[/red] {escape(one_line(f'{item}: {stage}: {reason}'))}")


def print_renamed(renamed: list[tuple[str, str, str, str]]) -> None:
    """One line per paper stored under another id than the one its file proposed."""
    for path, proposed, stored, holder in renamed:
        err.print(f"[yellow]renamed:[/yellow] {escape(one_line(f'{path}: paper id {proposed} is held by {holder}; stored as {stored}'))}")


def print_left_out(n: int, of_what: str) -> None:
    """``N figure(s) with an image left out of <of_what>`` on stderr, when any was."""
    if n:
        err.print(f"{n} figure{'s' if n != 1 else ''} with an image left out of {of_what}", highlight=False)


def warn(msg: str) -> None:
    """``warning: msg`` on stderr, one line."""
    err.print(f"[yellow]warning:[/yellow] {escape(one_line(msg))}")


def fail(msg: str, code: int = 2) -> NoReturn:
    """Print ``error: msg`` on stderr (one line) and exit with ``code``."""
    err.print(f"[red]error:[/red] {escape(one_line(msg))}")
    raise typer.Exit(code)


def open_corpus(path: Path) -> Corpus:
    """The corpus at ``path``, read-only; ``error: no corpus at …`` and exit 2 when there is none."""
    from figlink.corpus import Corpus

    try:
        return Corpus(path, readonly=True)
    except FileNotFoundError as e:
        fail(str(e))

"""What every ``figlink`` command shares: the two consoles, one-line errors and failure lines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from figlink.corpus import Corpus

err = Console(stderr=True)
out = Console()


def print_failures(failures: list[tuple[str, str, str]]) -> None:
    """One line per failed item (name, stage, reason), never wrapped; names are not read as markup."""
    for item, stage, reason in failures:
        err.print(f"[red]failed:[/red] {escape(f'{item}: {stage}: {reason}')}", highlight=False, soft_wrap=True)


def fail(msg: str, code: int = 2) -> NoReturn:
    """Print ``error: msg`` on stderr and exit with ``code``."""
    err.print(f"[red]error:[/red] {escape(msg)}", highlight=False)
    raise typer.Exit(code)


def open_corpus(path: Path) -> Corpus:
    """The corpus at ``path``, read-only; ``error: no corpus at …`` and exit 2 when there is none."""
    from figlink.corpus import Corpus

    try:
        return Corpus(path, readonly=True)
    except FileNotFoundError as e:
        fail(str(e))

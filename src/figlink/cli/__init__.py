"""The ``figlink`` command line: one subcommand per stage.

``parse`` (:mod:`.parse`), ``ingest`` / ``demo`` (:mod:`.papers`), ``show`` / ``export`` / ``index``
(:mod:`.corpus`), ``search`` / ``serve`` (:mod:`.search`), ``panels`` (:mod:`.panels`), ``train`` / ``embed`` (:mod:`.learn`)
and ``captions``
(from :mod:`figlink.text.cli_captions`). Each command is a thin layer over the Python API.

``figlink parse`` runs without the typer application (:mod:`.application`): typer imports pydantic and rich, most of
the start-up of a command that parses one article in a few milliseconds. Every other command, and ``parse``
inside the application (``CliRunner().invoke(app, ["parse", ...])``), goes through :data:`app`, which is
imported on first use (``from figlink.cli import app``).
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn, Optional, Sequence

VERBOSE_FLAGS = ("--verbose", "-v")


def main(argv: Optional[Sequence[str]] = None) -> NoReturn:
    """The console entry point: ``figlink ARGS`` (``argv``: the arguments, default ``sys.argv[1:]``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    lead = 0
    while lead < len(args) and args[lead] in VERBOSE_FLAGS:
        lead += 1
    if lead < len(args) and args[lead] == "parse":
        from figlink.cli import parse

        if lead:
            from figlink.logs import set_verbose

            set_verbose(True)
        sys.exit(parse.main(args[lead + 1:]))
    from figlink.cli.application import app

    app(args=args, prog_name="figlink")
    sys.exit(0)  # pragma: no cover - the application exits itself


def __getattr__(name: str) -> Any:
    """``app`` and ``OneLineErrors``, imported on first use."""
    if name in ("app", "OneLineErrors"):
        from figlink.cli import application

        return getattr(application, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["main", "app"]

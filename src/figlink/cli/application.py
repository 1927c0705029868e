"""The typer application behind every ``figlink`` command but ``parse`` run on its own (see
:func:`figlink.cli.main`).

Every failure is one line on stderr (:class:`OneLineErrors`): a usage error, a bad input, and a bug alike
(``figlink --verbose`` adds the traceback of a bug and lets the libraries' own logs through).
"""


from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any, Optional, Sequence

import typer
from typer.core import TyperGroup
from typer.exceptions import Abort

try:  # the Click that typer runs on: its own copy since typer 0.2x
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - an older typer on the real Click
    from click import exceptions as click_errors  # type: ignore[no-redef]

from figlink.cli import caption as caption_cli
from figlink.cli import corpus, learn, panels, papers, search
from figlink.cli import parse as parse_command
from figlink.cli.common import err, one_line
from figlink.logs import set_verbose, verbose
from figlink.text.cli_captions import captions_app


class OneLineErrors(TyperGroup):
    """The root command group: Click's usage errors (a box or a usage block of several lines) and uncaught
    exceptions (a traceback) become one ``error:`` line on stderr, with Click's exit codes (2 for usage,
    1 for the rest)."""

    def main(self, args: Optional[Sequence[str]] = None, prog_name: Optional[str] = None,
             complete_var: Optional[str] = None, standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:
        run = dict(windows_expand_args=windows_expand_args, **extra)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **run)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **run)
        except click_errors.NoArgsIsHelpError as e:  # `figlink` or `figlink captions` alone: the help
            e.show()
            sys.exit(e.exit_code)
        except click_errors.ClickException as e:
            ctx = getattr(e, "ctx", None)
            where = f" (see {ctx.command_path} --help)" if ctx is not None else ""
            err.print(f"[red]error:[/red] {_escape(one_line(e.format_message()) + where)}")
            sys.exit(e.exit_code)
        except Abort:
            err.print("[red]error:[/red] aborted")
            sys.exit(1)
        except Exception as e:  # a bug: one line, the traceback with --verbose
            if verbose():
                traceback.print_exc()
            tb = traceback.extract_tb(e.__traceback__)
            at = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
            err.print(f"[red]error:[/red] {_escape(one_line(f'internal: {type(e).__name__}: {e}{at}'))}")
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


app = typer.Typer(cls=OneLineErrors, add_completion=False, no_args_is_help=True,
                  help="figlink: figures in context from scientific papers.")


@app.callback()
def _root(show_logs: bool = typer.Option(False, "--verbose", "-v",
                                         help="Let the libraries' own logs through; tracebacks for internal errors.")
          ) -> None:
    """figlink: figures in context from scientific papers."""
    if show_logs:
        set_verbose(True)


app.add_typer(captions_app, name="captions", help="Caption intelligence: subcaptions, cues, normalization.")
app.command("panels")(panels.panels_command)
app.add_typer(learn.train_app, name="train", help="Train the learned models (matcher).")
app.command("embed")(learn.embed)
learn.train_app.command("captioner")(caption_cli.train_captioner_command)
app.add_typer(caption_cli.caption_app, name="caption", help="Generate figure captions (learned captioner).")
for command in (papers.ingest, corpus.show, corpus.export, corpus.index, search.search, search.serve, papers.demo):
    app.command()(command)


@app.command("parse", add_help_option=False,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             help="Parse papers into the figlink data model (JSON lines with --json); folders stand for the files "
                  "inside. `figlink parse --help` for its options.")
def _parse(ctx: typer.Context) -> None:
    """``figlink parse`` is a plain command (:mod:`figlink.cli.parse`): its arguments go to it as they are."""
    raise typer.Exit(parse_command.main(ctx.args))

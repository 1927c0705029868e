"""The ``figlink`` command line: one subcommand per stage.

``parse`` / ``ingest`` / ``demo`` (:mod:`.papers`), ``show`` / ``export`` / ``index`` (:mod:`.corpus`),
``search`` / ``serve`` (:mod:`.search`), ``panels`` (:mod:`.panels`) and ``captions`` (from
:mod:`figlink.text.cli_captions`). Each command is a thin layer over the Python API.
"""

from __future__ import annotations

import typer

from figlink.cli import corpus, panels, papers, search
from figlink.text.cli_captions import captions_app

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="figlink: figures in context from scientific papers.")
app.add_typer(captions_app, name="captions", help="Caption intelligence: subcaptions, cues, normalization.")
app.command("panels")(panels.panels_command)
for command in (papers.parse, papers.ingest, corpus.show, corpus.export, corpus.index, search.search, search.serve,
                papers.demo):
    app.command()(command)


def main() -> None:  # pragma: no cover - console entry point
    app()

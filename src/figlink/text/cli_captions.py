"""``figlink captions …``: caption intelligence from the command line.

Mounted by the main CLI as ``app.add_typer(captions_app, name="captions")``.

- ``captions split TEXT [--json]``: one caption → its split, compound cues, normalization, figure index.
- ``captions split --jsonl FILE``: one ``{"id", "caption"}`` object per line in (``-`` = stdin), one JSON
  result per line out, in order; a bad line gives ``{"id", "line", "error": {"stage", "message"}}`` and
  the run goes on. The exit status is 0 even when some lines were bad (their errors are in the output).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, TextIO

import typer

from figlink.errors import FiglinkError
from figlink.text.captions import analyze_caption

captions_app = typer.Typer(help="Caption intelligence: subcaptions, compound cues, normalization.",
                           no_args_is_help=True, add_completion=False)


@captions_app.callback()
def _group() -> None:
    """Caption intelligence: subcaptions, compound cues, normalization, medical keywords."""


def _error(stage: str, message: str) -> dict[str, str]:
    return {"stage": stage, "message": message}


def process_line(line: str, number: int) -> dict[str, Any]:
    """The output object for one JSONL input line; never raises for bad input."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return {"id": None, "line": number, "error": _error("read", f"invalid JSON: {exc.msg}")}
    if not isinstance(record, dict):
        return {"id": None, "line": number, "error": _error("read", "a line must be a JSON object")}
    rid = record.get("id")
    if "caption" not in record:
        return {"id": rid, "line": number, "error": _error("read", "missing key 'caption'")}
    try:
        return {"id": rid, **analyze_caption(record["caption"])}
    except FiglinkError as exc:
        return {"id": rid, "line": number, "error": _error(exc.stage, str(exc))}
    except Exception as exc:  # a bug on one caption must not stop the batch; report it on its line
        return {"id": rid, "line": number, "error": _error("captions", f"{type(exc).__name__}: {exc}")}


def process_lines(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """One output object per non-blank input line, in order."""
    for number, line in enumerate(lines, 1):
        if line.strip():
            yield process_line(line, number)


def _render(result: dict[str, Any]) -> str:
    split = result["caption_split"]
    rows = [f"compound: {result['is_compound']}  expected panels: {result['expected_panels']}"]
    if result["figure_index"]:
        rows.append(f"figure: {result['figure_index']['label']} (key {result['figure_index']['key']})")
    rows.append(f"shared: {split['shared_text']}")
    for sub in split["subcaptions"]:
        where = ",".join(sub["labels"]) or "-"
        if sub["positions"]:
            where += " @" + ",".join(sub["positions"])
        rows.append(f"  [{where}] {sub['text']}")
    rows.append(f"normalized: {result['normalized']['basic']}")
    return "\n".join(rows)


def _open(path: str) -> TextIO:
    return sys.stdin if path == "-" else Path(path).open(encoding="utf-8", errors="replace")


@captions_app.command("split")
def split_command(
    text: Optional[str] = typer.Argument(None, help="The caption text."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    jsonl: Optional[str] = typer.Option(None, "--jsonl", help='File of {"id", "caption"} lines ("-": stdin).'),
) -> None:
    """Split a caption into shared text and subcaptions, with compound cues and normalization."""
    if jsonl is not None:
        try:
            handle = _open(jsonl)
        except OSError as exc:
            typer.echo(f"error: cannot read {jsonl}: {exc.strerror or exc}", err=True)
            raise typer.Exit(2)
        with handle:
            for result in process_lines(handle):
                sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        return
    if text is None:
        typer.echo("error: give a caption TEXT or --jsonl FILE", err=True)
        raise typer.Exit(2)
    try:
        result = analyze_caption(text)
    except FiglinkError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1)
    typer.echo(json.dumps(result, ensure_ascii=False, indent=2) if as_json else _render(result))


__all__ = ["captions_app", "process_line", "process_lines"]

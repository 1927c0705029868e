"""``figlink panels IMAGE [--caption TEXT] --json``: panels, labels, subcaptions, OCR and type of one image.

Mounted by :mod:`figlink.cli` as ``figlink panels``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from figlink.cli.common import one_line
from figlink.errors import FiglinkError
from figlink.model import CaptionSplit


def _split(caption: str) -> CaptionSplit:
    from figlink.text.captions import split_caption

    return split_caption(caption)


def panels_command(
    image: Path = typer.Argument(..., help="figure image (PNG, JPEG, TIFF, …)"),
    caption: Optional[str] = typer.Option(None, "--caption", help="the figure's caption, to align subcaptions"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    no_ocr: bool = typer.Option(False, "--no-ocr", help="skip OCR and label reading (faster)"),
) -> None:
    """Cut a figure into panels, read its text and labels, guess its type, align subcaptions."""
    from figlink.enrich.vision import analyze_figure

    split = _split(caption) if caption else None
    try:
        fv = analyze_figure(image, split, ocr=not no_ocr)
    except FiglinkError as exc:
        msg = {"image": str(image), "error": one_line(exc), "stage": exc.stage}
        typer.echo(json.dumps(msg) if as_json else f"error: {one_line(f'{image}: {exc}')}", err=True)
        raise typer.Exit(code=2)
    out = {"image": str(image), **fv.to_dict(), "caption_split": split.to_dict() if split else None}
    if as_json:
        typer.echo(json.dumps(out, ensure_ascii=False))
        return
    ft = fv.figure_type.label if fv.figure_type else "unknown"
    typer.echo(f"{image}: {fv.width}x{fv.height}, {len(fv.panels)} panel(s), type {ft}")
    for p in fv.panels:
        box = ", ".join(f"{v:.0f}" for v in p.bbox)
        typer.echo(f"  [{p.label or '?'}] ({box})  {(fv.subcaption(p) or '')[:70]}")

"""Opening a PDF safely: one clear error per bad file, pages handed out one at a time."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pypdfium2 as pdfium

from figlink.errors import InputError, ParseError


@dataclass(frozen=True)
class Limits:
    """Caps that keep one document from taking the batch down with it."""

    max_pages: int = 2000
    max_page_side: float = 14400.0  # points: the largest page PDF itself allows (200 inches)
    max_render_pixels: int = 25_000_000  # a page is rendered at a lower scale past this
    time_limit_s: float = 300.0
    max_bytes: int = 500 * 1024 * 1024


class TimeLimit:
    """A per-document deadline, checked between pages."""

    def __init__(self, seconds: float, name: str) -> None:
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.name = name

    def check(self, where: str) -> None:
        if time.monotonic() > self.deadline:
            raise InputError(f"{self.name}: took longer than the {self.seconds:g} s limit ({where})",
                             stage="timeout")


def open_pdf(path: Path, limits: Limits) -> pdfium.PdfDocument:
    """The document, or an :class:`InputError`/:class:`ParseError` that says what is wrong with it."""
    name = path.name
    if not path.is_file():
        raise InputError(f"{name}: no such file")
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"{name}: empty file")
    if size > limits.max_bytes:
        raise InputError(f"{name}: {size} bytes is over the {limits.max_bytes} byte limit")
    with path.open("rb") as fh:
        head = fh.read(1024)
    if b"%PDF" not in head:
        raise InputError(f"{name}: not a PDF (no %PDF header)")
    try:
        doc = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        msg = str(exc)
        data = path.read_bytes() if size < 50 * 1024 * 1024 else b""
        if "password" in msg.lower() and (b"/Encrypt" in data or not data):
            raise InputError(f"{name}: encrypted PDF (a password is needed to open it)", stage="encrypted") from exc
        if re.search(rb"/Type\s*/Pages\b[^>]*/Count\s+0\b|/Count\s+0\b[^>]*/Type\s*/Pages\b", data):
            raise InputError(f"{name}: the PDF has no pages") from exc
        raise ParseError(f"{name}: unreadable PDF ({msg})") from exc
    n = len(doc)
    if n == 0:
        doc.close()
        raise InputError(f"{name}: the PDF has no pages")
    if n > limits.max_pages:
        doc.close()
        raise InputError(f"{name}: {n} pages is over the {limits.max_pages} page limit")
    return doc


def render_scale(width: float, height: float, dpi: float, limits: Limits) -> float:
    """Scale (pixels per point) for ``dpi``, lowered so the page stays under the pixel cap."""
    scale = dpi / 72.0
    pixels = width * height * scale * scale
    if pixels > limits.max_render_pixels:
        scale *= (limits.max_render_pixels / pixels) ** 0.5
    return scale


def iter_pages(doc: pdfium.PdfDocument, name: str, limits: Limits,
               clock: TimeLimit) -> Iterator[tuple[int, pdfium.PdfPage]]:
    """Each page in turn, closed once the caller is done with it; oversized pages are refused."""
    for i in range(len(doc)):
        clock.check(f"page {i + 1}")
        try:
            page = doc[i]
        except pdfium.PdfiumError as exc:
            raise ParseError(f"{name}: page {i + 1} cannot be read ({exc})") from exc
        try:
            w, h = page.get_size()
            if w > limits.max_page_side or h > limits.max_page_side or w <= 0 or h <= 0:
                raise InputError(f"{name}: page {i + 1} is {w:.0f}x{h:.0f} points, outside 0..{limits.max_page_side:.0f}")
            yield i, page
        finally:
            page.close()


__all__ = ["Limits", "TimeLimit", "open_pdf", "render_scale", "iter_pages"]

"""Opening a PDF safely: one clear error per bad file, pages handed out one at a time.

Before pdfium reads a document, :func:`check_streams` inflates every Flate-compressed stream of the file
once, counting the bytes and keeping none of them (64 KB at a time), and refuses the document when one
stream inflates past its cap: pdfium would hold a page's whole content stream, and build an object for
every operator in it, when it loads the page (a 1 GiB content stream took 2.1 GB; 64 MiB of path
operators took 2.2 GB and 156 s). Image streams get a larger cap than content streams, fonts and object
streams. The largest content-type stream in the development PDFs inflates to 13 MB, the largest image to
56 MB.
"""

from __future__ import annotations

import mmap
import re
import time
import zlib
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
    max_stream_bytes: int = 32 * 1024 * 1024  # a content stream, form, font or object stream, inflated
    max_image_stream_bytes: int = 256 * 1024 * 1024  # an image's samples, inflated


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


_STREAM = re.compile(rb"(?<!end)stream\r?\n")
_OBJ = re.compile(rb"(\d+)\s+\d+\s+obj\b")
_CHUNK = 1 << 16


def _inflated_size(data: mmap.mmap, start: int, cap: int) -> tuple[int, int]:
    """(bytes the zlib stream at ``start`` inflates to, capped just past ``cap``; where its input ends)."""
    inflate = zlib.decompressobj()
    total, pos = 0, start
    try:
        while not inflate.eof and pos < len(data) and total <= cap:
            chunk = data[pos:pos + _CHUNK]
            pos += len(chunk)
            total += len(inflate.decompress(chunk, _CHUNK))
            while inflate.unconsumed_tail and not inflate.eof and total <= cap:
                total += len(inflate.decompress(inflate.unconsumed_tail, _CHUNK))
    except zlib.error:
        pass  # not (or no longer) zlib data: pdfium will say what it makes of it
    return total, pos - len(inflate.unused_data) - len(inflate.unconsumed_tail)


def check_streams(path: Path, limits: Limits) -> None:
    """Raise :class:`InputError` when a Flate stream of the file inflates past its cap (see the module's
    docstring). Streams are found by their ``stream`` keyword and a valid zlib header; their dictionary
    (the text since the last ``obj``) tells an image from the rest. Nothing is kept in memory."""
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        pos = 0
        while (m := _STREAM.search(data, pos)) is not None:
            start = pos = m.end()
            head = data[start:start + 2]
            if len(head) < 2 or head[0] & 0x0F != 8 or ((head[0] << 8) | head[1]) % 31:
                continue  # not zlib: another filter, or the word "stream" inside some data
            before = data[max(0, m.start() - 4096):m.start()]
            objs = list(_OBJ.finditer(before))
            image = b"/Image" in (before[objs[-1].end():] if objs else before)
            cap = limits.max_image_stream_bytes if image else limits.max_stream_bytes
            size, pos = _inflated_size(data, start, cap)
            if size > cap:
                what = f"object {objs[-1].group(1).decode()}" if objs else f"the stream at byte {start}"
                raise InputError(f"{path.name}: {what} inflates past {cap / 2**20:g} MiB, the limit for "
                                 f"{'an image' if image else 'a content stream'} (a decompression bomb?)")
            pos = max(pos, start)


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
    check_streams(path, limits)
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


__all__ = ["Limits", "TimeLimit", "check_streams", "open_pdf", "render_scale", "iter_pages"]

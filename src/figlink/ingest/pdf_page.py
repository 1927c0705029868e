"""What one PDF page holds, read with pypdfium2: text lines and graphic elements, in PDF points.

Coordinates are PDF points with the origin at the top-left corner of the page's crop box and y
growing downwards (as pdfplumber's ``top``/``bottom``), so ``[x0, y0, x1, y1]`` reads like an image box.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from typing import Optional

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

Box = tuple[float, float, float, float]

MAX_PAGE_OBJECTS = 100_000  # drawn objects read per page (the development PDFs draw at most ~1,200)

SOFT_HYPHEN = "\u00ad"  # marks a hyphen that pdfium says breaks a word at a line end
_LABEL_ONLY = re.compile(r"^(?:fig(?:ure)?\.?|table)\s*[A-Z]?\d+[.:]?$", re.I)  # "Fig. 2." set apart by a wide space
_SPACES = re.compile(r"[ \t\u00a0\r\n]+")


@dataclass
class Line:
    """A line of text: its box, its text and its height (a stand-in for the font size)."""

    box: Box
    text: str
    vertical: bool = False  # rotated text (landscape tables, y-axis labels)
    bold: bool = False

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


@dataclass
class Graphic:
    """A drawn element: an embedded image, a vector path or a form XObject."""

    box: Box
    kind: str  # "image" | "path" | "form"


@dataclass
class PageContent:
    """The text lines and graphics of one page, and its size in points."""

    index: int  # 0-based
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    graphics: list[Graphic] = field(default_factory=list)
    ocr: bool = False  # lines were read by OCR from the rendered page
    graphics_skipped: bool = False  # the page draws more than MAX_PAGE_OBJECTS objects; none were read


def union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def intersection(a: Box, b: Box) -> float:
    return area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def iou(a: Box, b: Box) -> float:
    inter = intersection(a, b)
    u = area(a) + area(b) - inter
    return inter / u if u > 0 else 0.0


def gap(a: Box, b: Box) -> float:
    """Distance between two boxes (0 when they touch or overlap)."""
    dx = max(0.0, max(a[0], b[0]) - min(a[2], b[2]))
    dy = max(0.0, max(a[1], b[1]) - min(a[3], b[3]))
    return (dx * dx + dy * dy) ** 0.5


class _Frame:
    """Maps PDF user space (origin bottom-left of the media box) to top-left crop-box points."""

    def __init__(self, page: pdfium.PdfPage) -> None:
        self.left, self.bottom, self.right, self.top = page.get_cropbox()
        self.width = self.right - self.left
        self.height = self.top - self.bottom

    def box(self, left: float, bottom: float, right: float, top: float) -> Box:
        x0, x1 = sorted((left - self.left, right - self.left))
        y0, y1 = sorted((self.top - top, self.top - bottom))
        return (max(0.0, x0), max(0.0, y0), min(self.width, x1), min(self.height, y1))


def _merge_segments(segs: list[Line]) -> list[Line]:
    """Join text runs that sit on one baseline, close together, into lines."""
    segs = sorted(segs, key=lambda s: (round(s.box[1]), s.box[0]))
    lines: list[Line] = []
    for seg in segs:
        last = lines[-1] if lines else None
        if last is not None:
            lb, box, h = last.box, seg.box, max(seg.height, last.height)
            overlap = min(lb[3], box[3]) - max(lb[1], box[1])
            reach = 3.0 * h if _LABEL_ONLY.match(last.text) else 1.0 * h
            if overlap > 0.6 * min(seg.height, last.height) and -0.2 * h < box[0] - lb[2] < reach:
                sep = "" if box[0] - lb[2] < 0.12 * h else " "
                last.box = union(lb, box)
                last.text = last.text + sep + seg.text
                continue
        lines.append(seg)
    return lines


def _runs(codes: list[int], boxes: list[Box]) -> list[tuple[int, int]]:
    """Char index ranges of the runs of text: cut at line breaks and at wide gaps within a line."""
    runs: list[tuple[int, int]] = []
    start = None
    prev: Box | None = None
    span: tuple[float, float] | None = None
    for i, (code, b) in enumerate(zip(codes, boxes)):
        if code == 2 and start is not None:
            runs.append((start, i + 1))  # a hyphen that breaks a word at the end of a line
            start, prev = None, None
            continue
        if code in (10, 13, 2, 0xFFFE) or (code == 32 and b[2] - b[0] <= 0):
            if code in (10, 13) and start is not None:
                runs.append((start, i))
                start, prev = None, None
            continue
        if code in (32, 0xA0):
            continue
        if b[2] - b[0] <= 0 and b[3] - b[1] <= 0:
            continue
        if start is None or span is None or prev is None:
            start, prev, span = i, b, (b[1], b[3])
            continue
        h = max(b[3] - b[1], span[1] - span[0], 1.0)
        cy = (b[1] + b[3]) / 2
        if b[0] - prev[2] > 1.2 * h or b[2] < prev[0] - h or not (span[0] - 0.3 * h < cy < span[1] + 0.3 * h):
            runs.append((start, i))
            start, span = i, (b[1], b[3])
        else:
            span = (min(span[0], b[1]), max(span[1], b[3]))
        prev = b
    if start is not None:
        runs.append((start, len(codes)))
    return runs


def _char(code: int) -> str:
    if code == 2:
        return SOFT_HYPHEN
    return chr(code) if 0 < code < 0x110000 else ""


def _em_box(textpage: pdfium.PdfTextPage, frame: _Frame, a: int, b: int, box: Box) -> Box:
    """The run's box with the vertical extent of its type (baseline − 0.8 em … baseline + 0.2 em),
    the convention of pdfminer/pdfplumber), joined with the glyphs' own boxes."""
    x, y = ctypes.c_double(), ctypes.c_double()
    top, bottom = box[3], box[1]
    probe = {a, (a + b) // 2, b - 1} if b - a > 3 else set(range(a, b))  # the type size of a run, sampled
    for i in sorted(probe):
        size = pdfium_c.FPDFText_GetFontSize(textpage, i)
        if size <= 0 or not pdfium_c.FPDFText_GetCharOrigin(textpage, i, x, y):
            continue
        if pdfium_c.FPDFText_GetUnicode(textpage, i) in (32, 0xA0, 2, 10, 13):
            continue
        base = frame.top - y.value
        top, bottom = min(top, base - 0.8 * size), max(bottom, base + 0.2 * size)
    if top >= bottom:
        return box
    return (box[0], max(0.0, min(top, box[1])), box[2], min(frame.height, max(bottom, box[3])))


def read_text_lines(page: pdfium.PdfPage, frame: _Frame) -> list[Line]:
    """Text lines of the page's text layer (empty for a scanned page)."""
    textpage = page.get_textpage()
    try:
        n = textpage.count_chars()
        codes = [pdfium_c.FPDFText_GetUnicode(textpage, i) for i in range(n)]
        boxes = [frame.box(*textpage.get_charbox(i, loose=True)) for i in range(n)]
        segs: list[Line] = []
        vertical: list[Line] = []
        for a, b in _runs(codes, boxes):
            chars = [(codes[i], boxes[i]) for i in range(a, b)]
            ink = [bx for code, bx in chars if code not in (32, 0xA0, 2, 10, 13)]
            if not ink:
                continue
            text = _SPACES.sub(" ", "".join(_char(c) for c, _ in chars)).strip()
            box = ink[0]
            for bx in ink[1:]:
                box = union(box, bx)
            w, h = box[2] - box[0], box[3] - box[1]
            if not text:
                continue
            if h > 2.0 * w and len(text) > 2:
                vertical.append(Line(box, text, vertical=True))
            else:
                bold = pdfium_c.FPDFText_GetFontWeight(textpage, a) >= 600
                segs.append(Line(_em_box(textpage, frame, a, b, box), text, bold=bold))
        return _merge_segments(segs) + vertical
    finally:
        textpage.close()


class _TooMany(Exception):
    pass


def read_graphics(page: pdfium.PdfPage, frame: _Frame, max_objects: int = MAX_PAGE_OBJECTS) -> Optional[list[Graphic]]:
    """Images, vector paths and (small) form XObjects drawn on the page; None when the page draws more than
    ``max_objects`` objects (reading each would take minutes: the page is then read without its graphics).

    A form XObject that covers most of the page is a wrapper around the page content and is opened;
    a smaller one is usually an included figure and is kept whole.
    """
    out: list[Graphic] = []
    page_area = frame.width * frame.height
    seen = 0

    def walk(objs) -> None:  # type: ignore[no-untyped-def]
        nonlocal seen
        for obj in objs:
            seen += 1
            if seen > max_objects:
                raise _TooMany
            t = obj.type
            if t == pdfium_c.FPDF_PAGEOBJ_TEXT:
                continue
            try:
                box = frame.box(*obj.get_bounds())
            except Exception:  # noqa: BLE001 - a degenerate object has no bounds
                continue
            if area(box) <= 0 and (box[2] - box[0] < 1 and box[3] - box[1] < 1):
                continue
            if t == pdfium_c.FPDF_PAGEOBJ_FORM:
                if area(box) > 0.5 * page_area:
                    walk(pdfium.PdfPage.get_objects(page, max_depth=1, form=obj, level=0))
                else:
                    out.append(Graphic(box, "form"))
            elif t == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                out.append(Graphic(box, "image"))
            elif t in (pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_SHADING):
                out.append(Graphic(box, "path"))

    if pdfium_c.FPDFPage_CountObjects(page) > max_objects:
        return None
    try:
        walk(page.get_objects(max_depth=0))
    except _TooMany:
        return None
    return out


def read_page(page: pdfium.PdfPage, index: int) -> PageContent:
    """Text lines and graphics of one page (``graphics_skipped`` when it draws too many objects to read)."""
    frame = _Frame(page)
    graphics = read_graphics(page, frame)
    return PageContent(index=index, width=frame.width, height=frame.height, lines=read_text_lines(page, frame),
                       graphics=graphics or [], graphics_skipped=graphics is None)


__all__ = ["Box", "Line", "Graphic", "PageContent", "read_page", "union", "area", "intersection", "iou", "gap"]

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
MARGIN = 0.065  # of the page height: the bands of running headers and footers

MAX_PAGE_OBJECTS = 100_000  # drawn objects read per page (the development PDFs draw at most ~1,200)

SOFT_HYPHEN = "\u00ad"  # marks a hyphen that pdfium says breaks a word at a line end
_LABEL_ONLY = re.compile(r"^(?:fig(?:ure)?\.?|table)\s*[A-Z]?\d+[.:]?$", re.I)  # "Fig. 2." set apart by a wide space
_SPACES = re.compile(r"[ \t\u00a0\r\n]+")


@dataclass
class Line:
    """A line of text: its box, its text, and the type it is mostly set in.

    ``size``, ``font`` and ``baseline`` describe the line's dominant type (the size and face most of its
    letters use, the y of their baseline); a glyph set in another font (a symbol, a sub- or superscript)
    does not change them. Lines read by OCR have no type: ``size`` falls back to the box height.
    """

    box: Box
    text: str
    vertical: bool = False  # rotated text (landscape tables, y-axis labels)
    bold: bool = False
    size: float = 0.0  # font size in points; 0 when unknown
    font: str = ""  # font name without its subset tag ("ABCDEF+")
    italic: bool = False
    baseline: float = 0.0  # y of the dominant type's baseline; 0 when unknown

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]

    @property
    def type_size(self) -> float:
        """The dominant font size, or the box height where it is unknown."""
        return self.size if self.size > 0 else self.height

    @property
    def base(self) -> float:
        """The baseline, or where it would be for a box of type (0.2 em above the bottom) where unknown."""
        return self.baseline if self.baseline > 0 else self.box[3] - 0.2 * self.type_size


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


def _rows(segs: list[Line]) -> list[list[Line]]:
    """Runs grouped into rows: a run joins a row whose first run it overlaps vertically by most of its
    height (a raised exponent or a lowered index sits on the row of the text around it)."""
    rows: list[list[Line]] = []
    for seg in sorted(segs, key=lambda s: (s.box[1] + s.box[3]) / 2):
        for row in reversed(rows[-3:]):
            core = row[0].box
            if min(core[3], seg.box[3]) - max(core[1], seg.box[1]) > 0.6 * min(seg.height, core[3] - core[1]):
                row.append(seg)
                break
        else:
            rows.append([seg])
    return rows


def _merge_segments(segs: list[Line]) -> list[Line]:
    """Join text runs that sit on one row, close together, into lines (left to right within a row)."""
    lines: list[Line] = []
    for row in _rows(segs):
        row.sort(key=lambda s: s.box[0])
        last: Line | None = None
        for seg in row:
            if last is not None:
                lb, box, h = last.box, seg.box, max(seg.height, last.height)
                overlap = min(lb[3], box[3]) - max(lb[1], box[1])
                reach = 3.0 * h if _LABEL_ONLY.match(last.text) else 1.0 * h
                if overlap > 0.6 * min(seg.height, last.height) and -0.2 * h < box[0] - lb[2] < reach:
                    sep = "" if box[0] - lb[2] < 0.12 * h else " "
                    if len(seg.text) > len(last.text) and seg.size > 0:  # the longer run sets the line's type
                        last.size, last.font, last.italic, last.baseline = seg.size, seg.font, seg.italic, seg.baseline
                    last.box = union(lb, box)
                    last.text = last.text + sep + seg.text
                    continue
            lines.append(seg)
            last = seg
    return sorted(lines, key=lambda ln: (round(ln.box[1]), ln.box[0]))


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


_NOT_INK = (32, 0xA0, 2, 10, 13)
_ITALIC_FLAG = 0x40  # PDF font descriptor flag
_ITALIC_NAME = re.compile(r"italic|oblique|-it\b|ital", re.I)
_SAMPLES = 6  # letters sampled per run for its type


@dataclass
class _Type:
    """The dominant type of a run of characters."""

    size: float = 0.0
    font: str = ""
    italic: bool = False
    baseline: float = 0.0


class _Fonts:
    """Font name and italic flag per character, cached by the text object that draws it."""

    def __init__(self, textpage: pdfium.PdfTextPage) -> None:
        self.textpage = textpage
        self.cache: dict[int, tuple[str, bool]] = {}
        self.buf = ctypes.create_string_buffer(128)
        self.matrix = pdfium_c.FS_MATRIX()
        self.x, self.y = ctypes.c_double(), ctypes.c_double()

    def of(self, i: int) -> tuple[str, bool]:
        obj = pdfium_c.FPDFText_GetTextObject(self.textpage, i)
        key = ctypes.cast(obj, ctypes.c_void_p).value or 0
        got = self.cache.get(key) if key else None
        if got is None:
            flags = ctypes.c_int(0)
            n = pdfium_c.FPDFText_GetFontInfo(self.textpage, i, self.buf, len(self.buf), ctypes.byref(flags))
            name = self.buf.raw[: max(0, n - 1)].decode("latin-1", "replace") if n > 0 else ""
            name = name.split("+", 1)[1] if len(name) > 7 and name[6] == "+" else name
            got = (name, bool(flags.value & _ITALIC_FLAG) or bool(_ITALIC_NAME.search(name)))
            if key:
                self.cache[key] = got
        return got

    def size_and_base(self, i: int, top: float) -> tuple[float, float] | None:
        """The type size of character ``i`` as drawn (its font size times the scale of its text matrix;
        a font set at size 1 and scaled by the matrix is common) and the y of its baseline."""
        size = pdfium_c.FPDFText_GetFontSize(self.textpage, i)
        if size <= 0 or not pdfium_c.FPDFText_GetCharOrigin(self.textpage, i, self.x, self.y):
            return None
        m = self.matrix
        if pdfium_c.FPDFText_GetMatrix(self.textpage, i, ctypes.byref(m)):
            size *= (m.c * m.c + m.d * m.d) ** 0.5 or 1.0
        return round(size, 1), top - self.y.value


def _type_of(fonts: _Fonts, frame: _Frame, codes: list[int], a: int, b: int) -> _Type:
    """Size, face and baseline of the type most sampled letters of the run ``a:b`` are set in."""
    step = max(1, (b - a) // _SAMPLES)
    seen: list[tuple[float, float, int]] = []
    for i in range(a, b, step):
        if codes[i] in _NOT_INK:
            continue
        got = fonts.size_and_base(i, frame.top)
        if got is not None:
            seen.append((got[0], got[1], i))
    if not seen:
        return _Type()
    votes: dict[float, int] = {}
    for size, _, _ in seen:
        votes[size] = votes.get(size, 0) + 1
    size = max(votes, key=votes.__getitem__)
    mine = [t for t in seen if t[0] == size]
    font, italic = fonts.of(mine[0][2])
    return _Type(size, font, italic, sorted(t[1] for t in mine)[len(mine) // 2])


def _em_box(box: Box, kind: _Type, frame: _Frame) -> Box:
    """The run's box with the vertical extent of its type (baseline − 0.8 em … baseline + 0.2 em, the
    convention of pdfminer/pdfplumber), joined with the glyphs' own boxes."""
    if kind.size <= 0:
        return box
    top, bottom = kind.baseline - 0.8 * kind.size, kind.baseline + 0.2 * kind.size
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
        fonts = _Fonts(textpage)
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
                kind = _type_of(fonts, frame, codes, a, b)
                segs.append(Line(_em_box(box, kind, frame), text, bold=bold, size=kind.size, font=kind.font,
                                 italic=kind.italic, baseline=kind.baseline))
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


__all__ = ["MARGIN", "Box", "Line", "Graphic", "PageContent", "read_page", "union", "area", "intersection", "iou",
           "gap"]

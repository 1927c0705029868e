"""How far a block of text runs on a PDF page, judged by layout.

A block (a caption, a paragraph) is a run of rows set in one type size, at the block's own line pitch,
from one left edge (or centred) within a column. It ends where the next row breaks one of these: another
type size, a gap wider than the block's pitch, an indented first line after a finished sentence, a
centred one-line caption followed by text below it. A glyph in another font (a symbol, a sub- or
superscript) changes none of these, as the row's type is the type most of its letters are set in.

Where a block reaches the foot of its column in mid-sentence, it goes on at the top of the next column
to its right, or of the next page (the caller carries it there), when that column opens with a row in the
block's type that reads on from the unfinished sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from statistics import median
from typing import Callable

from figlink.ingest.pdf_page import Box, Line

SIZE_SLACK = 0.06  # relative difference of type sizes that still counts as one size
MAX_LEADING = 3.0  # baseline pitch over type size above which no running text is set (more is a gap)
PITCH_SLACK = 1.3  # a row this many times the block's own pitch below the last one starts a new block
FIRST_SLACK = 1.35  # the same for the first row after the opening one, against the page's usual pitch
MARKER_SLACK = 1.8  # the same for the first row after a marker line ("Figure 2 continued"), set apart
TOUCHING = 0.3  # of the type size: rows whose boxes are this close belong together (tall inline math)
INDENT = 0.8  # of the type size: a first-line indent
WORD_SPACE = 0.6  # of the type size: the widest space between words of a row (a column gutter is wider)
_SENTENCE_END = re.compile(r"[.!?:;][\"')\]\u2019\u201d]*$")


def same_size(a: Line, b: Line) -> bool:
    """True when two lines are set in one type size (box heights where the type is unknown)."""
    if a.size > 0 and b.size > 0:
        return abs(a.size - b.size) <= SIZE_SLACK * max(a.size, b.size) + 0.1
    return abs(a.height - b.height) <= 0.35 * max(a.height, b.height)


def ends_sentence(text: str) -> bool:
    return bool(_SENTENCE_END.search(text.rstrip()))


def leading(lines: list[Line]) -> dict[float, float]:
    """The page's usual baseline pitch over type size, per type size (key 0.0: all sizes together).

    Measured between each line and the next one below it in its column set in the same type.
    """
    rows = sorted((ln for ln in lines if not ln.vertical and len(ln.text) >= 8), key=lambda ln: ln.base)
    ratios: dict[float, list[float]] = {}
    for i, ln in enumerate(rows):
        s = ln.type_size
        for nxt in rows[i + 1:i + 8]:
            pitch = nxt.base - ln.base
            if pitch < 0.6 * s:
                continue  # the same row
            ov = min(ln.box[2], nxt.box[2]) - max(ln.box[0], nxt.box[0])
            if ov < 0.5 * min(ln.box[2] - ln.box[0], nxt.box[2] - nxt.box[0]):
                continue
            if same_size(ln, nxt) and pitch <= MAX_LEADING * s:
                ratios.setdefault(round(s, 1), []).append(pitch / s)
            break
    out = {k: median(v) for k, v in ratios.items() if len(v) >= 3}
    every = [r for v in ratios.values() for r in v]
    out[0.0] = median(every) if every else 1.25
    return out


@dataclass
class Block:
    """The rows taken so far (line indices per row) and the block's geometry and type."""

    rows: list[list[int]]
    left: float  # left edge of the rows after the first (the first row's edge to begin with)
    right: float
    size: float
    pitches: list[float] = field(default_factory=list)
    centred: bool = False
    hang: float | None = None  # where the text after a caption's label starts on its first row
    open: bool = False  # cut off at the foot of its column in mid-sentence, with no column to go on in

    @property
    def pitch(self) -> float:
        return median(self.pitches) if self.pitches else 0.0

    @property
    def indices(self) -> list[int]:
        return [i for row in self.rows for i in row]


def _center_y(ln: Line) -> float:
    return (ln.box[1] + ln.box[3]) / 2


def _in_column(ln: Line, left: float, right: float, size: float) -> bool:
    b = ln.box
    ov = min(b[2], right + 5) - max(b[0], left - 5)
    return ov >= 0.6 * (b[2] - b[0]) or abs(b[0] - left) <= 0.6 * size


def _row_mates(lines: list[Line], row: list[int], skip: set[int], left: float, right: float,
               size: float) -> list[int]:
    """Pieces set on the row of ``row[0]`` within the column (a sub- or superscript, a run cut off by a
    wide space), left to right after the row's own line."""
    top, bottom = lines[row[0]].box[1], lines[row[0]].box[3]
    on_row = sorted((j for j, ln in enumerate(lines)
                     if j not in skip and j not in row and not ln.vertical and top < _center_y(ln) < bottom),
                    key=lambda j: lines[j].box[0])
    reach = max(lines[k].box[2] for k in row)
    out = []
    for j in on_row:
        b = lines[j].box
        if _in_column(lines[j], left, right, size) or (b[2] > reach and b[0] <= reach + WORD_SPACE * size):
            out.append(j)  # within the column, or running on from the row's end (past the first row's edge)
            reach = max(reach, b[2])
    return out


def _fragment(ln: Line, size: float) -> bool:
    """A loose sub- or superscript: a short piece in a smaller type."""
    return ln.type_size < 0.9 * size and (len(ln.text.strip()) <= 3 or ln.box[2] - ln.box[0] < 5 * size)


def _below(lines: list[Line], cur: Line, skip: set[int], left: float, right: float, size: float) -> int | None:
    """The topmost line below ``cur`` within the column, loose sub- and superscripts aside."""
    best: int | None = None
    for j, ln in enumerate(lines):
        if j in skip or ln.vertical or _center_y(ln) <= cur.box[3] or ln.base <= cur.base + 0.5 * size:
            continue
        if not _in_column(ln, left, right, size) or _fragment(ln, size):
            continue
        if best is None or ln.box[1] < lines[best].box[1]:
            best = j
    if best is None:
        return None
    top = lines[best]  # the row it opens starts with its leftmost piece (a raised exponent can come first)
    for j, ln in enumerate(lines):
        if j in skip or ln.vertical or ln.box[0] >= lines[best].box[0]:
            continue
        if not top.box[1] < _center_y(ln) < top.box[3]:
            continue
        if _in_column(ln, left, right, size) and not _fragment(ln, size) and ln.base > cur.base + 0.5 * size:
            best = j
    return best


def _hanging(blk: Block, ln: Line) -> bool:
    """True when ``ln`` starts where a caption's text after its label starts (a hanging indent)."""
    return abs(ln.box[0] - blk.left) <= INDENT * blk.size or (
        len(blk.rows) == 1 and blk.hang is not None and abs(ln.box[0] - blk.hang) <= blk.size)


def breaks_block(blk: Block, row: list[Line], nxt: Line, frame: "Frame", after_marker: bool = False) -> str | None:
    """Why ``nxt`` (the next row below ``row``, its lines left to right) does not continue the block,
    or None when it does."""
    size, cur = blk.size, row[0]
    if not same_size(nxt, cur) and not (after_marker and not blk.pitches):
        if not (nxt.size > 0 and abs(nxt.size - size) <= SIZE_SLACK * size + 0.1):
            return "type size"
    pitch = nxt.base - cur.base
    if blk.pitches:
        expected = median(blk.pitches)
        limit = PITCH_SLACK * expected
    else:
        expected = max(1.0, frame.lead.get(round(size, 1), frame.lead.get(0.0, 1.25))) * size
        limit = (MARKER_SLACK if after_marker else FIRST_SLACK) * expected
    touching = nxt.box[1] - max(ln.box[3] for ln in row) <= TOUCHING * size  # tall inline math pushes rows apart
    if pitch > limit + 0.5 and not touching:
        return "gap"
    if pitch > MAX_LEADING * size * (1.5 if after_marker else 1.0):
        return "gap"
    cur_mid, nxt_mid = (cur.box[0] + cur.box[2]) / 2, (nxt.box[0] + nxt.box[2]) / 2
    centred_pair = abs(cur_mid - nxt_mid) <= 1.5 * size and abs(cur.box[0] - nxt.box[0]) > 1.5 * size
    if len(blk.rows) == 1 and not after_marker and centred_pair and cur.box[0] > nxt.box[0]:
        return "centred one-line caption"  # a centred short caption; the wider text below is not its own
    if blk.centred and centred_pair:
        return None
    indent = nxt.box[0] - blk.left
    if indent > INDENT * size and not _hanging(blk, nxt) and (ends_sentence(cur.text) or not blk.pitches):
        return "indent"
    if indent < -INDENT * size and blk.pitches and not blk.centred:
        return "outdent"
    return None


@dataclass
class Frame:
    """What a block search needs to know of its page: the usual line pitch per type size, the type most
    of its text is set in, and the bands of running heads and feet (lines there are not text)."""

    lead: dict[float, float]
    body_size: float
    ceiling: float  # lines above this y are running heads
    floor: float  # lines below this y are running feet and page numbers
    graphics: list[Box] = field(default_factory=list)  # what is drawn on the page (images, paths)

    @classmethod
    def of(cls, lines: list[Line], height: float, margin: float, graphics: list[Box] | None = None) -> "Frame":
        weights: dict[float, int] = {}
        for ln in lines:
            if not ln.vertical:
                weights[round(ln.type_size, 1)] = weights.get(round(ln.type_size, 1), 0) + len(ln.text)
        body = max(weights, key=weights.__getitem__) if weights else 0.0
        return cls(leading(lines), body, margin * height, (1 - margin) * height, list(graphics or []))


def grow(lines: list[Line], start: int, skip: set[int], frame: Frame, stop: Callable[[Line, str], bool],
         after_marker: bool = False, label_chars: int = 0, pitch: float = 0.0) -> Block:
    """The block that opens with line ``start``: its rows top to bottom.

    ``skip`` holds lines taken by other blocks; ``stop(line, text above)`` says which lines open a block
    of their own (a caption label, a heading the caller knows). ``after_marker``: ``start`` is a marker
    line ("Figure 2 continued") set apart from the text it introduces, which gives the block its type.
    ``label_chars``:
    the length of the caption label that opens the first line (its continuation may hang after it).
    ``pitch``: the line pitch of the block this one carries on (from the column or page before).
    A block that reaches the foot of its column in mid-sentence goes on at the top of the next column
    when that column opens in the block's type; where none does, the block is left ``open``.
    """
    first = lines[start]
    width = first.box[2] - first.box[0]
    blk = Block([[start]], first.box[0], max(first.box[2], first.box[0] + 0.5 * width), first.type_size)
    if label_chars and first.text:
        blk.hang = first.box[0] + width * label_chars / len(first.text)
    if pitch > 0:
        blk.pitches.append(pitch)
    taken = set(skip) | {start}
    while True:
        row = blk.rows[-1]
        mates = _row_mates(lines, row, taken, blk.left, blk.right, blk.size)
        row.extend(mates)
        taken.update(mates)
        cur = lines[row[0]]
        j = _below(lines, cur, taken, blk.left, blk.right, blk.size)
        above = " ".join(lines[k].text for k in row)
        if j is not None and (stop(lines[j], above)
                              or breaks_block(blk, [lines[k] for k in row], lines[j], frame, after_marker)):
            if lines[j].box[1] <= frame.floor:
                return blk
            j = None  # only the running feet below: the foot of the column
        if j is None:
            end = max(lines[k].box[2] for k in row)
            if ends_sentence(above) or end < blk.right - 0.2 * (blk.right - blk.left):
                return blk  # a finished sentence, or a short last row: the block ends here
            j = column_start(lines, cur, blk.left, blk.right - blk.left, taken, frame, right_of=blk.right)
            if j is None or stop(lines[j], above):
                blk.open = j is None
                return blk
            nxt = lines[j]
            blk.rows.append([j])
            taken.add(j)
            blk.left, blk.right = nxt.box[0], nxt.box[2]
            continue
        nxt = lines[j]
        if len(blk.rows) == 1:
            blk.left = nxt.box[0]
            if after_marker:
                blk.size = nxt.type_size
            else:
                blk.pitches.append(nxt.base - cur.base)
                mid = (first.box[0] + first.box[2]) / 2
                blk.centred = (abs(mid - (nxt.box[0] + nxt.box[2]) / 2) <= 1.5 * blk.size
                               and abs(first.box[0] - nxt.box[0]) > 1.5 * blk.size)
        else:
            blk.pitches.append(nxt.base - cur.base)
        blk.rows.append([j])
        taken.add(j)
        blk.right = max(blk.right, nxt.box[2])


def column_start(lines: list[Line], like: Line, left: float, width: float, skip: set[int], frame: Frame,
                 right_of: float | None = None) -> int | None:
    """The line that carries on a block cut off in mid-sentence at the foot of a column, or None.

    It is the first line of a column: to the right of ``right_of`` on the same page, or, on the next page,
    at the block's left edge ``left``. It is set in the type of ``like`` (the block's last line), no wider
    than the block's rows (``width``), and it reads on from an unfinished sentence: it opens in lower case,
    or the block's type is not the page's body type (a caption's smaller type, which running text does
    not use).
    """
    best: int | None = None
    for j, ln in enumerate(lines):
        if j in skip or ln.vertical or ln.box[1] < frame.ceiling or ln.box[1] > frame.floor:
            continue
        if ln.box[0] < right_of - 2 if right_of is not None else abs(ln.box[0] - left) > INDENT * like.type_size:
            continue
        if not same_size(ln, like) or (ln.font and like.font and ln.font != like.font):
            continue
        if ln.box[2] - ln.box[0] > 1.25 * width:
            continue  # wider than the block's rows: another column's text
        if best is None or (ln.box[1], ln.box[0]) < (lines[best].box[1], lines[best].box[0]):
            best = j
    if best is None:
        return None
    top = lines[best]
    opening = top.text.lstrip()[:1]
    if opening.isupper() and abs(like.type_size - frame.body_size) <= SIZE_SLACK * like.type_size + 0.1:
        return None  # a new sentence in the body's type: running text, not the rest of the block
    above = [ln.box for ln in lines if ln is not top and not ln.vertical] + frame.graphics
    for b in above:  # it must open its column: nothing drawn or written above it there
        if b[3] <= top.box[1] + 1 and b[1] >= frame.ceiling and min(b[2], top.box[2]) - max(b[0], top.box[0]) > 0:
            return None
    return best


__all__ = ["Block", "Frame", "grow", "column_start", "leading", "breaks_block", "same_size", "ends_sentence"]

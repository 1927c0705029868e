"""Body text of a PDF in reading order (columns by recursive XY-cut, running headers and footers
dropped) and the sentences in it that cite figures."""

from __future__ import annotations

import re
from collections import Counter
from statistics import median

from figlink.ingest.pdf_captions import join_lines
from figlink.ingest.pdf_figures import MARGIN as MARGIN_BAND
from figlink.ingest.pdf_page import Box, Line
from figlink.model import InlineRef
from figlink.text.mentions import find_mentions


_SENTENCE_END = re.compile(r"[.!?:]['\")\]]?$")
_DIGITS = re.compile(r"\d+")


def _split(lines: list[Line], axis: int, min_gap: float) -> list[list[Line]]:
    """Lines cut at every empty stretch of ``min_gap`` or more along one axis (0: x, 1: y), in order."""
    order = sorted(lines, key=lambda ln: ln.box[axis])
    parts: list[list[Line]] = [[order[0]]]
    reach = order[0].box[axis + 2]
    for ln in order[1:]:
        if ln.box[axis] - reach >= min_gap:
            parts.append([])
        parts[-1].append(ln)
        reach = max(reach, ln.box[axis + 2])
    return parts


def _xy_cut(lines: list[Line], min_gutter: float) -> list[list[Line]]:
    """Split lines into reading-order blocks: columns first (a vertical gutter), then bands."""
    out: list[list[Line]] = []
    todo = [lines]  # a stack, next part on top: no recursion limit on pages of many lines
    while todo:
        part = todo.pop()
        if len(part) <= 1:
            out.extend([part] if part else [])
            continue
        h = median(ln.height for ln in part)
        for axis, min_gap in ((0, min_gutter), (1, 1.2 * h)):  # gutters no line crosses, then blank bands
            pieces = _split(part, axis, min_gap)
            if len(pieces) > 1:
                todo.extend(reversed(pieces))
                break
        else:
            out.append(sorted(part, key=lambda ln: (ln.box[1], ln.box[0])))
    return out


def reading_order(lines: list[Line], page_width: float) -> list[list[Line]]:
    """Blocks of lines in the order a reader takes them (top-down, left column before right)."""
    return _xy_cut([ln for ln in lines if not ln.vertical], max(8.0, 0.015 * page_width))


def _margin_key(text: str) -> str:
    return _DIGITS.sub("#", text.strip().lower())


def edge_lines(lines: list[Line], n: int = 2) -> list[Line]:
    """The ``n`` topmost and ``n`` bottommost lines of a page (where running heads and page numbers sit)."""
    order = sorted((ln for ln in lines if not ln.vertical), key=lambda ln: ln.box[1])
    return order[:n] + order[-n:] if len(order) > 2 * n else order


class RunningHeads:
    """Texts (digits masked) seen at the top or bottom edge of earlier pages, learnt page by page, so a
    running head is known before the figures of a later page are cut out."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def strip(self, lines: list[Line]) -> list[Line]:
        """The page's lines less its edge lines already seen on two earlier pages; then learns them."""
        edges = edge_lines(lines)
        drop = {id(ln) for ln in edges if self.seen[_margin_key(ln.text)] >= 2}
        self.seen.update({_margin_key(ln.text) for ln in edges})
        return [ln for ln in lines if id(ln) not in drop]


def running_lines(pages: list[tuple[float, list[Line]]]) -> set[str]:
    """Texts (digits masked) that recur near the top or bottom of three or more pages."""
    counts: Counter[str] = Counter()
    for height, lines in pages:
        seen = {_margin_key(ln.text) for ln in lines
                if ln.box[3] < 0.12 * height or ln.box[1] > 0.88 * height}
        counts.update(seen)
    limit = 3 if len(pages) >= 4 else len(pages) + 1
    return {k for k, n in counts.items() if n >= limit}


_NOT_PROSE = re.compile(
    r"^(?:DOI:|https?://doi|The following (?:figure supplements?|source data|videos?)\b"
    r"|(?:Figure|Fig\.?)\s+supplement\s+\d|Source data \d|Video \d+\.)", re.I)


def is_margin(line: Line, page_height: float, running: set[str]) -> bool:
    """A running header or footer, or an object id line ("DOI: …") that is not prose."""
    if _NOT_PROSE.match(line.text):
        return True
    if line.box[3] < MARGIN_BAND * page_height or line.box[1] > (1 - MARGIN_BAND) * page_height:
        return True
    if line.box[3] < 0.12 * page_height or line.box[1] > 0.88 * page_height:
        return _margin_key(line.text) in running
    return False


def paragraphs(blocks: list[list[Line]]) -> list[str]:
    """Paragraph texts: lines joined (hyphenation undone), broken at wide gaps between lines."""
    paras: list[str] = []
    cur: list[str] = []
    for block in blocks:
        prev: Line | None = None
        for ln in block:
            if prev is not None and ln.box[1] - prev.box[3] > 0.9 * max(ln.height, prev.height):
                paras.append(join_lines(cur))
                cur = []
            cur.append(ln.text)
            prev = ln
        if cur and _SENTENCE_END.search(cur[-1]):
            paras.append(join_lines(cur))
            cur = []
    if cur:
        paras.append(join_lines(cur))
    return [p for p in paras if p]


def inline_refs(paras: list[str], keys: set[str]) -> dict[str, list[InlineRef]]:
    """Citing sentences per figure key, with the mention as written, where it stands in the sentence (every
    place it is written there) and the panels it names."""
    from figlink.text.sentences import sentence_spans

    out: dict[str, list[InlineRef]] = {}
    for para in paras:
        if not find_mentions(para):
            continue
        for a, b in sentence_spans(para):
            sent = para[a:b].strip()
            seen: dict[tuple[str, str], InlineRef] = {}
            for m in find_mentions(sent):
                for cite in m.citations:
                    if cite.key not in keys:
                        continue
                    ref = seen.get((cite.key, m.text))
                    if ref is not None:
                        ref.mention_spans.append([m.start, m.end])
                        continue
                    ref = seen[(cite.key, m.text)] = InlineRef(text=sent, mention=m.text, panels=list(cite.panels),
                                                               tagged=False, mention_spans=[[m.start, m.end]])
                    out.setdefault(cite.key, []).append(ref)
    return out


def inside(box: Box, region: Box, frac: float = 0.5) -> bool:
    """True when at least ``frac`` of ``box`` lies in ``region``."""
    from figlink.ingest.pdf_page import area, intersection

    a = area(box)
    return a > 0 and intersection(box, region) >= frac * a


__all__ = ["RunningHeads", "edge_lines", "reading_order", "running_lines", "is_margin", "paragraphs", "inline_refs", "inside"]

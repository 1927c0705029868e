"""Figure captions on a PDF page: the line that opens one ("Figure 3.", "Fig. 3:", "FIGURE 3") and
the lines that continue it, read with the shared figure-mention grammar."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from figlink.ingest.pdf_blocks import Frame, column_start, grow, same_size
from figlink.ingest.pdf_page import MARGIN, Box, Line, PageContent, union
from figlink.text import grammar as g
from figlink.text.mentions import find_mentions

# After the label: its closing mark, or the caption's first word.
_AFTER_LABEL = re.compile(rf"^\s*(?:[.:|{g.DASH_CHARS[2:]}]|-\s|\s+[A-Z(\[\"'\u201c])")
_ATTACHMENT = re.compile(rf"^\s*{g.DASH}\s*(?:source\s+(?:data|code)|video|animation|audio)\b", re.I)
_LABEL_MARK = re.compile(rf"^\s*[.:|{g.DASH_CHARS}]?\s*")
_CONTINUED = re.compile(r"^[\s.:]*\(?continued\b", re.I)
_END_MARKERS = re.compile(r"^(?:DOI:|https?://doi|The following (?:figure supplement|source data))", re.I)
_SENTENCE_END = re.compile(r"[.:;!?)\]]$")


@dataclass
class Caption:
    """A figure caption found on a page: figure key, label as printed, text after the label, lines."""

    key: str
    label: str
    page: int
    lines: list[Line] = field(default_factory=list)
    text: str = ""
    continuation: bool = False  # "Figure 1. Continued": the rest of a caption begun on an earlier page
    open_end: bool = False  # cut off in mid-sentence at the foot of the page: it goes on overleaf
    pitch: float = 0.0  # baseline to baseline, between its lines (0 for one line)

    @property
    def box(self) -> Box:
        b = self.lines[0].box
        for ln in self.lines[1:]:
            b = union(b, ln.box)
        return b


def caption_label(text: str) -> tuple[str, str, str] | None:
    """``(key, label, rest)`` when ``text`` opens a figure caption, else None.

    "Figure 3. Growth curves" → ``("3", "Figure 3", "Growth curves")``. A body sentence that starts
    with a mention ("Figure 3 shows", "Figures 3–5", "Figure 3A") is not a caption.
    """
    if not g.CAPTION_OPENER.match(text):
        return None
    mentions = find_mentions(text)
    if not mentions or mentions[0].start > 3:
        return None
    m = mentions[0]
    if len(m.citations) != 1 or m.citations[0].panels:
        return None
    rest = text[m.end:]
    if rest.strip() and not _AFTER_LABEL.match(rest) and not _CONTINUED.match(rest):
        return None
    if _ATTACHMENT.match(rest):
        return None  # "Figure 1—source data 1.": a file attached to the figure, not its caption
    label = m.text.strip().rstrip(".:")
    return m.citations[0].key, label, _LABEL_MARK.sub("", rest)


def _line_above(lines: list[Line], i: int) -> Line | None:
    me = lines[i].box
    best: Line | None = None
    for j, ln in enumerate(lines):
        if j == i or ln.vertical or ln.box[3] > me[1] + 0.3 * lines[i].height:
            continue
        ov = min(ln.box[2], me[2]) - max(ln.box[0], me[0])
        if ov > 0.5 * min(ln.box[2] - ln.box[0], me[2] - me[0]) and (best is None or ln.box[3] > best.box[3]):
            best = ln
    return best


def _continues_paragraph(lines: list[Line], i: int, lead: dict[float, float]) -> bool:
    """True when line ``i`` is the next line of a running paragraph (a mention broken onto a line)."""
    above = _line_above(lines, i)
    if above is None:
        return False
    me = lines[i]
    usual = lead.get(round(me.type_size, 1), lead.get(0.0, 1.25))
    return (me.base - above.base <= 1.15 * usual * me.type_size and same_size(above, me)
            and not _SENTENCE_END.search(above.text))


def _opens_block(line: Line, above: str) -> bool:
    """A line that starts a block of its own, below a row that reads ``above``: another figure caption, a
    table's (after a finished sentence: "… listed in" + "Table 1." runs on), or an object id."""
    return (caption_label(line.text) is not None or bool(_END_MARKERS.match(line.text))
            or (bool(g.OTHER_OPENER.match(line.text)) and bool(_SENTENCE_END.search(above.rstrip()))))


def join_lines(texts: list[str]) -> str:
    """Join the lines of a paragraph, undoing end-of-line hyphenation ("exam-" + "ple")."""
    out = ""
    for t in texts:
        t = t.strip()
        if not t:
            continue
        if not out:
            out = t
        elif out.endswith("\u00ad"):
            out = out + t  # resolved later against the document's words: see resolve_hyphens
        elif out.endswith(("-", "\u2010")) and len(out) > 1 and out[-2] != " ":
            out = out + t
        else:
            out = out + " " + t
    return out


_SOFT_WORD = re.compile(r"(\w+)\u00ad(\w+)")


def resolve_hyphens(text: str, vocab: dict[str, int]) -> str:
    """Undo or keep line-end hyphens (marked U+00AD) by the words the document itself uses.

    "treat\u00adment" → "treatment" when the document writes "treatment" elsewhere, "single-cell" when
    it writes "single-cell"; otherwise joined when both halves are lower case, hyphenated when not.
    """
    def fix(m: re.Match[str]) -> str:
        a, b = m.group(1), m.group(2)
        joined, hyph = (a + b).lower(), f"{a}-{b}".lower()
        if vocab.get(joined, 0) > vocab.get(hyph, 0):
            return a + b
        if vocab.get(hyph, 0) > 0:
            return f"{a}-{b}"
        if a[-1:].islower() and b[:1].islower() and a[-1:].isalpha():
            return a + b
        return f"{a}-{b}"

    return _SOFT_WORD.sub(fix, text).replace("\u00ad", "-")


def _row_text(lines: list[Line], row: list[int]) -> str:
    return " ".join(lines[k].text for k in row)


def find_captions(page: PageContent, carry: Caption | None = None) -> list[Caption]:
    """Figure captions that open on this page, and caption continuations: after a marker ("Figure 1.
    Continued"), or, for ``carry`` (a caption of the page before left open in mid-sentence), the text
    that opens this page in its type."""
    lines = page.lines
    used: set[int] = set()
    found: list[Caption] = []
    labels = {i: lab for i, ln in enumerate(lines) if not ln.vertical and (lab := caption_label(ln.text))}
    if not labels and (carry is None or not carry.open_end):
        return found
    frame = Frame.of(lines, page.height, MARGIN, [g.box for g in page.graphics])
    if carry is not None and carry.open_end:
        last = carry.lines[-1]
        left = min(ln.box[0] for ln in carry.lines[1:] or carry.lines)
        start = column_start(lines, last, left, max(ln.box[2] for ln in carry.lines) - left, used, frame)
        if start is not None and start not in labels:
            blk = grow(lines, start, used, frame, _opens_block, pitch=carry.pitch)
            used.update(blk.indices)
            text = join_lines([_row_text(lines, row) for row in blk.rows])
            found.append(Caption(carry.key, carry.label, page.index, [lines[k] for k in blk.indices], text, True,
                                 blk.open, blk.pitch))
    for i in sorted(labels, key=lambda k: (lines[k].box[1], lines[k].box[0])):
        if i in used or _continues_paragraph(lines, i, frame.lead):
            continue
        key, label, rest = labels[i]
        if _CONTINUED.match(rest):
            if re.search(r"next\s+page|overleaf", rest, re.I):
                used.add(i)
                continue  # "Figure 1. Continued on next page": a marker, not text
            blk = grow(lines, i, used, frame, _opens_block, after_marker=True)
            used.update(blk.indices)
            texts = [_row_text(lines, row) for row in blk.rows[1:]]
            found.append(Caption(key, label, page.index, [lines[k] for k in blk.indices], join_lines(texts), True,
                                 blk.open, blk.pitch))
            continue
        blk = grow(lines, i, used, frame, _opens_block, label_chars=len(lines[i].text) - len(rest))
        used.update(blk.indices)
        first = " ".join([rest] + [lines[k].text for k in blk.rows[0][1:]])
        texts = [first] + [_row_text(lines, row) for row in blk.rows[1:]]
        found.append(Caption(key, label, page.index, [lines[k] for k in blk.indices], join_lines(texts),
                             open_end=blk.open, pitch=blk.pitch))
    return found


__all__ = ["Caption", "caption_label", "find_captions", "join_lines", "resolve_hyphens"]

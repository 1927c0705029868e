"""Figure captions on a PDF page: the line that opens one ("Figure 3.", "Fig. 3:", "FIGURE 3") and
the lines that continue it, read with the shared figure-mention grammar."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from figlink.ingest.pdf_page import Box, Line, PageContent, union
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


def _same_column(a: Box, b: Box) -> bool:
    ov = min(a[2], b[2]) - max(a[0], b[0])
    return ov > 0.5 * min(a[2] - a[0], b[2] - b[0])


def _line_above(lines: list[Line], i: int) -> Line | None:
    me = lines[i].box
    best: Line | None = None
    for j, ln in enumerate(lines):
        if j == i or ln.vertical or ln.box[3] > me[1] + 0.3 * lines[i].height:
            continue
        if _same_column(ln.box, me) and (best is None or ln.box[3] > best.box[3]):
            best = ln
    return best


def _continues_paragraph(lines: list[Line], i: int) -> bool:
    """True when line ``i`` is the next line of a running paragraph (a mention broken onto a line)."""
    above = _line_above(lines, i)
    if above is None:
        return False
    h = lines[i].height
    return (lines[i].box[1] - above.box[3] < 0.45 * h and abs(above.height - h) < 0.25 * h
            and not _SENTENCE_END.search(above.text))


def _follow(lines: list[Line], start: int, used: set[int], loose: bool = False) -> list[int]:
    """Indices of the lines that continue a caption begun at ``start``, top to bottom."""
    out = [start]
    cur = lines[start]
    x0 = cur.box[0]
    x1 = max(cur.box[2], x0 + 0.5 * (cur.box[2] - cur.box[0]))
    h0 = cur.height
    while True:
        nxt, nxt_i = None, -1
        for j, ln in enumerate(lines):
            if j in used or j in out or ln.vertical:
                continue
            b = ln.box
            if b[1] < cur.box[1] + 0.5 * cur.height:
                continue
            ov = min(b[2], x1 + 5) - max(b[0], x0 - 5)
            if ov < 0.6 * (b[2] - b[0]) and abs(b[0] - x0) > 0.6 * h0:
                continue
            if nxt is None or b[1] < nxt.box[1]:
                nxt, nxt_i = ln, j
        if nxt is None:
            return out
        first_loose = loose and len(out) == 1
        if nxt.box[1] - cur.box[3] > (1.5 if first_loose else 0.9) * max(h0, nxt.height):
            return out
        if abs(nxt.height - h0) > 0.35 * h0 and not first_loose:
            return out
        if first_loose:
            h0 = nxt.height
        if caption_label(nxt.text) is not None or _END_MARKERS.match(nxt.text):
            return out
        out.append(nxt_i)
        x1 = max(x1, nxt.box[2])
        cur = nxt


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


def find_captions(page: PageContent) -> list[Caption]:
    """Figure captions that open on this page, and caption continuations ("Figure 1. Continued")."""
    lines = page.lines
    used: set[int] = set()
    found: list[Caption] = []
    order = sorted(range(len(lines)), key=lambda k: (lines[k].box[1], lines[k].box[0]))
    for i in order:
        ln = lines[i]
        if i in used or ln.vertical:
            continue
        lab = caption_label(ln.text)
        if lab is None or _continues_paragraph(lines, i):
            continue
        key, label, rest = lab
        if _CONTINUED.match(rest):
            if re.search(r"next\s+page|overleaf", rest, re.I):
                used.add(i)
                continue  # "Figure 1. Continued on next page": a marker, not text
            idx = _follow(lines, i, used, loose=True)
            used.update(idx)
            texts = [lines[k].text for k in idx[1:]]
            found.append(Caption(key, label, page.index, [lines[k] for k in idx], join_lines(texts), True))
            continue
        idx = _follow(lines, i, used)
        used.update(idx)
        texts = [rest] + [lines[k].text for k in idx[1:]]
        cap_lines = [lines[k] for k in idx]
        found.append(Caption(key, label, page.index, cap_lines, join_lines(texts)))
    return found


__all__ = ["Caption", "caption_label", "find_captions", "join_lines", "resolve_hyphens"]

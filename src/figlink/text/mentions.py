"""The reader of figure mentions: "Figure 1d", "Figs. 2A–C", "Figures 3B and 4C", "Figs 3–5",
"Figure 1—figure supplement 2A", "Supplementary Fig. S1", "Extended Data Fig. 4", "Appendix 1—figure 2".

It reads with the words and patterns of ``figlink.text.grammar``, and so does every other reader. It reads
figure labels ("Figure 1—figure supplement 2." → key ``"1-s2"``), the text of
JATS ``<xref>`` citations, mentions in plain text (JATS paragraphs without markup, PDF body text) and
the figure index at the start of a caption. A *figure key* names a figure independently of how it is
written: ``"3"`` (Figure 3), ``"S3"`` (Supplementary Figure 3 / Figure S3), ``"ED4"`` (Extended Data
Figure 4), ``"1-s2"`` (Figure 1—figure supplement 2), ``"A1-2"`` (Appendix 1—figure 2), ``"R1"``
(Author response image 1). Panel letters are lower case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from figlink.text import grammar as g

# Where a keyword may start (the figure word, and a qualifier before it, are read there).
KEYWORD_HINT_PLAIN = re.compile("|".join(g.KEYWORD_FORMS))
_KEYWORD_FORMS_LOWER = tuple(dict.fromkeys(w.lower() for w in g.KEYWORD_FORMS))  # "fig", "image"
_WORD_AT = re.compile(g.FIGURE_WORD, re.I)
_SUPPLEMENT_NUMBER = re.compile(r"\d{1,3}(?!\d)")
_SUPPLEMENT_JOINT = re.compile(rf"\s*({g.DASH}|,|&|and\b)\s*(?=\d)")


@dataclass(frozen=True)
class FigureCitation:
    """One figure named in a mention, with the panel letters named for it (empty: the whole figure)."""

    key: str
    panels: tuple[str, ...] = ()


@dataclass
class Mention:
    """A figure mention found in plain text: its span, its text, and the figures it names."""

    start: int
    end: int
    text: str
    citations: list[FigureCitation] = field(default_factory=list)


def _read_panels(text: str, i: int) -> tuple[list[str], int]:
    """Panel letters right after a figure number: "1A", "1(a)", "1a–c", "1A,B", "1 A", "1A and C", "1, C)"."""
    m = g.LETTER_ATTACHED.match(text, i) or g.LETTER_SPACED.match(text, i)
    after_comma = m is None
    if after_comma:
        m = g.LETTER_AFTER_COMMA.match(text, i)
    if m is None:
        return [], i
    first = m.group(1) or m.group(2)
    letters = [first.lower()]
    i = m.end()
    upper = first.isupper()
    sub = m.group(0).rstrip(")")[-1:].isdigit()  # "6A1": sub-panels, so "6A1,A2" goes on
    while True:
        s = g.NEXT_LETTER.match(text, i)
        if s is None:
            break
        letter = s.group("l")
        if letter.isupper() != upper or (not sub and s.group(0).rstrip(")")[-1:].isdigit()):
            break  # "Figs 2B and S1": a figure number, not a sub-panel
        # "Figure 1A and B6 mice" is stopped by the look-ahead; "Fig. 2a and a new…" by case; a
        # following figure number ("1A, 2") is not a letter at all.
        if g.is_range(s.group("sep")):
            letters[-1:] = g.expand_letters(letters[-1].upper() if upper else letters[-1],
                                          letter)
        else:
            letters.append(letter.lower())
        i = s.end()
    if after_comma and letters != sorted(set(letters)):
        return [], i  # "Figure 2, G,B" names parts of the figure, not panels in order
    seen: dict[str, None] = {}
    for letter in letters:
        seen.setdefault(letter, None)
    return list(seen), i


def _read_items(text: str, i: int, prefix: str) -> tuple[list[FigureCitation], int]:
    """Figure numbers (with supplements and panels) and the separators between them."""
    cites: list[FigureCitation] = []
    end = i
    pending_range: int | None = None
    panel_range: tuple[str, str] | None = None  # (figure key, its last panel) before a range dash
    while True:
        m = g.FIGURE_NUMBER.match(text, i)
        if m is None:
            break
        number = int(m.group("n"))
        key = g.make_key(prefix, m.group("pre"), m.group("n"))
        i = m.end()
        s = g.SUPPLEMENT.match(text, i)
        if s is not None and not prefix:
            # "Figure 1—figure supplements 1 and 2", each supplement may carry panels.
            j = s.end()
            supp_cites: list[FigureCitation] = []
            supp_range: int | None = None
            while True:
                sm = _SUPPLEMENT_NUMBER.match(text, j)
                if sm is None:
                    break
                k = int(sm.group(0))
                j = sm.end()
                panels, j = _read_panels(text, j)
                if supp_range is not None and supp_range < k <= supp_range + g.MAX_RANGE:
                    supp_cites.extend(FigureCitation(f"{number}-s{x}") for x in range(supp_range + 1, k))
                supp_cites.append(FigureCitation(f"{number}-s{k}", tuple(panels)))
                supp_range = None
                joint = _SUPPLEMENT_JOINT.match(text, j)
                if joint is None:
                    break
                if joint.group(1) in g.DASHES:
                    supp_range = k
                j = joint.end()
            if supp_cites:
                cites.extend(supp_cites)
                i = end = j
                pending_range = None
                nxt = g.ITEM_SEPARATOR.match(text, i)
                if nxt is None or g.FIGURE_NUMBER.match(text, nxt.end()) is None:
                    break
                i = nxt.end()
                continue
        panels, i = _read_panels(text, i)
        if panel_range is not None and panel_range[0] == key and panels:
            # "Figs. 5A–5C": a range of panels that repeats the figure number
            panels = g.expand_letters(panel_range[1], panels[0])[1:-1] + panels
        panel_range = None
        if pending_range is not None and pending_range < number <= pending_range + g.MAX_RANGE:
            cites.extend(FigureCitation(g.make_key(prefix, m.group("pre"), str(x)))
                         for x in range(pending_range + 1, number))
        pending_range = None
        cites.append(FigureCitation(key, tuple(panels)))
        end = i
        nxt = g.ITEM_SEPARATOR.match(text, i)
        if nxt is None or g.FIGURE_NUMBER.match(text, nxt.end()) is None:
            break
        sep = nxt.group("sep")
        if g.is_range(sep) and not panels:
            pending_range = number
        elif g.is_range(sep):
            panel_range = (key, panels[-1])
        i = nxt.end()
    return cites, end


def parse_mention(text: str) -> list[FigureCitation]:
    """Figures and panels named by a citation text, with or without its keyword.

    ``"Figs. 2A–C and 3B"`` → ``[("2", (a, b, c)), ("3", (b,))]``; ``"4C"`` → ``[("4", (c,))]``;
    a text that is only panel letters (``"B"``, ``"C–E"``) → one citation with key ``""``.
    """
    s = text.strip().lstrip("([ ")
    m = g.KEYWORD.match(s)
    if m is not None:
        prefix = g.qualifier_prefix(m.group("qual"), m.group("app"))
        j = m.end()
        while j < len(s) and s[j] in " \u00a0":
            j += 1
        cites, _ = _read_items(s, j, prefix)
        return cites
    if g.FIGURE_NUMBER.match(s):
        cites, _ = _read_items(s, 0, "")
        return cites
    panels, _ = _read_panels(" " + s if s[:1].isupper() else s, 0)
    if not panels and text.strip()[:1] == "(":
        panels, _ = _read_panels(text.strip(), 0)
    return [FigureCitation("", tuple(panels))] if panels else []


def figure_key(label: str | None) -> str | None:
    """The figure key of a label or caption start: "Figure 1—figure supplement 2." → ``"1-s2"``."""
    if not label:
        return None
    cites = parse_mention(label)
    return cites[0].key if cites and cites[0].key else None


def figure_number(key: str | None) -> str | None:
    """The printed number of a key: ``"3"`` → ``"3"``, ``"S3"`` → ``"S3"``, ``"1-s2"`` → ``"1"``."""
    if not key:
        return None
    return key.split("-s", 1)[0] if "-s" in key else key


class _KeywordHints:
    """Where the keyword forms (``g.KEYWORD_FORMS`` as written) start in a text, the next one at or after an
    offset: the matches of ``KEYWORD_HINT_PLAIN``. The lower-cased text is searched with ``str.find`` for
    each word once ("fig", "image"), and a place is kept where the text holds a form as written (kept: 1.27x
    on find_mentions compiled, 1.17x as .py, over a pattern that skipped ahead to "f" or "i", itself 1.68x on the
    plain one; the tests compare it with KEYWORD_HINT_PLAIN)."""

    def __init__(self, text: str) -> None:
        self.text = text
        low = text.lower()
        # a character whose lower case is longer ("İ") moves the offsets: then the pattern reads the text
        self.low = low if len(low) == len(text) else None
        self.next = [-2] * len(_KEYWORD_FORMS_LOWER)  # the next place of each lower-case word (-2: not looked)

    def at_or_after(self, pos: int) -> int:
        """The start of the first keyword form at or after ``pos``; -1 when there is none."""
        text, low = self.text, self.low
        if low is None:
            m = KEYWORD_HINT_PLAIN.search(text, pos)
            return -1 if m is None else m.start()
        places = self.next
        while True:
            k = -1
            for i, word in enumerate(_KEYWORD_FORMS_LOWER):
                j = places[i]
                if j != -1 and j < pos:
                    j = places[i] = low.find(word, pos)
                if j >= 0 and (k < 0 or j < k):
                    k = j
            if k < 0 or text.startswith(g.KEYWORD_FORMS, k):
                return k
            pos = k + 1


def find_mentions(text: str) -> list[Mention]:
    """Every figure mention written out in plain text, in order, with the figures and panels it names."""
    out: list[Mention] = []
    pos = 0
    n = len(text)
    hints = _KeywordHints(text)
    while True:
        k = hints.at_or_after(pos)
        if k < 0:
            return out
        pos = k + 1
        if k > 0 and text[k - 1].isalpha():
            continue
        w = _WORD_AT.match(text, k)
        if w is None:
            continue
        q = g.QUALIFIER_BEFORE.search(text, max(0, k - 40), k)  # "Supplementary Fig", "Appendix 1—figure"
        start = q.start() if q else k
        prefix = g.qualifier_prefix(q.group("qual"), q.group("app")) if q else ""
        j = w.end()
        while j < n and text[j] in " \u00a0":
            j += 1
        cites, end = _read_items(text, j, prefix)
        if cites:
            out.append(Mention(start, end, text[start:end], cites))
            pos = end


@dataclass(frozen=True)
class FigureIndex:
    """The figure label that opens a caption ("Figure 1—figure supplement 2."): its text, key and span.

    ``end`` includes the punctuation and spaces that separate the label from the caption text.
    """

    label: str
    key: str
    start: int
    end: int


# The ASCII characters a caption that opens with a figure label can start with: a space, or a keyword's
# first letter in either case (the other characters these letters match ignoring case, "İ", "ı" and "ſ",
# are not ASCII).
_INDEX_OPENERS = frozenset(" \t\n" + g.KEYWORD_INITIALS + g.KEYWORD_INITIALS.upper())


def leading_figure_index(caption: str) -> FigureIndex | None:
    """The figure label at the very start of a caption, read with the mention grammar, or ``None``.

    ``"Fig. 2: Results"`` → key ``"2"``; ``"Supplementary Figure S3."`` → ``"S3"``; ``"Extended Data Fig. 4 |"``
    → ``"ED4"``; ``"Figure 1—figure supplement 2."`` → ``"1-s2"``. Panel letters after the number are not
    read ("Figure 1 A schematic…" keeps "A schematic…" as caption text).
    """
    first = caption[:1]
    if first not in _INDEX_OPENERS and first.isascii():
        return None  # most captions: no keyword can start here (nor in an empty caption)
    return read_figure_index(caption)


def read_figure_index(caption: str) -> FigureIndex | None:
    """``leading_figure_index`` without its first-character gate: the plain form the gate is checked against
    (the gate is kept: 1.65x on leading_figure_index)."""
    i = 0
    while i < len(caption) and caption[i] in " \t\n\u00a0":
        i += 1
    m = g.KEYWORD.match(caption, i)
    if m is None:
        return None
    prefix = g.qualifier_prefix(m.group("qual"), m.group("app"))
    j = m.end()
    while j < len(caption) and caption[j] in " \u00a0":
        j += 1
    n = g.FIGURE_NUMBER.match(caption, j)
    if n is None:
        return None
    key = g.make_key(prefix, n.group("pre"), n.group("n"))
    end = n.end()
    s = g.SUPPLEMENT.match(caption, end)
    if s is not None and not prefix:
        k = _SUPPLEMENT_NUMBER.match(caption, s.end())
        if k is not None:
            key = f"{key}-s{int(k.group(0))}"
            end = k.end()
    if end < len(caption) and caption[end].isalnum():
        return None  # "Figure 1a" or "Fig 12b" style: a mention, not the caption's own label
    tail = g.LABEL_END.match(caption, end)
    label_text = caption[i:end]
    return FigureIndex(label_text, key, i, tail.end() if tail else end)

"""Spatial references in captions ("left", "top right panel", "second row", "inset") as positional labels.

A position is normalized to a short string: ``left``, ``right``, ``top``, ``bottom``, ``middle``,
combinations such as ``top-left``, ``row 2``, ``column 1``, ``row last`` and ``inset``. Each reference is
classified by how it is used:

- ``open``: it opens text about that part of the figure ("Top: …", "Left panels, …", "The right panel
  shows …");
- ``trail``: a parenthesis closing a clause about it ("… benign glands (upper part of picture)");
- ``ref``: any other mention ("in the upper left panel"), which names a place but does not split.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass

from figlink.text import grammar as g

_VERT = g.words_pattern(g.VERTICAL_WORDS)
_HORZ = rf"{g.words_pattern(g.HORIZONTAL_WORDS)}(?:[- ]hand)?(?:most)?"
_NOUN = (r"(?:panels?|images?|graphs?|plots?|pictures?|micrographs?|photo(?:graph)?s?|sections?|parts?|"
         r"halves|half|sides?|corners?|rows?|columns?|insets?|boxes|box|blots?|charts?|maps?)")
_ORD = g.words_pattern(tuple(g.ORDINALS) + ("top", "bottom", "middle", "upper", "lower"))
_PLACE = (rf"(?:(?:far[- ])?{_VERT}(?:[- ]?{_HORZ})?|(?:far[- ])?{_HORZ}|{_ORD}\s+{g.words_pattern(tuple(g.AXIS_WORDS))}|"
          rf"(?:rows?|columns?)\s+\d|{g.words_pattern(g.INSET_WORDS)})")
_PHRASE = rf"(?P<place>{_PLACE})(?:\s+(?P<noun>{_NOUN}))?(?:\s+of\s+(?:the\s+)?(?:picture|figure|image|panel))?"
_VERB = (r"(?:shows?|depicts?|displays?|represents?|illustrates?|indicates?|contains?|presents?|"
         r"demonstrates?|is|are|was|were|corresponds?)")

_PAREN = re.compile(rf"\(\s*(?:the\s+)?{_PHRASE}\s*(?P<note>[,;:*]\s*[^()]{{0,60}}?)?\s*\)", re.I)
_OPEN = re.compile(rf"(?<![\w-])(?P<at>(?:in|on|at)\s+)?(?:the\s+)?{_PHRASE}\s*(?:(?P<colon>[:,])|(?=\s+{_VERB}\b))", re.I)
_REF = re.compile(rf"(?<![\w-]){_PHRASE}", re.I)
_LEAD = re.compile(r"(?:\b(?:in|on|at)\s+)?(?:\bthe\s+)?$", re.I)
# The words a place starts with (the first words of _PLACE), as words of their own, read on the lower-cased
# text: the plain form of _place_hits.
_PLACE_WORDS = tuple(dict.fromkeys(g.VERTICAL_WORDS + g.HORIZONTAL_WORDS + ("far", "row", "rows", "column", "columns")
                                   + g.INSET_WORDS))
PLACE_WORD_PLAIN = re.compile(rf"(?<![\w-]){g.words_pattern(_PLACE_WORDS)}(?![a-z])")
# _place_hits looks for them with str.find, a plural through its singular (kept: 1.21x on find_positions;
# the tests compare it with PLACE_WORD_PLAIN).
_PLURALS = frozenset(w[:-1] for w in _PLACE_WORDS if w.endswith("s") and w[:-1] in _PLACE_WORDS)
_FIND_WORDS = tuple(w for w in _PLACE_WORDS if w[:-1] not in _PLURALS)
_ASCII_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_CLAUSE_LEAD = re.compile(r"(?:^|[.;:!?]\s*|,\s*(?:and|while|whereas)?\s*|\b(?:and|while|whereas)\s+)$", re.I)

_SENTENCE_LEAD = re.compile(r"(?:^|[.;:!?]\s*)$")
_BY_START = operator.attrgetter("start")
_POSITIONS = frozenset(g.PLACE_WORDS.values())


@dataclass(slots=True)
class PositionToken:
    """A spatial reference: its span, the normalized position, and its role (open, trail, ref)."""

    start: int
    end: int
    position: str
    role: g.LabelRole
    noun: str = ""  # the word after the place ("panel", "row", "part"), lower case


def normalize_position(phrase: str) -> str:
    """``"upper left panel"`` → ``"top-left"``; ``"second row"`` → ``"row 2"``; ``"insets"`` → ``"inset"``."""
    words = re.findall(r"[a-z0-9]+", phrase.lower().replace("-hand", "").replace("far", ""))
    words = [g.PLACE_WORDS.get(w, w) for w in (w.removesuffix("most") for w in words)]
    for axis, name in g.AXIS_WORDS.items():
        if axis in words:
            i = words.index(axis)
            other = words[i + 1] if i + 1 < len(words) and words[i + 1].isdigit() else (words[i - 1] if i else "")
            if other in ("top", "left"):
                other = "1"
            elif other in ("bottom", "right"):
                other = "last"
            return f"{name} {g.ORDINALS.get(other, other)}".strip()
    if any(w.startswith("inset") for w in words):
        return "inset"
    parts = [w for w in words if w in _POSITIONS]
    seen: list[str] = []
    for w in parts:
        if w not in seen:
            seen.append(w)
    return "-".join(seen)


def _at_clause_start(text: str, i: int, floor: int) -> bool:
    """Whether offset ``i`` opens a clause: after a sentence mark, a comma or "and"/"while"/"whereas"
    (looking back at most 12 characters, not before ``floor``)."""
    return _CLAUSE_LEAD.search(text[max(floor, i - 12):i]) is not None


def _place_hits(text: str, start: int, stop: int) -> list[int]:
    """Where a place word starts as a word of its own, on the lower-cased text, in order (as
    ``PLACE_WORD_PLAIN.finditer(text.lower(), start, stop)`` finds them: one ``str.find`` loop per word is
    cheaper, as the words' first letters are common)."""
    low = text.lower()
    hits: list[int] = []
    find = low.find
    for word in _FIND_WORDS:
        k = find(word, start, stop)
        while k != -1:
            e = k + len(word)
            if word in _PLURALS and e < stop and low[e] == "s":
                e += 1
            if (e == stop or low[e] not in _ASCII_LOWER) \
                    and (k == 0 or not (low[k - 1].isalnum() or low[k - 1] in "_-")):
                hits.append(k)
            k = find(word, k + 1, stop)
    hits.sort()
    return hits


def find_positions(text: str, start: int = 0) -> list[PositionToken]:
    """Spatial references in ``text[start:]`` with their role, in order."""
    stop = len(text)
    out: list[PositionToken] = []
    taken: list[tuple[int, int]] = []
    hits = _place_hits(text, start, stop)
    if not hits:
        return out

    def free(m: re.Match[str]) -> bool:
        return not any(a < m.end() and m.start() < b for a, b in taken)

    for k in hits:
        p = text.rfind("(", max(start, k - 8), k)
        m = _PAREN.match(text, p, stop) if p != -1 else None
        if m is None or not free(m):
            continue
        several = len(_REF.findall(m.group(0))) > 1
        pos = normalize_position(m.group("place") + " " + (m.group("noun") or ""))
        nxt = text[m.end():m.end() + 2].strip()[:1]
        opens = _at_clause_start(text, m.start(), start) and nxt != "" and nxt not in ".,;:)"
        if pos:
            role: g.LabelRole = "ref" if several else ("open" if opens else "trail")
            out.append(PositionToken(m.start(), m.end(), pos, role, (m.group("noun") or "").lower()))
            taken.append((m.start(), m.end()))
    for k in hits:
        lead = _LEAD.search(text, max(start, k - 12), k)  # "in the", "at" before the place word (may be empty)
        assert lead is not None
        at = lead.start()
        if not _at_clause_start(text, at, start):
            continue
        m = _OPEN.match(text, at, stop)
        if m is None or not free(m):
            continue
        colon = m.group("colon")
        noun = m.group("noun")
        # "Left:" needs no noun, nor does "At left is …"; "The left panel shows" does; ", " after a bare
        # word is too weak.
        if not noun and colon != ":" and not (m.group("at") and not colon):
            continue
        if colon == "," and not _SENTENCE_LEAD.search(text[max(start, m.start() - 4):m.start()]):
            continue  # "Left panels, …" opens a sentence; "…, and lower graphs, n = 5" does not
        pos = normalize_position(m.group("place") + " " + (noun or ""))
        if pos:
            out.append(PositionToken(m.start(), m.end(), pos, "open", (noun or "").lower()))
            taken.append((m.start(), m.end()))
    for k in hits:
        m = _REF.match(text, k, stop)
        if m is None or not free(m) or not m.group("noun"):
            continue
        if m.group("noun").lower().startswith(("side", "half", "halves")) and "of" not in m.group(0):
            continue
        pos = normalize_position(m.group("place") + " " + m.group("noun"))
        if pos:
            out.append(PositionToken(m.start(), m.end(), pos, "ref", m.group("noun").lower()))
            taken.append((m.start(), m.end()))
    return sorted(out, key=_BY_START)


_PANEL_NOUN = re.compile(r"^(?:panels?|images?|graphs?|plots?|pictures?|micrographs?|photo(?:graph)?s?|rows?|columns?|"
                         r"insets?|blots?|charts?|maps?)$")
_OPPOSITE = ({"left", "right"}, {"top", "bottom"})


def panel_positions(tokens: list[PositionToken]) -> list[str]:
    """Positions that name parts of a compound figure rather than places inside one image.

    A position counts when it opens text ("Top: …", "(left) …"), names a panel-like thing ("top panel",
    "second row", "inset"), or is one of an opposite pair written without a noun ("(left)" … "(right)").
    "(bottom left)" alone, or "(center)" with "(bottom right)" in one matrix, do not count.
    """
    out: list[str] = []
    bare = {t.position for t in tokens if t.role in ("trail", "ref") and not t.noun}
    for t in tokens:
        panel_like = t.role == "open" or bool(_PANEL_NOUN.match(t.noun)) or t.position == "inset" \
            or (not t.noun and any(t.position in pair and pair <= bare for pair in _OPPOSITE))
        if panel_like and t.position not in out:
            out.append(t.position)
    return out


__all__ = ["PositionToken", "normalize_position", "find_positions", "panel_positions"]

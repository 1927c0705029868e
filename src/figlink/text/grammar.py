"""The one grammar of figure mentions and panel labels: every word, character and pattern that figlink's
readers share, and nothing else.

Readers that use it: JATS ``<xref>`` citations (``ingest/jats``), plain-text figure mentions and caption
figure indexes (``text/mentions``), caption panel labels (``text/labels``, ``text/label_roles``), spatial
references (``text/spatial``, ``align``), PDF caption detection (``ingest/pdf_captions``,
``vision/analyze``) and the OCR panel-label reader (``vision/ocr``). A new form is added here, once:

- a dash, prime or roman numeral: ``DASHES``, ``PRIMES``, ``ROMANS``;
- a panel-label atom ("A", "ii", "B′", "12"): ``LABEL_ATOM``; a way of writing labels in a caption ("(a)",
  "a)", "A.", "panels A–C"): the ``LABEL_*`` forms below;
- a place word ("upper", "inset", "second row"): ``PLACE_WORDS``, ``INSET_WORDS``, ``AXIS_WORDS``,
  ``ORDINALS``;
- a figure keyword or qualifier ("Extended Data Fig.", "Appendix 1—figure 2"): ``QUALIFIER``,
  ``FIGURE_WORD`` and ``qualifier_prefix`` (the figure key it gives), with ``KEYWORD_INITIALS`` and
  ``KEYWORD_FORMS`` when it brings a new first letter or word (tests/test_fast_paths checks the initials).
- a word that frames a reference in running text ("Figure 4 *shows that*", "*as shown in* Fig. 2", "(*see* …)"):
  ``REPORTING_VERBS``, ``FRAME_PARTICIPLES``, ``FRAME_PREPOSITIONS``, ``DROPPED_REFERENCE_AFTER``, ``POINTER_WORDS``.

Patterns are regex sources (strings) where readers build larger patterns from them, compiled patterns where
readers match them as they are.
"""

from __future__ import annotations

import re
from typing import Literal

# ------------------------------------------------------------------------------------------ characters

DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"  # hyphen, hyphens, figure/en/em dash, bar, minus
DASH_CHARS = "\\" + DASHES  # the same inside a regex character class (the hyphen escaped)
DASH: str = f"[{DASH_CHARS}]"
PRIMES = "'\u2032\u2019"  # B', B′, B’
PRIME = f"[{PRIMES}]"

# --------------------------------------------------------------------------------------- numbers, ranges

ROMANS = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "xiii", "xiv", "xv")
ROMAN_VALUE = {r: n for n, r in enumerate(ROMANS, 1)}
RANGE_WORDS = ("to", "through", "thru")  # "A to C": a range, as "A–C" is
MAX_RANGE = 30  # the longest range of numbers that expands ("Figs 1–31" does not)


def is_range(separator: str) -> bool:
    """Whether a separator between two labels or figure numbers makes a range ("–", "to", "through")."""
    return separator in DASHES or separator.lower() in RANGE_WORDS


def expand_letters(first: str, last: str) -> list[str]:
    """``expand_letters("A", "C") == ["a", "b", "c"]``; a reversed or mixed-case range gives both ends."""
    a, b = first.lower(), last.lower()
    if a <= b and ord(b) - ord(a) <= 25 and first.isupper() == last.isupper():
        return [chr(c) for c in range(ord(a), ord(b) + 1)]
    return [a, b]


def expand_range(first: str, last: str) -> list[str] | None:
    """The labels from ``first`` to ``last``, lower case, or ``None`` when the two ends make no range.

    "A"–"C" → a, b, c; "ii"–"iv" → ii, iii, iv; "1"–"3" → 1, 2, 3. Two romans make a roman range when one
    of them has more than one letter ("i"–"v" is a letter range). A reversed or mixed-case letter range
    gives both ends (``expand_letters``). Primes carry over: "A′"–"C′" → a′, b′, c′; "B"–"C′" → b, b′, c, c′."""
    a, b = first.lower(), last.lower()
    pa, pb = a[len(a.rstrip(PRIMES)):], b[len(b.rstrip(PRIMES)):]
    if pa or pb:  # "A′–D′" → a′ … d′; "B–C′" → b, b′, c, c′
        core = expand_range(first.rstrip(PRIMES), last.rstrip(PRIMES))
        if core is None:
            return None
        if pa == pb:
            return [c + pa for c in core]
        return [x for c in core for x in (c, c + (pa or pb))]  # one end primed: both forms of each
    if a in ROMAN_VALUE and b in ROMAN_VALUE and (len(a) > 1 or len(b) > 1) and ROMAN_VALUE[a] < ROMAN_VALUE[b]:
        return list(ROMANS[ROMAN_VALUE[a] - 1:ROMAN_VALUE[b]])
    if len(a) == 1 and len(b) == 1 and a.isalpha() and b.isalpha():
        return expand_letters(first, last)
    if a.isdigit() and b.isdigit() and 0 < int(b) - int(a) <= MAX_RANGE:
        return [str(n) for n in range(int(a), int(b) + 1)]
    return None


# -------------------------------------------------------------------------------------------------- places

def words_pattern(words: "tuple[str, ...] | list[str]") -> str:
    """A regex alternation of ``words``, longest first (a word never stops short inside a longer one)."""
    return "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"


# Words that name a part of a figure by where it is, and the position each names.
PLACE_WORDS: dict[str, str] = {"top": "top", "upper": "top", "bottom": "bottom", "lower": "bottom", "left": "left",
               "right": "right", "middle": "middle", "center": "middle", "centre": "middle"}
VERTICAL_WORDS: tuple[str, ...] = ("top", "bottom", "upper", "lower", "middle", "center", "centre")
HORIZONTAL_WORDS: tuple[str, ...] = ("left", "right", "middle", "center", "centre")
INSET_WORDS: tuple[str, ...] = ("inset", "insets")
AXIS_WORDS: dict[str, str] = {"row": "row", "rows": "row", "column": "column", "columns": "column", "line": "row",
                              "lines": "row"}
ORDINALS: dict[str, str] = {"first": "1", "1st": "1", "second": "2", "2nd": "2", "third": "3", "3rd": "3",
                            "fourth": "4", "4th": "4", "fifth": "5", "5th": "5", "sixth": "6", "6th": "6", "last": "last"}


def place_of(word: str) -> str | None:
    """The position a place word names: "upper" → "top", "insets" → "inset"; ``None`` for other words."""
    word = word.lower()
    if word in INSET_WORDS:
        return "inset"
    return PLACE_WORDS.get(word)


# ------------------------------------------------------------------------------------------ panel labels

# One label as written: a letter or roman numeral with up to two primes ("B", "B′", "ii′"), two lower-case letters
# (labels past z: "aa") or a number of one or two digits.
_ROMAN = words_pattern(ROMANS)
LABEL_ATOM: str = (rf"(?:[A-Za-z](?![A-Za-z]){PRIME}{{0,2}}|(?:{_ROMAN}|{_ROMAN.upper()})(?![A-Za-z]){PRIME}{{0,2}}"
              r"|[a-z]{2}(?![A-Za-z])|\d{1,2}(?!\d))")
# Words between two labels of a list ("A and B", "A to C"), besides commas, semicolons and dashes.
LABEL_JOIN_WORDS = ("and", "or", "&", "to", "through", "thru")
LABEL_SEPARATOR: str = rf"(?:\s*,?\s*{words_pattern(LABEL_JOIN_WORDS)}\s+|\s*[,;]\s*|\s*{DASH}\s*)"
# A place after a label: "(A top)", "(C upper panel)".
LABEL_POSITION: str = (rf"(?:\s*[{DASH_CHARS},]?\s*{words_pattern(tuple(PLACE_WORDS) + ('inset',))}s?"
                  rf"(?:[\s\-]+{words_pattern(HORIZONTAL_WORDS)})?(?:\s+(?:panels?|images?|parts?))?)")
_LABEL_ITEM = rf"{LABEL_ATOM}{LABEL_POSITION}?"
# A list of labels: "A", "A–C", "a, c, and e", "A, left and B".
LABEL_LIST = rf"{_LABEL_ITEM}(?:{LABEL_SEPARATOR}{_LABEL_ITEM})*"

# The ways a caption writes panel labels. Each has a group "list" (LABEL_LIST).
# (a) (A–C) (a, c, and e) (A, left) (C, in red, 200*): a list, optionally followed by a note.
LABEL_PAREN = re.compile(rf"\(\s*(?:panels?\s+)?(?P<list>{LABEL_LIST})\s*(?P<note>[,;:]\s*[^()]{{0,60}}?)?\s*\)")
# (image C) (PSA; image C) (panels A and B) (KO; B): labels after a note, named as panels or after a ";"
LABEL_PANEL_PAREN = re.compile(rf"\((?:(?:[^()]{{0,40}}?[;,]\s*)?(?:panels?|images?)\s+|[^();]{{1,40}};\s*)"
                               rf"(?P<list>{LABEL_LIST})\s*\)", re.I)
# a) A) A and B): a closing parenthesis only, not after a word character or "(".
LABEL_HALF = re.compile(rf"(?<![^\s,;:.])(?P<list>{LABEL_LIST})\)$")
# A. a. A: A and C: A, (where a sentence or clause opens); the group "p" is the mark.
LABEL_PUNCT = re.compile(rf"(?<![\w'])(?P<list>{LABEL_LIST})\s*(?P<p>[.:,])(?=\s|$|[A-Z(])")
# "a *10 magnification", "A Representative": one letter opening a sentence.
LABEL_BARE = re.compile(r"(?P<list>[A-Za-z])[ \t\u00a0]+(?=\S)")
# panel A, panels A and B, panels A–C
LABEL_PANEL_WORD_PLAIN = re.compile(rf"(?<![\w-])[Pp](?i:anels?)\s+(?P<list>{LABEL_LIST})(?![\w'])")
# The same matches with the letter before the look-behind, so the regex engine can skip ahead to a "P"
# (kept: 1.20x on the label finder; the tests compare it with LABEL_PANEL_WORD_PLAIN).
LABEL_PANEL_WORD = re.compile(rf"[Pp](?<![\w-][Pp])(?i:anels?)\s+(?P<list>{LABEL_LIST})(?![\w'])")


def label_core(label: str) -> str:
    """A label without its primes: "b′" → "b"."""
    return label.rstrip(PRIMES)


# A label standing alone, as OCR reads it in an image: "a", "(B)", "c.", "D:".
LONE_LABEL = re.compile(r"^\(?([A-Za-z])\)?[.:]?$")
# The shape of a parenthesized label whatever OCR made of its glyph: "(b)" read as "(8)", "(6)", "(t)".
PAREN_GLYPH = re.compile(r"^\(\S\)$")

# How a caption writes a label: "(A" + "panel(s) B)" (paren, panelparen), "a)" (half), "A." / "A:" (dot,
# colon), "A text" (bare), "panel A" (panel).
LabelForm = Literal["paren", "panelparen", "half", "dot", "colon", "bare", "panel"]
# What a label or place word does in its caption: it opens text about its panels, closes a clause about
# them (trails), or only refers to them.
LabelRole = Literal["open", "trail", "ref"]

# --------------------------------------------------------------------------------------- figure keyword

# What may stand before the figure word, and the key prefix it gives (see qualifier_prefix).
QUALIFIER = rf"""(?P<qual>(?:supplementa(?:l|ry)|suppl\.?|supp\.?|extended\s+data|source\s+data)\s+
    |appendix\s*(?P<app>\d+|[A-Z])\s*{DASH}\s*
    |(?P<appfig>appendix)\s+
    |author\s+response\s+)"""
# "Figure", "Figs.", "FIG", "fig"; "image" only before a number ("image 3", "Author response image 1").
FIGURE_WORD = r"(?P<word>fig(?:ure)?s?(?![a-z])\.?|image(?=s?\s*\d))"
# A figure keyword: the figure word with its qualifier, if any (case-insensitive, verbose).
KEYWORD = re.compile(rf"{QUALIFIER}?{FIGURE_WORD}", re.I | re.X)
# The letters a keyword can start with, and how the figure word is written where running text names a
# figure (where readers look for a mention). Both follow QUALIFIER and FIGURE_WORD; the tests check them.
KEYWORD_INITIALS = "saefi"
KEYWORD_FORMS: tuple[str, ...] = ("Fig", "fig", "FIG", "Image", "image", "IMAGE")
# A qualifier that ends right before a figure word (searched backwards from the word).
QUALIFIER_BEFORE = re.compile(rf"{QUALIFIER}$", re.I | re.X)
# A whole keyword that ends a text (before a JATS xref that holds only the number).
KEYWORD_BEFORE = re.compile(rf"{KEYWORD.pattern}\s*$", re.I | re.X)
# A figure number: "3", "S3", "A1", "EV4" (EMBO Expanded View); not "3.5".
FIGURE_NUMBER = re.compile(r"(?P<pre>EV|[SA]|)(?P<n>\d{1,3})(?![\d])(?!\.\d)")
# "—figure supplement 2" after a figure number (eLife).
SUPPLEMENT = re.compile(rf"\s*{DASH}?\s*figure\s+supplements?\s*", re.I)
# Between figure numbers of one mention: "Figs 2 and 3", "Figures 1–3", "Figs. 2, Fig. 4".
ITEM_SEPARATOR = re.compile(rf"\s*(?P<sep>{DASH}|,|;|&|and\b|or\b|to\b)\s*(?:fig(?:ure)?s?\.?\s*)?", re.I)
# A sub-panel number glued to a letter ("5A2", "6B1,B2": panel a, b), where a list or the sentence goes on
# after it ("Figure 1A and B6 mice" names no sub-panel).
_SUB_DIGIT = rf"\d(?=\s*(?:[,;)\]{DASH_CHARS}]|\.(?!\d)|(?:and|or)\b|$))"
SUB_PANEL = rf"(?:{_SUB_DIGIT})?"
# Panel letters after a figure number: glued ("1A", "1(a)", "1a–c", "5A2"), or spaced and capital ("1 A").
LETTER_ATTACHED = re.compile(rf"\(?([A-Za-z])\)?(?![A-Za-z0-9])"
                             rf"|([A-Za-z])(?:(?=[{DASH_CHARS},&])|{SUB_PANEL}(?![A-Za-z0-9]))")
LETTER_SPACED = re.compile(r"[ \u00a0]\(?([A-Z])\)?(?![A-Za-z0-9])|[ \u00a0]\(([a-z])\)")
# More letters: ", B", "–C", " and D", " to F" (the separator in group "sep", the letter in group "l").
_LETTER_SEPARATORS = rf"{DASH}|,?\s*(?:&|and\b)|,|to\b"  # ", and" too: "3b, c, and d"
NEXT_LETTER = re.compile(rf"\s*(?P<sep>{_LETTER_SEPARATORS})\s*\(?(?P<l>[A-Za-z]){SUB_PANEL}\)?(?![A-Za-z0-9])")
# The same, as a regex source without groups: one letter, and a list of them ("A", "A, B", "a–c").
PANEL_LETTER = r"\(?[A-Za-z]\)?(?![A-Za-z0-9])"
MORE_LETTERS = rf"(?:\s*(?:{_LETTER_SEPARATORS})\s*{PANEL_LETTER})+"
# Letters after a comma that close the reference ("Figure 1, C and E)", "Fig. 5, b)"; not "Figure 1,
# C-reactive protein"): the list as a regex source, and its first letter in group 1.
_CLOSED_AFTER_COMMA = rf"(?=,[ \u00a0]*{PANEL_LETTER}(?:{MORE_LETTERS})?\s*(?:[)\];]|$))"
COMMA_LETTERS = rf"{_CLOSED_AFTER_COMMA},[ \u00a0]*{PANEL_LETTER}(?:{MORE_LETTERS})?"
LETTER_AFTER_COMMA = re.compile(rf"{_CLOSED_AFTER_COMMA},[ \u00a0]*\(?([A-Za-z])\)?")
# A list that opens with a sub-panel ("A2,B1", "C1,C2,D1,D2"): its letters may carry sub-panels too.
SUB_PANEL_LETTERS = (rf"[A-Za-z]{_SUB_DIGIT}(?![A-Za-z0-9])"
                     rf"(?:\s*(?:{_LETTER_SEPARATORS})\s*[A-Za-z]{SUB_PANEL}(?![A-Za-z0-9]))*")
# A line that opens with a figure label: a keyword and a number ("Figure 3.", "Supp. Fig. S2", "Appendix
# 1—figure 2", "Author response image 1").
CAPTION_OPENER = re.compile(rf"\s*{KEYWORD.pattern}\s*[SA]?\d", re.I | re.X)
# A line that opens with the label of another kind of numbered display ("Table 2.", "TABLE IV", "Scheme 1:",
# "Algorithm 3"): where a figure caption ends.
OTHER_OPENER = re.compile(r"\s*(?:supplementa(?:l|ry)\s+)?(?:table|scheme|algorithm|chart)\s*[SA]?(?:\d+|[IVX]+\b)",
                          re.I)
# What ends a figure label at the start of a caption: "Figure 1.", "Fig. 2:", "Figure 3 |", "Figure 4 —".
LABEL_END = re.compile(rf"\s*(?:[.:|]|{DASH}(?!\s*figure))?\s*")


# ------------------------------------------------------------------------------- the frame of a reference

# The words around a figure reference in running text that only point at the figure: the verb of a
# sentence whose subject is the reference ("Figure 4 shows that …", "Figure 2 is a map of …"), the
# participle of a passive frame ("as shown in Figure 2", "is illustrated in Figure 6"), the prepositions
# and pointers that lead to it ("in", "see", "cf."). Read by ``text/citing_frame``.
REPORTING_VERBS: tuple[str, ...] = (
    "shows", "show", "illustrates", "illustrate", "depicts", "depict", "presents", "present", "displays",
    "display", "summarizes", "summarize", "compares", "compare", "lists", "list", "outlines", "outline",
    "gives", "give", "demonstrates", "demonstrate", "represents", "represent", "plots", "plot", "provides",
    "provide", "contains", "contain", "is", "are")
FRAME_PARTICIPLES: tuple[str, ...] = (
    "shown", "seen", "illustrated", "depicted", "displayed", "presented", "sketched", "drawn", "plotted",
    "pictured", "summarized", "outlined", "indicated", "given", "listed", "diagrammed", "represented")
FRAME_PREPOSITIONS: tuple[str, ...] = ("in", "on", "by", "from", "see", "cf.", "cf")
# The frame words that still stand where a reference's text was lost: "as shown in .", "(see )".
DROPPED_REFERENCE_AFTER: tuple[str, ...] = ("in", "see", "cf.", "cf")
# Words inside a parenthesis that holds only references: "(see Figure 2 and 3)", "(cf. Fig. 4; also 5)".
POINTER_WORDS: tuple[str, ...] = ("see", "cf.", "cf", "also", "e.g.", "e.g.,", "and", "or")


def qualifier_prefix(qual: str | None, app: str | None) -> str:
    """The key prefix of a qualifier: Supplementary → "S", Extended Data → "ED", Appendix 1— → "A1-",
    Appendix → "A", Author response → "R", Source data → "SD"."""
    if not qual:
        return ""
    q = qual.lower()
    if app is not None:
        return f"A{app}-"
    if q.startswith("appendix"):
        return "A"
    if q.startswith("ext"):
        return "ED"
    if q.startswith("sup"):
        return "S"
    if q.startswith("author"):
        return "R"
    if q.startswith("source"):
        return "SD"
    return ""


def make_key(prefix: str, pre: str, n: str) -> str:
    """The figure key of a number read after a keyword: ("S", "", "03") → "S3"; ("", "S", "3") → "S3"."""
    n = str(int(n))
    if prefix == "S":
        return "S" + n
    if prefix:
        return prefix + n
    return (pre.upper() + n) if pre else n


__all__ = [
    "DASHES", "DASH_CHARS", "DASH", "PRIMES", "PRIME",
    "ROMANS", "ROMAN_VALUE", "RANGE_WORDS", "MAX_RANGE", "is_range", "expand_letters", "expand_range",
    "words_pattern", "PLACE_WORDS", "VERTICAL_WORDS", "HORIZONTAL_WORDS", "INSET_WORDS", "AXIS_WORDS", "ORDINALS",
    "place_of",
    "LABEL_ATOM", "LABEL_JOIN_WORDS", "LABEL_SEPARATOR", "LABEL_POSITION", "LABEL_LIST", "LABEL_PAREN",
    "LABEL_PANEL_PAREN", "LABEL_HALF", "LABEL_PUNCT", "LABEL_BARE", "LABEL_PANEL_WORD", "LABEL_PANEL_WORD_PLAIN",
    "label_core", "LONE_LABEL", "PAREN_GLYPH", "LabelForm", "LabelRole",
    "QUALIFIER", "FIGURE_WORD", "KEYWORD", "KEYWORD_INITIALS", "KEYWORD_FORMS", "QUALIFIER_BEFORE", "KEYWORD_BEFORE",
    "FIGURE_NUMBER", "SUPPLEMENT", "ITEM_SEPARATOR", "SUB_PANEL", "LETTER_ATTACHED", "LETTER_SPACED", "NEXT_LETTER",
    "PANEL_LETTER", "MORE_LETTERS", "COMMA_LETTERS", "LETTER_AFTER_COMMA", "SUB_PANEL_LETTERS", "CAPTION_OPENER", "OTHER_OPENER", "LABEL_END",
    "qualifier_prefix", "make_key",
    "REPORTING_VERBS", "FRAME_PARTICIPLES", "FRAME_PREPOSITIONS", "DROPPED_REFERENCE_AFTER",
    "POINTER_WORDS",
]

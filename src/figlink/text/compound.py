"""Compound-figure cues read from the caption: is the figure compound, and how many panels to expect.

SciCap drops compound figures with a detector plus caption rules; the caption rules used here are:
subfigure labels (two or more, or ranges), spatial parts (two or more distinct panel-like positions, see
``figlink.text.spatial.panel_positions``), and words that
only compound figures use ("subfigures", "panels", "insets", "top row", "left column"). The expected count
fills gaps in a letter sequence ("(a)…(c), (e)" → 5) and is ``None`` when the caption says the figure is
compound but not how many panels it has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from figlink.model import CaptionSplit
from figlink.text import grammar as g
from figlink.text.labels import sort_labels
from figlink.text.spatial import find_positions, panel_positions

_CUE_WORDS = re.compile(
    r"\b(?:sub-?figures?|sub-?panels?|panels|insets?|(?:top|bottom|upper|lower|middle|first|second|third)\s+"
    r"(?:rows?|panels?)|(?:left|right|middle)\s+(?:columns?|panels?)|(?:each|all|both)\s+panels?)\b",
)  # matched on the lower-cased caption
# Every _CUE_WORDS match holds one of these, and starts at the word that holds it or at the word before.
_CUE_HINTS = ("panel", "inset", "subfig", "sub-fig", "row", "column")


@dataclass
class CompoundCues:
    """What the caption says about the figure's panels."""

    is_compound: bool
    expected_panels: int | None
    labels: list[str] = field(default_factory=list)
    positions: list[str] = field(default_factory=list)
    cues: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"is_compound": self.is_compound, "expected_panels": self.expected_panels,
                "labels": list(self.labels), "positions": list(self.positions), "cues": list(self.cues)}


def _label_count(labels: list[str]) -> int:
    """Panels implied by labels: the span of a letter, roman or number sequence, gaps filled."""
    letters = [lab for lab in labels if len(g.label_core(lab)) == 1 and lab[0].isalpha()
               and not (lab in ("i", "v", "x") and any(r in labels for r in ("ii", "iv", "vi")))]
    romans = [lab for lab in labels if lab in g.ROMAN_VALUE and lab not in letters]
    numbers = [int(lab) for lab in labels if lab.isdigit()]
    doubled = [lab for lab in labels if len(lab) == 2 and lab.isalpha() and lab not in g.ROMAN_VALUE]
    count = 0
    if letters:
        first, last = min(ord(lab[0]) for lab in letters), max(ord(lab[0]) for lab in letters)
        count = max(count, last - min(first, ord("a")) + 1 if first - ord("a") <= 2 else len(set(letters)))
        count += len(set(doubled))
    if romans:
        count = max(count, max(g.ROMAN_VALUE[r] for r in romans))
    if numbers:
        count = max(count, max(numbers) if min(numbers) <= 2 else len(set(numbers)))
    return count


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # what the regex calls \\w


def cue_words_plain(low: str) -> set[str]:
    """The cue words of a lower-cased caption, as one regex scan finds them (the plain form of _cue_words)."""
    return {m.group(0) for m in _CUE_WORDS.finditer(low)}


def _cue_words(low: str) -> set[str]:
    """``cue_words_plain(low)``, with the regex tried only where it can match (kept: 1.49x on compound_cues).

    A cue ends with the word that holds a hint (its second word, or its only one) and starts at that word
    or at the word before ("top panels", "sub-panel"). Trying the word before first gives the match a left
    to right scan gives: no cue word can both end one cue and start another, so the word before is never
    taken by an earlier cue when it starts one that reaches the hint.
    """
    found: set[str] = set()
    for hint in _CUE_HINTS:
        k = low.find(hint)
        while k != -1:
            s = k
            while s > 0 and _is_word_char(low[s - 1]):
                s -= 1
            p = s
            while p > 0 and not _is_word_char(low[p - 1]):
                p -= 1
            m = None
            if p < s:  # a word ends before this one: back up to its start
                while p > 0 and _is_word_char(low[p - 1]):
                    p -= 1
                m = _CUE_WORDS.match(low, p)
            if m is None or m.end() <= k:
                m = _CUE_WORDS.match(low, s)
            if m is not None:
                found.add(m.group(0))
            k = low.find(hint, k + 1)
    return found


def compound_cues(caption: str, split: CaptionSplit) -> CompoundCues:
    """Compound cues of ``caption`` given its split (``figlink.text.subcaptions.split_caption``)."""
    labels = sort_labels({lab for s in split.subcaptions for lab in s.labels})
    positions = sorted({p for s in split.subcaptions for p in s.positions})
    low = caption.lower()
    cues = sorted(_cue_words(low))
    n_labels = _label_count(labels)
    n_positions = len(panel_positions(find_positions(caption))) if positions else 0
    count = max(n_labels, n_positions)
    compound = count >= 2 or bool(cues)
    expected = count if count >= 2 else (None if compound else 1)
    return CompoundCues(compound, expected, labels, positions, cues)


__all__ = ["CompoundCues", "compound_cues"]

"""Medical-figure filter, stage 1 (MedICaT, Appendix B): imaging keywords in the caption or the citing
sentences. Matching is case-insensitive on word boundaries; hyphens may be any dash or a space
("X ray", "PET–MRI"; "Xray" and "X-ray" are the list's own two spellings), and a plural "s"/"es" is
accepted ("scans", "radiographs"; for acronyms only when written in capitals: "CTs", not "cats").
Stage 2, an image classifier, belongs to the vision stage.
"""

from __future__ import annotations

import re
from typing import Iterable

from figlink.text import grammar as g

MEDICAL_KEYWORDS: tuple[str, ...] = (
    "MRI", "fMRI", "CT", "CAT", "PET", "PET-MRI", "MEG", "EEG", "ultrasound", "X-ray", "Xray", "nuclear",
    "imaging", "tracer", "isotope", "scan", "positron", "EKG", "spectroscopy", "radiograph", "tomography",
    "endoscope", "endoscopy", "colonoscopy", "elastography", "ultrasonic", "ultrasonography",
    "echocardiogram", "endomicroscopy", "pancreatoscopy", "cholangioscopy", "enteroscopy", "retroscopy",
    "chromoendoscopy", "sigmoidoscopy", "cholangiography", "pancreatography", "cholangio-pancreatography",
    "esophagogastroduodenoscopy",
)

_WORD_SPLIT = re.compile(r"([A-Za-z0-9]+)")

# Canonical keyword by its lower-case words: ("x", "ray") → "X-ray"; one-word keywords by the word.
_BY_WORDS: dict[tuple[str, ...], str] = {
    tuple(re.split(r"-", k.lower())): k for k in MEDICAL_KEYWORDS
}
_MAX_WORDS = max(len(w) for w in _BY_WORDS)
_FIRSTS = frozenset(w[0] + p for w in _BY_WORDS for p in ("", "s", "es"))
_FIRSTS_ASCII = frozenset(w.encode("ascii") for w in _FIRSTS)
# ASCII letters and digits stay, every other byte becomes a space ("?" stands for a non-ASCII character).
_WORD_BYTES = bytes.maketrans(bytes(range(128)), bytes(c if chr(c).isalnum() else 32 for c in range(128)))


def _joined(gap: str) -> bool:
    """Two words joined by one dash or one space ("X-ray", "X ray", "PET–MRI")."""
    return len(gap) == 1 and (gap in g.DASHES or gap.isspace())


def _lookup(words: tuple[str, ...], last_raw: str) -> str | None:
    """The keyword these words spell, allowing a plural on the last word ("scans"; "CTs" but not "cats")."""
    hit = _BY_WORDS.get(words)
    if hit is not None:
        return hit
    last = words[-1]
    for suffix in ("es", "s"):
        if last.endswith(suffix) and len(last) > len(suffix):
            hit = _BY_WORDS.get(words[:-1] + (last[: -len(suffix)],))
            if hit is not None:
                stem = last_raw[: -len(suffix)]
                if hit.isupper() and not stem.isupper():
                    return None  # an acronym takes a plural only when written as one
                return hit
    return None


def find_medical_keywords(texts: Iterable[str] | str) -> list[str]:
    """The stage-1 keywords found in ``texts`` (canonical spelling, first-seen order, no repeats).

    Words are runs of letters and digits, so matches fall on word boundaries; the longest keyword wins
    ("PET-MRI" over "PET", "cholangio-pancreatography" over "pancreatography").
    """
    found: dict[str, None] = {}
    for text in [texts] if isinstance(texts, str) else texts:
        if text and _may_hold_keyword(text):
            found.update(dict.fromkeys(keywords_in(text)))
    return list(found)


def _may_hold_keyword(text: str) -> bool:
    """Whether a word of ``text`` (a run of ASCII letters and digits) can start a keyword: a pre-test
    before ``keywords_in`` on the bytes (kept: 1.31x on the keyword filter; tests compare with keywords_in)."""
    return not _FIRSTS_ASCII.isdisjoint(text.encode("ascii", "replace").translate(_WORD_BYTES).lower().split())


def keywords_in(text: str) -> list[str]:
    """The keywords of one text, in order, repeats included (the plain scan)."""
    parts = _WORD_SPLIT.split(text)  # [before, word, gap, word, gap, …, after]
    words, gaps = parts[1::2], parts[2::2]  # gaps[i]: the text between words i and i + 1 (or after the last)
    lows = [w.lower() for w in words]
    out: list[str] = []
    i = 0
    while i < len(words):
        used = 1
        if lows[i] in _FIRSTS:
            for n in range(min(_MAX_WORDS, len(words) - i), 0, -1):
                if n > 1 and not all(_joined(gaps[i + k]) for k in range(n - 1)):
                    continue
                hit = _lookup(tuple(lows[i:i + n]), words[i + n - 1])
                if hit is not None:
                    out.append(hit)
                    used = n
                    break
        i += used
    return out


def is_medical(caption: str, inline_refs: Iterable[str] = ()) -> bool:
    """Stage-1 decision: does the caption or any citing sentence name an imaging keyword?"""
    return bool(find_medical_keywords([caption, *inline_refs]))


__all__ = ["MEDICAL_KEYWORDS", "find_medical_keywords", "keywords_in", "is_medical"]

"""Medical-figure filter, stage 1 (MedICaT, Appendix B): imaging keywords in the caption or the citing
sentences. Matching is case-insensitive on word boundaries; hyphens may be any dash or a space
("X ray", "PET–MRI"; "Xray" and "X-ray" are the list's own two spellings), and a plural "s"/"es" is
accepted ("scans", "radiographs"; for acronyms only when written in capitals: "CTs", not "cats").

A keyword names a modality, so every word of its family names it too: "-graph", "-graphy", "-graphic"
and "-gram" are one family ("radiography", "tomographic", "echocardiography" match "radiograph",
"tomography", "echocardiogram"), as are "-scope", "-scopy" and "-scopic" ("endoscopic"). The list's
acronyms also match their other written forms (:data:`ALIASES`: "MR image", "magnetic resonance",
"ECG"); an acronym alias matches only in capitals ("MR", not "Mr").

Stage 2, an image classifier, belongs to the vision stage; a *strong* caption signal
(:func:`is_strong_signal`: a named imaging modality) is never vetoed by it.
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

# Other written forms of the list's keywords: the spelled-out and short forms of its acronyms.
ALIASES: dict[str, str] = {
    "MR": "MRI", "magnetic resonance": "MRI", "ECG": "EKG", "electrocardiogram": "EKG",
    "electroencephalogram": "EEG", "magnetoencephalography": "MEG",
}
# Keywords that name an imaging modality; the others ("imaging", "nuclear", "tracer", "isotope",
# "spectroscopy", "scan") are generic words that non-medical figures use too.
_GENERIC_KEYWORDS = frozenset({"imaging", "nuclear", "tracer", "isotope", "spectroscopy", "scan"})

_WORD_SPLIT = re.compile(r"([A-Za-z0-9]+)")
# Endings of one word family, and the stem each leaves ("tomographic" → "tomograph").
_FAMILY_ENDINGS = (("graphically", "graph"), ("graphical", "graph"), ("graphic", "graph"),
                   ("graphies", "graph"), ("graphy", "graph"), ("graphs", "graph"), ("grams", "graph"),
                   ("gram", "graph"), ("scopically", "scop"), ("scopic", "scop"), ("scopies", "scop"),
                   ("scopy", "scop"), ("scopes", "scop"), ("scope", "scop"))


def family(word: str) -> str:
    """The stem of a lower-case word's family: "radiography", "radiograms" → "radiograph"; "endoscopic" →
    "endoscop"; other words as they are."""
    if "gra" not in word and "scop" not in word:
        return word  # (the quick answer for almost every word)
    for ending, stem in _FAMILY_ENDINGS:
        if word.endswith(ending) and len(word) > len(ending) + 2:
            return word[: -len(ending)] + stem
    return word


def _words_of(keyword: str) -> tuple[str, ...]:
    words = tuple(re.split(r"[- ]", keyword.lower()))
    return words[:-1] + (family(words[-1]),)


# Canonical keyword by its lower-case words, the last one as its family stem: ("x", "ray") → "X-ray".
_BY_WORDS: dict[tuple[str, ...], str] = {}
for _k in MEDICAL_KEYWORDS:
    _BY_WORDS.setdefault(_words_of(_k), _k)
for _alias, _k in ALIASES.items():
    _BY_WORDS.setdefault(_words_of(_alias), _k)
# Words that match only when written in capitals (acronym aliases: "MR", not "Mr").
_CAPITALS_ONLY = frozenset(a.lower() for a in ALIASES if a.isupper())
_MAX_WORDS = max(len(w) for w in _BY_WORDS)
_FIRSTS = frozenset(w[0] + p for w in _BY_WORDS for p in ("", "s", "es"))
_FIRSTS_ASCII = frozenset(w.encode("ascii") for w in _FIRSTS)
# What every form of a one-word keyword's family holds ("radiogra": radiography, radiogram; "endoscop").
_FAMILY_CORES = tuple(sorted({(w[0][:-2] if w[0].endswith("graph") else w[0]).encode("ascii")
                              for w in _BY_WORDS if len(w) == 1 and w[0].endswith(("graph", "scop"))}))
# ASCII letters and digits stay, every other byte becomes a space ("?" stands for a non-ASCII character).
_WORD_BYTES = bytes.maketrans(bytes(range(128)), bytes(c if chr(c).isalnum() else 32 for c in range(128)))


def _joined(gap: str) -> bool:
    """Two words joined by one dash or one space ("X-ray", "X ray", "PET–MRI")."""
    return len(gap) == 1 and (gap in g.DASHES or gap.isspace())


def _lookup(words: tuple[str, ...], raw: list[str]) -> str | None:
    """The keyword these lower-case words spell (``raw``: as written), the last one in any form of its
    family and with a plural ("scans", "radiographic"; "CTs" but not "cats")."""
    head, last = words[:-1], words[-1]
    hit = _BY_WORDS.get(head + (family(last),))
    stem = raw[-1]
    if hit is None:
        for suffix in ("es", "s"):
            if last.endswith(suffix) and len(last) > len(suffix):
                hit = _BY_WORDS.get(head + (family(last[: -len(suffix)]),))
                if hit is not None:
                    stem = raw[-1][: -len(suffix)]
                    if hit.isupper() and not stem.isupper():
                        return None  # an acronym takes a plural only when written as one
                    break
    if hit is None:
        return None
    if any(w in _CAPITALS_ONLY and not r.isupper() for w, r in zip(words[:-1] + (stem.lower(),), raw[:-1] + [stem])):
        return None  # an acronym alias only in capitals ("MR", not "Mr")
    return hit


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
    low = text.encode("ascii", "replace").translate(_WORD_BYTES).lower()
    if not _FIRSTS_ASCII.isdisjoint(low.split()):
        return True
    return (b"gra" in low or b"scop" in low) and any(core in low for core in _FAMILY_CORES)


def keywords_in(text: str) -> list[str]:
    """The keywords of one text, in order, repeats included (the plain scan)."""
    parts = _WORD_SPLIT.split(text)  # [before, word, gap, word, gap, …, after]
    words, gaps = parts[1::2], parts[2::2]  # gaps[i]: the text between words i and i + 1 (or after the last)
    lows = [w.lower() for w in words]
    out: list[str] = []
    i = 0
    while i < len(words):
        used = 1
        low = lows[i]
        if low in _FIRSTS or (("gra" in low or "scop" in low) and family(low) in _FIRSTS):
            for n in range(min(_MAX_WORDS, len(words) - i), 0, -1):
                if n > 1 and not all(_joined(gaps[i + k]) for k in range(n - 1)):
                    continue
                hit = _lookup(tuple(lows[i:i + n]), words[i:i + n])
                if hit is not None:
                    out.append(hit)
                    used = n
                    break
        i += used
    return out


def is_strong_signal(keywords: Iterable[str]) -> bool:
    """Whether stage-1 keywords name an imaging modality ("CT", "radiograph", "ultrasound"), or two
    different generic ones ("imaging" and "tracer"): a caption signal stage 2 must not veto."""
    found = set(keywords)
    return bool(found - _GENERIC_KEYWORDS) or len(found) >= 2


def is_medical(caption: str, inline_refs: Iterable[str] = ()) -> bool:
    """Stage-1 decision: does the caption or any citing sentence name an imaging keyword?"""
    return bool(find_medical_keywords([caption, *inline_refs]))


__all__ = ["MEDICAL_KEYWORDS", "ALIASES", "family", "find_medical_keywords", "keywords_in", "is_medical",
           "is_strong_signal"]

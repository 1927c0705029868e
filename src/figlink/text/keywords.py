"""Medical-figure filter, stage 1 (MedICaT, Appendix B): imaging keywords in the caption or the citing
sentences. Matching is case-insensitive on word boundaries; hyphens may be any dash or a space
("X ray", "PET–MRI"), and a plural "s"/"es" is accepted ("scans", "radiographs"; for the acronyms only
when written in capitals: "CTs", not "cats"). Stage 2, an image
classifier, belongs to the vision stage.
"""

from __future__ import annotations

import re
from typing import Iterable

MEDICAL_KEYWORDS: tuple[str, ...] = (
    "MRI", "fMRI", "CT", "CAT", "PET", "PET-MRI", "MEG", "EEG", "ultrasound", "X-ray", "Xray", "nuclear",
    "imaging", "tracer", "isotope", "scan", "positron", "EKG", "spectroscopy", "radiograph", "tomography",
    "endoscope", "endoscopy", "colonoscopy", "elastography", "ultrasonic", "ultrasonography",
    "echocardiogram", "endomicroscopy", "pancreatoscopy", "cholangioscopy", "enteroscopy", "retroscopy",
    "chromoendoscopy", "sigmoidoscopy", "cholangiography", "pancreatography", "cholangio-pancreatography",
    "esophagogastroduodenoscopy",
)

_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2212"


def _pattern(keyword: str) -> str:
    parts = [re.escape(p) for p in re.split(r"-", keyword)]
    return rf"[{_DASHES}\s]?".join(parts)


# Longest first so "PET-MRI" wins over "PET" and "cholangio-pancreatography" over "pancreatography".
_ORDERED = sorted(MEDICAL_KEYWORDS, key=len, reverse=True)
_KEYWORD_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:" + "|".join(f"(?P<k{i}>{_pattern(k)})" for i, k in enumerate(_ORDERED))
    + r")(?:e?s)?(?![A-Za-z0-9])",
    re.I,
)


def find_medical_keywords(texts: Iterable[str] | str) -> list[str]:
    """The stage-1 keywords found in ``texts`` (canonical spelling, first-seen order, no repeats)."""
    if isinstance(texts, str):
        texts = [texts]
    found: dict[str, None] = {}
    for text in texts:
        if not text:
            continue
        for m in _KEYWORD_RE.finditer(text):
            name = m.lastgroup
            if name is None:
                continue
            stem = m.group(name)
            # An acronym takes a plural only when written as one ("CTs", "MRIs"), so "cats" is no CAT scan.
            if len(stem) < len(m.group(0)) and _ORDERED[int(name[1:])].isupper() and not stem.isupper():
                continue
            found.setdefault(_ORDERED[int(name[1:])], None)
    return list(found)


def is_medical(caption: str, inline_refs: Iterable[str] = ()) -> bool:
    """Stage-1 decision: does the caption or any citing sentence name an imaging keyword?"""
    return bool(find_medical_keywords([caption, *inline_refs]))


__all__ = ["MEDICAL_KEYWORDS", "find_medical_keywords", "is_medical"]

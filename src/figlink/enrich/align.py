"""Panels ↔ subcaptions: each panel gets the part of the caption about it.

Order of evidence: (1) the label read in the image matches a caption label; (2) spatial words
("left", "top right", …) in a subcaption pick the panel at that place; (3) MedICaT's heuristic for the
rest: panels in reading order (same row when tops differ by < 50 px, then left to right) are paired
with the remaining subcaptions in caption order, and extra panels take the last subcaption.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

from figlink.model import CaptionSplit, Panel, Subcaption
from figlink.text import grammar as g
from figlink.vision.panels import reading_order

_SPATIAL = re.compile(rf"\b({g.words_pattern(tuple(g.PLACE_WORDS))})\b", re.IGNORECASE)


def caption_labels(split: Optional[CaptionSplit]) -> list[str]:
    """Distinct lower-case panel letters named by the subcaptions, in caption order."""
    seen: list[str] = []
    for sub in (split.subcaptions if split else []):
        for lab in sub.labels:
            lab = lab.strip().lower()
            if len(lab) == 1 and lab.isalpha() and lab not in seen:
                seen.append(lab)
    return seen


def _spatial_words(sub: Subcaption) -> set[str]:
    head = " ".join(sub.labels) + " " + sub.text[:40]
    words = {w.lower() for w in _SPATIAL.findall(head)}
    return {g.PLACE_WORDS.get(w, w) for w in words}


def _place_score(p: Panel, words: set[str], panels: list[Panel]) -> float:
    xs = [q.bbox.center[0] for q in panels]
    ys = [q.bbox.center[1] for q in panels]
    x, y = p.bbox.center
    span_x, span_y = max(1.0, max(xs) - min(xs)), max(1.0, max(ys) - min(ys))
    fx, fy = (x - min(xs)) / span_x, (y - min(ys)) / span_y
    score = 0.0
    for w in words:
        score += {"left": 1 - fx, "right": fx, "top": 1 - fy, "bottom": fy,
                  "middle": 1 - 2 * abs(fx - 0.5)}.get(w, 0.0)
    return score


def align(panels: list[Panel], split: Optional[CaptionSplit]) -> list[Panel]:
    """The panels in reading order, each a copy with ``subcaption_indices`` set to the subcaptions of
    ``split`` aligned with it (the inputs are not modified)."""
    ordered = [dataclasses.replace(p, subcaption_indices=list(p.subcaption_indices)) for p in reading_order(panels)]
    if split is None or not split.subcaptions:
        return ordered
    used_subs: set[int] = set()
    done: set[int] = set()
    # 1. labels read in the image
    for i, p in enumerate(ordered):
        by_label = split.label_indices(p.label) if p.label else []
        if by_label:
            p.subcaption_indices = by_label
            done.add(i)
            used_subs.update(k for k, s in enumerate(split.subcaptions) if p.label in [l.lower() for l in s.labels])
    # 2. spatial words
    for k, sub in enumerate(split.subcaptions):
        if k in used_subs:
            continue
        words = _spatial_words(sub)
        free = [i for i in range(len(ordered)) if i not in done]
        if not words or not free:
            continue
        i = max(free, key=lambda i: _place_score(ordered[i], words, ordered))
        ordered[i].subcaption_indices = [k]
        done.add(i)
        used_subs.add(k)
    # 3. MedICaT: reading order against caption order; extra panels take the last subcaption
    rest_subs = [k for k in range(len(split.subcaptions)) if k not in used_subs]
    rest_panels = [p for i, p in enumerate(ordered) if i not in done]
    if rest_subs:
        for n, p in enumerate(rest_panels):
            p.subcaption_indices = [rest_subs[min(n, len(rest_subs) - 1)]]
    return ordered

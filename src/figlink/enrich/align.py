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


def _label_texts(split: CaptionSplit) -> dict[str, str]:
    texts: dict[str, list[str]] = {}
    for sub in split.subcaptions:
        for lab in sub.labels:
            lab = lab.strip().lower()
            if sub.text and sub.text not in texts.setdefault(lab, []):
                texts[lab].append(sub.text)
    return {k: " ".join(v) for k, v in texts.items()}


def _spatial_words(sub: Subcaption) -> set[str]:
    head = " ".join(sub.labels) + " " + sub.text[:40]
    words = {w.lower() for w in _SPATIAL.findall(head)}
    return {g.PLACE_WORDS.get(w, w) for w in words}


def _place_score(p: Panel, words: set[str], panels: list[Panel]) -> float:
    xs = [(q.bbox[0] + q.bbox[2]) / 2 for q in panels]
    ys = [(q.bbox[1] + q.bbox[3]) / 2 for q in panels]
    x, y = (p.bbox[0] + p.bbox[2]) / 2, (p.bbox[1] + p.bbox[3]) / 2
    span_x, span_y = max(1.0, max(xs) - min(xs)), max(1.0, max(ys) - min(ys))
    fx, fy = (x - min(xs)) / span_x, (y - min(ys)) / span_y
    score = 0.0
    for w in words:
        score += {"left": 1 - fx, "right": fx, "top": 1 - fy, "bottom": fy,
                  "middle": 1 - 2 * abs(fx - 0.5)}.get(w, 0.0)
    return score


def align(panels: list[Panel], split: Optional[CaptionSplit]) -> list[Panel]:
    """The panels in reading order, each a copy with its ``subcaption`` set (the inputs are not modified)."""
    ordered = [dataclasses.replace(p) for p in reading_order(panels)]
    if split is None or not split.subcaptions:
        return ordered
    by_label = _label_texts(split)
    used_subs: set[int] = set()
    done: set[int] = set()
    # 1. labels read in the image
    for i, p in enumerate(ordered):
        if p.label and p.label in by_label:
            p.subcaption = by_label[p.label]
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
        ordered[i].subcaption = sub.text
        done.add(i)
        used_subs.add(k)
    # 3. MedICaT: reading order against caption order; extra panels take the last subcaption
    rest_subs = [s for k, s in enumerate(split.subcaptions) if k not in used_subs]
    rest_panels = [p for i, p in enumerate(ordered) if i not in done]
    if rest_subs:
        for n, p in enumerate(rest_panels):
            sub = rest_subs[min(n, len(rest_subs) - 1)]
            p.subcaption = sub.text
    return ordered

"""Panels ↔ subcaptions: each panel gets the part of the caption about it.

Order of evidence: (1) the label read in the image matches a caption label; (2) the rest is one
assignment problem (scipy's ``linear_sum_assignment``): an unlabelled panel between labelled panels x
and y in reading order (same row when tops differ by < 50 px, then left to right) should get a
subcaption the caption names between x and y; then reading order against caption order (MedICaT's
heuristic); spatial words ("left", "top right", …) pull a subcaption to the panel at that place. Extra
panels take their cheapest subcaption.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

import numpy as np
from scipy.optimize import linear_sum_assignment

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


def printed_letters(split: Optional[CaptionSplit]) -> set[str]:
    """The panel letters the figure prints: the caption's (:func:`caption_labels`) and every letter
    between its first and last (panel letters run without gaps; a caption may describe a panel in
    prose, "the scatter plot in B", without naming it as a label), provided the caption names at least
    twice as many letters as that fills (not "i" and "v" of a roman list read as letters)."""
    named = set(caption_labels(split))
    run = {chr(k) for k in range(ord(min(named)), ord(max(named)) + 1)} if named else set()
    return run if 2 * len(run - named) <= len(named) else named


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


def _cost(ordered: list[Panel], rest_panels: list[int], split: CaptionSplit, rest_subs: list[int]) -> np.ndarray:
    """Cost of giving unlabelled panel ``rest_panels[r]`` the subcaption ``rest_subs[c]``.

    A panel between labelled panels x and y (reading order) is expected to be one that the caption
    names between x and y; a subcaption outside that gap costs its distance to it (in letters). Ties
    go to the same order in both (reading order against caption order), and a subcaption's spatial
    words ("left", "top") pull it to the panel at that place."""
    letters = caption_labels(split)
    index = {lab: n for n, lab in enumerate(letters)}
    read = [index.get(p.label, -1) if p.label else None for p in ordered]
    cost = np.zeros((len(rest_panels), len(rest_subs)))
    for r, i in enumerate(rest_panels):
        lo = max((v for v in read[:i] if v is not None and v >= 0), default=-1)
        hi = min((v for v in read[i + 1:] if v is not None and v >= 0), default=len(letters))
        for c, k in enumerate(rest_subs):
            sub = split.subcaptions[k]
            idx = [index[x.strip().lower()] for x in sub.labels if x.strip().lower() in index]
            gap = min((0 if lo < v < hi else (lo - v + 1 if v <= lo else v - hi + 1) for v in idx), default=0)
            order = abs(r - c)  # MedICaT: the n-th panel left gets the n-th subcaption left
            words = _spatial_words(sub)
            place = _place_score(ordered[i], words, ordered) / max(1, len(words)) if words else 0.0
            cost[r, c] = gap + 0.1 * order - place
    return cost


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
    # 2. the rest as one assignment problem (label gaps, caption order, spatial words)
    rest_subs = [k for k in range(len(split.subcaptions)) if k not in used_subs]
    rest_panels = [i for i in range(len(ordered)) if i not in done]
    if rest_subs and rest_panels:
        cost = _cost(ordered, rest_panels, split, rest_subs)
        rows, cols = linear_sum_assignment(cost)
        for r, c in zip(rows, cols):
            ordered[rest_panels[r]].subcaption_indices = [rest_subs[c]]
        for r in set(range(len(rest_panels))) - set(rows.tolist()):  # extra panels: their cheapest text
            ordered[rest_panels[r]].subcaption_indices = [rest_subs[int(np.argmin(cost[r]))]]
    return ordered

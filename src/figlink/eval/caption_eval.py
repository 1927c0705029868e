"""Scoring subcaption splits against hand-made ones (MedICaT-style token F1) and a naive baseline."""

from __future__ import annotations

import re
from typing import Callable, Iterable

from figlink.eval.metrics import token_f1
from figlink.model import CaptionSplit, Subcaption
from figlink.text.subcaptions import panel_caption

_NAIVE = re.compile(r"\(([A-Za-z])\)")


def naive_split(caption: str) -> CaptionSplit:
    """Baseline: cut at every "(X)"; text before the first label is shared."""
    marks = list(_NAIVE.finditer(caption))
    if not marks:
        return CaptionSplit(shared_text=caption.strip())
    subs = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(caption)
        subs.append(Subcaption(labels=[m.group(1).lower()], text=caption[m.end():end].strip(),
                               spans=[[m.end(), end]]))
    return CaptionSplit(shared_text=caption[:marks[0].start()].strip(), subcaptions=subs)


def score_split(split: CaptionSplit, caption: str, gold: Iterable[tuple[str, str]]) -> list[float]:
    """Token F1 per gold panel ``(label, text)``: gold against shared text + the panel's own text.

    A gold label that the split does not name scores 0 (subcaptions are matched by label).
    """
    named = {lab for s in split.subcaptions for lab in s.labels}
    scores = []
    for label, text in gold:
        lab = label.strip().lower()
        scores.append(token_f1(panel_caption(split, caption, lab), text) if lab in named else 0.0)
    return scores


def mean_f1(items: Iterable[tuple[str, list[tuple[str, str]]]],
            splitter: Callable[[str], CaptionSplit]) -> float:
    """Mean token F1 over all gold panels of ``(caption, [(label, gold text)])`` items."""
    scores: list[float] = []
    for caption, gold in items:
        scores.extend(score_split(splitter(caption), caption, gold))
    return sum(scores) / len(scores) if scores else 0.0


__all__ = ["token_f1", "naive_split", "score_split", "mean_f1"]

"""Fusing several signals' candidate lists into one ranking: reciprocal rank, or a weighted sum of scores."""

from __future__ import annotations

from typing import Mapping, Sequence

RRF_K = 60.0


def rrf(rankings: Mapping[str, Sequence[int]], weights: Mapping[str, float], k: float = RRF_K
        ) -> list[tuple[int, float, dict[str, int]]]:
    """Fuse best-first lists of document ids; returns (doc, score, {signal: 1-based rank}) best first.

    Each signal adds ``weight / (k + rank)`` for the documents it ranks; a signal absent from ``weights``
    counts with weight 1. Ties break on the smaller document id, so results are deterministic.
    """
    score: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, docs in rankings.items():
        w = weights.get(name, 1.0)
        for r, d in enumerate(docs, 1):
            score[d] = score.get(d, 0.0) + w / (k + r)
            ranks.setdefault(d, {})[name] = r
    order = sorted(score, key=lambda d: (-score[d], d))
    return [(d, score[d], ranks[d]) for d in order]


def weighted_scores(scored: Mapping[str, Sequence[tuple[int, float]]], weights: Mapping[str, float],
                    scale: Mapping[str, str]) -> list[tuple[int, float, dict[str, int]]]:
    """Fuse best-first ``(doc, score)`` lists by a weighted sum of their scores.

    ``scale[name]`` says how a signal's scores become comparable: ``"max"`` divides by the list's best
    score (BM25, unbounded), ``"raw"`` keeps them (cosine similarity). A document missing from a list
    gets that list's lowest score for ``"raw"`` signals (it ranked below all of them) and 0 for ``"max"``.
    Returns (doc, score, {signal: 1-based rank}) best first; ties break on the smaller document id.
    """
    norm: dict[str, dict[int, float]] = {}
    floor: dict[str, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, items in scored.items():
        if not items:
            continue
        top = max(s for _, s in items)
        div = top if scale.get(name) == "max" and top > 0 else 1.0
        norm[name] = {d: s / div for d, s in items}
        floor[name] = 0.0 if scale.get(name) == "max" else min(norm[name].values())
        for r, (d, _) in enumerate(items, 1):
            ranks.setdefault(d, {})[name] = r
    score = {d: sum(weights.get(n, 1.0) * norm[n].get(d, floor[n]) for n in norm) for d in ranks}
    order = sorted(score, key=lambda d: (-score[d], d))
    return [(d, score[d], ranks[d]) for d in order]

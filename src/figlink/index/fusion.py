"""Rank fusion: reciprocal-rank fusion of several signals' rankings into one."""

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

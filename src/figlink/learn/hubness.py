"""Hubness correction of the matcher's scores: each item's score normalized over a bank of queries.

In a shared embedding space some items (a caption with many generic words, a figure with much text) are
near to many queries at once and crowd the top of every ranking ("hubs"). The correction gives each item a
normalizer computed over a *bank* of queries of the other modality — the pool itself in an evaluation, the
corpus's own figures in ``figlink search --image`` — and scores a query against the item as

    score − T · c_item

where ``c`` comes from balancing the bank's score matrix ``exp(score / T)`` by Sinkhorn iterations (rows
and columns alternately normalized; one iteration without the rows is the inverted softmax of Smith et al.
2017). Since ``c`` depends on the item and the bank only, it is computed once and stored next to the item's
vectors; a query's own row normalizer would not change its ranking, so it is never needed.
The temperature and iteration count were chosen on the tune books held out in turn
(``benchmarks/README.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

HUB_TEMPERATURE = 0.04
HUB_ITERATIONS = 10
BANK_MAX = 2048  # queries of the bank at most (product: sampled evenly from the corpus's figures)
BANK_CELLS = 32_000_000  # the bank's score matrix is at most this many float32 values (128 MB)


@dataclass(frozen=True)
class Hubness:
    """How the correction is made: ``temperature`` 0 switches it off."""

    temperature: float = HUB_TEMPERATURE
    iterations: int = HUB_ITERATIONS

    @property
    def on(self) -> bool:
        return self.temperature > 0 and self.iterations > 0


def _logmeanexp(x: np.ndarray, axis: int) -> np.ndarray:
    top = x.max(axis=axis, keepdims=True)
    return np.squeeze(top + np.log(np.exp(x - top).mean(axis=axis, keepdims=True)), axis=axis)


def item_normalizers(bank_scores: np.ndarray, hub: Hubness) -> np.ndarray:
    """Per item (column) of a (bank queries × items) score matrix: its normalizer ``T · c`` (zeros when off)."""
    scores = np.asarray(bank_scores)
    c = np.zeros(scores.shape[1], np.float64)
    if not hub.on or scores.size == 0:
        return c
    s = scores.astype(np.float64) / hub.temperature
    for _ in range(hub.iterations):
        rows = _logmeanexp(s - c[None, :], axis=1)
        c = _logmeanexp(s - rows[:, None], axis=0)
    return hub.temperature * c


def corrected(scores: np.ndarray, normalizers: np.ndarray) -> np.ndarray:
    """(queries × items) scores with each item's normalizer taken off."""
    return np.asarray(scores, np.float64) - normalizers[None, :]


def pool_corrected(scores: np.ndarray, hub: Hubness) -> np.ndarray:
    """A pool's (queries × items) scores corrected with the pool's own queries as the bank."""
    return corrected(scores, item_normalizers(scores, hub)) if hub.on else np.asarray(scores, np.float64)


def bank_rows(n: int) -> np.ndarray:
    """The rows of ``n`` stored items taken as the bank: all, or evenly spaced ones when there are more
    than :data:`BANK_MAX` (or than fit :data:`BANK_CELLS` against ``n`` items)."""
    size = max(1, min(n, BANK_MAX, BANK_CELLS // max(n, 1)))
    return np.unique(np.linspace(0, n - 1, size).round().astype(np.int64)) if n else np.zeros(0, np.int64)

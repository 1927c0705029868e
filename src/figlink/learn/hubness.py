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

:func:`balance` reads the bank's matrix in blocks of items (at most :data:`BLOCK_CELLS` values at a time),
so a bank of :data:`BANK_MAX` queries fits any number of items; it also returns the bank's row scalers, with
which :func:`column_normalizers` scores items added later without balancing again.
The temperature and iteration count were chosen on the tune books held out in turn
(``benchmarks/README.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

HUB_TEMPERATURE = 0.04
HUB_ITERATIONS = 10
BANK_MAX = 2048  # queries of the bank at most (product: sampled evenly from the corpus's figures)
BLOCK_CELLS = 8_000_000  # one block of the bank's score matrix, float32 values (32 MB)

Blocks = Callable[[int, int], np.ndarray]  # items a..b → their (bank queries × (b − a)) scores


@dataclass(frozen=True)
class Hubness:
    """How the correction is made: ``temperature`` 0 switches it off."""

    temperature: float = HUB_TEMPERATURE
    iterations: int = HUB_ITERATIONS

    @property
    def on(self) -> bool:
        return self.temperature > 0 and self.iterations > 0


@dataclass(frozen=True)
class Balance:
    """A balanced bank: each item's normalizer ``T · c`` and the bank's row scalers (in units of score / T)."""

    normalizers: np.ndarray  # (items,) float64
    rows: np.ndarray  # (bank queries,) float64


def column_normalizers(scores: np.ndarray, rows: np.ndarray, hub: Hubness) -> np.ndarray:
    """Items (columns of a bank × items score matrix) normalized against fixed row scalers: ``T · c`` with
    ``c = log mean_i exp(score_i / T − rows_i)``, the column step of a balance whose rows are ``rows``."""
    return hub.temperature * _columns(_scaled(scores, hub), rows)[0] if hub.on \
        else np.zeros(np.shape(scores)[1], np.float64)


def _scaled(scores: np.ndarray, hub: Hubness) -> np.ndarray:
    return np.asarray(scores, np.float32) / np.float32(hub.temperature)


def _columns(s: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column log-mean-exps of ``s − rows`` (float32 block), with the shifted exponentials and their column sums."""
    x = s - rows.astype(np.float32)[:, None]
    top = x.max(axis=0) if len(x) else np.zeros(x.shape[1], np.float32)
    e = np.exp(x - top[None, :])
    sums = e.sum(axis=0, dtype=np.float64)
    return top + np.log(sums / max(len(s), 1)), e, sums


def balance(block: Blocks, n_bank: int, n_items: int, hub: Hubness, cells: int = BLOCK_CELLS) -> Balance:
    """Sinkhorn-balance a (bank × items) score matrix read block by block (``block(a, b)`` gives items a..b;
    at most ``cells`` values per block, the whole matrix read once when it fits). Rows first from c = 0,
    then columns, ``hub.iterations`` times; each pass reads every block once and takes one exponential
    per value (the next rows are summed from the column step's exponentials)."""
    c = np.zeros(n_items, np.float64)
    if not hub.on or n_bank == 0 or n_items == 0:
        return Balance(c, np.zeros(n_bank, np.float64))
    step = max(1, cells // n_bank)
    spans = [(a, min(a + step, n_items)) for a in range(0, n_items, step)]
    whole = _scaled(block(0, n_items), hub) if len(spans) == 1 else None

    def scaled(a: int, b: int) -> np.ndarray:
        return whole if whole is not None else _scaled(block(a, b), hub)

    top, acc = np.full(n_bank, -np.inf), np.zeros(n_bank)
    for a, b in spans:  # rows of the first iteration: log-mean-exp over items, streamed
        s = scaled(a, b)
        new_top = np.maximum(top, s.max(axis=1))
        acc = acc * np.exp(top - new_top) + np.exp(s - new_top[:, None].astype(np.float32)).sum(1, dtype=np.float64)
        top = new_top
    rows = top + np.log(acc / n_items)
    tiny = np.finfo(np.float64).tiny
    for it in range(hub.iterations):
        acc = np.zeros(n_bank)
        for a, b in spans:
            c[a:b], e, sums = _columns(scaled(a, b), rows)
            if it + 1 < hub.iterations:  # exp(s − c) = e · exp(rows) · n_bank / column sum
                acc += e @ (n_bank / sums).astype(np.float32)
        if it + 1 < hub.iterations:
            rows = rows + np.log(np.maximum(acc, tiny) / n_items)
    return Balance(hub.temperature * c, rows)


def item_normalizers(bank_scores: np.ndarray, hub: Hubness) -> np.ndarray:
    """Per item (column) of a (bank queries × items) score matrix: its normalizer ``T · c`` (zeros when off)."""
    scores = np.asarray(bank_scores)
    return balance(lambda a, b: scores[:, a:b], scores.shape[0], scores.shape[1], hub).normalizers


def corrected(scores: np.ndarray, normalizers: np.ndarray) -> np.ndarray:
    """(queries × items) scores with each item's normalizer taken off."""
    return np.asarray(scores, np.float64) - normalizers[None, :]


def pool_corrected(scores: np.ndarray, hub: Hubness) -> np.ndarray:
    """A pool's (queries × items) scores corrected with the pool's own queries as the bank."""
    return corrected(scores, item_normalizers(scores, hub)) if hub.on else np.asarray(scores, np.float64)


def bank_rows(n: int) -> np.ndarray:
    """The rows of ``n`` stored items taken as the bank: all, or :data:`BANK_MAX` evenly spaced ones."""
    size = max(1, min(n, BANK_MAX))
    return np.unique(np.linspace(0, n - 1, size).round().astype(np.int64)) if n else np.zeros(0, np.int64)

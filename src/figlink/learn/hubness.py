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
from typing import Callable, Iterable

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


def _row_lme(blocks: Iterable[tuple[np.ndarray, np.ndarray]], n_rows: int, n_items: int) -> np.ndarray:
    """Row log-mean-exps of ``s − c`` over (scaled block, its items' c) pairs, streamed with a running max."""
    top, acc = np.full(n_rows, -np.inf), np.zeros(n_rows)
    for s, c in blocks:
        x = s - c.astype(np.float32)[None, :]
        new_top = np.maximum(top, x.max(axis=1))
        acc = acc * np.exp(top - new_top) + np.exp(x - new_top[:, None].astype(np.float32)).sum(1, dtype=np.float64)
        top = new_top
    return top + np.log(acc / n_items)


def row_scalers(block: Blocks, n_rows: int, normalizers: np.ndarray, hub: Hubness,
                cells: int = BLOCK_CELLS) -> np.ndarray:
    """The row scalers of queries added to a balanced bank: ``log mean_j exp(score_j / T − c_j)`` over items
    whose normalizers ``T · c`` are kept (the row step of a balance), read block by block."""
    n = len(normalizers)
    if not hub.on or n == 0 or n_rows == 0:
        return np.zeros(n_rows, np.float64)
    c = np.asarray(normalizers, np.float64) / hub.temperature
    step = max(1, cells // n_rows)
    return _row_lme(((_scaled(block(a, min(a + step, n)), hub), c[a:a + step]) for a in range(0, n, step)), n_rows, n)


def balance_added(scores: np.ndarray, rows: np.ndarray, added_rows: np.ndarray, n_kept: int,
                  hub: Hubness) -> Balance:
    """Items and queries added to a balanced bank, balanced among themselves while the rest stay as they were.
    ``scores``: (the kept queries, then the added ones) × the added items; ``rows``: the kept queries' row
    scalers; ``added_rows``: the added queries' :func:`row_scalers` over the ``n_kept`` kept items. Returns
    the added items' normalizers and the added queries' row scalers (their rows now over all items)."""
    s = _scaled(scores, hub)
    kept, n_new = len(rows), s.shape[1]
    c = _columns(s[:kept], rows)[0]
    new_rows = np.zeros(len(added_rows))
    if not hub.on or n_new == 0:
        return Balance(np.zeros(n_new), new_rows)
    for _ in range(hub.iterations):
        over_new = _row_lme([(s[kept:], c)], len(added_rows), n_new)
        new_rows = np.logaddexp(added_rows + np.log(max(n_kept, 1)) if n_kept else -np.inf,
                                over_new + np.log(n_new)) - np.log(n_kept + n_new)
        c = _columns(s, np.concatenate([rows, new_rows]))[0]
    return Balance(hub.temperature * c, new_rows)


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

    rows = _row_lme(((scaled(a, b), c[a:b]) for a, b in spans), n_bank, n_items)
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

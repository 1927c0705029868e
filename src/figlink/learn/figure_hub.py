"""The hubness normalizers of the matcher store's figures (:mod:`figlink.learn.hubness`) at any corpus size.

A *full balance* scores the text side of every stored figure as search by image scores it (cosine + the
weighted lexical term) by a bank of up to :data:`~figlink.learn.hubness.BANK_MAX` of the corpus's own figure
images, and balances that matrix block by block. The bank (its image vectors and OCR words, each query's
best BM25 and the balance's row scalers) is kept in the store, so an update scores only the figures added
since against it with those row scalers (the balance's column step: its cost grows with the figures added).
While the bank holds fewer than its maximum, the new figures also join it as queries, as a full balance
would take them. A removed figure just loses its normalizer (its image stays a query until the next full
balance). Once the figures added or removed since the last full balance
reach :data:`REBALANCE` of the figures it balanced, the next update balances fully again.

The bank's lexical term is held sparse: each bank query's matches scaled by its best, those under
:data:`LEXICAL_FLOOR` of it left out and at most :data:`LEXICAL_KEEP` kept, so a value left out moves a
score by at most the lexical weight × the floor (or × the last value kept).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from scipy import sparse

from figlink.learn.hubness import (BANK_MAX, Balance, Hubness, balance, balance_added, bank_rows,
                                   column_normalizers, row_scalers)
from figlink.learn.lexical import bm25_matches

REBALANCE = 0.1  # share of the figures balanced that may be added or removed before a full balance
LEXICAL_FLOOR = 0.01  # a bank query's lexical terms under this share of its best are left out
LEXICAL_KEEP = 8192  # a bank query's lexical terms kept at most (its best ones)


@dataclass(frozen=True)
class HubBank:
    """The bank of the last full balance (and of the figures added since while it had room), kept so that
    later figures are scored against it."""

    image: np.ndarray  # (b, d) the bank's figure images
    ocr: list[str]  # the words read in them (the lexical term's queries)
    tops: np.ndarray  # (b,) each query's best BM25 over the figures balanced (0: none matched)
    rows: np.ndarray  # (b,) the balance's row scalers
    figures: int  # how many figures were balanced
    changed: int = 0  # figures added or removed since

    def due(self, added: int, removed: int) -> bool:
        """Whether this many more changes call for a full balance."""
        return self.changed + added + removed > REBALANCE * self.figures


def _bank_lexical(queries: Sequence[str], source: Path | Sequence[str], n: int) -> tuple[sparse.csc_matrix, np.ndarray]:
    """The bank's (queries × figures) lexical terms, sparse, and each query's best BM25."""
    tops = np.zeros(len(queries))
    parts_r, parts_c, parts_v = [], [], []
    for qi, (docs, raw) in enumerate(bm25_matches(source, queries)):
        if not len(raw) or raw.max() <= 0:
            continue
        tops[qi] = raw.max()
        keep = np.flatnonzero(raw >= LEXICAL_FLOOR * tops[qi])
        if len(keep) > LEXICAL_KEEP:
            keep = keep[np.argpartition(-raw[keep], LEXICAL_KEEP - 1)[:LEXICAL_KEEP]]
        parts_r.append(np.full(len(keep), qi, np.int32))
        parts_c.append(docs[keep].astype(np.int32))
        parts_v.append((raw[keep] / tops[qi]).astype(np.float32))
    cat = (lambda p, t: np.concatenate(p) if p else np.zeros(0, t))  # noqa: E731
    m = sparse.coo_matrix((cat(parts_v, np.float32), (cat(parts_r, np.int32), cat(parts_c, np.int32))),
                          shape=(len(queries), n))
    return m.tocsc(), tops


def _queries_lexical(queries: Sequence[str], words: Path | Sequence[str], n: int,
                     lexical_weight: float) -> tuple[Optional[sparse.csc_matrix], np.ndarray]:
    """Bank queries' lexical terms against all ``n`` figures (None when there are none) and their best BM25."""
    if lexical_weight and any(q.strip() for q in queries):
        return _bank_lexical(queries, words, n)
    return None, np.zeros(len(queries))


def _scores(image: np.ndarray, text: np.ndarray, lexical: Optional[sparse.csc_matrix], a: int,
            lexical_weight: float) -> np.ndarray:
    """(queries × figures a..a + len(text)) scores: cosine + the weighted lexical term."""
    s = np.asarray(image, np.float32) @ np.asarray(text, np.float32).T
    return s if lexical is None else s + np.float32(lexical_weight) * lexical[:, a:a + len(text)].toarray()


def balanced_on(bank: np.ndarray, queries: Sequence[str], text: np.ndarray, words: Path | Sequence[str],
                lexical_weight: float, hub: Hubness) -> tuple[Balance, np.ndarray]:
    """The figures (``text``, their ``words``) balanced over a bank of query images and the words read in them,
    and each query's best BM25 over the figures."""
    lexical, tops = _queries_lexical(queries, words, len(text), lexical_weight)
    bal = balance(lambda a, b: _scores(bank, text[a:b], lexical, a, lexical_weight), len(bank), len(text), hub)
    return bal, tops


def full_balance(image: np.ndarray, text: np.ndarray, ocr: Sequence[str], words: Path | Sequence[str],
                 lexical_weight: float, hub: Hubness) -> tuple[np.ndarray, HubBank]:
    """Every figure's normalizer over a bank of the figures' own images (``words``: the figures' caption +
    mentions, or their :func:`~figlink.learn.lexical.write_lexicon` file), and the bank to keep."""
    n = len(text)
    rows = bank_rows(n)
    queries = [ocr[i] for i in rows] if len(ocr) == n else ["" for _ in rows]
    bank = np.ascontiguousarray(image[rows], np.float32)
    out, tops = balanced_on(bank, queries, text, words, lexical_weight, hub)
    return out.normalizers.astype(np.float32), HubBank(bank, queries, tops, out.rows, n)


def _kept_bank_scores(bank: HubBank, text: np.ndarray, words: Path | Sequence[str], first: int,
                      lexical_weight: float) -> np.ndarray:
    """The kept bank's scores of figures ``first..`` (lexical terms over all of ``words``, each query's scaled
    by its best then or among these figures, whichever is higher)."""
    s = bank.image @ np.asarray(text, np.float32).T
    if lexical_weight and any(q.strip() for q in bank.ocr):
        for qi, (docs, raw) in enumerate(bm25_matches(words, bank.ocr, first)):
            inside = (docs - first < len(text)) & (raw > 0)
            if not inside.any():
                continue
            docs, raw = docs[inside] - first, raw[inside]
            top = max(float(bank.tops[qi]), float(raw.max()))
            keep = raw >= LEXICAL_FLOOR * top
            s[qi, docs[keep]] += np.float32(lexical_weight) * (raw[keep] / top).astype(np.float32)
    return s


def added_normalizers(bank: HubBank, image: np.ndarray, text: np.ndarray, ocr: Sequence[str],
                      words: Path | Sequence[str], kept: np.ndarray, lexical_weight: float,
                      hub: Hubness) -> tuple[np.ndarray, HubBank]:
    """The normalizers of the figures after the first ``len(kept)`` (those there before, with their
    normalizers ``kept``), scored against the kept bank with its row scalers; while the bank holds fewer than
    :data:`~figlink.learn.hubness.BANK_MAX` queries, the new figures join it, as a full balance would take
    them, and the new queries and figures are balanced among themselves
    (:func:`~figlink.learn.hubness.balance_added`). Returns their normalizers and the bank."""
    first, n = len(kept), len(text)
    s = _kept_bank_scores(bank, text[first:], words, first, lexical_weight)
    new = column_normalizers(s, bank.rows, hub)
    take = np.arange(first, min(n, first + max(0, BANK_MAX - len(bank.rows))))
    if not len(take) or not hub.on:
        return new.astype(np.float32), bank
    queries = list(ocr[first:first + len(take)]) if len(ocr) == n else ["" for _ in take]
    lexical, tops = _queries_lexical(queries, words, n, lexical_weight)
    q_image = np.ascontiguousarray(image[take], np.float32)

    def block(a: int, b: int) -> np.ndarray:
        return _scores(q_image, text[a:b], lexical, a, lexical_weight)

    over_kept = row_scalers(block, len(take), kept, hub)
    added = balance_added(np.vstack([s, block(first, n)]), bank.rows, over_kept, first, hub)
    return added.normalizers.astype(np.float32), replace(
        bank, image=np.vstack([bank.image, q_image]), ocr=bank.ocr + queries, tops=np.concatenate([bank.tops, tops]),
        rows=np.concatenate([bank.rows, added.rows]))


def updated_normalizers(image: np.ndarray, text: np.ndarray, ocr: Sequence[str], words: Path | Sequence[str],
                        kept: Optional[np.ndarray], bank: Optional[HubBank], removed: int,
                        lexical_weight: float, hub: Hubness) -> tuple[np.ndarray, HubBank]:
    """The normalizers of the figures after an update whose first ``len(kept)`` figures were there before
    (``kept``: their normalizers; the rest are new) and ``removed`` figures left: the new ones scored against
    the kept ``bank`` (:func:`added_normalizers`), or all of them balanced fully when there is no bank or
    it is due."""
    added = len(text) - (len(kept) if kept is not None else 0)
    if kept is None or bank is None or bank.due(added, removed) or bank.image.shape[1:] != image.shape[1:]:
        return full_balance(image, text, ocr, words, lexical_weight, hub)
    new, bank = added_normalizers(bank, image, text, ocr, words, kept.astype(np.float32), lexical_weight, hub) \
        if added else (np.zeros(0, np.float32), bank)
    return np.concatenate([kept.astype(np.float32), new]), replace(bank, changed=bank.changed + added + removed)

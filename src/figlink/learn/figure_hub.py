"""The hubness normalizers of the matcher store's figures (:mod:`figlink.learn.hubness`) at any corpus size.

A *full balance* scores the text side of every stored figure as search by image scores it (cosine + the
weighted lexical term: word BM25 and character n-gram cosine, each scaled by the query's best,
:mod:`figlink.learn.lexical`) by a bank of up to :data:`~figlink.learn.hubness.BANK_MAX` of the corpus's own
figure images, and balances that matrix block by block. The bank (its image vectors and OCR words, each
query's best BM25 and best character cosine, and the balance's row scalers) is kept in the store, so an
update scores only the figures added since against it with those row scalers (the balance's column step: its
cost grows with the figures added). While the bank holds fewer than its maximum, the new figures also join
it as queries, as a full balance would take them. A removed figure just loses its normalizer (its image
stays a query until the next full balance). Once the figures added or removed since the last full balance
reach :data:`REBALANCE` of the figures it balanced, the next update balances fully again.

The bank's lexical term is held sparse, each half alike: each bank query's matches scaled by its best, those
under :data:`LEXICAL_FLOOR` of it left out and at most :data:`LEXICAL_KEEP` kept, so a value left out moves a
score by at most the half's weight × the floor (or × the last value kept). The character cosines are taken
in chunks of queries, so memory stays bounded at any corpus size.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence

import numpy as np
from scipy import sparse

from figlink.learn.hubness import (BANK_MAX, Balance, Hubness, balance, balance_added, bank_rows,
                                   column_normalizers, row_scalers)
from figlink.learn.char_grams import CharIndex
from figlink.learn.lexical import LexicalWeights, bm25_matches

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
    char_tops: np.ndarray  # (b,) each query's best character n-gram cosine over them (0: none matched)
    rows: np.ndarray  # (b,) the balance's row scalers
    figures: int  # how many figures were balanced
    changed: int = 0  # figures added or removed since
    grams: Optional[CharIndex] = None  # the character n-grams of ``ocr``, cut once (None: not kept)

    def query_grams(self) -> Sequence[str] | CharIndex:
        """The bank's queries for the character n-gram term: their kept grams, else their words."""
        return self.grams if self.grams is not None and len(self.grams) == len(self.ocr) else self.ocr

    def due(self, added: int, removed: int) -> bool:
        """Whether this many more changes call for a full balance."""
        return self.changed + added + removed > REBALANCE * self.figures


Matches = Iterable[tuple[int, np.ndarray, np.ndarray]]  # per query: (its row, figures matched, raw scores)


def _kept(raw: np.ndarray, top: float, cap: bool = True) -> np.ndarray:
    """The positions of ``raw`` the sparse term keeps: at least the floor share of ``top``, the best
    :data:`LEXICAL_KEEP` of them with ``cap``."""
    keep = np.flatnonzero(raw >= LEXICAL_FLOOR * top)
    if cap and len(keep) > LEXICAL_KEEP:
        keep = keep[np.argpartition(-raw[keep], LEXICAL_KEEP - 1)[:LEXICAL_KEEP]]
    return keep


def _sparse_scaled(matches: Matches, n_queries: int, n: int, weight: float) -> tuple[sparse.coo_matrix, np.ndarray]:
    """A lexical half as a sparse (queries × figures) matrix, each query's matches scaled by its best and
    weighted (:func:`_kept` of them), and each query's best."""
    tops = np.zeros(n_queries)
    parts_r, parts_c, parts_v = [], [], []
    for qi, docs, raw in matches:
        if not len(raw) or raw.max() <= 0:
            continue
        tops[qi] = raw.max()
        keep = _kept(raw, tops[qi])
        parts_r.append(np.full(len(keep), qi, np.int32))
        parts_c.append(docs[keep].astype(np.int32))
        parts_v.append((weight * raw[keep] / tops[qi]).astype(np.float32))
    cat = (lambda p, t: np.concatenate(p) if p else np.zeros(0, t))  # noqa: E731
    m = sparse.coo_matrix((cat(parts_v, np.float32), (cat(parts_r, np.int32), cat(parts_c, np.int32))),
                          shape=(n_queries, n))
    return m, tops


def _char_matches(queries: Sequence[str] | CharIndex, chars: CharIndex) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Per query, the figures its character n-grams match and their cosines (chunks of queries at a time)."""
    for a, block in chars.cosine_chunks(queries):
        for r, row in enumerate(block):
            docs = np.flatnonzero(row > 0)
            yield a + r, docs, row[docs]


def _chars_of(words: Path | Sequence[str], chars: Optional[CharIndex]) -> CharIndex:
    """The figures' character n-gram index: ``chars``, or one built over ``words`` when they are the texts."""
    if chars is not None:
        return chars
    if isinstance(words, Path):
        raise ValueError("the character n-gram term needs the figures' CharIndex (or their texts)")
    return CharIndex(words)


def _queries_lexical(queries: Sequence[str], words: Path | Sequence[str], chars: Optional[CharIndex], n: int,
                     lexical: LexicalWeights, grams: Optional[CharIndex] = None
                     ) -> tuple[Optional[sparse.csc_matrix], np.ndarray, np.ndarray]:
    """Bank queries' weighted lexical terms against all ``n`` figures, sparse (None when there are none), and
    each query's best BM25 and best character cosine (``grams``: the queries' n-grams, cut already)."""
    tops, char_tops = np.zeros(len(queries)), np.zeros(len(queries))
    if not lexical.on or not any(q.strip() for q in queries):
        return None, tops, char_tops
    m = sparse.coo_matrix((len(queries), n), dtype=np.float32)
    if lexical.words:
        bm25 = ((qi, docs, raw) for qi, (docs, raw) in enumerate(bm25_matches(words, queries)))
        part, tops = _sparse_scaled(bm25, len(queries), n, lexical.words)
        m = m + part
    if lexical.chars:
        part, char_tops = _sparse_scaled(_char_matches(queries if grams is None else grams, _chars_of(words, chars)),
                                         len(queries), n, lexical.chars)
        m = m + part
    return sparse.csc_matrix(m, dtype=np.float32), tops, char_tops


def _scores(image: np.ndarray, text: np.ndarray, lexical: Optional[sparse.csc_matrix], a: int) -> np.ndarray:
    """(queries × figures a..a + len(text)) scores: cosine + the weighted lexical term."""
    s = np.asarray(image, np.float32) @ np.asarray(text, np.float32).T
    return s if lexical is None else s + lexical[:, a:a + len(text)].toarray()


def balanced_on(bank: np.ndarray, queries: Sequence[str], text: np.ndarray, words: Path | Sequence[str],
                lexical: LexicalWeights, hub: Hubness, chars: Optional[CharIndex] = None,
                grams: Optional[CharIndex] = None) -> tuple[Balance, np.ndarray, np.ndarray]:
    """The figures (``text``, their ``words`` and ``chars``) balanced over a bank of query images and the words
    read in them (``grams``: their n-grams, cut already), and each query's best BM25 and best character
    cosine over the figures."""
    m, tops, char_tops = _queries_lexical(queries, words, chars, len(text), lexical, grams)
    bal = balance(lambda a, b: _scores(bank, text[a:b], m, a), len(bank), len(text), hub)
    return bal, tops, char_tops


def full_balance(image: np.ndarray, text: np.ndarray, ocr: Sequence[str], words: Path | Sequence[str],
                 lexical: LexicalWeights, hub: Hubness,
                 chars: Optional[CharIndex] = None) -> tuple[np.ndarray, HubBank]:
    """Every figure's normalizer over a bank of the figures' own images (``words``: the figures' caption +
    mentions, or their :func:`~figlink.learn.lexical.write_lexicon` file; ``chars``: their character n-gram
    index, built from ``words`` when not given), and the bank to keep."""
    n = len(text)
    rows = bank_rows(n)
    queries = [ocr[i] for i in rows] if len(ocr) == n else ["" for _ in rows]
    bank = np.ascontiguousarray(image[rows], np.float32)
    on = lexical.chars and any(q.strip() for q in queries)
    chars, grams = (_chars_of(words, chars), CharIndex(queries)) if on else (None, None)
    out, tops, char_tops = balanced_on(bank, queries, text, words, lexical, hub, chars, grams)
    return out.normalizers.astype(np.float32), HubBank(bank, queries, tops, char_tops, out.rows, n, grams=grams)


def _kept_bank_scores(bank: HubBank, text: np.ndarray, words: Path | Sequence[str], first: int,
                      lexical: LexicalWeights, chars: Optional[CharIndex] = None) -> np.ndarray:
    """The kept bank's scores of figures ``first..`` (lexical terms over all of ``words`` and ``chars``, each
    query's scaled by its best then or among these figures, whichever is higher)."""
    s = bank.image @ np.asarray(text, np.float32).T
    if not lexical.on or not any(q.strip() for q in bank.ocr):
        return s
    halves: list[tuple[float, np.ndarray, Matches]] = []
    if lexical.words:
        halves.append((lexical.words, bank.tops, ((qi, docs - first, raw) for qi, (docs, raw)
                                                  in enumerate(bm25_matches(words, bank.ocr, first)))))
    if lexical.chars:
        cos = _chars_of(words, chars).cosines(bank.query_grams(), first)
        halves.append((lexical.chars, bank.char_tops, ((qi, np.arange(cos.shape[1]), row)
                                                       for qi, row in enumerate(cos))))
    for weight, tops, matches in halves:
        for qi, docs, raw in matches:
            inside = (docs < len(text)) & (raw > 0)
            if not inside.any():
                continue
            docs, raw = docs[inside], raw[inside]
            top = max(float(tops[qi]), float(raw.max()))
            keep = _kept(raw, top, cap=False)
            s[qi, docs[keep]] += (weight * raw[keep] / top).astype(np.float32)
    return s


def added_normalizers(bank: HubBank, image: np.ndarray, text: np.ndarray, ocr: Sequence[str],
                      words: Path | Sequence[str], kept: np.ndarray, lexical: LexicalWeights,
                      hub: Hubness, chars: Optional[CharIndex] = None) -> tuple[np.ndarray, HubBank]:
    """The normalizers of the figures after the first ``len(kept)`` (those there before, with their
    normalizers ``kept``), scored against the kept bank with its row scalers; while the bank holds fewer than
    :data:`~figlink.learn.hubness.BANK_MAX` queries, the new figures join it, as a full balance would take
    them, and the new queries and figures are balanced among themselves
    (:func:`~figlink.learn.hubness.balance_added`). Returns their normalizers and the bank."""
    first, n = len(kept), len(text)
    chars = _chars_of(words, chars) if lexical.chars else None
    s = _kept_bank_scores(bank, text[first:], words, first, lexical, chars)
    new = column_normalizers(s, bank.rows, hub)
    take = np.arange(first, min(n, first + max(0, BANK_MAX - len(bank.rows))))
    if not len(take) or not hub.on:
        return new.astype(np.float32), bank
    queries = list(ocr[first:first + len(take)]) if len(ocr) == n else ["" for _ in take]
    grams = CharIndex(queries) if chars is not None else None  # only the new queries are cut into grams
    m, tops, char_tops = _queries_lexical(queries, words, chars, n, lexical, grams)
    q_image = np.ascontiguousarray(image[take], np.float32)

    def block(a: int, b: int) -> np.ndarray:
        return _scores(q_image, text[a:b], m, a)

    over_kept = row_scalers(block, len(take), kept, hub)
    added = balance_added(np.vstack([s, block(first, n)]), bank.rows, over_kept, first, hub)
    return added.normalizers.astype(np.float32), replace(
        bank, image=np.vstack([bank.image, q_image]), ocr=bank.ocr + queries, tops=np.concatenate([bank.tops, tops]),
        char_tops=np.concatenate([bank.char_tops, char_tops]), rows=np.concatenate([bank.rows, added.rows]),
        grams=_joined(bank.grams, grams))


def _joined(kept: Optional[CharIndex], new: Optional[CharIndex]) -> Optional[CharIndex]:
    """The bank's query n-grams with the new queries' after them (None when either is missing)."""
    return None if kept is None or new is None else kept.stacked(new)


def updated_normalizers(image: np.ndarray, text: np.ndarray, ocr: Sequence[str], words: Path | Sequence[str],
                        kept: Optional[np.ndarray], bank: Optional[HubBank], removed: int,
                        lexical: LexicalWeights, hub: Hubness,
                        chars: Optional[CharIndex] = None) -> tuple[np.ndarray, HubBank]:
    """The normalizers of the figures after an update whose first ``len(kept)`` figures were there before
    (``kept``: their normalizers; the rest are new) and ``removed`` figures left: the new ones scored against
    the kept ``bank`` (:func:`added_normalizers`), or all of them balanced fully when there is no bank or
    it is due."""
    added = len(text) - (len(kept) if kept is not None else 0)
    if kept is None or bank is None or bank.due(added, removed) or bank.image.shape[1:] != image.shape[1:]:
        return full_balance(image, text, ocr, words, lexical, hub, chars)
    new, bank = added_normalizers(bank, image, text, ocr, words, kept.astype(np.float32), lexical, hub, chars) \
        if added else (np.zeros(0, np.float32), bank)
    return np.concatenate([kept.astype(np.float32), new]), replace(bank, changed=bank.changed + added + removed)

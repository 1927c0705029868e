"""Vectors whose dot products rank as the matcher's whole score over a pool: what ``figlink embed`` writes.

The matcher scores a query against a pool as the towers' cosine, plus the lexical term (BM25 of the words
and the cosine of the character n-grams, each scaled per query by its best over the pool;
:mod:`figlink.learn.lexical`), less each item's hubness normalizer (:mod:`figlink.learn.hubness`). The
towers' vectors alone carry only the cosine, and a user who ranks by the dot products of ``image.npy`` and
``text.npy`` gets only that (benchmarks/README.md, "Embedding vectors"). Here the rest of the score is
written into further coordinates of the same rows:

- **words, both ways.** BM25 (k1 1.2, b 0.75, idf over the other side's texts; the terms are the word term's
  own, Porter stems from SQLite FTS5: :func:`figlink.learn.lexical.term_counts`) is the dot product of a
  query form (each of the query's words once, divided by the query's best BM25 over the pool) and a
  document form (idf × saturated term frequency). Image → text queries a figure's OCR text against the texts;
  text → image queries a text against the OCR texts. An image row holds its OCR text's query form for the
  first and its document form for the second; a text row the converse.
- **character n-grams, both ways.** The TF-IDF vectors of :mod:`figlink.learn.char_grams` (sublinear tf,
  smoothed idf over both sides' texts), the query's divided by its best cosine over the pool.
- Every pair's dot product holds both directions' terms, so each is weighted half the model's weight.
- Words and grams are hashed with a sign into :data:`WORD_DIMS` / :data:`CHAR_DIMS` coordinates per block
  (feature hashing): a collision adds noise of mean zero rather than a false match. Only the tokens that
  both sides of the pool hold are written (one on a side alone adds to no dot product, only to the noise);
  lengths, idf and unit norms are taken before they are dropped, so the products are those of the full vectors.
- **hubness.** Each item's normalizer over the pool (the other side's rows as the bank, at most
  :data:`~figlink.learn.hubness.BANK_MAX` of them, balanced as the matcher balances them) goes into two
  coordinates, image ``(k, −h_i/k)`` and text ``(−h_t/k, k)``, so a dot product takes both off (a query's
  own normalizer does not change its ranking).
- A padding coordinate of each side's own brings every row to the same length R, and all rows are divided by
  R: a dot product is the score / R², one scale for the whole pool, and the rows are unit vectors.

So the rows depend on the pool (the scaling, the idf and the normalizers are the file's), as search by image
depends on the corpus. The towers' vectors, each figure's own, are the first ``dim`` coordinates before the
division (``figlink embed --score dense`` writes them alone).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from typing import Sequence

import numpy as np
from scipy import sparse

from figlink.learn.char_grams import CharIndex
from figlink.learn.hubness import Hubness, balance, bank_rows
from figlink.learn.lexical import LexicalWeights, term_counts

WORD_DIMS = 2048  # hashed coordinates of each word block (two blocks: one per direction)
CHAR_DIMS = 4096  # hashed coordinates of each character n-gram block (two blocks)
K1, B = 1.2, 0.75  # BM25 (SQLite FTS5's defaults, as the matcher's word term)
MAX_FIGURES = 20_000  # a pool's rows at most (20,000 × 12,676 float32 coordinates: 1 GB a side)
_ROWS = 1024  # query rows per block when a pool's best scores are taken


class _Hasher:
    """Signed feature hashing of tokens into ``dims`` coordinates (blake2b, so stable across runs)."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._seen: dict[str, tuple[int, float]] = {}

    def __call__(self, token: str) -> tuple[int, float]:
        hit = self._seen.get(token)
        if hit is None:
            v = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
            hit = self._seen[token] = (v % self.dims, 1.0 if v >> 63 else -1.0)
        return hit

    def rows(self, weighted: Sequence[dict[str, float]]) -> sparse.csr_matrix:
        """One sparse row per ``{token: weight}`` (colliding tokens add up, each with its sign)."""
        indptr, cols, vals = [0], [], []  # type: list[int], list[int], list[float]
        for row in weighted:
            acc: dict[int, float] = {}
            for tok, w in row.items():
                j, s = self(tok)
                acc[j] = acc.get(j, 0.0) + s * w
            cols.extend(acc)
            vals.extend(acc.values())
            indptr.append(len(cols))
        return sparse.csr_matrix((np.asarray(vals, np.float32), np.asarray(cols, np.int32),
                                  np.asarray(indptr, np.int64)), shape=(len(weighted), self.dims))

    def projection(self, tokens: Sequence[str], keep: np.ndarray) -> sparse.csr_matrix:
        """(len(tokens) × dims): row j carries token j to its coordinate with its sign (zero where not ``keep``)."""
        cols, signs = zip(*map(self, tokens)) if len(tokens) else ((), ())
        return sparse.csr_matrix((np.where(keep, np.asarray(signs, np.float32), 0.0).astype(np.float32),
                                  (np.arange(len(tokens)), np.asarray(cols, np.int64))),
                                 shape=(len(tokens), self.dims))


def bm25_forms(queries: Sequence[Counter[str]], docs: Sequence[Counter[str]], hasher: _Hasher,
               ) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """(query forms, document forms) of texts given as their terms (:func:`figlink.learn.lexical.term_counts`),
    hashed: ``q @ d.T`` is BM25 of each query against the docs, divided by the idf mass of the query's words
    (a scale per query; :func:`scaled_by_best` replaces it)."""
    n = len(docs)
    df: Counter[str] = Counter()
    for c in docs:
        df.update(c.keys())
    idf = {t: max(1e-6, math.log((n - k + 0.5) / (k + 0.5))) for t, k in df.items()}
    lengths = [sum(c.values()) for c in docs]
    avg = max(1e-9, sum(lengths) / max(1, n))
    query_words = [[t for t in c if not t.isdigit() or len(t) > 1] for c in queries]  # as a query
    asked = {t for q in query_words for t in q}
    doc_rows = [{t: idf[t] * c * (K1 + 1) / (c + K1 * (1 - B + B * length / avg)) for t, c in tf.items() if t in asked}
                for tf, length in zip(docs, lengths)]
    query_rows = []
    for q in query_words:
        known = [t for t in q if t in idf]
        mass = sum(idf[t] for t in known) or 1.0
        query_rows.append({t: 1.0 / mass for t in known})
    return hasher.rows(query_rows), hasher.rows(doc_rows)


def char_forms(first: Sequence[str], second: Sequence[str], hasher: _Hasher) -> tuple[sparse.csr_matrix,
                                                                                      sparse.csr_matrix]:
    """The character n-gram TF-IDF vectors of two sides' texts (:class:`~figlink.learn.char_grams.CharIndex`
    over both, unit rows), hashed, with only the grams both sides hold."""
    index = CharIndex([*first, *second])
    vocab = len(index.vocabulary)
    held = [np.bincount(part.indices, minlength=vocab) > 0
            for part in (index.counts[:len(first)], index.counts[len(first):])]
    rows = sparse.csr_matrix(index.docs @ hasher.projection(index.grams_in_order(), held[0] & held[1]))
    return rows[:len(first)], rows[len(first):]


def scaled_by_best(queries: sparse.csr_matrix, docs: sparse.csr_matrix) -> sparse.csr_matrix:
    """Each query row divided by its best dot product with the docs (rows with none above 0 become zeros)."""
    top = np.zeros(queries.shape[0], np.float64)
    for a in range(0, queries.shape[0], _ROWS):
        block = (queries[a:a + _ROWS] @ docs.T).toarray()
        if block.size:
            top[a:a + _ROWS] = block.max(axis=1)
    inv = np.divide(1.0, top, out=np.zeros_like(top), where=top > 0)
    return sparse.csr_matrix(sparse.diags(inv.astype(np.float32)) @ queries)


def _balanced(img: sparse.csr_matrix, txt: sparse.csr_matrix) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """The two sides of a block scaled by reciprocal factors (dot products kept) so their longest rows match."""
    longest = [float(np.sqrt(m.multiply(m).sum(axis=1).max())) if m.shape[0] else 0.0 for m in (img, txt)]
    if min(longest) <= 0:
        return img, txt
    f = math.sqrt(longest[1] / longest[0])
    return img * np.float32(f), txt * np.float32(1 / f)


def lexical_blocks(ocr_texts: Sequence[str], texts: Sequence[str], weights: LexicalWeights,
                   ) -> list[tuple[sparse.csr_matrix, sparse.csr_matrix]]:
    """(image side, text side) of each lexical block: their dot products sum to both directions' lexical
    terms, each scaled per query by its best and weighted half the model's weight."""
    blocks = []
    if weights.words:
        w, hasher = np.float32(weights.words / 2), _Hasher(WORD_DIMS)
        ocr_terms, text_terms = term_counts(ocr_texts), term_counts(texts)
        q_img, d_txt = bm25_forms(ocr_terms, text_terms, hasher)  # image → text
        q_txt, d_img = bm25_forms(text_terms, ocr_terms, hasher)  # text → image
        blocks.append((scaled_by_best(q_img, d_txt) * w, d_txt))
        blocks.append((d_img, scaled_by_best(q_txt, d_img) * w))
    if weights.chars:
        c = np.float32(weights.chars / 2)
        g_img, g_txt = char_forms(ocr_texts, texts, _Hasher(CHAR_DIMS))
        blocks.append((scaled_by_best(g_img, g_txt) * c, g_txt))
        blocks.append((g_img, scaled_by_best(g_txt, g_img) * c))
    return [_balanced(sparse.csr_matrix(i), sparse.csr_matrix(t)) for i, t in blocks]


def pool_vectors(image: np.ndarray, text: np.ndarray, ocr_texts: Sequence[str], texts: Sequence[str],
                 weights: LexicalWeights, hub: Hubness) -> tuple[np.ndarray, np.ndarray]:
    """(image rows, text rows), float32 unit rows: ``text @ image.T`` is the matcher's score over this pool
    (towers' cosine + both directions' lexical terms at half weight − both items' hubness normalizers) divided
    by one positive constant. Row i of each side belongs to figure i. A matcher scoring by its vectors alone
    (no lexical term, no correction) gets them back unchanged."""
    if not weights.on and not hub.on:
        return np.asarray(image, np.float32), np.asarray(text, np.float32)
    n = len(image)
    if n == 0:
        empty = np.zeros((0, full_dim(np.shape(image)[1], weights, hub)), np.float32)
        return empty, empty.copy()
    ocr_texts = list(ocr_texts) or [""] * n
    blocks = lexical_blocks(ocr_texts, texts, weights)
    img = sparse.hstack([sparse.csr_matrix(np.asarray(image, np.float32)), *[b[0] for b in blocks]], format="csr")
    txt = sparse.hstack([sparse.csr_matrix(np.asarray(text, np.float32)), *[b[1] for b in blocks]], format="csr")
    h_img, h_txt = np.zeros(n), np.zeros(n)
    if hub.on:
        bank = bank_rows(n)  # the same figures' texts score the images and their images the texts
        t_bank, i_bank = txt[bank], img[bank]
        h_img = balance(lambda a, b: (t_bank @ img[a:b].T).toarray(), len(bank), n, hub).normalizers
        h_txt = balance(lambda a, b: (i_bank @ txt[a:b].T).toarray(), len(bank), n, hub).normalizers
    k = math.sqrt(max(float(np.abs(np.concatenate([h_img, h_txt])).max(initial=0.0)), 1e-6))
    d = img.shape[1] + 4  # two hubness coordinates, then the image's and the text's padding
    out_img, out_txt = np.zeros((n, d), np.float32), np.zeros((n, d), np.float32)
    for a in range(0, n, _ROWS):  # in blocks of rows: no second dense copy of the whole pool
        out_img[a:a + _ROWS, :-4], out_txt[a:a + _ROWS, :-4] = img[a:a + _ROWS].toarray(), txt[a:a + _ROWS].toarray()
    out_img[:, -4], out_img[:, -3] = k, -h_img / k
    out_txt[:, -4], out_txt[:, -3] = -h_txt / k, k
    sq_img = np.einsum("ij,ij->i", out_img, out_img, dtype=np.float64)
    sq_txt = np.einsum("ij,ij->i", out_txt, out_txt, dtype=np.float64)
    r2 = float(max(sq_img.max(initial=0.0), sq_txt.max(initial=0.0), 1e-12))
    out_img[:, -2] = np.sqrt(np.maximum(r2 - sq_img, 0.0))
    out_txt[:, -1] = np.sqrt(np.maximum(r2 - sq_txt, 0.0))
    r = np.float32(math.sqrt(r2))
    out_img /= r
    out_txt /= r
    return out_img, out_txt


def full_dim(dim: int, weights: LexicalWeights, hub: Hubness) -> int:
    """The length of :func:`pool_vectors` rows for towers of ``dim`` and this score."""
    if not weights.on and not hub.on:
        return dim
    return dim + (2 * WORD_DIMS if weights.words else 0) + (2 * CHAR_DIMS if weights.chars else 0) + 4


__all__ = ["WORD_DIMS", "CHAR_DIMS", "MAX_FIGURES", "bm25_forms", "char_forms", "scaled_by_best", "lexical_blocks",
           "pool_vectors", "full_dim"]

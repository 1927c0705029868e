"""Character n-gram similarity between texts: the OCR-robust half of the matcher's lexical term.

OCR splits and misreads words ("hydro gen", "c0valent") and reads sub- and superscripts apart from their
symbols ("H 2 O", "3He"), so whole-word BM25 misses matches that a word's pieces still make. Here every word
(a run of non-space characters, lower-cased) is padded with a space on each side and cut into its character
3-, 4- and 5-grams (scikit-learn's ``char_wb`` analyzer; a padded word shorter than 3 counts as one gram).
Documents are TF-IDF vectors over those grams (sublinear tf ``1 + ln tf``, smoothed idf over the documents
``1 + ln((1 + n) / (1 + df))``, rows L2-normalized); a query keeps the grams the documents know, weighted
the same way, and its similarity to a document is their cosine, in [0, 1].

A :class:`CharIndex` holds only each document's raw gram counts (a CSR matrix), the gram vocabulary and each
gram's document frequency: the Python work of cutting texts into grams is done once per document, and the
idf weights and row norms are applied with numpy when the index is used, so an index can be stored, appended to (:meth:`CharIndex.extended`)
and cut to a subset of its documents (:meth:`CharIndex.subset`) with the same cosines as one built over
those documents at once. A gram no document holds any more (its documents removed) is left out of queries,
as a fresh index would not know it.
"""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from typing import Iterator, Optional, Sequence

import numpy as np
from scipy import sparse

MIN_N, MAX_N = 3, 5


def grams(text: str) -> list[str]:
    """The character n-grams of every word of ``text``, padded words, in order (repeats kept)."""
    out: list[str] = []
    for word in text.lower().split():
        w = f" {word} "
        for n in range(MIN_N, MAX_N + 1):
            if len(w) <= n:
                out.append(w)
                break
            out.extend(w[i:i + n] for i in range(len(w) - n + 1))
    return out


def gram_counts(docs: Sequence[str], vocabulary: dict[str, int], grow: bool) -> sparse.csr_matrix:
    """(len(docs) × vocabulary) raw counts of each document's grams; with ``grow`` new grams join
    ``vocabulary`` (in place), else they are left out."""
    indptr, cols, vals = [0], [], []
    for d in docs:
        for g, k in Counter(grams(d)).items():
            j = vocabulary.setdefault(g, len(vocabulary)) if grow else vocabulary.get(g)
            if j is not None:
                cols.append(j)
                vals.append(k)
        indptr.append(len(cols))
    return sparse.csr_matrix((np.asarray(vals, np.int32), np.asarray(cols, np.int32), np.asarray(indptr, np.int64)),
                             shape=(len(docs), len(vocabulary)))


class CharIndex:
    """TF-IDF vectors of the character n-grams of ``docs`` (row ``i`` is document ``i``)."""

    def __init__(self, docs: Sequence[str] = (), *, vocabulary: Optional[Sequence[str]] = None,
                 counts: Optional[sparse.csr_matrix] = None, df: Optional[np.ndarray] = None) -> None:
        """Index ``docs``, or (``vocabulary``, ``counts`` and optionally ``df``) take an index's stored parts as
        they are."""
        if counts is not None:
            self.vocabulary = {g: j for j, g in enumerate(vocabulary or [])}
            self.counts = sparse.csr_matrix(counts, dtype=np.int32)
            self.counts.resize((self.counts.shape[0], len(self.vocabulary)))
        else:
            self.vocabulary = {}
            self.counts = gram_counts(docs, self.vocabulary, grow=True)
        self.df = self._df(self.counts) if df is None or len(df) != len(self.vocabulary) else np.asarray(df, np.int64)

    def _df(self, counts: sparse.csr_matrix) -> np.ndarray:
        return np.bincount(counts.indices, minlength=len(self.vocabulary)).astype(np.int64)

    def __len__(self) -> int:
        return self.counts.shape[0]

    def extended(self, docs: Sequence[str]) -> "CharIndex":
        """This index with ``docs`` appended as its last rows (only they are cut into grams)."""
        return self.stacked(CharIndex(docs))

    def stacked(self, other: "CharIndex") -> "CharIndex":
        """This index with the documents of ``other`` (cut into grams already) appended as its last rows."""
        vocabulary = dict(self.vocabulary)
        cols = np.array([vocabulary.setdefault(g, len(vocabulary)) for g in other.grams_in_order()], np.int32)
        new = sparse.csr_matrix((other.counts.data, cols[other.counts.indices] if len(cols) else other.counts.indices,
                                 other.counts.indptr), shape=(len(other), len(vocabulary)))
        old = self.counts.copy()
        old.resize((len(self), len(vocabulary)))
        df = np.zeros(len(vocabulary), np.int64)
        df[:len(self.df)] = self.df
        df[cols] += other.df
        return self._of(vocabulary, sparse.vstack([old, new], format="csr"), df)

    def subset(self, rows: Sequence[int] | np.ndarray) -> "CharIndex":
        """This index with only documents ``rows``, in that order."""
        return self._of(self.vocabulary, self.counts[np.asarray(rows, np.int64)])

    @classmethod
    def _of(cls, vocabulary: dict[str, int], counts: sparse.csr_matrix, df: Optional[np.ndarray] = None) -> "CharIndex":
        out = cls.__new__(cls)
        out.vocabulary, out.counts = vocabulary, sparse.csr_matrix(counts, dtype=np.int32)
        out.df = out._df(out.counts) if df is None else df.astype(np.int64)
        return out

    def grams_in_order(self) -> list[str]:
        """The vocabulary as a list, column ``j`` at ``j`` (what is stored beside :attr:`counts`)."""
        out = [""] * len(self.vocabulary)
        for g, j in self.vocabulary.items():
            out[j] = g
        return out

    @cached_property
    def idf(self) -> np.ndarray:
        """Each gram's smoothed idf over the documents; 0 for a gram no document holds (left out of queries)."""
        return np.where(self.df > 0, 1.0 + np.log((1.0 + len(self)) / (1.0 + self.df)), 0.0)

    def _weighted(self, raw: sparse.csr_matrix) -> sparse.csr_matrix:
        """``raw`` counts as TF-IDF rows, L2-normalized (one float array of the counts' size, scaled in place)."""
        data = self.idf[raw.indices] * (1.0 + np.log(raw.data.astype(np.float64)))
        lengths = np.diff(raw.indptr)
        rows = np.repeat(np.arange(raw.shape[0]), lengths)
        norms = np.sqrt(np.bincount(rows, weights=data * data, minlength=raw.shape[0]))
        del rows
        data *= np.repeat(np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0), lengths)
        return sparse.csr_matrix((data, raw.indices, raw.indptr), shape=raw.shape)

    @cached_property
    def docs(self) -> sparse.csr_matrix:
        """The documents' TF-IDF vectors, rows L2-normalized."""
        return self._weighted(self.counts)

    def query_counts(self, queries: "Sequence[str] | CharIndex") -> sparse.csr_matrix:
        """The raw counts of the queries' grams that this index knows, its columns: queries as texts, or as
        an index of their own (their grams cut once and kept: only its vocabulary is looked up here)."""
        if not isinstance(queries, CharIndex):
            return gram_counts(queries, self.vocabulary, grow=False)
        cols = np.array([self.vocabulary.get(g, -1) for g in queries.grams_in_order()], np.int64)
        m = queries.counts.tocoo()
        known = cols[m.col] >= 0 if len(cols) else np.zeros(0, bool)
        return sparse.csr_matrix((m.data[known], (m.row[known], cols[m.col[known]])),
                                 shape=(len(queries), len(self.vocabulary)))

    def cosines(self, queries: "Sequence[str] | CharIndex", first: int = 0) -> np.ndarray:
        """(queries × documents ``first``..) cosine of each query's n-gram vector with each document's."""
        q = self._weighted(self.query_counts(queries))
        if first == 0 or "docs" in self.__dict__:  # all documents weighted already (or wanted)
            docs = self.docs[first:]
        else:  # only the rows asked for (the idf is still over all documents)
            docs = self._weighted(self.counts[first:])
        return np.asarray((q @ docs.T).todense(), np.float64)

    def cosine_chunks(self, queries: "Sequence[str] | CharIndex",
                      cells: int = 1 << 22) -> Iterator[tuple[int, np.ndarray]]:
        """:meth:`cosines` over all documents in chunks of queries of at most ``cells`` values each:
        (first query of the chunk, its cosines)."""
        q = self._weighted(self.query_counts(queries))
        step = max(1, cells // max(1, len(self)))
        for a in range(0, q.shape[0], step):
            yield a, np.asarray((q[a:a + step] @ self.docs.T).todense(), np.float64)

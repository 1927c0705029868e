"""Character n-gram similarity between texts: the OCR-robust half of the matcher's lexical term.

OCR splits and misreads words ("hydro gen", "c0valent") and reads sub- and superscripts apart from their
symbols ("H 2 O", "3He"), so whole-word BM25 misses matches that a word's pieces still make. Here every word
(a run of non-space characters, lower-cased) is padded with a space on each side and cut into its character
3-, 4- and 5-grams (scikit-learn's ``char_wb`` analyzer; a padded word shorter than 3 counts as one gram).
Documents are TF-IDF vectors over those grams (sublinear tf ``1 + ln tf``, smoothed idf over the documents
``1 + ln((1 + n) / (1 + df))``, rows L2-normalized); a query keeps the grams the documents know, weighted
the same way, and its similarity to a document is their cosine, in [0, 1].
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

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


class CharIndex:
    """TF-IDF vectors of the character n-grams of ``docs`` (row ``i`` is document ``i``)."""

    def __init__(self, docs: Sequence[str]) -> None:
        self.vocabulary: dict[str, int] = {}
        counts = [Counter(grams(d)) for d in docs]
        for c in counts:
            for g in c:
                self.vocabulary.setdefault(g, len(self.vocabulary))
        raw = self._matrix(counts)
        df = np.bincount(raw.indices, minlength=len(self.vocabulary))
        self.idf = 1.0 + np.log((1.0 + len(docs)) / (1.0 + df))
        self.docs = self._weighted(raw)

    def _matrix(self, counts: Sequence[Counter]) -> sparse.csr_matrix:
        rows, cols, vals = [], [], []
        for i, c in enumerate(counts):
            for g, k in c.items():
                j = self.vocabulary.get(g)
                if j is not None:
                    rows.append(i)
                    cols.append(j)
                    vals.append(k)
        shape = (len(counts), len(self.vocabulary))
        return sparse.csr_matrix((np.asarray(vals, np.float64), (rows, cols)), shape=shape)

    def _weighted(self, raw: sparse.csr_matrix) -> sparse.csr_matrix:
        m = raw.copy()
        m.data = 1.0 + np.log(m.data)
        m = m.multiply(self.idf[None, :]).tocsr()
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        return sparse.diags(np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)) @ m

    def cosines(self, queries: Sequence[str]) -> np.ndarray:
        """(len(queries) × len(docs)) cosine of each query's n-gram vector with each document's."""
        q = self._weighted(self._matrix([Counter(grams(t)) for t in queries]))
        return np.asarray((q @ self.docs.T).todense(), np.float64)

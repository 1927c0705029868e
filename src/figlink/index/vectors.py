"""The dense signal: each document owns one or two unit vectors (its caption or subcaption, the
centroid of its citing sentences); a document's score is its best vector's cosine with the query.

Stored per level as ``vec`` (float16 [n_vectors, dim], rows grouped by document), ``starts`` (first
row of each document) and ``docs`` (document ids, ascending, the order of both), plus an IVF index
(``ann``) once the set is large. Small sets are held in memory as float32 and searched exactly. Large
ones stay on disk (memory-mapped): the ANN index proposes candidate rows, which are re-scored exactly
from the stored vectors, so a hit's score is its true cosine whichever path found it. A filter that
leaves few rows is searched exactly over those rows; a broader one inside the IVF scan (a row bitmap),
probing more lists the fewer rows pass.

A build writes the vectors with :class:`VectorWriter`, streaming: the previous version's rows are
copied in chunks and new rows are appended batch by batch, so memory stays flat however large the set.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from figlink.index import ann as ann_mod

EXACT_FILTERED_ROWS = 5_000  # a filter leaving fewer rows than this is searched exactly (about 1 µs a row;
# a whole-index fast scan of 350k codes costs about 3.5 ms, of 1.7M about 17 ms)
RERANK = 4  # ANN candidates re-scored exactly, per document wanted …
MIN_CANDIDATES = 256  # … and at least this many (product-quantized scores swap near-ties: re-scoring mends it);
MAX_FILTERED_CANDIDATES = 1024  # with a filter, that many / the share of rows passing, up to this many
COPY_ROWS = 65_536  # rows per chunk when copying a previous version's vectors
_HEADER = 128  # bytes of the .npy header written by VectorWriter (fixed, so it can be rewritten)


def _npy_header(rows: int, dim: int) -> bytes:
    """A fixed-size .npy (version 1.0) header for a C-order float16 [rows, dim] array."""
    d = "{'descr': '<f2', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, dim)
    body = d.ljust(_HEADER - 10 - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body.encode("latin1")


def _ends(starts: np.ndarray, n_rows: int) -> np.ndarray:
    return np.append(starts[1:], n_rows).astype(np.int64)


def _rows_of(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The row numbers of documents given their first and one-past-last rows, concatenated."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total, dtype=np.int64) + offsets


@dataclass(frozen=True)
class RowFilter:
    """A document mask as a filtered search of one vector set uses it (:meth:`VectorSet.restrict`)."""

    mask: np.ndarray  # bool, aligned with the set's docs
    allowed: int  # rows the allowed documents own
    exact: Optional[np.ndarray]  # those rows, ascending, when few enough to search exactly (ANN sets only)
    bits: Optional[np.ndarray]  # else the packed row bitmap for the IVF scan (ANN sets only)

    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.mask, self.exact, self.bits) if a is not None)


@dataclass
class VectorSet:
    vec: np.ndarray  # [n_vectors, dim]; float32 in memory (exact search) or float16 memory-mapped (ANN)
    starts: np.ndarray  # int64 [n_docs]
    docs: np.ndarray  # int64 [n_docs], ascending
    ann: Any = None  # faiss index over the rows, or None (exact search)
    _rows_per_doc: Optional[np.ndarray] = field(default=None, init=False, repr=False)

    @classmethod
    def load(cls, folder: Path, prefix: str, with_ann: bool = True) -> "VectorSet":
        vec = np.load(folder / f"{prefix}.vec.npy", mmap_mode="r")
        ann_path = folder / f"{prefix}.ann"
        index = ann_mod.load(ann_path) if with_ann and ann_path.exists() and ann_mod.available() else None
        if index is None and with_ann:
            vec = np.asarray(vec, dtype=np.float32)  # exact search: keep it in memory as float32
        return cls(vec, np.load(folder / f"{prefix}.starts.npy"), np.load(folder / f"{prefix}.docs.npy"), index)

    def _owner(self, rows: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.starts, rows, side="right") - 1

    def _scores(self, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Exact cosines of ``rows`` (ascending, so a memory-mapped set is read in file order)."""
        return np.asarray(self.vec[rows], dtype=np.float32) @ q

    def _best_per_doc(self, rows: np.ndarray, sims: np.ndarray, n: int) -> list[tuple[int, float]]:
        """The best ``n`` documents owning ``rows`` (max cosine per document), best first."""
        if not len(rows):
            return []
        owners = self._owner(rows)
        order = np.lexsort((owners, -sims))  # best first; ties on the smaller document (= smaller id)
        owners, sims = owners[order], sims[order]
        _, first = np.unique(owners, return_index=True)
        first = np.sort(first)[:n]
        return [(int(self.docs[owners[i]]), float(sims[i])) for i in first]

    def restrict(self, mask: np.ndarray) -> "RowFilter":
        """What a filtered search of this set needs from a document mask (aligned with ``docs``), computed
        once: the allowed rows when few enough to search exactly, else the packed row bitmap and the
        share of rows passing."""
        lengths = self._lengths()
        allowed = int(np.dot(mask, lengths))
        if self.ann is None:
            return RowFilter(mask, allowed, None, None)
        if allowed <= EXACT_FILTERED_ROWS:
            pos = np.flatnonzero(mask)
            return RowFilter(mask, allowed, _rows_of(self.starts[pos], self.starts[pos] + lengths[pos]), None)
        return RowFilter(mask, allowed, None, ann_mod.row_bits(np.repeat(mask, lengths)))

    def top(self, q: np.ndarray, n: int, mask: Optional[np.ndarray] = None,
            rows: Optional["RowFilter"] = None) -> list[tuple[int, float]]:
        """The best ``n`` documents (doc id, cosine), optionally among ``mask`` only.

        With an ANN index and a filter: when the allowed documents own at most EXACT_FILTERED_ROWS rows,
        those rows are searched exactly (the answer is the filtered exact top ``n``); otherwise the IVF
        scan skips rows outside the filter (a row bitmap) and probes more lists the fewer rows pass, so
        about as many allowed rows are scanned as an unfiltered search scans, and more candidates are
        re-scored (a narrow filter's best rows lie farther from the query, where product-quantized
        scores are coarser than the gaps between them). ``rows``: :meth:`restrict` of the mask, when the
        caller keeps it (a cached filter), in place of ``mask``."""
        if len(self.docs) == 0 or n <= 0:
            return []
        if rows is None and mask is not None:
            rows = self.restrict(mask)
        if self.ann is None:
            return self._best_of(np.maximum.reduceat(np.asarray(self.vec, dtype=np.float32) @ q, self.starts), n,
                                 None if rows is None else rows.mask)
        count = max(RERANK * n, MIN_CANDIDATES)
        if rows is None:
            found, _ = ann_mod.search(self.ann, q, count)
        elif rows.exact is not None:
            return self._best_per_doc(rows.exact, self._scores(rows.exact, q), n)
        else:
            share = rows.allowed / len(self.vec)
            count = int(min(max(count, MAX_FILTERED_CANDIDATES), count / share))
            found, _ = ann_mod.search(self.ann, q, count, share=share, bits=rows.bits)
        found = np.sort(found)
        return self._best_per_doc(found, self._scores(found, q), n)

    def _lengths(self) -> np.ndarray:
        """Rows per document (aligned with ``docs``), computed once."""
        if self._rows_per_doc is None:
            self._rows_per_doc = _ends(self.starts, len(self.vec)) - self.starts
        return self._rows_per_doc

    def doc_scores(self, q: np.ndarray) -> np.ndarray:
        """Every document's best cosine with ``q``, by exhaustive search in chunks (aligned with ``docs``)."""
        best = np.full(len(self.docs), -np.inf, dtype=np.float32)
        for s in range(0, len(self.vec), COPY_ROWS):
            sims = np.asarray(self.vec[s:s + COPY_ROWS], dtype=np.float32) @ q
            owners = self._owner(np.arange(s, s + len(sims)))  # ascending: one run of rows per document
            first = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
            docs = owners[first]  # a document cut by the chunk boundary keeps the better of its two parts
            best[docs] = np.maximum(best[docs], np.maximum.reduceat(sims, first))
        return best

    def exact_top(self, q: np.ndarray, n: int, mask: Optional[np.ndarray] = None,
                  scores: Optional[np.ndarray] = None) -> list[tuple[int, float]]:
        """The best ``n`` documents by exhaustive search (``scores``: :meth:`doc_scores`, when already
        computed), optionally among ``mask`` only: the reference an ANN index is measured against."""
        if len(self.docs) == 0 or n <= 0:
            return []
        return self._best_of(self.doc_scores(q) if scores is None else scores, n, mask)

    def _best_of(self, scores: np.ndarray, n: int, mask: Optional[np.ndarray]) -> list[tuple[int, float]]:
        """The best ``n`` documents by their scores (aligned with ``docs``), optionally among ``mask`` only;
        ties on the smaller document."""
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        n = min(n, len(scores))
        idx = np.argpartition(-scores, n - 1)[:n]
        idx = idx[np.lexsort((idx, -scores[idx]))]
        return [(int(self.docs[i]), float(scores[i])) for i in idx if np.isfinite(scores[i])]


class VectorWriter:
    """Writes one level's vector set for a new version: kept rows of the previous version, then new rows.

    Vectors go straight to ``<folder>/<prefix>.vec.npy`` (float16) as they come; ``close`` fixes the
    header and writes ``starts`` and ``docs``. ``kept_rows`` are the previous rows carried over and
    ``dropped`` says whether any previous row was left out (an ANN index can then not be extended).
    """

    def __init__(self, folder: Path, prefix: str, dim: int) -> None:
        self.path = folder / f"{prefix}.vec.npy"
        self.folder, self.prefix, self.dim = folder, prefix, dim
        self._f = open(self.path, "wb")
        self._f.write(_npy_header(0, dim))
        self.rows = 0
        self.kept_rows = 0
        self.dropped = False
        self._starts: list[np.ndarray] = []
        self._docs: list[np.ndarray] = []

    def _write(self, block: np.ndarray) -> None:
        self._f.write(np.ascontiguousarray(block, dtype=np.float16).tobytes())
        self.rows += len(block)

    def keep(self, prev: VectorSet, gone: set[int]) -> None:
        """Copy the previous version's documents, without those in ``gone``."""
        if len(prev.docs) == 0:
            return
        ends = _ends(prev.starts, len(prev.vec))
        keep = ~np.isin(prev.docs, np.fromiter(gone, dtype=np.int64, count=len(gone))) if gone else \
            np.ones(len(prev.docs), dtype=bool)
        self.dropped = not keep.all()
        lengths = (ends - prev.starts)[keep]
        self._starts.append(self.rows + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64))
        self._docs.append(prev.docs[keep])
        rows = _rows_of(prev.starts[keep], ends[keep]) if self.dropped else None
        total = int(lengths.sum())
        for s in range(0, total, COPY_ROWS):
            self._write(prev.vec[s:s + COPY_ROWS] if rows is None else prev.vec[rows[s:s + COPY_ROWS]])
        self.kept_rows = self.rows

    def add(self, docs: list[int], groups: list[np.ndarray]) -> None:
        """New documents (ids above every present id), each with its [m, dim] vectors (m ≥ 1)."""
        if not docs:
            return
        lengths = np.asarray([len(g) for g in groups], dtype=np.int64)
        self._starts.append(self.rows + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64))
        self._docs.append(np.asarray(docs, dtype=np.int64))
        self._write(np.concatenate(groups))

    def close(self) -> np.ndarray:
        """Finish the files; returns the stored vectors, memory-mapped."""
        self._f.seek(0)
        self._f.write(_npy_header(self.rows, self.dim))
        self._f.close()
        for name, parts in (("starts", self._starts), ("docs", self._docs)):
            with open(self.folder / f"{self.prefix}.{name}.npy", "wb") as f:
                np.save(f, np.concatenate(parts) if parts else np.zeros(0, np.int64))
        return np.load(self.path, mmap_mode="r")

    def finish(self, prev_ann: Optional[Path]) -> int:
        """:meth:`close`, then write the set's ANN index when it is large (extending ``prev_ann``, the
        previous version's, when it can); returns how many documents the set holds."""
        vec = self.close()
        index = ann_mod.update(prev_ann, vec, self.kept_rows, self.dropped) if ann_mod.available() else None
        if index is not None:
            ann_mod.save(index, self.folder / f"{self.prefix}.ann")
        return sum(len(d) for d in self._docs)

"""The dense signal: each document owns one or two unit vectors (its caption or subcaption, the
centroid of its citing sentences); a document's score is its best vector's cosine with the query.

Stored per level as ``vec`` (float16 [n_vectors, dim], rows grouped by document), ``starts`` (first
row of each document) and ``docs`` (document ids, ascending, the order of both), plus an IVF index
(``ann``) once the set is large. Small sets are searched exactly in memory; large ones through the
ANN index, or exactly over the rows that pass a selective filter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from figlink.index import ann as ann_mod

EXACT_FILTERED_ROWS = 20_000  # a filter leaving fewer rows than this is searched exactly


@dataclass
class VectorSet:
    vec: np.ndarray  # [n_vectors, dim]; float16 on disk, float32 in memory when small
    starts: np.ndarray  # int64 [n_docs]
    docs: np.ndarray  # int64 [n_docs], ascending
    ann: Any = None  # faiss index over the rows, or None (exact search)

    @classmethod
    def empty(cls, dim: int) -> "VectorSet":
        return cls(np.zeros((0, dim), np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64))

    def save(self, folder: Path, prefix: str) -> None:
        arrays = {"vec": np.asarray(self.vec, dtype=np.float16), "starts": self.starts, "docs": self.docs}
        for name, a in arrays.items():
            with open(folder / f"{prefix}.{name}.npy", "wb") as f:
                np.save(f, a)
        if self.ann is not None:
            ann_mod.save(self.ann, folder / f"{prefix}.ann")

    @classmethod
    def load(cls, folder: Path, prefix: str, with_ann: bool = True) -> "VectorSet":
        vec = np.load(folder / f"{prefix}.vec.npy", mmap_mode="r")
        ann_path = folder / f"{prefix}.ann"
        index = ann_mod.load(ann_path) if with_ann and ann_path.exists() and ann_mod.available() else None
        if index is None:
            vec = np.asarray(vec, dtype=np.float32)  # exact search: keep it in memory as float32
        return cls(vec, np.load(folder / f"{prefix}.starts.npy"), np.load(folder / f"{prefix}.docs.npy"), index)

    def _ends(self) -> np.ndarray:
        return np.append(self.starts[1:], len(self.vec)).astype(np.int64)

    def drop(self, gone: set[int]) -> "VectorSet":
        """Without the documents in ``gone`` (the ANN index is dropped: rebuild it)."""
        if not gone or len(self.docs) == 0:
            return self
        keep = ~np.isin(self.docs, np.fromiter(gone, dtype=np.int64))
        if keep.all():
            return self
        ends = self._ends()
        lengths = (ends - self.starts)[keep]
        rows = np.concatenate([np.arange(s, e) for s, e in zip(self.starts[keep], ends[keep])]) if keep.any() \
            else np.zeros(0, np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if len(lengths) \
            else np.zeros(0, np.int64)
        return VectorSet(np.asarray(self.vec, dtype=np.float32)[rows], starts, self.docs[keep])

    def append(self, docs: list[int], groups: list[np.ndarray]) -> "VectorSet":
        """With new documents (ids above every present id), each with its [m, dim] vectors (m ≥ 1)."""
        if not docs:
            return self
        lengths = np.asarray([len(g) for g in groups], dtype=np.int64)
        starts = len(self.vec) + np.concatenate([[0], np.cumsum(lengths)[:-1]])
        return VectorSet(np.concatenate([np.asarray(self.vec, dtype=np.float32), *groups]).astype(np.float32),
                         np.concatenate([self.starts, starts]).astype(np.int64),
                         np.concatenate([self.docs, np.asarray(docs, dtype=np.int64)]), self.ann)

    def _owner(self, rows: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.starts, rows, side="right") - 1

    def _exact(self, q: np.ndarray, mask: Optional[np.ndarray]) -> np.ndarray:
        """Max cosine per document (−inf where ``mask`` is False)."""
        if mask is None or self.ann is None:
            s = np.maximum.reduceat(np.asarray(self.vec, dtype=np.float32) @ q, self.starts)
            return s if mask is None else np.where(mask, s, -np.inf)
        s = np.full(len(self.docs), -np.inf, dtype=np.float32)
        ends = self._ends()
        pos = np.flatnonzero(mask)
        rows = np.concatenate([np.arange(self.starts[i], ends[i]) for i in pos]) if len(pos) else np.zeros(0, int)
        sims = np.asarray(self.vec[rows], dtype=np.float32) @ q
        np.maximum.at(s, self._owner(rows), sims)
        return s

    def top(self, q: np.ndarray, n: int, mask: Optional[np.ndarray] = None) -> list[tuple[int, float]]:
        """The best ``n`` documents (doc id, cosine), optionally among ``mask`` only."""
        if len(self.docs) == 0 or n <= 0:
            return []
        if self.ann is None or (mask is not None and mask.sum() * 2 <= EXACT_FILTERED_ROWS):
            s = self._exact(q, mask)
        else:
            row_mask = None
            if mask is not None:
                row_mask = np.repeat(mask, np.diff(np.append(self.starts, len(self.vec))))
            rows, sims = ann_mod.search(self.ann, q, 4 * n, row_mask)
            s = np.full(len(self.docs), -np.inf, dtype=np.float32)
            np.maximum.at(s, self._owner(rows), sims)
        n = min(n, len(s))
        idx = np.argpartition(-s, n - 1)[:n]
        idx = idx[np.argsort(-s[idx], kind="stable")]
        return [(int(self.docs[i]), float(s[i])) for i in idx if np.isfinite(s[i])]

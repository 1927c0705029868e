"""The dense signal: each document owns one or more unit vectors (caption, citing sentences,
subcaption); a document's score is its best vector's cosine with the query (max-sim).

Stored per level as three .npy files: ``vec`` (float32 [n_vectors, dim], rows grouped by document),
``starts`` (first row of each document) and ``docs`` (document ids, ascending, the order of both).
Searching is one matrix-vector product and a segmented max, memory-mapped from disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np


@dataclass
class VectorSet:
    vec: np.ndarray  # float32 [n_vectors, dim]
    starts: np.ndarray  # int64 [n_docs]
    docs: np.ndarray  # int64 [n_docs], ascending

    @classmethod
    def empty(cls, dim: int) -> "VectorSet":
        return cls(np.zeros((0, dim), np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64))

    def save(self, folder: Path, prefix: str) -> None:
        for name in ("vec", "starts", "docs"):
            with open(folder / f"{prefix}.{name}.npy", "wb") as f:
                np.save(f, getattr(self, name))

    @classmethod
    def load(cls, folder: Path, prefix: str, mmap: bool = True) -> "VectorSet":
        mode = "r" if mmap else None
        return cls(np.load(folder / f"{prefix}.vec.npy", mmap_mode=mode),
                   np.load(folder / f"{prefix}.starts.npy"), np.load(folder / f"{prefix}.docs.npy"))

    def drop(self, gone: set[int]) -> "VectorSet":
        """Without the documents in ``gone``."""
        if not gone or len(self.docs) == 0:
            return self
        keep = ~np.isin(self.docs, np.fromiter(gone, dtype=np.int64))
        ends = np.append(self.starts[1:], len(self.vec))
        lengths = (ends - self.starts)[keep]
        rows = np.concatenate([np.arange(s, e) for s, e in zip(self.starts[keep], ends[keep])]) if keep.any() \
            else np.zeros(0, np.int64)
        return VectorSet(np.asarray(self.vec)[rows], np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
                         if len(lengths) else np.zeros(0, np.int64), self.docs[keep])

    def append(self, docs: list[int], groups: list[np.ndarray]) -> "VectorSet":
        """With new documents (ids above every present id), each with its [m, dim] vectors (m ≥ 1)."""
        if not docs:
            return self
        lengths = np.asarray([len(g) for g in groups], dtype=np.int64)
        starts = len(self.vec) + np.concatenate([[0], np.cumsum(lengths)[:-1]])
        return VectorSet(np.concatenate([np.asarray(self.vec), *groups]).astype(np.float32, copy=False),
                         np.concatenate([self.starts, starts]).astype(np.int64),
                         np.concatenate([self.docs, np.asarray(docs, dtype=np.int64)]))

    def doc_scores(self, q: np.ndarray) -> np.ndarray:
        """Max cosine of each document's vectors with the unit query vector ``q``."""
        if len(self.docs) == 0:
            return np.zeros(0, np.float32)
        sims = self.vec @ q
        return np.maximum.reduceat(sims, self.starts)

    def top(self, q: np.ndarray, n: int, mask: Optional[np.ndarray] = None) -> list[tuple[int, float]]:
        """The best ``n`` documents (doc id, cosine), optionally among ``mask`` only."""
        s = self.doc_scores(q)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        n = min(n, len(s))
        if n <= 0:
            return []
        idx = np.argpartition(-s, n - 1)[:n]
        idx = idx[np.argsort(-s[idx], kind="stable")]
        return [(int(self.docs[i]), float(s[i])) for i in idx if np.isfinite(s[i])]

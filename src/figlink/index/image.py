"""The image signal of text search: each figure's vector from an image–text model (the matcher's image
tower: its pixels and the text read in it) and the linear map that carries a query's text embedding
into the same space (the model's text tower).

A version holds it as a vector set ``figure_image`` (one row per figure document that has a vector) and
``image_query.npz`` (``weight``, ``bias`` and the ``model`` identity). The index computes none of it: the
caller passes an :class:`ImageSignal` (``figlink index --image`` takes it from the matcher's store in
``<corpus>/matcher/``), so building and searching never load an image model.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from figlink.index.selection import Selection
from figlink.index.vectors import VectorSet, VectorWriter

PREFIX = "figure_image"
QUERY_FILE = "image_query.npz"


@dataclass
class ImageSignal:
    """Image vectors of figures and the query map of the model that made them.

    ``keys[i]`` is the ``(paper_id, figure_id)`` of row ``i`` of ``vectors`` (unit rows, ``d`` wide);
    a query's text vector ``q`` (from ``text_encoder``, which must be the index's text embedder) becomes
    ``normalize(weight @ q + bias)``.
    """

    model: str
    text_encoder: str
    keys: Sequence[tuple[str, str]]
    vectors: np.ndarray  # (n, d)
    weight: np.ndarray  # (d, d_text)
    bias: np.ndarray  # (d,)
    problems: Sequence[str] = ()  # figures with an image left out, one line each, for the caller to report

    def __post_init__(self) -> None:
        if len(self.keys) != len(self.vectors):
            raise ValueError(f"{len(self.keys)} keys for {len(self.vectors)} image vectors")
        if self.weight.ndim != 2 or self.bias.shape != (self.weight.shape[0],) or \
                (len(self.vectors) and self.vectors.shape[1] != self.weight.shape[0]):
            raise ValueError("the image signal's query map does not fit its vectors")


@dataclass
class ImageIndex:
    """A version's image signal, loaded: the figure vectors and the query map."""

    vectors: VectorSet
    weight: np.ndarray
    bias: np.ndarray
    model: str

    def project(self, qvec: np.ndarray) -> np.ndarray:
        """The query's text vector in the image space, unit length."""
        v = self.weight @ np.asarray(qvec, dtype=np.float32) + self.bias
        return (v / max(float(np.linalg.norm(v)), 1e-9)).astype(np.float32)

    def top(self, qvec: np.ndarray, n: int, sel: Optional[Selection] = None) -> list[tuple[int, float]]:
        """The best ``n`` figure documents (doc id, cosine) for a query, only those ``sel`` allows when given."""
        vs = self.vectors
        rows = None if sel is None else sel.derived("image", lambda: vs.restrict(sel.allows(vs.docs)))
        return vs.top(self.project(qvec), n, rows=rows)


def write(folder: Path, signal: ImageSignal, figure_doc: dict[tuple[str, str], int]) -> int:
    """Write the signal into a version folder for the figure documents it has vectors for (``figure_doc``:
    (paper id, figure id) → document id); returns how many figures got a vector."""
    rows = sorted((figure_doc[k], i) for i, k in enumerate(signal.keys) if k in figure_doc)
    writer = VectorWriter(folder, PREFIX, signal.weight.shape[0])
    writer.add([d for d, _ in rows], [signal.vectors[[i]] for _, i in rows])
    writer.finish(None)
    np.savez(folder / QUERY_FILE, weight=signal.weight.astype(np.float32), bias=signal.bias.astype(np.float32),
             model=np.array(signal.model))
    return len(rows)


def carry(prev: Path, folder: Path, gone: set[int]) -> int:
    """Copy a previous version's image signal without the documents in ``gone``; returns the figures kept."""
    if not (prev / QUERY_FILE).exists():
        return 0
    old = VectorSet.load(prev, PREFIX, with_ann=False)
    writer = VectorWriter(folder, PREFIX, int(old.vec.shape[1]))
    writer.keep(old, gone)
    kept = writer.finish(prev / f"{PREFIX}.ann")
    shutil.copyfile(prev / QUERY_FILE, folder / QUERY_FILE)
    return kept


def load(folder: Path) -> Optional[ImageIndex]:
    """The version's image signal, or None when it has none."""
    if not (folder / QUERY_FILE).exists():
        return None
    with np.load(folder / QUERY_FILE, allow_pickle=False) as z:
        weight, bias, model = z["weight"], z["bias"], str(z["model"])
    return ImageIndex(VectorSet.load(folder, PREFIX), weight, bias, model)

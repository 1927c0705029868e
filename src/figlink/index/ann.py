"""Approximate nearest neighbours for large vector sets: a faiss IVF index with 8-bit scalar quantization.

Below ``MIN_VECTORS`` the exact matrix product is fast enough and no ANN index is built. Rows of the
vector set are the faiss ids, so new rows can be added to the previous version's index as long as no
row was removed (a removal, or growth past ``RETRAIN_GROWTH`` times the training size, retrains).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

MIN_VECTORS = 60_000
TRAIN_PER_LIST = 40
NPROBE = 32
RETRAIN_GROWTH = 4.0
CHUNK = 100_000


def available() -> bool:
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def _nlist(n: int) -> int:
    """About 2·sqrt(n) lists (a power of two, 64 to 4096), never more than the training points allow."""
    return int(max(1, min(4096, max(64, 2 ** round(np.log2(np.sqrt(n) * 2))), n // TRAIN_PER_LIST)))


def train(vec: np.ndarray, seed: int = 0):
    """A new IVF-SQ8 inner-product index holding every row of ``vec`` (ids = row numbers)."""
    import faiss

    n, dim = vec.shape
    nlist = _nlist(n)
    rng = np.random.default_rng(seed)
    sample = np.asarray(vec[np.sort(rng.choice(n, min(n, nlist * TRAIN_PER_LIST), replace=False))], dtype=np.float32)
    index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, nlist, faiss.ScalarQuantizer.QT_8bit,
                                          faiss.METRIC_INNER_PRODUCT)
    index.train(sample)
    return add(index, vec, 0)


def add(index, vec: np.ndarray, first_row: int):
    """Add rows ``first_row..`` of ``vec`` to ``index``."""
    for s in range(first_row, len(vec), CHUNK):
        block = np.asarray(vec[s:s + CHUNK], dtype=np.float32)
        index.add_with_ids(block, np.arange(s, s + len(block), dtype=np.int64))
    return index


def save(index, path: Path) -> None:
    import faiss

    faiss.write_index(index, str(path))


def load(path: Path):
    import faiss

    return faiss.read_index(str(path))


def update(prev_path: Optional[Path], vec: np.ndarray, old_rows: int, dropped: bool):
    """The index for ``vec``: the previous one plus the new rows when possible, else a retrained one."""
    if len(vec) < MIN_VECTORS:
        return None
    if prev_path is not None and prev_path.exists() and not dropped and old_rows > 0:
        index = load(prev_path)
        if index.ntotal == old_rows and len(vec) <= RETRAIN_GROWTH * old_rows:
            return add(index, vec, old_rows)
    return train(vec)


def search(index, q: np.ndarray, count: int, row_mask: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` rows nearest to ``q`` (inner product), optionally only rows where ``row_mask`` is set."""
    import faiss

    params = faiss.SearchParametersIVF(nprobe=NPROBE)  # type: ignore[call-arg]  # SWIG keyword arguments
    if row_mask is not None:
        bits = np.packbits(row_mask.astype(np.uint8), bitorder="little")
        params.sel = faiss.IDSelectorBitmap(len(row_mask), faiss.swig_ptr(bits))
    sims, ids = index.search(np.asarray(q, dtype=np.float32)[None, :], count, params=params)
    keep = ids[0] >= 0
    return ids[0][keep], sims[0][keep]

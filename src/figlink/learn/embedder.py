"""Matchers that embed figure pairs: the built-in dual encoder, and a loader for every model directory.

A matcher has ``dim`` and ``embed(pairs, text_mode, cache) -> Embeddings``: one image and one text
vector (unit rows, float32) per usable pair, plus one :class:`BadItem` per pair it could not embed.
:func:`load_matcher` opens a model directory of either backend; with no path it opens the default model
that ships in the package (``figlink/learn/data/matcher``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from figlink.learn.cache import FeatureCache
from figlink.learn.dataset import featurize_pairs
from figlink.learn.embeddings import KIND, Embeddings, Matcher
from figlink.learn.matcher import DualEncoder, MatcherConfig
from figlink.learn.model_dir import WEIGHTS, ModelError, read_manifest, write_model_dir
from figlink.learn.records import FigurePair, TextMode

BACKEND = "dual-encoder"
DEFAULT_MODEL = Path(__file__).with_name("data") / "matcher"


class DualEncoderMatcher:
    """The built-in matcher: cached image/OCR/text features through a trained :class:`DualEncoder`."""

    def __init__(self, model: DualEncoder, manifest: Optional[dict] = None) -> None:
        self.model = model.eval()
        self.dim = model.out_dim
        self.manifest = manifest or {}
        self.lexical = model.config.lexical()
        self.hubness = model.config.hubness()

    def embed(self, pairs: Sequence[FigurePair], text_mode: TextMode, cache: FeatureCache,
              device: str = "cpu", ocr: bool = True) -> Embeddings:
        """``ocr=False`` skips reading text in the images (much faster; the image tower then sees none)."""
        from figlink.learn.train import encode_all

        feats, bad = featurize_pairs(pairs, cache, ocr=ocr and self.model.config.use_ocr,
                                     keep_maps=self.model.tail is not None, image_size=self.model.config.image_size,
                                     device=device)
        image, text = encode_all(self.model, feats, text_mode, device)
        return Embeddings(feats.ids, image.astype(np.float32), text.astype(np.float32), bad, feats.ocr_text)


def save_matcher(model: DualEncoder, path: str | Path, extra: Optional[dict] = None) -> Path:
    """Write a dual-encoder model directory (config + safetensors weights + ``extra`` manifest fields)."""
    from safetensors.torch import save

    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    return write_model_dir(path, KIND, BACKEND, model.config.to_dict(), {WEIGHTS: save(state)}, extra)


def _load_dual_encoder(folder: Path, manifest: dict) -> DualEncoderMatcher:
    from safetensors.torch import load_file

    try:
        config = MatcherConfig.from_dict(manifest.get("config") or {})
    except (TypeError, ValueError) as e:
        raise ModelError(f"{folder}: the matcher settings do not fit this figlink: {e}") from e
    weights = folder / WEIGHTS
    if not weights.is_file():
        raise ModelError(f"{folder}: no {WEIGHTS}")
    try:
        state = load_file(str(weights))
    except Exception as e:  # safetensors raises its own error types for damaged files
        raise ModelError(f"{folder}: unreadable weights ({type(e).__name__}: {e})") from e
    model = DualEncoder(config)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as e:
        first = str(e).strip().splitlines()[0]
        raise ModelError(f"{folder}: the weights do not match the model this figlink builds ({first})") from e
    return DualEncoderMatcher(model, manifest)


def load_matcher(path: Optional[str | Path] = None) -> Matcher:
    """The matcher in a model directory (the packaged default when ``path`` is None)."""
    folder = Path(path) if path is not None else DEFAULT_MODEL
    manifest = read_manifest(folder, KIND)
    backend = manifest.get("backend")
    if backend == BACKEND:
        return _load_dual_encoder(folder, manifest)
    if backend == "exported":
        from figlink.learn.external import load_exported

        return load_exported(folder, manifest)
    raise ModelError(f"{folder}: unknown matcher backend {backend!r} (this figlink knows {BACKEND!r} and 'exported')")

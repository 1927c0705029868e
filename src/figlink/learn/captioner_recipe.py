"""Train, run and measure captioners from figure pairs; save and load them (``kind: captioner``).

:func:`prepare` featurizes pairs (cached) and puts them through the matcher once; :func:`train_on` fits a
captioner on some of them; :func:`measure` scores a captioner and both baselines on others (BLEU-4 and
ROUGE-L, first sentence and whole caption, see :mod:`figlink.learn.captioner_eval`).

A captioner directory holds the retrieval pool (normalized first sentences, ``pool.json``; their matcher
text vectors and the scorer, ``weights.safetensors``) and, in its manifest, the SHA-256 of the matcher
weights the vectors came from: loading it with another matcher fails with a message saying so.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch

from figlink.learn.cache import FeatureCache
from figlink.learn.captioner import (CONTEXTS, FEATURES, CandidateScorer, Captioner, CaptionerSettings, FigureInput,
                                     fit_captioner, group_of)
from figlink.learn.captioner_eval import first_mention_baseline, nearest_caption_baseline, score_captions
from figlink.learn.dataset import Features, featurize_pairs
from figlink.learn.embedder import DEFAULT_MODEL as DEFAULT_MATCHER, DualEncoderMatcher, load_matcher
from figlink.learn.model_dir import WEIGHTS, ModelError, read_manifest, write_model_dir
from figlink.learn.records import BadItem, FigurePair

KIND = "captioner"
BACKEND = "retrieve-and-select"
POOL = "pool.json"
DEFAULT_CAPTIONER = Path(__file__).with_name("data") / "captioner"


@dataclass
class Prepared:
    """Featurized figures with their matcher vectors and the inputs the captioner reads."""

    feats: Features
    figs: list[FigureInput]
    image_vecs: np.ndarray  # matcher image tower (pixels + OCR text)
    text_vecs: np.ndarray  # matcher text tower, caption only
    bad: list[BadItem]
    mentions: list[tuple[str, ...]]

    def subset(self, idx: Sequence[int]) -> "Prepared":
        return Prepared(self.feats.subset(idx), [self.figs[i] for i in idx], self.image_vecs[list(idx)],
                        self.text_vecs[list(idx)], [], [self.mentions[i] for i in idx])


def _dual_encoder(matcher_dir: Optional[Path]) -> DualEncoderMatcher:
    m = load_matcher(matcher_dir)
    if not isinstance(m, DualEncoderMatcher):
        raise ModelError("the captioner needs figlink's built-in dual-encoder matcher")
    return m


def matcher_sha(matcher_dir: Optional[Path]) -> str:
    path = (matcher_dir or DEFAULT_MATCHER) / WEIGHTS
    return hashlib.sha256(path.read_bytes()).hexdigest()


def prepare(pairs: Sequence[FigurePair], cache: FeatureCache, matcher_dir: Optional[Path] = None,
            device: str = "cpu", ocr: bool = True) -> Prepared:
    """Features (cached) and matcher vectors of the usable pairs; one BadItem per unusable one.
    ``ocr=False`` reads no text in the images (fast; the image vectors and OCR features then see none)."""
    from figlink.learn.train import encode_all

    matcher = _dual_encoder(matcher_dir)
    feats, bad = featurize_pairs(pairs, cache, ocr=ocr and matcher.model.config.use_ocr,
                                 image_size=matcher.model.config.image_size, device=device)
    image, text = encode_all(matcher.model, feats, "caption", device)
    by_id = {p.id: p for p in pairs}
    figs = [FigureInput(feats.ocr_text[i] if feats.ocr_text else "", by_id[x].mentions, feats.captions[i], group_of(x))
            for i, x in enumerate(feats.ids)]
    return Prepared(feats, figs, image, text, bad, [by_id[x].mentions for x in feats.ids])


def train_on(data: Prepared, contexts: Sequence[str] = CONTEXTS,
             settings: CaptionerSettings = CaptionerSettings()) -> Captioner:
    return fit_captioner(data.figs, data.image_vecs, data.text_vecs, contexts, settings)


def measure(captioner: Captioner, train: Prepared, test: Prepared) -> dict[str, dict]:
    """Scores on ``test`` of the captioner in each context it has and of both baselines (the
    nearest-caption pool is ``train``); ``seconds`` is the captioning time after the features."""
    captions = test.feats.captions
    out: dict[str, dict] = {}
    for context in captioner.scorers:
        t = time.perf_counter()
        generated = captioner.generate(test.figs, test.image_vecs, context)
        out[f"model, context {context}"] = {**score_captions(generated, captions),
                                            "seconds": time.perf_counter() - t}
    out["baseline: first mention"] = score_captions(first_mention_baseline(test.mentions), captions)
    out["baseline: nearest caption"] = score_captions(
        nearest_caption_baseline(test.image_vecs, train.text_vecs, train.feats.captions), captions)
    return out


def save_captioner(captioner: Captioner, path: str | Path, matcher_dir: Optional[Path] = None,
                   extra: Optional[dict] = None) -> Path:
    """Write a captioner directory (pool texts, float16 pool vectors, scorer weights, manifest)."""
    from safetensors.torch import save

    tensors = {f"scorer.{c}.{k}": v.detach().cpu().contiguous()
               for c, s in captioner.scorers.items() for k, v in s.state_dict().items()}
    tensors["pool_vecs"] = torch.from_numpy(captioner.pool_vecs.astype(np.float16))
    config = {"contexts": list(captioner.scorers), "features": list(FEATURES), "settings": asdict(captioner.settings),
              "matcher_sha256": matcher_sha(matcher_dir)}
    files = {WEIGHTS: save(tensors), POOL: json.dumps(captioner.pool_texts, ensure_ascii=False).encode("utf-8")}
    return write_model_dir(path, KIND, BACKEND, config, files, extra)


def load_captioner(path: Optional[str | Path] = None, matcher_dir: Optional[Path] = None) -> Captioner:
    """The captioner in a directory (the packaged default when ``path`` is None)."""
    from safetensors.torch import load_file

    folder = Path(path) if path is not None else DEFAULT_CAPTIONER
    manifest = read_manifest(folder, KIND)
    if manifest.get("backend") != BACKEND:
        raise ModelError(f"{folder}: unknown captioner backend {manifest.get('backend')!r} (this figlink knows "
                         f"{BACKEND!r})")
    config = manifest.get("config") or {}
    contexts = config.get("contexts") or []
    if config.get("features") != list(FEATURES) or not contexts or any(c not in CONTEXTS for c in contexts):
        raise ModelError(f"{folder}: the captioner's features do not match this figlink's (retrain it)")
    if config.get("matcher_sha256") != matcher_sha(matcher_dir):
        raise ModelError(f"{folder}: the captioner was built with another matcher than "
                         f"{matcher_dir or 'the default one'} (its pool vectors would not fit)")
    try:
        state = load_file(str(folder / WEIGHTS))
        pool = json.loads((folder / POOL).read_text(encoding="utf-8"))
        settings = CaptionerSettings(**config.get("settings", {}))
    except Exception as e:  # missing or damaged files; safetensors raises its own error types
        raise ModelError(f"{folder}: unreadable captioner ({type(e).__name__}: {e})") from e
    scorers = {}
    for context in contexts:
        prefix = f"scorer.{context}."
        scorers[context] = CandidateScorer()
        try:
            scorers[context].load_state_dict({k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)})
        except RuntimeError as e:
            raise ModelError(f"{folder}: the weights do not match the model this figlink builds "
                             f"({str(e).strip().splitlines()[0]})") from e
    vecs = state.get("pool_vecs")
    if vecs is None or len(vecs) != len(pool):
        raise ModelError(f"{folder}: the pool vectors do not match the pool texts")
    return Captioner(list(pool), vecs.float().numpy(), {c: s.eval() for c, s in scorers.items()}, settings)

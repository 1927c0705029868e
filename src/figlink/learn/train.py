"""Training loop of the matcher: AdamW on the symmetric InfoNCE loss, early stopping on a validation slice.

The model is selected by the mean MRR of both directions on the validation figures (never on the
held-out check set). Mentions and OCR texts are dropped at random during training so the model also
works when a figure has none (and for ``--text caption``).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import torch

from figlink.learn.dataset import Features
from figlink.learn.evaluate import both_ways
from figlink.learn.hubness import pool_corrected
from figlink.learn.lexical import LexicalWeights, fuse, pool_lexical
from figlink.learn.matcher import DualEncoder, MatcherConfig, info_nce
from figlink.learn.records import TextMode


@dataclass
class TrainSettings:
    epochs: int = 30
    batch_size: int = 256
    lr: float = 3e-4
    tail_lr: float = 1e-4
    weight_decay: float = 0.05
    patience: int = 5  # epochs without a better validation score before stopping
    drop_mentions: float = 0.3  # chance that a figure's mentions are hidden in a training step
    drop_ocr: float = 0.2
    text_mode: TextMode = "caption+mentions"  # the text input validation uses
    seed: int = 0
    device: str = "cpu"


@dataclass
class TrainResult:
    model: DualEncoder
    best_epoch: int
    epochs_run: int
    val: dict
    seconds: float
    history: list[dict] = field(default_factory=list)


def resolve_device(device: str) -> torch.device:
    """``cpu`` or ``cuda`` (a clear error when CUDA is asked for and absent)."""
    if device == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("--device cuda: no CUDA GPU is available to torch on this machine")
        return torch.device("cuda")
    if device != "cpu":
        raise ValueError(f"unknown device {device!r}: choose cpu or cuda")
    return torch.device("cpu")


def _tensors(f: Features, dev: torch.device, config: MatcherConfig) -> dict[str, torch.Tensor]:
    if f.image_size != config.image_size:
        raise ValueError(f"the features are of images at {f.image_size} px, the matcher reads {config.image_size} px")
    maps = config.tune_tail
    t = {k: torch.from_numpy(np.ascontiguousarray(getattr(f, k))).to(dev)
         for k in ("pooled", "ocr", "has_ocr", "caption", "mentions", "has_mentions")}
    if maps and f.maps is not None:
        t["maps"] = torch.from_numpy(np.ascontiguousarray(f.maps)).to(dev)
    return t


def _image(model: DualEncoder, t: dict[str, torch.Tensor], idx, has_ocr=None) -> torch.Tensor:
    return model.encode_image(t["pooled"][idx], t["maps"][idx] if "maps" in t else None, t["ocr"][idx],
                              t["has_ocr"][idx] if has_ocr is None else has_ocr)


def _text(model: DualEncoder, t: dict[str, torch.Tensor], idx, text_mode: TextMode, has_mentions=None):
    has = t["has_mentions"][idx] if has_mentions is None else has_mentions
    if text_mode == "caption":
        has = torch.zeros_like(has)
    return model.encode_text(t["caption"][idx], t["mentions"][idx], has)


@torch.no_grad()
def encode_all(model: DualEncoder, f: Features, text_mode: TextMode, device: str = "cpu",
               batch: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """(image vectors, text vectors) of every figure, unit rows, float32."""
    dev = resolve_device(device)
    model = model.to(dev).eval()
    t = _tensors(f, dev, model.config)
    imgs, txts = [], []
    for s in range(0, len(f), batch):
        idx = slice(s, s + batch)
        imgs.append(_image(model, t, idx).float().cpu().numpy())
        txts.append(_text(model, t, idx, text_mode).float().cpu().numpy())
    d = model.out_dim
    return (np.concatenate(imgs) if imgs else np.zeros((0, d), np.float32),
            np.concatenate(txts) if txts else np.zeros((0, d), np.float32))


def lexical_weights(model: DualEncoder, f: Features) -> LexicalWeights:
    """The weights of the lexical term in this model's score on these figures (none without OCR text)."""
    return model.config.lexical() if f.ocr_text else LexicalWeights()


def pool_scores(model: DualEncoder, f: Features, text_mode: TextMode, device: str = "cpu",
                lexical: Optional[tuple[np.ndarray, np.ndarray]] = None,
                hubness: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The matcher's (text → image, image → text) score matrices over a pool of figures, rows the queries:
    the towers' cosines plus the weighted lexical term (:mod:`figlink.learn.lexical`; ``lexical``: precomputed), each
    item's hubness normalizer over the pool's queries taken off (:mod:`figlink.learn.hubness`; ``hubness=False``:
    not)."""
    img, txt = encode_all(model, f, text_mode, device)
    weights = lexical_weights(model, f)
    if not weights.on:
        dense = (txt @ img.T).astype(np.float64)
        t2i, i2t = dense, dense.T
    else:
        t2i, i2t = fuse(txt @ img.T, lexical or pool_lexical(f.texts(text_mode), f.ocr_text, weights))
    if not hubness:
        return t2i, i2t
    hub = model.config.hubness()
    return pool_corrected(t2i, hub), pool_corrected(i2t, hub)


def evaluate(model: DualEncoder, f: Features, text_mode: TextMode, device: str = "cpu",
             lexical: Optional[tuple[np.ndarray, np.ndarray]] = None, hubness: bool = True) -> dict:
    """R@K and MRR both ways on a pool of figures (see :mod:`figlink.learn.evaluate`)."""
    return both_ways(*pool_scores(model, f, text_mode, device, lexical, hubness))


def _score(m: dict) -> float:
    return (m["t2i"]["MRR"] + m["i2t"]["MRR"]) / 2


def _epoch(model: DualEncoder, opt, t: dict[str, torch.Tensor], n: int, settings: TrainSettings,
           rng: np.random.Generator, dev: torch.device) -> float:
    """One pass over the training figures in shuffled batches; the mean loss."""
    model.train()
    if model.tail is not None:
        model.tail.eval()  # keep the ImageNet batch-norm statistics
    order = rng.permutation(n)
    losses = []
    for s in range(0, n, settings.batch_size):
        idx = torch.from_numpy(order[s:s + settings.batch_size]).to(dev)
        if len(idx) < 2:
            continue
        keep_m = torch.from_numpy((rng.random(len(idx)) >= settings.drop_mentions).astype(np.float32)).to(dev)
        keep_o = torch.from_numpy((rng.random(len(idx)) >= settings.drop_ocr).astype(np.float32)).to(dev)
        img = _image(model, t, idx, t["has_ocr"][idx] * keep_o)
        txt = _text(model, t, idx, "caption+mentions", t["has_mentions"][idx] * keep_m)
        loss = info_nce(img, txt, model.scale())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return float(np.mean(losses)) if losses else 0.0


def train_matcher(train: Features, val: Optional[Features], config: MatcherConfig, settings: TrainSettings,
                  log: Optional[Callable[[str], None]] = None) -> TrainResult:
    """Train a :class:`DualEncoder` on ``train``.

    With ``val``: scored before training (epoch 0) and after every epoch; the best epoch's weights are
    kept, and training stops ``patience`` epochs after the best. Without: ``epochs`` epochs, the last kept.
    """
    start = time.perf_counter()
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    dev = resolve_device(settings.device)
    model = DualEncoder(config).to(dev)
    t = _tensors(train, dev, config)
    head_params = [p for n, p in model.named_parameters() if not n.startswith("tail.")]
    groups = [{"params": head_params, "lr": settings.lr}]
    if model.tail is not None:
        groups.append({"params": list(model.tail.parameters()), "lr": settings.tail_lr})
    opt = torch.optim.AdamW(groups, weight_decay=settings.weight_decay)
    held = val if val is not None and len(val) > 0 else None
    selecting = held is not None
    history: list[dict] = []
    best, best_epoch, best_state = -1.0, 0, None
    lexical = (pool_lexical(held.texts(settings.text_mode), held.ocr_text, lexical_weights(model, held))
               if held is not None and lexical_weights(model, held).on else None)
    if held is not None:
        metrics = evaluate(model, held, settings.text_mode, settings.device, lexical)
        best = _score(metrics)
        best_state = copy.deepcopy(model.state_dict())
        history.append({"epoch": 0, "loss": None, "val_score": best, "val": metrics})
    epoch = 0
    for epoch in range(1, settings.epochs + 1):
        loss = _epoch(model, opt, t, len(train), settings, rng, dev)
        epoch_metrics = (evaluate(model, held, settings.text_mode, settings.device, lexical)
                         if held is not None else None)
        score = _score(epoch_metrics) if epoch_metrics else None
        history.append({"epoch": epoch, "loss": loss, "val_score": score, "val": epoch_metrics})
        if score is not None and score > best:
            best, best_epoch, best_state = score, epoch, copy.deepcopy(model.state_dict())
        if log is not None and (epoch % 5 == 0 or epoch == 1):
            log(f"epoch {epoch}: loss {loss:.3f}" + (f", validation MRR {score:.3f} (best {best:.3f} @ {best_epoch})"
                                                       if score is not None else ""))
        if selecting and epoch - best_epoch >= settings.patience:
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    else:
        best_epoch = epoch
    model = model.cpu().eval()
    val_final = evaluate(model, held, settings.text_mode, lexical=lexical) if held is not None else {}
    return TrainResult(model, best_epoch, epoch, val_final, time.perf_counter() - start, history)

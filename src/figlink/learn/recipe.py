"""Train a matcher from figure pairs end to end: split, featurize (cached), choose the epochs, train,
evaluate, save.

The pairs whose id starts with ``hold_out`` are never trained or selected on; they are scored once at
the end (the check set). The number of epochs is chosen on the rest without touching them:

- when their ids name groups (the part before the first ``/``: a book, a paper), by group k-fold
  cross-validation — each group (or, past :data:`MAX_FOLDS` groups, each fold of groups by id hash) is
  held out in turn, the validation MRR of every epoch is averaged over folds, and the best count is
  trained on all of them. A new book or paper is what the matcher meets in use, so this asks how well
  it generalizes to one;
- otherwise on a stable 1/10 validation slice (by id hash), with early stopping.

The model directory records the data, settings and metrics in its manifest.
"""

from __future__ import annotations

import hashlib
import platform
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from figlink.learn.cache import FeatureCache
from figlink.learn.dataset import Features, featurize_pairs
from figlink.learn.embedder import save_matcher
from figlink.learn.evaluate import bm25_ocr_baseline
from figlink.learn.matcher import MatcherConfig
from figlink.learn.records import BadItem, FigurePair, TextMode, validation_slice
from figlink.learn.train import TrainResult, TrainSettings, evaluate, train_matcher

MAX_FOLDS = 5
CV_EPOCHS = 12  # epochs scored in each fold; the chosen count is at most this


def group_of(pair_id: str) -> str:
    return pair_id.split("/", 1)[0] if "/" in pair_id else ""


def fold_of_ids(ids: Sequence[str]) -> Optional[list[int]]:
    """A fold number per id (one fold per group up to MAX_FOLDS groups, else groups hashed into
    MAX_FOLDS folds), or None when the ids name fewer than two groups."""
    groups = sorted({group_of(i) for i in ids})
    if len(groups) < 2 or "" in groups:
        return None
    if len(groups) <= MAX_FOLDS:
        return [groups.index(group_of(i)) for i in ids]
    return [int(hashlib.md5(group_of(i).encode("utf-8")).hexdigest()[:8], 16) % MAX_FOLDS for i in ids]


@dataclass
class Selection:
    """How the epoch count was chosen: per-fold validation metrics at that count, and the mean curve."""

    epochs: int
    method: str
    curve: list[float] = field(default_factory=list)  # mean validation MRR after 0, 1, … epochs
    folds: dict[str, dict] = field(default_factory=dict)  # held-out group(s) → metrics at the chosen count


def choose_epochs(train: Features, config: MatcherConfig, settings: TrainSettings,
                  log: Optional[Callable[[str], None]] = None) -> Optional[Selection]:
    """Group k-fold choice of the epoch count (None when the ids name no groups)."""
    folds = fold_of_ids(train.ids)
    if folds is None:
        return None
    fold_arr = np.asarray(folds)
    runs = []
    for k in sorted(set(folds)):
        held = np.flatnonzero(fold_arr == k)
        rest = np.flatnonzero(fold_arr != k)
        r = train_matcher(train.subset(rest), train.subset(held), config,
                          replace(settings, epochs=min(settings.epochs, CV_EPOCHS), patience=10**6))
        name = "+".join(sorted({group_of(train.ids[i]) for i in held}))
        runs.append((name, r.history))
        if log is not None:
            log(f"fold {name}: validation MRR by epoch " + " ".join(f"{h['val_score']:.3f}" for h in r.history))
    length = min(len(h) for _, h in runs)
    curve = [float(np.mean([h[e]["val_score"] for _, h in runs])) for e in range(length)]
    best = int(np.argmax(curve))
    return Selection(best, f"group {len(runs)}-fold cross-validation", curve,
                     {name: h[best]["val"] for name, h in runs})


def validation_split(feats: Features) -> tuple[Features, Features]:
    """(training part, validation slice: 1/10 of the figures by id hash)."""
    val_ids = validation_slice(feats.ids)
    return (feats.subset([i for i, x in enumerate(feats.ids) if x not in val_ids]),
            feats.subset([i for i, x in enumerate(feats.ids) if x in val_ids]))


def fit(trainable: Features, config: MatcherConfig, settings: TrainSettings,
        log: Optional[Callable[[str], None]] = None) -> tuple[TrainResult, Selection]:
    """Choose the epoch count (group CV, else a validation slice) and train on ``trainable``."""
    selection = choose_epochs(trainable, config, settings, log)
    if selection is not None:
        result = train_matcher(trainable, None, config, replace(settings, epochs=selection.epochs), log)
        return result, selection
    train, val = validation_split(trainable)
    if len(val) < 2:  # tiny data: select on the training pairs themselves
        train = val = trainable
    result = train_matcher(train, val, config, settings, log)
    curve = [h["val_score"] for h in result.history]
    return result, Selection(result.best_epoch, "1/10 validation slice by id hash", curve,
                             {"validation slice": result.val})


@dataclass
class TrainReport:
    result: TrainResult
    selection: Selection
    metrics: dict  # {"validation": {fold: …}, "check": …, "check_bm25_ocr": …}
    bad: list[BadItem]
    counts: dict
    featurize_seconds: float
    out: Path


def train_from_pairs(pairs: Sequence[FigurePair], out: str | Path, *, text_mode: TextMode = "caption+mentions",
                     config: Optional[MatcherConfig] = None, settings: Optional[TrainSettings] = None,
                     hold_out: Optional[str] = None, cache: Optional[FeatureCache] = None,
                     data_note: str = "", log: Optional[Callable[[str], None]] = None) -> TrainReport:
    """Train and save a matcher; returns its metrics (the check part only when ``hold_out`` is given)."""
    config = config or MatcherConfig(use_mentions=text_mode == "caption+mentions")
    settings = replace(settings or TrainSettings(), text_mode=text_mode)
    cache = cache or FeatureCache()
    t = time.perf_counter()
    rest = [p for p in pairs if not (hold_out and p.id.startswith(hold_out))]
    if len(rest) < 4:
        raise ValueError(f"too few figures to train on ({len(rest)})")
    progress = (lambda done, total: log(f"features: {done}/{total} images")) if log else None
    feats, bad = featurize_pairs(pairs, cache, ocr=config.use_ocr, keep_maps=config.tune_tail,
                                 image_size=config.image_size, device=settings.device, progress=progress)
    featurize_seconds = time.perf_counter() - t
    held = [i for i, x in enumerate(feats.ids) if hold_out and x.startswith(hold_out)]
    trainable = feats.subset([i for i, x in enumerate(feats.ids) if not (hold_out and x.startswith(hold_out))])
    check = feats.subset(held)
    t_fit = time.perf_counter()
    result, selection = fit(trainable, config, settings, log)
    fit_seconds = time.perf_counter() - t_fit
    metrics: dict = {"validation": selection.folds}
    if len(check):
        metrics["check"] = evaluate(result.model, check, text_mode)
        if config.use_ocr:
            texts = check.captions if text_mode == "caption" else [
                f"{c} {m}" for c, m in zip(check.captions, check.mention_text)]
            metrics["check_bm25_ocr"] = bm25_ocr_baseline(texts, check.ocr_text)
    counts = {"train": len(trainable), "check": len(check), "bad": len(bad)}
    training = {"data": data_note, "hold_out": hold_out, "text_mode": text_mode, "counts": counts,
                "settings": asdict(settings), "selection": selection.method, "epochs": selection.epochs,
                "validation_curve": [round(v, 4) for v in selection.curve],
                "train_seconds": round(result.seconds, 1), "select_and_train_seconds": round(fit_seconds, 1),
                "featurize_seconds": round(featurize_seconds, 1),
                "machine": platform.machine(), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    folder = save_matcher(result.model, out, {"metrics": metrics, "training": training})
    return TrainReport(result, selection, metrics, bad, counts, featurize_seconds, folder)

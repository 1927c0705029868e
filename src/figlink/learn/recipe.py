"""Train a matcher from figure pairs end to end: split, featurize (cached), train, evaluate, save.

The pairs whose id starts with ``hold_out`` are never trained or selected on; they are scored once at
the end (the check set). Of the rest, a stable 1/10 by id hash is the validation slice that picks the
epoch. The model directory records the data, settings and metrics in its manifest.
"""

from __future__ import annotations

import platform
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Optional, Sequence

from figlink.learn.cache import FeatureCache
from figlink.learn.dataset import Features, featurize_pairs
from figlink.learn.embedder import save_matcher
from figlink.learn.evaluate import bm25_ocr_baseline
from figlink.learn.matcher import MatcherConfig
from figlink.learn.records import TextMode
from figlink.learn.records import BadItem, FigurePair, by_prefix, validation_slice
from figlink.learn.train import TrainResult, TrainSettings, evaluate, train_matcher


@dataclass
class Split:
    train: Features
    val: Features
    check: Features


def split_features(feats: Features, hold_out: Optional[str]) -> Split:
    """Train / validation / check parts of featurized pairs (check: ids starting with ``hold_out``)."""
    check = [i for i, x in enumerate(feats.ids) if hold_out and x.startswith(hold_out)]
    rest = [i for i, x in enumerate(feats.ids) if not (hold_out and x.startswith(hold_out))]
    val_ids = validation_slice(feats.ids[i] for i in rest)
    return Split(train=feats.subset([i for i in rest if feats.ids[i] not in val_ids]),
                 val=feats.subset([i for i in rest if feats.ids[i] in val_ids]), check=feats.subset(check))


@dataclass
class TrainReport:
    result: TrainResult
    metrics: dict  # {"validation": …, "check": …, "check_bm25_ocr": …}
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
    rest, _ = by_prefix(pairs, hold_out)
    if len(rest) < 4:
        raise ValueError(f"too few figures to train on ({len(rest)})")
    progress = (lambda done, total: log(f"features: {done}/{total} images")) if log else None
    feats, bad = featurize_pairs(pairs, cache, ocr=config.use_ocr, keep_maps=config.tune_tail,
                                 device=settings.device, progress=progress)
    featurize_seconds = time.perf_counter() - t
    parts = split_features(feats, hold_out)
    if len(parts.val) < 2:  # tiny data: select on the training pairs themselves
        parts.val = parts.train
    result = train_matcher(parts.train, parts.val, config, settings, log=log)
    metrics: dict = {"validation": result.val}
    if len(parts.check):
        metrics["check"] = evaluate(result.model, parts.check, text_mode)
        if config.use_ocr:
            texts = parts.check.captions if text_mode == "caption" else [
                f"{c} {m}" for c, m in zip(parts.check.captions, parts.check.mention_text)]
            metrics["check_bm25_ocr"] = bm25_ocr_baseline(texts, parts.check.ocr_text)
    counts = {"train": len(parts.train), "validation": len(parts.val), "check": len(parts.check), "bad": len(bad)}
    training = {"data": data_note, "hold_out": hold_out, "text_mode": text_mode, "counts": counts,
                "settings": asdict(settings), "best_epoch": result.best_epoch, "epochs_run": result.epochs_run,
                "train_seconds": round(result.seconds, 1), "featurize_seconds": round(featurize_seconds, 1),
                "machine": platform.machine(), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    folder = save_matcher(result.model, out, {"metrics": metrics, "training": training})
    return TrainReport(result, metrics, bad, counts, featurize_seconds, folder)

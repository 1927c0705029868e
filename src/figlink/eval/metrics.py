"""Metrics as defined in the dataset papers.

- :func:`alignment_f1` — MedICaT §3: for each gold panel take the predicted panel of highest IoU;
  IoU < 0.5 scores 0, else the token F1 (alphanumeric tokens) of the two subcaptions; mean over gold.
- :func:`coco_map` — COCO box mAP (IoU .50:.95) and AP50 with pycocotools.
- :func:`cer` / :func:`wer` — edit distance over characters / words divided by the reference length.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections import Counter
from typing import Optional, Sequence

BoxT = Sequence[float]

_TOKEN = re.compile(r"[A-Za-z0-9]+")


def iou(a: BoxT, b: BoxT) -> float:
    """Intersection over union of two [x0, y0, x1, y1] boxes."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(0.0, w) * max(0.0, h)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def tokens(text: Optional[str]) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text or "")]


def token_f1(pred: Optional[str], gold: Optional[str]) -> float:
    """F1 of the bags of lower-cased alphanumeric tokens."""
    p, g = Counter(tokens(pred)), Counter(tokens(gold))
    if not p and not g:
        return 1.0
    common = sum((p & g).values())
    if common == 0:
        return 0.0
    prec, rec = common / sum(p.values()), common / sum(g.values())
    return 2 * prec * rec / (prec + rec)


def alignment_f1(gold: Sequence[tuple[BoxT, str]], pred: Sequence[tuple[BoxT, Optional[str]]]) -> float:
    """MedICaT subfigure–subcaption alignment score of one figure (mean over its gold panels)."""
    if not gold:
        return 1.0 if not pred else 0.0
    total = 0.0
    for gbox, gtext in gold:
        if not pred:
            continue
        pbox, ptext = max(pred, key=lambda p: iou(gbox, p[0]))
        if iou(gbox, pbox) >= 0.5:
            total += token_f1(ptext, gtext)
    return total / len(gold)


def recall_at_iou(gold: Sequence[BoxT], pred: Sequence[BoxT], thr: float = 0.5) -> float:
    """Share of gold boxes matched by some predicted box with IoU ≥ ``thr``."""
    if not gold:
        return 1.0
    return sum(any(iou(g, p) >= thr for p in pred) for g in gold) / len(gold)


def coco_map(gold: Sequence[Sequence[BoxT]], pred: Sequence[Sequence[tuple[BoxT, float]]]) -> dict[str, float]:
    """COCO mAP@[.5:.95] and AP50 over images; ``gold[i]`` boxes and ``pred[i]`` (box, score) of image i."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    images: list[dict] = []
    anns: list[dict] = []
    dets: list[dict] = []
    for i, (g, p) in enumerate(zip(gold, pred)):
        images.append({"id": i + 1, "width": 10000, "height": 10000})
        for b in g:
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": 1, "iscrowd": 0,
                         "bbox": [b[0], b[1], b[2] - b[0], b[3] - b[1]], "area": (b[2] - b[0]) * (b[3] - b[1])})
        for b, s in p:
            dets.append({"image_id": i + 1, "category_id": 1, "bbox": [b[0], b[1], b[2] - b[0], b[3] - b[1]],
                         "score": float(s)})
    if not anns:
        return {"map": 0.0, "ap50": 0.0}
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "panel"}]}
        gt.createIndex()
        if not dets:
            return {"map": 0.0, "ap50": 0.0}
        dt = gt.loadRes(dets)
        ev = COCOeval(gt, dt, "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return {"map": float(max(0.0, ev.stats[0])), "ap50": float(max(0.0, ev.stats[1]))}


def _edit_distance(a: Sequence, b: Sequence) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def cer(pred: str, gold: str) -> float:
    """Character error rate: edit distance / gold length."""
    return _edit_distance(pred, gold) / max(1, len(gold))


def wer(pred: str, gold: str) -> float:
    """Word error rate: edit distance over whitespace tokens / gold token count."""
    g = gold.split()
    return _edit_distance(pred.split(), g) / max(1, len(g))

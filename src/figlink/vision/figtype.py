"""Figure type: EfficientNet-Lite0 features + OCR statistics → a small trained linear head.

Taxonomy (:data:`TAXONOMY`): charts (line, bar, scatter, box, heatmap, pie, area, histogram), diagram,
photo, microscopy, radiology (CT, MRI, X-ray, ultrasound), table, equation, other. The head's weights
(``data/figtype_head.npz``, ~80 KB) are produced by ``python -m figlink.train.figtype_train``; when
the file is missing, :func:`classify_image` returns ``(None, [])``.

Medical filter, stage 2 (MedICaT): after the caption keyword stage, keep a figure when a medical
type ranks in the classifier's top 4, or when the caption names an imaging modality (:func:`is_medical`).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from PIL import Image

from figlink.model import Box, FigureType, OcrText

TAXONOMY = ["line_chart", "bar_chart", "scatter_plot", "box_plot", "heatmap", "pie_chart", "area_chart",
            "histogram", "diagram", "photo", "microscopy", "radiology_ct", "radiology_mri", "radiology_xray",
            "radiology_ultrasound", "table", "equation", "other"]
MEDICAL_TYPES = {"radiology_ct", "radiology_mri", "radiology_xray", "radiology_ultrasound", "microscopy", "photo"}
HEAD_PATH = Path(__file__).with_name("data") / "figtype_head.npz"

_NUM = re.compile(r"^[-+−]?\d+([.,]\d+)?%?$")
_HEAD: Optional[dict] = None
_LOCK = threading.Lock()


def ocr_stats(texts: Sequence[OcrText], width: int, height: int) -> np.ndarray:
    """Six numbers about the text in a figure: count, numeric share, area share, vertical share,
    mean height, share of single-character boxes."""
    n = len(texts)
    if n == 0:
        return np.zeros(6, np.float32)
    area = sum((t.bbox[2] - t.bbox[0]) * (t.bbox[3] - t.bbox[1]) for t in texts) / max(1, width * height)
    numeric = sum(bool(_NUM.match(t.text.replace(" ", ""))) for t in texts) / n
    vertical = sum((t.bbox[3] - t.bbox[1]) > 1.8 * (t.bbox[2] - t.bbox[0]) for t in texts) / n
    mean_h = float(np.mean([min(t.bbox[3] - t.bbox[1], t.bbox[2] - t.bbox[0]) for t in texts])) / max(1, height)
    single = sum(len(t.text.strip()) == 1 for t in texts) / n
    return np.array([min(n, 60) / 20, numeric, min(area, 1.0) * 4, vertical, mean_h * 10, single], np.float32)


def feature_vector(images: list[Image.Image], texts: Sequence[Sequence[OcrText]]) -> np.ndarray:
    """(n, 1286) features: EfficientNet-Lite0 embedding + OCR statistics."""
    from figlink.vision.features import embed

    emb = embed(images)
    stats = np.stack([ocr_stats(t, im.width, im.height) for im, t in zip(images, texts)])
    return np.concatenate([emb, stats], axis=1).astype(np.float32)


def load_head(path: Path = HEAD_PATH) -> Optional[dict]:
    """The trained head (classes, mean, std, W, b) once per process, or None when not trained."""
    global _HEAD
    if _HEAD is None and path.is_file():
        with _LOCK:
            if _HEAD is None:
                z = np.load(path, allow_pickle=False)
                _HEAD = {"classes": [str(c) for c in z["classes"]], "mean": z["mean"].astype(np.float32),
                         "std": z["std"].astype(np.float32), "W": z["W"].astype(np.float32),
                         "b": z["b"].astype(np.float32)}
    return _HEAD


def predict_proba(features: np.ndarray, head: dict) -> np.ndarray:
    z = ((features - head["mean"]) / head["std"]) @ head["W"] + head["b"]
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def classify_image(image: Image.Image, texts: Sequence[OcrText] = ()) -> tuple[Optional[FigureType], list[tuple[str, float]]]:
    """The figure's type and the full ranking (label, probability), best first."""
    head = load_head()
    if head is None:
        return None, []
    p = predict_proba(feature_vector([image], [list(texts)]), head)[0]
    ranking = sorted(zip(head["classes"], p.tolist()), key=lambda kv: -kv[1])
    return FigureType(label=ranking[0][0], score=round(ranking[0][1], 4)), [(k, round(v, 4)) for k, v in ranking]


def classify_panels(image: Image.Image, boxes: Sequence[Sequence[float]], texts: Sequence[OcrText] = (),
                    max_panels: int = 16) -> tuple[Optional[FigureType], list[tuple[str, float]]]:
    """Type of a (compound) figure: each panel is classified on its own (the head was trained on single
    panels) and the probabilities are averaged, weighted by panel area."""
    head = load_head()
    if head is None:
        return None, []
    boxes = sorted(boxes, key=lambda b: -(b[2] - b[0]) * (b[3] - b[1]))[:max_panels]
    if len(boxes) <= 1:
        return classify_image(image, texts)
    crops, crop_texts, weights = [], [], []
    for b in boxes:
        x0, y0, x1, y1 = (int(round(v)) for v in b)
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        crops.append(image.crop((x0, y0, x1, y1)))
        crop_texts.append([OcrText(t.text, Box.pixels((t.bbox[0] - x0, t.bbox[1] - y0, t.bbox[2] - x0, t.bbox[3] - y0)))
                           for t in texts if t.bbox[0] >= x0 and t.bbox[2] <= x1 and t.bbox[1] >= y0 and t.bbox[3] <= y1])
        weights.append((x1 - x0) * (y1 - y0))
    if not crops:
        return classify_image(image, texts)
    probs = predict_proba(feature_vector(crops, crop_texts), head)
    p = (probs * np.asarray(weights, np.float32)[:, None]).sum(0) / float(sum(weights))
    ranking = sorted(zip(head["classes"], p.tolist()), key=lambda kv: -kv[1])
    return FigureType(label=ranking[0][0], score=round(ranking[0][1], 4)), [(k, round(v, 4)) for k, v in ranking]


def is_medical(ranking: Sequence[tuple[str, float]], keyword_hit: bool, top_k: int = 4, *,
               strong: bool = False) -> bool:
    """MedICaT's two-stage filter: caption keywords, then a medical type among the top ``top_k`` classes.

    A ``strong`` caption signal (the caption names an imaging modality:
    :func:`figlink.text.keywords.is_strong_signal`) is kept whatever the image head says: the head was
    trained on synthetic figures and must not veto the caption."""
    if not keyword_hit:
        return False
    return strong or any(label in MEDICAL_TYPES for label, _ in list(ranking)[:top_k])


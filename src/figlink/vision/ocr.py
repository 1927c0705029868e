"""Text inside figures with rapidocr (PP-OCR det + rec shipped in the wheel, onnxruntime, CPU).

The engine is loaded once per process (:func:`engine`); :func:`read_text` returns :class:`OcrText`
boxes in the pixels of the image it was given, each with a role guessed from geometry
(:func:`assign_roles`).
"""

from __future__ import annotations

import os
import re
import threading
import unicodedata
from typing import Optional, Sequence

import numpy as np

from figlink.logs import quiet_library_logs
from figlink.model import Box, OcrRole, OcrText
from figlink.text import grammar as g

ROLES = ("panel_label", "axis_title", "tick_label", "legend", "scale_bar", "other")

_ENGINE = None
_LOCK = threading.Lock()

_NUMBER_RE = re.compile(r"^[-+−–]?\d+([.,]\d+)?([eE][-+]?\d+)?%?$|^10[-−]?\d+$")
_SCALE_RE = re.compile(r"^\d+([.,]\d+)?\s*(nm|µm|μm|um|mm|cm|m|Å|pm|km|s|ms)$", re.IGNORECASE)


DET_SIDE = 736  # rapidocr's default: the detector sees the image with its shorter side scaled to this


def make_engine(det_side: int = DET_SIDE):
    """A new rapidocr engine (threads from FIGLINK_OCR_THREADS, default 1) whose detector scales the
    shorter image side to ``det_side``."""
    from rapidocr import RapidOCR

    threads = int(os.environ.get("FIGLINK_OCR_THREADS", "1"))
    with quiet_library_logs():
        ocr = RapidOCR(params={
            "Global.log_level": "error",
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            "Det.limit_side_len": det_side,
        })
    rec = ocr._load_rec_model()
    # Batch short crops at their own width instead of padding each to 320 px: figure
    # text is mostly short (ticks, labels), and this makes recognition ~2-3x faster.
    rec.rec_image_shape = [3, 48, 48]
    return ocr


def engine():
    """The process-wide rapidocr engine (created on first use)."""
    global _ENGINE
    if _ENGINE is None:
        with _LOCK:
            if _ENGINE is None:
                _ENGINE = make_engine()
    return _ENGINE


def read_text(rgb: np.ndarray, min_score: float = 0.5, ocr=None) -> list[OcrText]:
    """Detect and read text lines in an RGB uint8 array; boxes are [x0, y0, x1, y1] pixels, no roles yet.

    ``ocr`` is an engine from :func:`make_engine` (default: the process-wide one)."""
    if rgb.shape[0] < 8 or rgb.shape[1] < 8:
        return []
    result = (ocr or engine())(rgb, use_cls=True)
    if result is None or result.txts is None:
        return []
    out = []
    for box, text, score in zip(result.boxes, result.txts, result.scores):
        text = text.strip()
        if not text or float(score) < min_score:
            continue
        pts = np.asarray(box, dtype=float)
        x0, y0 = pts.min(axis=0)
        x1, y1 = pts.max(axis=0)
        out.append(OcrText(text=text, bbox=Box.pixels((x0, y0, x1, y1)), score=round(float(score), 4)))
    return out


def recognize(crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
    """Read each RGB crop as one line of text (recognizer only, batched)."""
    if not crops:
        return []
    from rapidocr.ch_ppocr_rec import TextRecInput

    res = engine()._load_rec_model()(TextRecInput(img=list(crops)))
    return [(str(t).strip(), float(s)) for t, s in zip(res.txts or [], res.scores)]


def _is_vertical(b: Box) -> bool:
    return (b[3] - b[1]) > 1.8 * (b[2] - b[0])


def role_of(item: OcrText, neighbours: Sequence[OcrText], width: int, height: int) -> OcrRole:
    """Guess one text box's role from its text and where it sits among the others."""
    text = item.text.strip()
    x0, y0, x1, y1 = item.bbox
    h = max(1.0, min(y1 - y0, x1 - x0))
    if panel_letter(text) and h < 0.12 * min(width, height) + 12 and not _is_vertical(item.bbox):
        return "panel_label"
    if _SCALE_RE.match(text):
        return "scale_bar"
    if _NUMBER_RE.match(text.replace(" ", "")):
        return "tick_label"
    words = len(text.split())
    if _is_vertical(item.bbox) and len(text) > 2:
        return "axis_title"
    # An axis title sits next to (below or left of) a run of tick labels.
    ticks = [n for n in neighbours if n is not item and _NUMBER_RE.match(n.text.replace(" ", ""))]
    cx = (x0 + x1) / 2
    for t in ticks:
        tx0, ty0, tx1, ty1 = t.bbox
        below = 0 <= y0 - ty1 < 3 * h and tx0 - 4 * h < cx < tx1 + 4 * h
        if below and len(text) > 2:
            return "axis_title"
    if words <= 4 and len(text) <= 30:
        return "legend"
    return "other"


def assign_roles(items: list[OcrText], width: int, height: int) -> list[OcrText]:
    """Set ``role`` on every item (in place) and return the list."""
    for it in items:
        it.role = role_of(it, items, width, height)
    return items


def panel_letter(text: str) -> Optional[str]:
    """The lower-case letter of a panel label such as 'a', '(B)', 'c.' or None."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text.strip()) if not unicodedata.combining(c))
    m = g.LONE_LABEL.match(plain)
    return m.group(1).lower() if m else None

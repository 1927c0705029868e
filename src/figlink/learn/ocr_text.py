"""OCR text of a figure image for the matcher and the lexical baseline (rapidocr, via figlink.vision.ocr).

Each image is read at most :data:`OCR_SIDE` pixels on its longest side. The matcher's engine has its
detector scale the shorter side to :data:`DET_SIDE` (480) rather than rapidocr's 736: on OpenStax
figures that is 2.3x less CPU per image (0.68 vs 1.55 s) and 72% of the lines read are identical
(the rest are mostly the same words grouped differently). Lines are kept as
``{"text", "bbox", "score"}`` in reading order (top to bottom), and the feature cache stores them, so
later stages (captioning) get the boxes too.
"""

from __future__ import annotations

import threading

import numpy as np
from PIL import Image

OCR_SIDE = 900
DET_SIDE = 480
OCR_KIND = f"ocr/rapidocr3/{OCR_SIDE}/det{DET_SIDE}/v1"

_engine = None
_lock = threading.Lock()


def _ocr():
    global _engine
    with _lock:
        if _engine is None:
            from figlink.vision.ocr import make_engine

            _engine = make_engine(DET_SIDE)
    return _engine


def ocr_lines(im: Image.Image) -> list[dict]:
    """The text lines read in an RGB image: ``[{"text", "bbox": [x0, y0, x1, y1], "score"}]``."""
    from figlink.vision.ocr import read_text

    if max(im.size) > OCR_SIDE:
        f = OCR_SIDE / max(im.size)
        im = im.resize((max(1, round(im.width * f)), max(1, round(im.height * f))), Image.Resampling.BILINEAR)
    return [{"text": t.text, "bbox": [round(v, 1) for v in t.bbox], "score": t.score}
            for t in read_text(np.asarray(im), ocr=_ocr())]


def ocr_string(lines: list[dict]) -> str:
    """The lines joined into one text (what is embedded and what BM25 indexes)."""
    return " ".join(str(line.get("text", "")) for line in lines).strip()

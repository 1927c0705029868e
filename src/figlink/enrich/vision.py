"""The vision stage: panels (+ labels, subcaptions), OCR and figure type of a figure's image.

:func:`enrich_vision` is the stage (a figure in, a new figure out); :func:`analyze_figure` runs the image
analysis of :mod:`figlink.vision` on one image and aligns the panels with the caption's subcaptions:

``analyze_figure(image, caption_split=None, expected_panels=None) -> FigureVision``

- ``image``: a path or a PIL image (any mode; huge images are downscaled while reading).
- ``caption_split``: the figure's :class:`CaptionSplit`; its labels restrict which letters count as
  panel labels, its count is the expected panel count, and its subcaptions are aligned to panels.
- ``expected_panels``: panel count prior when no split is given (e.g. from caption cues).

Boxes in the result are pixels of the original image. Models (OCR, EfficientNet-Lite0, the type
head) are loaded once per process on first use. Bad images raise :class:`figlink.errors.InputError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

import numpy as np
from PIL import Image

from figlink.enrich.align import align, printed_letters
from figlink.enrich.stage import Enriched
from figlink.errors import FiglinkError
from figlink.images import ImageFolder
from figlink.model import Box, CaptionSplit, Figure, FigureType, OcrText, Panel, subcaption_text
from figlink.text import grammar as g
from figlink.text.keywords import is_strong_signal
from figlink.vision.figtype import is_medical
from figlink.vision.image_io import ImageLike, read_image, to_gray
from figlink.vision.labels import read_labels
from figlink.vision.ocr import assign_roles, panel_letter, read_text
from figlink.vision.panels import detect_panels, pieces
from figlink.vision.segment import background_level, is_core, merge_fragments

WORK_SIDE = 900  # longest side the analysis runs at (OCR cost grows with it)


@dataclass
class FigureVision:
    """What the vision stage found in one figure image."""

    panels: list[Panel] = field(default_factory=list)
    ocr: list[OcrText] = field(default_factory=list)
    figure_type: Optional[FigureType] = None
    is_compound: bool = False
    width: int = 0
    height: int = 0
    type_ranking: list[tuple[str, float]] = field(default_factory=list)
    caption_split: Optional[CaptionSplit] = None  # what the panels' subcaption indices point into

    def subcaption(self, panel: Panel) -> Optional[str]:
        """The text of the subcaptions aligned with ``panel``."""
        return subcaption_text(self.caption_split, panel.subcaption_indices)

    def to_dict(self) -> dict[str, Any]:
        return {"width": self.width, "height": self.height, "is_compound": self.is_compound,
                "panels": [p.to_dict(self) for p in self.panels], "ocr": [o.to_dict() for o in self.ocr],
                "figure_type": None if self.figure_type is None else self.figure_type.to_dict()}


def caption_remnant_top(texts: list[OcrText], height: int) -> Optional[float]:
    """Top of a caption line ("Figure 4. …") read in the bottom third of the image, if any."""
    tops = [t.bbox[1] for t in texts if g.CAPTION_OPENER.match(t.text) and t.bbox[1] > 0.66 * height]
    return min(tops) if tops else None


def _scale_box(b: Box, s: float, w: int, h: int) -> Box:
    """``b`` scaled by ``s``, clipped to a ``w`` x ``h`` image, rounded to 0.1 px."""
    x0, y0, x1, y1 = b
    return Box.pixels((round(min(max(x0 * s, 0), w), 1), round(min(max(y0 * s, 0), h), 1),
                       round(min(max(x1 * s, 0), w), 1), round(min(max(y1 * s, 0), h), 1)))


def analyze_figure(image: ImageLike, caption_split: Optional[CaptionSplit] = None,
                   expected_panels: Optional[int] = None, *, ocr: bool = True,
                   classify: bool = True) -> FigureVision:
    """Run panel detection, OCR, label reading, figure typing and alignment on one figure image."""
    rgb_im, (orig_w, orig_h) = read_image(image)
    work = rgb_im
    if max(work.size) > WORK_SIDE:
        f = WORK_SIDE / max(work.size)
        work = work.resize((max(1, round(work.width * f)), max(1, round(work.height * f))), Image.Resampling.BILINEAR)
    scale = orig_w / work.width
    rgb = np.asarray(work)
    gray = to_gray(work)
    H, W = gray.shape

    allowed = printed_letters(caption_split) or None
    expected = len(allowed) if allowed else expected_panels
    texts = assign_roles(read_text(rgb), W, H) if ocr and min(W, H) >= 8 else []

    raw = pieces(gray) if min(W, H) >= 4 else []
    cut = caption_remnant_top(texts, H)
    if cut is not None:  # figures cropped from PDFs often keep the first caption line: leave it out
        raw = [(b[0], b[1], b[2], min(b[3], int(cut) - 2)) for b in raw if b[1] < cut - 2] or raw
    regions = (merge_fragments(raw, W, H) or [(0, 0, W, H)]) + [b for b in raw if is_core(b, W, H)]
    labels = read_labels(rgb, gray, regions, background_level(gray), texts, allowed) if ocr and raw else []
    panels = detect_panels(gray, labels, expected, raw) if raw else [Panel(None, Box.pixels((0, 0, W, H)))]
    panels = align(panels, caption_split)

    for t in texts:
        if panel_letter(t.text) and any(p.label == panel_letter(t.text) for p in panels):
            t.role = "panel_label"
    ftype: Optional[FigureType] = None
    ranking: list[tuple[str, float]] = []
    if classify:
        from figlink.vision.figtype import classify_panels

        ftype, ranking = classify_panels(work, [p.bbox.xyxy() for p in panels], texts)
    for p in panels:
        p.bbox = _scale_box(p.bbox, scale, orig_w, orig_h)
    for t in texts:
        t.bbox = _scale_box(t.bbox, scale, orig_w, orig_h)
    return FigureVision(panels=panels, ocr=texts, figure_type=ftype, is_compound=len(panels) > 1,
                        width=orig_w, height=orig_h, type_ranking=ranking, caption_split=caption_split)


def enrich_vision(figure: Figure, images: ImageFolder) -> Enriched:
    """A copy of ``figure`` with panels (aligned with its subcaptions), OCR and figure type from its image
    (``images.path(figure.image)``); a figure without an image file is returned as it is.

    An image that cannot be analysed leaves the figure's fields as they were and gives a warning. Stage 2
    of the medical filter (MedICaT) keeps a keyword hit only when a medical type ranks in the top 4 or the
    caption names an imaging modality (a strong signal the image head must not veto).
    """
    if not figure.image:
        return Enriched(figure)
    path = images.path(figure.image)
    if not path.is_file():
        return Enriched(figure)
    try:
        fv = analyze_figure(path, caption_split=figure.caption_split, expected_panels=figure.expected_panels)
    except FiglinkError as e:
        return Enriched(figure, (f"{figure.figure_id}: vision: {e}",))
    medical = figure.is_medical
    if medical is not None and fv.type_ranking:
        medical = is_medical(fv.type_ranking, medical, strong=is_strong_signal(figure.medical_keywords or ()))
    return Enriched(replace(figure, panels=fv.panels, ocr=fv.ocr, figure_type=fv.figure_type,
                            is_compound=bool(figure.is_compound) or fv.is_compound, is_medical=medical))

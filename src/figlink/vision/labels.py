"""Panel labels ('a', '(B)', …): find small isolated glyph groups near panel corners and read them.

Full-page OCR misses most lone letters, so candidates come from connected components (dark ink on a
light background, or light ink on a dark photo), grouped into short "words" and read with the OCR
recognizer alone. Labels the full OCR did read are added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np
from scipy import ndimage

from figlink.model import OcrText
from figlink.vision.ocr import panel_letter, recognize
from figlink.vision.segment import Box, box_gap


# Glyphs the recognizer returns for a lone lower-case l (kept only if 'l' fits the label sequence).
_CONFUSABLE = {"1": "l", "|": "l", "!": "l"}
_SAME_SHAPE = set("cosuvwxz")


@dataclass
class Label:
    """A panel letter read in the image, with its box and recognizer confidence."""

    letter: str
    box: Box
    score: float
    upper: bool = False  # as printed (for case consistency)
    corner: float = 0.0  # distance to the nearest region top-left corner, in region diagonals


def _components(mask: np.ndarray) -> list[Box]:
    lab, _ = ndimage.label(mask, structure=np.ones((3, 3), bool))
    out = []
    for sl in ndimage.find_objects(lab):
        if sl is not None:
            out.append((sl[1].start, sl[0].start, sl[1].stop, sl[0].stop))
    return out


def _words(glyphs: list[Box]) -> list[Box]:
    """Group glyph boxes of similar height that sit close on one line; keep groups of 1–3 glyphs."""
    glyphs = sorted(glyphs)
    used = [False] * len(glyphs)
    words = []
    for i, g in enumerate(glyphs):
        if used[i]:
            continue
        members = [g]
        used[i] = True
        h = g[3] - g[1]
        for j in range(i + 1, len(glyphs)):
            if used[j]:
                continue
            o = glyphs[j]
            cur = (min(m[0] for m in members), min(m[1] for m in members),
                   max(m[2] for m in members), max(m[3] for m in members))
            same_line = min(cur[3], o[3]) - max(cur[1], o[1]) > 0.4 * min(h, o[3] - o[1])
            if same_line and 0 <= o[0] - cur[2] < 0.6 * h:
                members.append(o)
                used[j] = True
        if len(members) <= 3:
            words.append((min(m[0] for m in members), min(m[1] for m in members),
                          max(m[2] for m in members), max(m[3] for m in members)))
    return words


def candidate_boxes(gray: np.ndarray, regions: Sequence[Box], bg: float) -> list[Box]:
    """Short glyph groups of letter size that lie near a corner of one of ``regions``."""
    H, W = gray.shape
    max_h = max(14, int(0.09 * min(H, W)))
    local = ndimage.uniform_filter(gray, size=41)  # wide enough that a light glyph barely lifts it
    masks = [gray < min(bg, 255) - 90, (gray > 180) & (gray - local > 60)]
    found: list[Box] = []
    for mask in masks:
        glyphs = []
        for b in _components(mask):
            w, h = b[2] - b[0], b[3] - b[1]
            if 6 <= h <= max_h and 1 <= w <= 1.6 * h:
                glyphs.append(b)
        if len(glyphs) > 4000:
            glyphs = glyphs[:4000]
        for wd in _words(glyphs):
            w, h = wd[2] - wd[0], wd[3] - wd[1]
            if w > 2.6 * h:
                continue
            if _near_corner(wd, regions, h):
                found.append(wd)
    return found


def _near_corner(word: Box, regions: Sequence[Box], h: int) -> bool:
    cx, cy = (word[0] + word[2]) / 2, (word[1] + word[3]) / 2
    for r in regions:
        reach = max(3 * h, 0.15 * min(r[2] - r[0], r[3] - r[1]))
        for x, y in ((r[0], r[1]), (r[0], r[3])):  # labels sit at a panel's left corners
            if abs(cx - x) <= reach and abs(cy - y) <= reach:
                return True
    return False


def _crop(rgb: np.ndarray, b: Box) -> np.ndarray:
    h = b[3] - b[1]
    pad = max(2, int(0.35 * h))
    H, W = rgb.shape[:2]
    return rgb[max(0, b[1] - pad):min(H, b[3] + pad), max(0, b[0] - pad):min(W, b[2] + pad)]


def read_labels(rgb: np.ndarray, gray: np.ndarray, regions: Sequence[Box], bg: float,
                ocr_items: Iterable[OcrText] = (), allowed: Optional[set[str]] = None,
                min_score: float = 0.45) -> list[Label]:
    """Panel labels in the image: candidates near region corners read by the recognizer, plus OCR hits."""
    ocr_items = list(ocr_items)
    boxes = [b for b in candidate_boxes(gray, regions, bg) if not _inside_running_text(b, ocr_items)]
    labels: list[Label] = []
    for b, (text, score) in zip(boxes, recognize([_crop(rgb, b) for b in boxes])):
        letter = panel_letter(text) or _CONFUSABLE.get(text.strip("()."))
        if letter and score >= min_score:
            labels.append(Label(letter, b, score if panel_letter(text) else 0.8 * score, text.strip("().").isupper(),
                                _corner_distance(b, regions)))
    for it in ocr_items:
        letter = panel_letter(it.text)
        x0, y0, x1, y1 = (int(round(v)) for v in it.bbox)
        b = (x0, y0, x1, y1)
        if letter and (it.score or 1.0) >= min_score and _near_corner(b, regions, b[3] - b[1]):
            labels.append(Label(letter, b, float(it.score or 1.0), it.text.strip("().").isupper(),
                                _corner_distance(b, regions)))
    return _consistent(labels, allowed)


def _corner_distance(b: Box, regions: Sequence[Box]) -> float:
    """Distance from the box centre to the nearest left corner of a region, in region diagonals."""
    cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    return min((min(float(np.hypot(cx - r[0], cy - r[1])), float(np.hypot(cx - r[0], cy - r[3])))
                / max(1.0, float(np.hypot(r[2] - r[0], r[3] - r[1]))) for r in regions), default=1.0)


def _inside_running_text(b: Box, items: Sequence[OcrText]) -> bool:
    """Is the glyph group part of a longer OCR text line (and not its leading label, as in "a Zone axis")?"""
    for it in items:
        x0, y0, x1, y1 = it.bbox
        text = it.text.strip()
        if len(text) <= 3 or (y1 - y0) > 2 * max(1, b[3] - b[1]) or (y1 - y0) > 1.5 * (x1 - x0):
            continue  # short, much taller than the glyph, or vertical (an axis title beside a label)
        inter = max(0, min(b[2], x1) - max(b[0], x0)) * max(0, min(b[3], y1) - max(b[1], y0))
        if inter < 0.5 * max(1, (b[2] - b[0]) * (b[3] - b[1])):
            continue
        leading = b[0] - x0 < 0.5 * (b[3] - b[1]) and (panel_letter(text.split(" ")[0]) is not None)
        if not leading:
            return True
    return False


def _consistent(labels: list[Label], allowed: Optional[set[str]]) -> list[Label]:
    """Drop duplicates (same place), letters not in the caption, and repeated letters (keep the best)."""
    if allowed:
        labels = [l for l in labels if l.letter in allowed]
    kept: list[Label] = []
    for l in sorted(labels, key=lambda l: -l.score):
        if any(box_gap(l.box, k.box) == 0 for k in kept):
            continue
        kept.append(l)
    if kept:
        shaped = [l for l in kept if l.letter not in _SAME_SHAPE]  # c/C, o/O … say nothing about case
        upper = sum(l.upper for l in shaped) > len(shaped) / 2 if shaped else False
        kept = [l for l in kept if l.upper == upper or l.letter in _SAME_SHAPE
                or l.letter not in {k.letter for k in kept if k.upper == upper}]
    best: dict[str, Label] = {}
    for l in kept:  # one place per letter: the one nearest a region's top-left corner
        if l.letter not in best or (l.corner, -l.score) < (best[l.letter].corner, -best[l.letter].score):
            best[l.letter] = l
    out = list(best.values())
    if not allowed and out:
        # Without a caption, trust the longest run of consecutive letters starting early in the
        # alphabet (stray single letters inside plots are common).
        present = {l.letter for l in out}
        run = (0, 0)  # (first letter's code, length) of the longest run
        for start in range(ord("a"), ord("e")):
            n = 0
            while chr(start + n) in present:
                n += 1
            if n > run[1]:
                run = (start, n)
        start, n = run
        keep = {chr(start + i) for i in range(n)} if n >= 2 or (n == 1 and start == ord("a")) else set()
        out = [l for l in out if l.letter in keep]
    return sorted(out, key=lambda l: l.letter)

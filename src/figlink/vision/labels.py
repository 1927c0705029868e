"""Panel labels ('a', '(B)', …): find small isolated glyph groups near panel corners and read them.

Full-page OCR misses most lone letters, so candidates come from connected components (dark ink on a
light background, or light ink on a dark photo), grouped into short "words" and read with the OCR
recognizer alone. Labels the full OCR did read are added.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np
from scipy import ndimage

from figlink import model
from figlink.model import OcrText
from figlink.text import grammar as g
from figlink.vision.ocr import panel_letter, recognize
from figlink.vision.segment import Box, box_gap, center, reading_order


# What the recognizer returns for one vertical stroke: an upper-case I or a lower-case l (which of them,
# the caption's letters and the case of the other labels decide).
_STROKE = {"1", "|", "!"}
_SAME_SHAPE = set("cosuvwxz")


@dataclass
class Label:
    """A panel letter read in the image, with its box and recognizer confidence."""

    letter: str
    box: Box
    score: float
    upper: bool = False  # as printed (for case consistency)
    corner: float = 0.0  # distance to the nearest region anchor, in region diagonals
    anchor: str = "top-left"  # which anchor of its region the label sits at (its layout style)
    stroke: bool = False  # read as one vertical stroke ("1", "|"): I or l, as the other labels' case says


# Where panel labels are printed relative to their panel: a left corner (journals) or centred under or
# above it (textbooks: "(a)" below each photo). A figure uses one style for all its labels.
ANCHORS = ("top-left", "bottom-left", "bottom-center", "top-center")
SAME_SIZE = (0.6, 1.7)  # height ratios of labels printed alike (OCR boxes are padded, glyph boxes tight)
CENTRED_REACH = 0.35  # how far (in panel heights) a centred label may sit from the panel's edge


def anchor_point(region: Box, anchor: str) -> tuple[float, float]:
    """The point of ``region`` that a label of style ``anchor`` sits at."""
    x0, y0, x1, y1 = region
    x = x0 if anchor.endswith("left") else (x0 + x1) / 2
    return x, (y0 if anchor.startswith("top") else y1)


def _components(mask: np.ndarray) -> list[Box]:
    return _labelled(mask)[1]


def _labelled(mask: np.ndarray) -> tuple[np.ndarray, list[Box]]:
    """The 8-connected components of ``mask``: its label image and each component's box."""
    lab, _ = ndimage.label(mask, structure=np.ones((3, 3), bool))
    slices = [sl for sl in ndimage.find_objects(lab) if sl is not None]
    return lab, [(sl[1].start, sl[0].start, sl[1].stop, sl[0].stop) for sl in slices]


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
    return [w for w in glyph_words(gray, bg) if _near_corner(w, regions, w[3] - w[1])]


GLYPH_WIDTH = 1.6  # widest glyph of a label, over its height
WORD_WIDTH = 2.6  # widest glyph group a label may be ("(a)", "B."), over its height


def glyph_words(gray: np.ndarray, bg: float) -> list[Box]:
    """Short glyph groups of letter size anywhere in the image (dark on light, or light on a photo)."""
    H, W = gray.shape
    max_h = max(14, int(0.09 * min(H, W)))
    found: list[Box] = []
    for mask in ink_masks(gray, bg):
        glyphs = []
        for b in _components(mask):
            w, h = b[2] - b[0], b[3] - b[1]
            if 6 <= h <= max_h and 1 <= w <= GLYPH_WIDTH * h:
                glyphs.append(b)
        if len(glyphs) > 4000:
            glyphs = glyphs[:4000]
        for wd in _words(glyphs):
            w, h = wd[2] - wd[0], wd[3] - wd[1]
            if w <= WORD_WIDTH * h:
                found.append(wd)
    return found


def ink_masks(gray: np.ndarray, bg: float) -> tuple[np.ndarray, np.ndarray]:
    """Where glyphs may be: dark ink on a light background, and light ink on a darker photo."""
    local = ndimage.uniform_filter(gray, size=41)  # wide enough that a light glyph barely lifts it
    return gray < min(bg, 255) - 90, (gray > 180) & (gray - local > 60)


def _near_corner(word: Box, regions: Sequence[Box], h: int) -> bool:
    """Does the glyph group sit near one of the label anchors of a region?"""
    cx, cy = (word[0] + word[2]) / 2, (word[1] + word[3]) / 2
    for r in regions:
        reach = max(3 * h, 0.15 * min(r[2] - r[0], r[3] - r[1]))
        for a in ANCHORS:
            x, y = anchor_point(r, a)
            rx, ry = reach, reach
            if a.endswith("center"):  # centred under/over the panel, maybe below its own caption-like text
                rx, ry = max(1.5 * h, 0.05 * (r[2] - r[0])), max(reach, CENTRED_REACH * (r[3] - r[1]))
            if abs(cx - x) <= rx and abs(cy - y) <= ry:
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
    words = [b for b in glyph_words(gray, bg) if not _inside_running_text(b, ocr_items)]
    ocr_boxes = [(it, _pixel_box(it.bbox)) for it in ocr_items] + _leading_letters(ocr_items)

    def near(b: Box) -> bool:
        return _near_corner(b, regions, b[3] - b[1])

    labels = _read(rgb, [b for b in words if near(b)], [(it, b) for it, b in ocr_boxes if near(b)],
                   regions, min_score)
    found = _consistent(labels, allowed)
    if len(found) >= 3:  # labels are printed alike: a letter far off the others' size is plot text
        ref = _median_height(found)
        labels = [l for l in labels if _about(l.box[3] - l.box[1], ref, SAME_SIZE)]
        found = _consistent(labels, allowed)
    if allowed and len(found) < len(allowed):
        # letters the full OCR read that line up with another such letter are labels wherever they are
        # (panels that touch leave no region corner to search near)
        far = _read(rgb, [], [(it, b) for it, b in ocr_boxes if not near(b)], regions, min_score)
        far = [l for l in far if l.letter in allowed
               and any(k.letter != l.letter and _lined_up(l, k) for k in far + found)]
        if far:
            labels += far
            found = _consistent(labels, allowed)
    if allowed and found and len(found) < len(allowed):
        # Labels share one style: letters of the size of those read, on their row or column, are
        # labels too even away from a detected region's corner (panels the XY-cut could not part).
        labels += _read(rgb, [b for b in words if not near(b) and _aligned(b, found)],
                        [(it, b) for it, b in ocr_boxes if not near(b) and _aligned(b, found)], regions, min_score)
        found = _consistent(labels, allowed)
    if allowed and 2 <= len(found) < len(allowed):
        found = _consistent(labels + _by_sequence(found, ocr_boxes, allowed, regions), allowed)
    if allowed and 2 <= len(found) < len(allowed):
        found = sorted(found + _by_glyph(rgb, gray, bg, found, allowed, ocr_items, regions), key=lambda l: l.letter)
    if allowed and len(found) < len(allowed):
        found = _by_parentheses(ocr_items, allowed, regions) or found
    return found


GLYPH_SIZE = (0.5, 1.25)  # a lone glyph's height over the labels' (their boxes may be OCR-padded)


def _median_height(labels: Sequence[Label]) -> float:
    return float(np.median([l.box[3] - l.box[1] for l in labels]))


def _about(h: float, ref: float, ratio: tuple[float, float]) -> bool:
    return ratio[0] * ref <= h <= ratio[1] * ref


def _by_glyph(rgb: np.ndarray, gray: np.ndarray, bg: float, found: Sequence[Label], allowed: set[str],
              items: Sequence[OcrText], regions: Sequence[Box]) -> list[Label]:
    """Labels no corner, row or column search reached (inside a plot area, away from the others): a
    short glyph group anywhere, its glyphs of the labels' size and not inside a word the OCR read, read on its
    own (the ink around it blanked) as a missing caption letter in the labels' case; a vertical stroke
    is I in upper-case labels, l in lower-case ones. Taken only when one group alone reads as that
    letter, or one alone of those lines up with the labels read."""
    missing = allowed - {l.letter for l in found}
    ref = _median_height(found)
    upper = _upper_case(found)
    boxes, crops = [], []
    for mask in ink_masks(gray, bg):
        lab, glyphs = _labelled(mask)
        glyphs = [b for b in glyphs
                  if _about(b[3] - b[1], ref, GLYPH_SIZE) and b[2] - b[0] <= GLYPH_WIDTH * (b[3] - b[1])]
        for w in _words(glyphs):
            if (w[2] - w[0] > WORD_WIDTH * (w[3] - w[1]) or any(box_gap(w, l.box) == 0 for l in found)
                    or _in_words(w, items)):
                continue
            boxes.append(w)
            crops.append(_lone_word(rgb, lab, w))
    hits: dict[str, list[Label]] = {}
    for b, (text, score) in zip(boxes, recognize(crops)):
        core = text.strip("().")
        stroke = core in _STROKE | {"I", "l"}
        letter = ("i" if upper else "l") if stroke else panel_letter(text)
        if letter in missing and score >= 0.8 and (stroke or letter in _SAME_SHAPE or core.isupper() == upper):
            hits.setdefault(letter, []).append(Label(letter, b, 0.5 * score, upper, *_corner_distance(b, regions)))
    out = []
    for letter, cands in hits.items():
        if len(cands) > 1:
            cands = [c for c in cands if any(_lined_up(c, l) for l in found)]
        if len(cands) == 1:
            out.append(cands[0])
    return out


def _in_words(b: Box, items: Sequence[OcrText]) -> bool:
    """Is most of ``b`` inside an OCR item longer than one label glyph (a word, upright or rotated)?"""
    return any(len(it.text.strip().strip("().")) > 1 and _mostly_inside(b, it.bbox) for it in items)


def _mostly_inside(b: Box, other: "model.Box") -> bool:
    """Does at least half of ``b`` lie inside ``other``?"""
    inter = max(0, min(b[2], other[2]) - max(b[0], other[0])) * max(0, min(b[3], other[3]) - max(b[1], other[1]))
    return inter >= 0.5 * max(1, (b[2] - b[0]) * (b[3] - b[1]))


def _lone_word(rgb: np.ndarray, lab: np.ndarray, w: Box) -> np.ndarray:
    """A crop around the glyph group ``w`` with every ink not wholly inside ``w`` (components of the
    label image ``lab``) blanked to the crop's background colour."""
    pad = max(3, int(0.5 * (w[3] - w[1])))
    H, W = lab.shape
    y0, y1, x0, x1 = max(0, w[1] - pad), min(H, w[3] + pad), max(0, w[0] - pad), min(W, w[2] + pad)
    crop = rgb[y0:y1, x0:x1].copy()
    comp = lab[y0:y1, x0:x1]
    inner = np.unique(lab[w[1]:w[3], w[0]:w[2]])
    outer = np.unique(np.concatenate([comp[:w[1] - y0].ravel(), comp[w[3] - y0:].ravel(),
                                      comp[:, :w[0] - x0].ravel(), comp[:, w[2] - x0:].ravel()]))
    own = ndimage.binary_dilation(np.isin(comp, np.setdiff1d(inner[inner > 0], outer)), iterations=2)
    blank = (comp == 0) & ~own
    crop[~own] = np.median(crop[blank], axis=0) if blank.any() else 255
    return crop


def _by_parentheses(items: Sequence[OcrText], allowed: set[str], regions: Sequence[Box]) -> list[Label]:
    """Labels named by their order: when the OCR holds exactly as many parenthesized one-glyph items
    ("(a)", "(8)" misread for "(b)") as the caption names labels, all of a size and each lined up with
    another, they are the labels in reading order (rows top to bottom, each left to right), provided
    every one read as a caption letter is the letter its place gives it."""
    marks = [(it, _pixel_box(it.bbox)) for it in items if g.PAREN_GLYPH.match(it.text.strip())]
    if len(marks) != len(allowed) or len(marks) < 2:
        return []
    probes = [Label("?", b, 0.5) for _, b in marks]
    if not all(any(_lined_up(p, q) for q in probes if q is not p) for p in probes):
        return []
    h = float(np.median([b[3] - b[1] for _, b in marks]))  # tops at most one label height apart share a row
    ordered = [marks[i] for i in reading_order([(b[1], b[0]) for _, b in marks], float(np.nextafter(h, np.inf)))]
    out = []
    for letter, (it, b) in zip(sorted(allowed), ordered):
        read = panel_letter(it.text)
        if read in allowed and read != letter:
            return []
        out.append(Label(letter, b, float(it.score or 1.0) if read == letter else 0.5,
                         it.text.strip("()").isupper(), *_corner_distance(b, regions)))
    return out


_LABEL_SHAPE = re.compile(r"^\(?[^\s()]\)?$")


def _by_sequence(found: Sequence[Label], ocr_boxes: Sequence[tuple[OcrText, Box]], allowed: set[str],
                 regions: Sequence[Box]) -> list[Label]:
    """Misread labels ("(6)" for "(b)") named by their place: a label-shaped item lined up with two or
    more labels read, alone between two of them in their row (or column), is the one letter the
    caption has between theirs; past the row's end, the next (previous) letter."""
    order = sorted(allowed)
    have = {l.letter for l in found}
    out: list[Label] = []
    for it, b in ocr_boxes:
        if not _LABEL_SHAPE.match(it.text.strip()) or panel_letter(it.text) in have:
            continue
        probe = Label("?", b, 0.5)
        line = [l for l in found if _lined_up(probe, l)]
        if len(line) < 2:
            continue
        along = 0 if max(l.box[0] for l in line) - min(l.box[0] for l in line) >= \
            max(l.box[1] for l in line) - min(l.box[1] for l in line) else 1
        pos = b[along]
        before = [l for l in line if l.box[along] < pos]
        after = [l for l in line if l.box[along] > pos]
        # at the row's end: the letter next in the caption's order past the last one read
        lo = max(before, key=lambda l: l.box[along]).letter if before else None
        hi = min(after, key=lambda l: l.box[along]).letter if after else None
        if lo is None and hi is None:
            continue
        if lo is None:
            between = [c for c in order if hi is not None and c < hi][-1:]
        elif hi is None:
            between = [c for c in order if c > lo][:1]
        else:
            between = [c for c in order if lo < c < hi]
        if len(between) == 1 and between[0] not in have:
            out.append(Label(between[0], b, 0.5, it.text.strip("()").isupper(), *_corner_distance(b, regions)))
    return out


def _pixel_box(b: "model.Box") -> Box:
    return int(round(b[0])), int(round(b[1])), int(round(b[2])), int(round(b[3]))


def _leading_letters(items: Sequence[OcrText]) -> list[tuple[OcrText, Box]]:
    """The lone letter that opens an OCR line ("b time together"): a label printed before a panel title.
    Its box is the line's share of the letter's characters."""
    out: list[tuple[OcrText, Box]] = []
    for it in items:
        text = it.text.strip()
        first, _, rest = text.partition(" ")
        if not rest or panel_letter(first) is None:
            continue
        x0, y0, x1, y1 = it.bbox
        if (y1 - y0) > (x1 - x0):
            continue  # vertical line: an axis title
        x1 = x0 + (x1 - x0) * (len(first) + 0.5) / len(text)
        out.append((OcrText(text=first, bbox=it.bbox, score=0.9 * float(it.score or 1.0)),
                    (int(x0), int(y0), int(round(x1)), int(y1))))
    return out


def _read(rgb: np.ndarray, boxes: Sequence[Box], ocr_hits: Sequence[tuple[OcrText, Box]],
          regions: Sequence[Box], min_score: float) -> list[Label]:
    """Panel letters among glyph groups (read by the recognizer) and full-OCR hits."""
    labels: list[Label] = []
    for b, (text, score) in zip(boxes, recognize([_crop(rgb, b) for b in boxes])):
        core, letter = text.strip("()."), panel_letter(text)
        reads = [(letter, score, core.isupper())] if letter else \
            [("l", 0.8 * score, False), ("i", 0.8 * score, True)] if core in _STROKE else []
        labels += [Label(c, b, s, up, *_corner_distance(b, regions), stroke=not letter)
                   for c, s, up in reads if score >= min_score]
    for it, b in ocr_hits:
        letter = panel_letter(it.text)
        if letter and (it.score or 1.0) >= min_score:
            labels.append(Label(letter, b, float(it.score or 1.0), it.text.strip("().").isupper(),
                                *_corner_distance(b, regions)))
    return labels


def _aligned(b: Box, labels: Sequence[Label]) -> bool:
    """Is ``b`` the size of the labels read (:data:`SAME_SIZE`) and on the row or column of one of them?"""
    h = b[3] - b[1]
    ref = float(np.median([l.box[3] - l.box[1] for l in labels]))
    if not SAME_SIZE[0] * ref <= h <= SAME_SIZE[1] * ref:
        return False
    return any(abs(b[1] - l.box[1]) <= 0.4 * ref or abs(b[0] - l.box[0]) <= 0.4 * ref for l in labels)


def _corner_distance(b: Box, regions: Sequence[Box]) -> tuple[float, str]:
    """Distance from the box centre to the nearest anchor of a region (in region diagonals), and its name."""
    cx, cy = center(b)
    best = (1.0, "top-left")
    for r in regions:
        diag = max(1.0, float(np.hypot(r[2] - r[0], r[3] - r[1])))
        for a in ANCHORS:
            x, y = anchor_point(r, a)
            d = float(np.hypot(cx - x, cy - y)) / diag
            if d < best[0]:
                best = (d, a)
    return best


def _inside_running_text(b: Box, items: Sequence[OcrText]) -> bool:
    """Is the glyph group part of a longer OCR text line (and not its leading label, as in "a Zone axis")?"""
    for it in items:
        x0, y0, x1, y1 = it.bbox
        text = it.text.strip()
        if len(text) <= 3 or (y1 - y0) > 2 * max(1, b[3] - b[1]) or (y1 - y0) > 1.5 * (x1 - x0):
            continue  # short, much taller than the glyph, or vertical (an axis title beside a label)
        if not _mostly_inside(b, it.bbox):
            continue
        leading = b[0] - x0 < 0.5 * (b[3] - b[1]) and (panel_letter(text.split(" ")[0]) is not None)
        if not leading:
            return True
    return False


def family(anchor: str) -> str:
    """Left-corner labels are one style whichever corner is nearer (a label at a panel's top-left is
    also at the bottom-left of the panel above); centred ones keep their side."""
    return "left" if anchor.endswith("left") else anchor


def label_style(labels: Sequence[Label]) -> str:
    """The label style (anchor family) most distinct letters sit at (ties: left corners)."""
    families = ("left",) + tuple(a for a in ANCHORS if not a.endswith("left"))
    letters = {f: {l.letter for l in labels if family(l.anchor) == f} for f in families}
    return max(families, key=lambda f: (len(letters[f]), -families.index(f)))


def _lined_up(a: Label, b: Label) -> bool:
    """Do two labels look alike (heights within :data:`SAME_SIZE`) and share a row or a column?"""
    ha, hb = a.box[3] - a.box[1], b.box[3] - b.box[1]
    if not SAME_SIZE[0] * ha <= hb <= SAME_SIZE[1] * ha:
        return False
    tol = 0.5 * max(ha, hb)
    return abs(a.box[1] - b.box[1]) <= tol or abs(a.box[0] - b.box[0]) <= tol


def _one_per_letter(labels: list[Label]) -> list[Label]:
    """One place per letter: in the figure's label style, lined up with the other letters' places
    (labels form rows and columns), nearest its anchor, best read; refined once against the choice."""
    style = label_style(labels)
    letters = sorted({l.letter for l in labels})

    def pick(support) -> dict[str, Label]:
        best: dict[str, Label] = {}
        for l in labels:
            key = (family(l.anchor) != style, -support(l), l.corner, -l.score)
            b = best.get(l.letter)
            if b is None or key < (family(b.anchor) != style, -support(b), b.corner, -b.score):
                best[l.letter] = l
        return best

    best = pick(lambda l: 0)
    for _ in range(2):
        chosen = dict(best)
        best = pick(lambda l: sum(_lined_up(l, chosen[k]) for k in letters if k != l.letter))
    return list(best.values())


def _upper_case(labels: Sequence[Label]) -> bool:
    """Are the labels upper case? The case more distinct letters are printed in (stray lower-case letters
    repeat in plot text); c/C, o/O … say nothing about case."""
    shaped = [l for l in labels if l.letter not in _SAME_SHAPE]
    return len({l.letter for l in shaped if l.upper}) > len({l.letter for l in shaped if not l.upper})


def _consistent(labels: list[Label], allowed: Optional[set[str]]) -> list[Label]:
    """Drop duplicates (same place), letters not in the caption, and repeated letters (keep the best)."""
    if allowed:
        labels = [l for l in labels if l.letter in allowed]
    if any(l.stroke for l in labels) and any(not l.stroke for l in labels):
        upper = _upper_case([l for l in labels if not l.stroke])
        labels = [l for l in labels if not l.stroke or l.upper == upper]
    kept: list[Label] = []
    for l in sorted(labels, key=lambda l: -l.score):
        if any(box_gap(l.box, k.box) == 0 for k in kept):
            continue
        kept.append(l)
    if kept:
        upper = _upper_case(kept)
        kept = [l for l in kept if l.upper == upper or l.letter in _SAME_SHAPE
                or l.letter not in {k.letter for k in kept if k.upper == upper}]
    out = _one_per_letter(kept)
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

"""Compound-figure separation: XY-cut pieces grouped into panels by the labels read in the image.

Without labels, the large pieces are the panels, merged down to the caption's expected panel count
when that prior is given. Boxes are in the pixels of the array given.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from figlink import model
from figlink.model import Panel
from figlink.vision.label_grid import ink_in, label_regions
from figlink.vision.labels import Label, label_style
from figlink.vision.segment import Box, area, box_gap, center, is_core, merge_fragments, overlap_area, union, xy_cut
from figlink.vision.segment import reading_order as segment_order  # panels.reading_order wraps it for Panels


def pieces(gray: np.ndarray) -> list[Box]:
    """Raw XY-cut pieces of a grayscale figure."""
    return xy_cut(gray, min_gap=2)


def _inside(p: tuple[float, float], b: "Box | tuple[float, float, float, float]") -> bool:
    return b[0] <= p[0] <= b[2] and b[1] <= p[1] <= b[3]


def _split_by_labels(core: Box, labels: list[Label]) -> list[tuple[Box, Label]]:
    """Cut a piece holding several labels into one part per label (along the axis they spread on)."""
    labels = sorted(labels, key=lambda l: (l.box[1], l.box[0]))
    xs = [l.box[0] for l in labels]
    ys = [l.box[1] for l in labels]
    centred = label_style(labels) != "left"  # centred labels: cut halfway between them, not before each

    def cuts_along(lo: int, hi: int, axis: int) -> list[int]:
        if centred:
            mids = [(center(a.box)[axis] + center(b.box)[axis]) / 2 for a, b in zip(labels, labels[1:])]
            return [lo] + [int(m) for m in mids] + [hi]
        return [lo] + [max(lo, l.box[axis] - 2) for l in labels[1:]] + [hi]

    if max(ys) - min(ys) >= max(xs) - min(xs):
        labels.sort(key=lambda l: l.box[1])
        cuts = cuts_along(core[1], core[3], 1)
        return [((core[0], a, core[2], b), l) for a, b, l in zip(cuts[:-1], cuts[1:], labels)]
    labels.sort(key=lambda l: l.box[0])
    cuts = cuts_along(core[0], core[2], 0)
    return [((a, core[1], b, core[3]), l) for a, b, l in zip(cuts[:-1], cuts[1:], labels)]


def _centred_owner(core: Box, labels: Sequence[Label]) -> Optional[Label]:
    """For labels printed centred under (over) their panels: the nearest row of such labels below
    (above) the piece, and in it the label nearest the piece's centre line."""
    if not labels:
        return None
    mx, my = center(core)
    below = label_style(labels).startswith("bottom")
    ahead = [l for l in labels if (center(l.box)[1] >= my if below else center(l.box)[1] <= my)]
    if not ahead:
        return None
    lh = float(np.median([l.box[3] - l.box[1] for l in ahead]))
    row_y = min(center(l.box)[1] for l in ahead) if below else max(center(l.box)[1] for l in ahead)
    row = [l for l in ahead if abs(center(l.box)[1] - row_y) <= lh]
    return min(row, key=lambda l: abs(center(l.box)[0] - mx))


def _centred_row(core: Box, labels: Sequence[Label]) -> list[Label]:
    """Centred labels of the nearest row below (above) ``core`` whose centres lie within its width:
    more than one means the piece is several touching panels."""
    if not labels or label_style(labels) == "left":
        return []
    below = label_style(labels).startswith("bottom")
    my = center(core)[1]
    ahead = [l for l in labels if (center(l.box)[1] >= my if below else center(l.box)[1] <= my)]
    if not ahead:
        return []
    lh = float(np.median([l.box[3] - l.box[1] for l in ahead]))
    row_y = min(center(l.box)[1] for l in ahead) if below else max(center(l.box)[1] for l in ahead)
    return [l for l in ahead if abs(center(l.box)[1] - row_y) <= lh and core[0] <= center(l.box)[0] <= core[2]]


def _holds(core: Box, label: Label) -> bool:
    """Is the label's centre in ``core`` grown by half the label (a label on the piece's edge, whose own
    ink the piece lost when labels were taken out, still belongs to it)?"""
    hw, hh = (label.box[2] - label.box[0]) / 2, (label.box[3] - label.box[1]) / 2
    return _inside(center(label.box), (core[0] - hw, core[1] - hh, core[2] + hw, core[3] + hh))


def _at_foot(label: Label, core: Box) -> bool:
    """Is a left-corner label at the very bottom of ``core`` (within two label heights)? It heads the
    panel below, printed where no gutter parts it from this one."""
    return center(label.box)[1] >= core[3] - 2 * (label.box[3] - label.box[1])


def _owner(core: Box, labels: Sequence[Label], max_gap: float) -> Optional[Label]:
    """The label that heads ``core``: up and to the left of it, nearest its top-left corner."""
    w, h = core[2] - core[0], core[3] - core[1]
    best, best_d = None, float("inf")
    if label_style(labels) != "left":
        return _centred_owner(core, labels)
    for l in labels:
        cx, cy = center(l.box)
        if cx <= core[0] + 0.35 * w and cy <= core[1] + 0.35 * h:
            d = float(np.hypot(cx - core[0], cy - core[1]))
            if d < best_d:
                best, best_d = l, d
    if best is not None:
        return best
    mx, my = center(core)
    heads = [l for l in labels if center(l.box)[0] <= mx or center(l.box)[1] <= my]
    heads = [l for l in heads if center(l.box)[1] <= core[3]]
    near = min(heads, key=lambda l: box_gap(l.box, core), default=None)
    return near if near is not None and box_gap(near.box, core) <= max_gap else None


def group_by_labels(cores: list[Box], labels: Sequence[Label], width: int, height: int,
                    strict: bool = False) -> list[Panel]:
    """One panel per label: each piece joins the label inside it or the one heading it. ``strict``
    (the caption names more panels than labels were read): a piece joins only a label that heads it,
    not merely the nearest one, so the panels of unread labels stay apart."""
    parts: list[tuple[Box, Optional[Label]]] = []
    left = label_style(labels) == "left"
    for c in cores:
        inside = [l for l in labels if _holds(c, l) and not (left and _at_foot(l, c))]
        if len(inside) > 1:
            parts.extend(_split_by_labels(c, inside))
        elif len(inside) == 1:
            parts.append((c, inside[0]))
        elif len(_centred_row(c, labels)) > 1:
            parts.extend(_split_by_labels(c, _centred_row(c, labels)))
        else:
            parts.append((c, _owner(c, labels, 0.0 if strict else 0.1 * max(width, height))))
    boxes: dict[str, Box] = {}
    scores: dict[str, float] = {}
    loose: list[Box] = []
    for box, lab in parts:
        if lab is None:
            loose.append(box)
            continue
        prev = boxes.get(lab.letter)
        boxes[lab.letter] = union(prev, box) if prev else union(box, lab.box)
        scores[lab.letter] = lab.score
    panels = [Panel(label=k, bbox=model.Box.pixels(b), score=round(scores[k], 3)) for k, b in boxes.items()]
    for b in loose:
        if not any(overlap_area(b, _int_box(p.bbox)) > 0.5 * area(b) for p in panels):
            panels.append(Panel(label=None, bbox=model.Box.pixels(b), score=0.3))
    return panels


def _reconcile(panels: list[Panel], expected: int) -> list[Panel]:
    """Bring the unlabelled pieces down to the panels whose labels were not read: merged to that count,
    or, when every expected label was read, dropped (they are fragments of labelled panels)."""
    labelled = [p for p in panels if p.label]
    loose = [_int_box(p.bbox) for p in panels if not p.label]
    missing = expected - len(labelled)
    if missing <= 0 or not loose:
        return labelled or panels
    fixed = [_int_box(p.bbox) for p in labelled]
    merged = merge_to_count(loose, missing, fixed) if len(loose) > missing else loose
    return labelled + [Panel(label=None, bbox=model.Box.pixels(b), score=0.3) for b in merged]


def _int_box(b: model.Box) -> Box:
    return int(b.x0), int(b.y0), int(b.x1), int(b.y1)


def merge_to_count(boxes: list[Box], count: int, fixed: Sequence[Box] = ()) -> list[Box]:
    """Merge neighbouring boxes, smallest union first, until at most ``count`` remain (a union that
    covers other boxes, or the ``fixed`` boxes of panels already found, costs more)."""
    boxes = list(boxes)
    while len(boxes) > max(1, count):
        best = None
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                u = union(boxes[i], boxes[j])
                others = sum(overlap_area(u, boxes[k]) for k in range(len(boxes)) if k not in (i, j))
                others += sum(overlap_area(u, f) for f in fixed)
                cost = area(u) - area(boxes[i]) - area(boxes[j]) + 10 * others
                if best is None or cost < best[0]:
                    best = (cost, i, j, u)
        _, i, j, u = best  # type: ignore[misc]
        boxes = [b for k, b in enumerate(boxes) if k not in (i, j)] + [u]
    return boxes


def reading_order(panels: list[Panel], row_tol: float = 50.0) -> list[Panel]:
    """Sort by row (tops within ``row_tol`` px share a row), then left to right (MedICaT's order)."""
    return [panels[i] for i in segment_order([(p.bbox[1], p.bbox[0]) for p in panels], row_tol)]


def detect_panels(gray: np.ndarray, labels: Sequence[Label] = (), expected: Optional[int] = None,
                  raw: Optional[list[Box]] = None) -> list[Panel]:
    """Panels of one figure (grayscale array), using labels read in it and the expected count if known."""
    H, W = gray.shape
    raw = pieces(gray) if raw is None else raw
    label_boxes = [l.box for l in labels]
    body = [b for b in raw if not any(overlap_area(b, lb) >= 0.6 * area(b) for lb in label_boxes)]
    cores = merge_fragments(body, W, H)
    if expected and len(labels) == expected >= 2:
        # every label the caption names was read: their places lay out the panels
        cells = label_regions(gray, label_boxes, label_style(labels), body)
        panels = [Panel(label=l.letter, bbox=model.Box.pixels(ink_in(c, body, l.box)), score=round(l.score, 3))
                  for l, c in zip(labels, cells)]
    elif len(labels) >= 2 or (len(labels) == 1 and len(cores) <= 2):
        panels = group_by_labels(cores, labels, W, H, strict=bool(expected and expected > len(labels)))
        if expected and len(panels) > expected:
            panels = _reconcile(panels, expected)
    else:
        boxes = cores
        if expected and expected >= 1 and len(boxes) > expected:
            boxes = merge_to_count(boxes, expected)
        panels = [Panel(label=None, bbox=model.Box.pixels(b), score=0.5) for b in boxes]
    if not panels:
        panels = [Panel(label=None, bbox=model.Box.pixels((0, 0, W, H)), score=0.1)]
    return reading_order(panels)


def core_pieces(gray: np.ndarray, raw: list[Box]) -> list[Box]:
    """Large pieces only: where panel labels are searched for."""
    H, W = gray.shape
    return [b for b in raw if is_core(b, W, H)] or merge_fragments(raw, W, H)

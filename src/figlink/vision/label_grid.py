"""Panels from the places of their labels: journal figures print each label at its panel's top-left
corner, textbooks centred under (or over) it, so when every label the caption names was read, the
labels themselves lay out the panels.

The figure is cut recursively, guillotine style, until each part holds one label: every cut runs
across the whole part between labels, just before a label that heads its panel (just after one
printed under it; anywhere between two centred labels of a row), and of the cuts that part the labels
the one crossing the least ink wins (a gutter or a ruled line, not a plot). Each part is then shrunk to
the ink of the XY-cut pieces inside it. This parts panels that touch, which whitespace cuts cannot, and
tells a tall panel beside two short ones from a wide panel under two, by the ink each cut crosses.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from figlink.vision.segment import UNIFORM_TOL, Box, area, center, overlap_area, union


def _line_ink(line: np.ndarray) -> float:
    """Share of a line's pixels off its median (0 on white space and on a uniform rule)."""
    if line.size == 0:
        return 1.0
    return float(np.mean(np.abs(line - np.median(line)) > UNIFORM_TOL))


def _best_line(gray: np.ndarray, region: Box, axis: int, order: Sequence[int]) -> tuple[float, int]:
    """The blankest line across ``region`` among positions ``order`` (rows for axis 1, columns for 0),
    the earliest in ``order`` among equals: (its ink share, its position)."""
    x0, y0, x1, y1 = region
    best = (2.0, order[0])
    for pos in order:
        line = gray[pos, x0:x1] if axis == 1 else gray[y0:y1, pos]
        ink = _line_ink(line.astype(np.float32))
        if ink < best[0] - 1e-9:
            best = (ink, pos)
    return best


def _band(lo: int, hi: int, tol: int, axis: int, style: str) -> list[int]:
    """Where a cut between labels ending at ``lo`` and labels starting at ``hi`` may run, best first:
    just before the later labels (labels head their panels: left corners, or centred above), just after
    the earlier ones (labels centred under their panels), or anywhere between two centred labels of a
    row, the middle first."""
    if hi <= lo:
        return [lo]
    if axis == 1 and style == "bottom-center":
        return list(range(lo, min(hi, lo + 3 * tol) + 1))
    if axis == 0 and style != "left":
        mid = (lo + hi) // 2
        return sorted(range(lo, hi + 1), key=lambda p: abs(p - mid))
    return list(range(hi, max(lo, hi - 3 * tol) - 1, -1))


def _cuts(gray: np.ndarray, region: Box, labels: list[Box], style: str) -> Optional[tuple[Box, Box]]:
    """The cut of ``region`` between ``labels`` (each label on one side) crossing least ink."""
    best: Optional[tuple[float, Box, Box]] = None
    tol = max(b[3] - b[1] for b in labels)
    for axis in (1, 0):  # rows, then columns
        for s in sorted({b[axis] for b in labels}):
            before = [b for b in labels if b[axis] < s - tol]
            if not before or len(before) == len(labels):
                continue
            lo = max(max(b[axis + 2] for b in before), region[axis] + 1)
            hi = min(min(b[axis] for b in labels if b[axis] >= s - tol), region[axis + 2] - 1)
            ink, pos = _best_line(gray, region, axis, _band(lo, max(lo, hi), tol, axis, style))
            if best is None or ink < best[0]:
                if axis == 1:
                    a, b = (region[0], region[1], region[2], pos), (region[0], pos, region[2], region[3])
                else:
                    a, b = (region[0], region[1], pos, region[3]), (pos, region[1], region[2], region[3])
                best = (ink, a, b)
    return None if best is None else (best[1], best[2])


def label_regions(gray: np.ndarray, labels: Sequence[Box], style: str = "left") -> list[Box]:
    """One region per label box (in the order given): a guillotine tiling of the image. ``style`` is the
    labels' place (:func:`figlink.vision.labels.label_style`): "left" (corners), "top-center" or
    "bottom-center"."""
    H, W = gray.shape
    out: dict[int, Box] = {}

    def rec(region: Box, idx: list[int]) -> None:
        if len(idx) == 1:
            out[idx[0]] = region
            return
        cut = _cuts(gray, region, [labels[i] for i in idx], style)
        if cut is None:  # labels that no cut parts (overlapping): each keeps the whole region
            for i in idx:
                out[i] = region
            return
        for part in cut:
            inside = [i for i in idx if _centre_in(labels[i], part)]
            if inside:
                rec(part, inside)

    rec((0, 0, W, H), list(range(len(labels))))
    return [out.get(i, (0, 0, W, H)) for i in range(len(labels))]


def _centre_in(b: Box, r: Box) -> bool:
    cx, cy = center(b)
    return r[0] <= cx < r[2] and r[1] <= cy < r[3]


def ink_in(region: Box, pieces: Sequence[Box], label: Box) -> Box:
    """``region`` shrunk to the ink of ``pieces`` in it (their parts inside it: pieces mostly inside,
    or large ones it cuts through), always holding its ``label``."""
    out = label
    for p in pieces:
        inside = overlap_area(p, region)
        if inside and (inside >= 0.5 * area(p) or inside >= 0.1 * area(region)):
            out = union(out, (max(p[0], region[0]), max(p[1], region[1]), min(p[2], region[2]), min(p[3], region[3])))
    return out

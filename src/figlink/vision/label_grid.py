"""Panels from the places of their labels: journal figures print each label at its panel's top-left
corner, textbooks centred under (or over) it, so when every label the caption names was read, the
labels themselves lay out the panels.

The figure is cut recursively, guillotine style, until each part holds one label: every cut runs
across the whole part between labels, just before a label that heads its panel (just after one
printed under it; anywhere between two centred labels of a row), on the line of least ink in its band
(a gutter or a ruled line, not a plot). Of the layouts these cuts make, the one of least cost wins: the
ink its cuts cross plus, per label, how far it sits from its place on its panel (the panel being its
part shrunk to the ink of the XY-cut pieces inside it). The place is learned from the labels: a top or
a bottom left corner for corner labels (whichever fits the figure's labels better), the middle of the
top or bottom edge for centred ones. The labels decide where ink cannot: a tall panel beside two short
ones against a wide panel over two, a label printed inside a plot area (a strip cut beside it would
leave it half-way down its panel), a cut just under a label (its panel would be the label alone).
This parts panels that touch, which whitespace cuts cannot.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from figlink.vision.segment import UNIFORM_TOL, Box, area, center, overlap_area, union

MISPLACED = 0.2  # weight of a label off its place (panel widths + heights) against the ink share of a cut
ROOM = 2  # a panel is at least this many label widths wide and label heights tall
SEARCH_PARTS = 300  # parts whose every cut is tried; past them, a part takes its cleanest cut (the old rule)


def _best_line(gray: np.ndarray, region: Box, axis: int, order: Sequence[int]) -> tuple[float, int]:
    """The blankest line across ``region`` among positions ``order`` (rows for axis 1, columns for 0),
    the earliest in ``order`` among equals: (its ink share, its position). A line's ink is the share of
    its pixels off its median (0 on white space and on a uniform rule)."""
    x0, y0, x1, y1 = region
    pos = np.asarray(order)
    lines = (gray[pos, x0:x1] if axis == 1 else gray[y0:y1, pos].T).astype(np.float32)
    if lines.shape[1] == 0:
        return 1.0, order[0]
    ink = np.mean(np.abs(lines - np.median(lines, axis=1, keepdims=True)) > UNIFORM_TOL, axis=1)
    k = int(np.argmin(ink))
    return float(ink[k]), order[k]


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


def _cuts(gray: np.ndarray, region: Box, labels: list[Box], style: str) -> list[tuple[float, Box, Box]]:
    """Every cut of ``region`` between ``labels`` (each label on one side), one per gap between
    labels: (ink it crosses, the part before, the part after)."""
    out: dict[tuple[int, int], tuple[float, Box, Box]] = {}
    tol = max(b[3] - b[1] for b in labels)
    for axis in (1, 0):  # rows, then columns
        for s in sorted({b[axis] for b in labels}):
            before = [b for b in labels if b[axis] < s - tol]
            if not before or len(before) == len(labels):
                continue
            lo = max(max(b[axis + 2] for b in before), region[axis] + 1)
            hi = min(min(b[axis] for b in labels if b[axis] >= s - tol), region[axis + 2] - 1)
            ink, pos = _best_line(gray, region, axis, _band(lo, max(lo, hi), tol, axis, style))
            if axis == 1:
                a, b = (region[0], region[1], region[2], pos), (region[0], pos, region[2], region[3])
            else:
                a, b = (region[0], region[1], pos, region[3]), (pos, region[1], region[2], region[3])
            out.setdefault((axis, pos), (ink, a, b))
    return list(out.values())


def misplaced(label: Box, panel: Box, place: str) -> float:
    """How far ``label`` sits from ``place`` on ``panel`` (its ink box), in panel
    widths plus panel heights; ``place`` is a left corner ("top-left", "bottom-left") or the middle of
    an edge ("top-center", "bottom-center"). A panel hardly larger than its label (no room for a
    picture) counts as 1."""
    pw, ph = max(1, panel[2] - panel[0]), max(1, panel[3] - panel[1])
    lw, lh = label[2] - label[0], label[3] - label[1]
    if pw < ROOM * lw or ph < ROOM * lh:
        return 1.0
    if place.endswith("left"):
        dx = float(abs(label[0] - panel[0]))
    else:
        dx = abs((label[0] + label[2]) - (panel[0] + panel[2])) / 2
    dy = abs(label[1] - panel[1]) if place.startswith("top") else abs(label[3] - panel[3])
    return dx / pw + dy / ph


def label_regions(gray: np.ndarray, labels: Sequence[Box], style: str = "left",
                  pieces: Sequence[Box] = ()) -> list[Box]:
    """One region per label box (in the order given): the guillotine tiling of the image of least
    cost, where a layout costs the ink its cuts cross plus, per label, how far it sits from its
    style's place on its panel (:func:`misplaced`, the panel being the ink of ``pieces`` in its
    region). ``style`` is the labels' place (:func:`figlink.vision.labels.label_style`): "left"
    (corners), "top-center" or "bottom-center"."""
    H, W = gray.shape
    places = ("top-left", "bottom-left") if style == "left" else (style,)
    cuts: dict[tuple[Box, tuple[int, ...]], list[tuple[float, Box, Box]]] = {}
    best = min((_layout(gray, labels, style, place, pieces, cuts) for place in places), key=lambda r: r[0])
    return [best[1].get(i, (0, 0, W, H)) for i in range(len(labels))]


def _layout(gray: np.ndarray, labels: Sequence[Box], style: str, place: str, pieces: Sequence[Box],
            cuts: dict[tuple[Box, tuple[int, ...]], list[tuple[float, Box, Box]]]) -> tuple[float, dict[int, Box]]:
    """The least-cost guillotine layout with every label at ``place`` of its panel: (cost, region
    per label index). ``cuts`` keeps the cuts of each part (the same for every place); once it holds
    :data:`SEARCH_PARTS` parts, the search stops trying cuts and later parts take their cleanest."""
    H, W = gray.shape
    memo: dict[tuple[Box, tuple[int, ...]], tuple[float, dict[int, Box]]] = {}

    def solve(region: Box, idx: tuple[int, ...]) -> tuple[float, dict[int, Box]]:
        key = (region, idx)
        if key in memo:
            return memo[key]
        if len(idx) == 1:
            i = idx[0]
            panel = ink_in(region, pieces, labels[i])
            res: tuple[float, dict[int, Box]] = (MISPLACED * misplaced(labels[i], panel, place), {i: region})
        else:
            res = (float("inf"), {i: region for i in idx})  # labels no cut parts: each keeps the region
            if key not in cuts:
                cuts[key] = _cuts(gray, region, [labels[i] for i in idx], style)
            options = cuts[key]
            if len(cuts) > SEARCH_PARTS and options:  # scattered labels: bound the search
                options = [min(options, key=lambda o: o[0])]
            for ink, *parts in options:
                if len(cuts) > SEARCH_PARTS and res[0] < float("inf"):
                    break
                cost, cells = ink, {}
                for part in parts:
                    inside = tuple(i for i in idx if _centre_in(labels[i], part))
                    if inside:
                        c, sub = solve(part, inside)
                        cost += c
                        cells.update(sub)
                if cost < res[0]:
                    res = (cost, cells)
            if res[0] == float("inf"):
                res = (0.0, res[1])
        memo[key] = res
        return res

    return solve((0, 0, W, H), tuple(range(len(labels))))


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

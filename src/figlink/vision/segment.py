"""Classical compound-figure separation on a grayscale array: recursive XY-cuts, then fragment merging.

A *gutter* is a run of uniform rows (or columns) across a region: white space, or a separating line
of any colour. Cutting recursively at gutters yields pieces; small or thin pieces (axis titles, tick
labels, legends, stray caption lines) are then merged into the nearest large piece or dropped.
Boxes are ``(x0, y0, x1, y1)`` integer pixels, end-exclusive.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

Box = tuple[int, int, int, int]

UNIFORM_TOL = 30.0  # grey levels a pixel may differ from its row's median and still be "uniform"
UNIFORM_FRAC = 0.004  # share of pixels allowed to break uniformity (JPEG noise)
LINE_TOL = 12.0  # tolerance inside a separating line of non-background colour
MAX_LINE = 4  # thickest separating line, in pixels


def background_level(gray: np.ndarray) -> float:
    """The figure's background grey level: white when a quarter of its outer border is near white
    (frames and rules drawn on the border are common), else the border's median."""
    border = np.concatenate([gray[:2].ravel(), gray[-2:].ravel(), gray[:, :2].ravel(), gray[:, -2:].ravel()])
    white = border[border >= 225]
    if white.size >= 0.25 * border.size:
        return float(np.median(white))
    return float(np.median(border))


def _uniform_lines(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``block``: is it uniform, and its median level."""
    med = np.median(block, axis=1)
    off = np.abs(block - med[:, None]) > UNIFORM_TOL
    allowed = max(1, int(UNIFORM_FRAC * block.shape[1]))
    return off.sum(axis=1) <= allowed, med


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Start/end (exclusive) of each run of True."""
    if mask.size == 0:
        return []
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    diff = np.diff(padded)
    return list(zip(np.flatnonzero(diff == 1).tolist(), np.flatnonzero(diff == -1).tolist()))


def _trim(gray: np.ndarray, box: Box, bg: float) -> Optional[Box]:
    """Shrink ``box`` past its background-coloured border rows and columns; None when nothing is left."""
    x0, y0, x1, y1 = box
    block = gray[y0:y1, x0:x1]
    rows_u, rows_m = _uniform_lines(block)
    cols_u, cols_m = _uniform_lines(block.T)
    rows_bg = rows_u & (np.abs(rows_m - bg) < UNIFORM_TOL)
    cols_bg = cols_u & (np.abs(cols_m - bg) < UNIFORM_TOL)
    keep_r = np.flatnonzero(~rows_bg)
    keep_c = np.flatnonzero(~cols_bg)
    if keep_r.size == 0 or keep_c.size == 0:
        return None
    return (x0 + int(keep_c[0]), y0 + int(keep_r[0]), x0 + int(keep_c[-1]) + 1, y0 + int(keep_r[-1]) + 1)


def _gutter_rows(block: np.ndarray, bg: float) -> np.ndarray:
    """Rows that can separate panels: background-coloured throughout, or a thin uniform line of any colour."""
    allowed = max(1, int(UNIFORM_FRAC * block.shape[1]))
    blank = (np.abs(block - bg) > UNIFORM_TOL).sum(axis=1) <= allowed
    med = np.median(block, axis=1)
    flat = (np.abs(block - med[:, None]) > LINE_TOL).sum(axis=1) <= allowed
    lines = np.zeros_like(flat)
    for s, e in _runs(flat & ~blank):
        # split the flat run where its colour changes, so a grey rule beside a black photo is still a line
        cuts = [s] + [i for i in range(s + 1, e) if abs(med[i] - med[i - 1]) > LINE_TOL] + [e]
        for a, b in zip(cuts[:-1], cuts[1:]):
            if b - a <= MAX_LINE:
                lines[a:b] = True
    return blank | lines


def _gutters(block: np.ndarray, bg: float, min_gap: int) -> list[tuple[int, int]]:
    """Interior runs of gutter rows at least ``min_gap`` long."""
    rows = _gutter_rows(block, bg)
    return [(s, e) for s, e in _runs(rows) if s > 0 and e < len(rows) and e - s >= min_gap]


def xy_cut(gray: np.ndarray, min_gap: int, min_side: int = 4, max_depth: int = 14) -> list[Box]:
    """Recursive XY-cut of the whole image into content boxes."""
    bg = background_level(gray)
    out: list[Box] = []

    def rec(box: Box, depth: int) -> None:
        trimmed = _trim(gray, box, bg)
        if trimmed is None:
            return
        x0, y0, x1, y1 = trimmed
        if depth >= max_depth or (x1 - x0 < 2 * min_side and y1 - y0 < 2 * min_side):
            out.append(trimmed)
            return
        block = gray[y0:y1, x0:x1]
        row_gaps = _gutters(block, bg, min_gap)
        col_gaps = _gutters(block.T, bg, min_gap)
        widest_r = max((e - s for s, e in row_gaps), default=0)
        widest_c = max((e - s for s, e in col_gaps), default=0)
        if widest_r == 0 and widest_c == 0:
            out.append(trimmed)
            return
        horizontal = widest_r >= widest_c
        gaps = row_gaps if horizontal else col_gaps
        start = 0
        length = (y1 - y0) if horizontal else (x1 - x0)
        for s, e in gaps + [(length, length)]:
            if s > start:
                sub = (x0, y0 + start, x1, y0 + s) if horizontal else (x0 + start, y0, x0 + s, y1)
                rec(sub, depth + 1)
            start = e

    rec((0, 0, gray.shape[1], gray.shape[0]), 0)
    return out


def box_gap(a: Box, b: Box) -> float:
    """Distance between two boxes (0 when they touch or overlap)."""
    dx = max(0, max(a[0], b[0]) - min(a[2], b[2]))
    dy = max(0, max(a[1], b[1]) - min(a[3], b[3]))
    return float(np.hypot(dx, dy))


def union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def center(b: Box) -> tuple[float, float]:
    """The middle point ``(x, y)`` of ``b``."""
    return (b[0] + b[2]) / 2, (b[1] + b[3]) / 2


def overlap_area(a: Box, b: Box) -> int:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(0, w) * max(0, h)


def area(b: Box) -> int:
    return max(0, b[2] - b[0]) * max(0, b[3] - b[1])


def is_core(box: Box, width: int, height: int) -> bool:
    """Large enough, and not so thin, to be a panel on its own."""
    w, h = box[2] - box[0], box[3] - box[1]
    short, long_ = min(w, h), max(w, h)
    return (area(box) >= 0.012 * width * height and short >= 0.06 * min(width, height)
            and long_ <= 6 * short)


def merge_fragments(boxes: list[Box], width: int, height: int, max_gap_frac: float = 0.08) -> list[Box]:
    """Merge non-core pieces into the nearest core piece; drop those that would overlap another core."""
    cores = [b for b in boxes if is_core(b, width, height)]
    frags = sorted((b for b in boxes if not is_core(b, width, height)), key=area, reverse=True)
    if not cores:
        return [_union_all(boxes)] if boxes else []
    max_gap = max_gap_frac * max(width, height)
    changed = True
    pending = frags
    while changed and pending:
        changed = False
        left = []
        for f in pending:
            order = sorted(range(len(cores)), key=lambda i: box_gap(f, cores[i]))
            i = order[0]
            if box_gap(f, cores[i]) > max_gap:
                left.append(f)
                continue
            merged = union(cores[i], f)
            if any(overlap_area(merged, c) > 0.02 * area(c) for j, c in enumerate(cores) if j != i):
                left.append(f)
                continue
            cores[i] = merged
            changed = True
        pending = left
    return cores


def _union_all(boxes: list[Box]) -> Box:
    out = boxes[0]
    for b in boxes[1:]:
        out = union(out, b)
    return out


def reading_order(corners: Sequence[tuple[float, float]], row_tol: float) -> list[int]:
    """Indices of boxes given by their (top, left) in reading order: rows top to bottom (a top less than
    ``row_tol`` from its row's first top joins that row), each row left to right."""
    rows: list[list[int]] = []
    for i in sorted(range(len(corners)), key=lambda i: corners[i][0]):
        if rows and abs(corners[i][0] - corners[rows[-1][0]][0]) < row_tol:
            rows[-1].append(i)
        else:
            rows.append([i])
    return [i for row in rows for i in sorted(row, key=lambda i: corners[i][1])]

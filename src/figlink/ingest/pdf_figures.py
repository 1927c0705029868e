"""Figure regions on a PDF page and their captions.

Regions come from the page itself (embedded images, clusters of vector paths, the text drawn inside
them) and, where those are missing, from a layout model. Captions are matched to regions by a
bipartite (Hungarian) assignment on the distance between caption and region edges, so stray
graphics (logos, rules, tables) stay unmatched and captions above or below a figure both work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from figlink.ingest.pdf_captions import Caption
from figlink.ingest.pdf_page import MARGIN, Box, Line, PageContent, area, gap, intersection, union

_NO = 1e6
CLUSTER_GAP = 6.0  # points between elements of one figure
MIN_SIDE = 12.0  # a region smaller than this on both sides is an icon or a bullet
MAX_CAPTION_GAP = 0.35  # of the page height, between a caption and its figure
GROW_GAP = 48.0  # points: panels of one figure set this far apart (with only their subcaptions between)


@dataclass
class Region:
    """A candidate figure region on a page."""

    box: Box
    source: str  # "graphics" | "layout"
    score: float = 1.0


def body_width(lines: list[Line]) -> float:
    """Width of a full line of body text on this page (a high percentile of the widths of its lines of
    words; tick labels and other short strings do not count)."""
    widths = sorted(ln.box[2] - ln.box[0] for ln in lines if not ln.vertical and len(ln.text) >= 20)
    if not widths:
        return 0.0
    return widths[int(0.9 * (len(widths) - 1))]


def is_body_line(line: Line, full_width: float) -> bool:
    """A line of running text rather than a label inside a figure."""
    return (not line.vertical and full_width > 0 and line.box[2] - line.box[0] >= 0.6 * full_width
            and len(line.text) >= 30)


def _keep_graphic(box: Box, page: PageContent) -> bool:
    w, h = box[2] - box[0], box[3] - box[1]
    if w * h > 0.85 * page.width * page.height:
        return False  # a page background
    if (h <= 2.0 and w > 0.5 * page.width) or (w <= 2.0 and h > 0.5 * page.height):
        return False  # a rule across the page
    if box[3] < MARGIN * page.height or box[1] > (1 - MARGIN) * page.height:
        return False  # header or footer ornament
    return True


def _components(boxes: list[Box], tol: float) -> list[Box]:
    """Union of boxes that lie within ``tol`` of one another (single-linkage on a sweep)."""
    if not boxes:
        return []
    parent = list(range(len(boxes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    order = sorted(range(len(boxes)), key=lambda i: boxes[i][0])
    active: list[int] = []
    for i in order:
        b = boxes[i]
        active = [j for j in active if boxes[j][2] + tol >= b[0]]
        for j in active:
            if gap(boxes[j], b) <= tol:
                parent[find(i)] = find(j)
        active.append(i)
    groups: dict[int, Box] = {}
    for i, b in enumerate(boxes):
        r = find(i)
        groups[r] = union(groups[r], b) if r in groups else b
    return list(groups.values())


def graphic_regions(page: PageContent, captions: list[Caption]) -> list[Region]:
    """Clusters of images and vector drawings, grown over the text labels drawn inside them."""
    boxes = [g.box for g in page.graphics if _keep_graphic(g.box, page)]
    if not boxes:
        return []
    full = body_width(page.lines)
    caption_lines = {id(ln) for c in captions for ln in c.lines}
    labels = [ln for ln in page.lines if id(ln) not in caption_lines and not is_body_line(ln, full)
              and MARGIN * page.height < ln.box[3] and ln.box[1] < (1 - MARGIN) * page.height]
    regions = _components(boxes, CLUSTER_GAP)
    for _ in range(3):
        grown = []
        for r in regions:
            for ln in labels:
                if gap(r, ln.box) <= CLUSTER_GAP and (intersection(r, ln.box) > 0 or
                                                      ln.box[2] - ln.box[0] < 0.5 * max(r[2] - r[0], 1)):
                    r = union(r, ln.box)
            grown.append(r)
        merged = _components(grown, CLUSTER_GAP)
        if len(merged) == len(regions) and merged == regions:
            break
        regions = merged
    return [Region(r, "graphics") for r in regions
            if (r[2] - r[0]) >= MIN_SIDE or (r[3] - r[1]) >= MIN_SIDE]


def _blocked(a: Box, b: Box, walls: list[Box]) -> bool:
    """True when a wall (body text, another caption) lies between boxes ``a`` and ``b`` vertically."""
    top, bottom = min(a[3], b[3]), max(a[1], b[1])
    x0, x1 = max(a[0], b[0]), min(a[2], b[2])
    for w in walls:
        if w[1] >= top - 1 and w[3] <= bottom + 1 and min(w[2], x1) - max(w[0], x0) > 0:
            return True
    return False


def edge_cost(cap: Box, fig: Box, page_height: float) -> float:
    """Distance from a caption to a figure above or below it; ``_NO`` when they cannot pair."""
    ov = min(cap[2], fig[2]) - max(cap[0], fig[0])
    if ov < 0.2 * min(cap[2] - cap[0], fig[2] - fig[0]):
        return _NO
    if fig[3] <= cap[1] + 4:
        d = cap[1] - fig[3]
    elif fig[1] >= cap[3] - 4:
        d = fig[1] - cap[3] + 4.0  # figures sit above their captions more often
    else:
        return _NO
    d = max(d, 0.0)
    return d if d <= MAX_CAPTION_GAP * page_height else _NO


def match(captions: list[Caption], regions: list[Region], page: PageContent) -> dict[int, int]:
    """Caption index → region index, by minimum total edge distance (Hungarian)."""
    if not captions or not regions:
        return {}
    full = body_width(page.lines)
    cap_boxes = [c.box for c in captions]
    walls = [ln.box for ln in page.lines if is_body_line(ln, full)
             and not any(intersection(ln.box, cb) > 0 for cb in cap_boxes)] + cap_boxes
    cost = np.full((len(captions), len(regions)), _NO)
    for i, cb in enumerate(cap_boxes):
        for j, r in enumerate(regions):
            c = edge_cost(cb, r.box, page.height)
            if c < _NO and not _blocked(cb, r.box, [w for w in walls if w != cb]):
                cost[i, j] = c - 0.01 * min(area(r.box), 1e5) ** 0.5 * (r.source == "graphics")
    rows, cols = linear_sum_assignment(cost)
    return {int(i): int(j) for i, j in zip(rows, cols) if cost[i, j] < _NO / 2}


def space_region(cap: Box, page: PageContent, walls: list[Box], above: bool = True) -> Box | None:
    """The empty space between a caption and the nearest running text above (or below) it, across
    the caption's width: where a figure the PDF draws in no way we can read (a scan) must be."""
    x0, x1 = cap[0] - 4, cap[2] + 4
    margin_top, margin_bottom = 0.06 * page.height, 0.94 * page.height
    blockers = [w for w in walls if min(w[2], x1) - max(w[0], x0) > 0 and w != cap]
    if above:
        ys = [w[3] for w in blockers if w[3] <= cap[1] + 1]
        top, bottom = max(ys + [margin_top]), cap[1] - 2
    else:
        ys = [w[1] for w in blockers if w[1] >= cap[3] - 1]
        top, bottom = cap[3] + 2, min(ys + [margin_bottom])
    if bottom - top < 3 * MIN_SIDE:
        return None
    return (x0, top + 2, x1, bottom)


def text_heavy(region: Box, lines: list[Line], share: float = 0.3) -> bool:
    """True for a region that is mostly rows of text (a table), not a drawing."""
    inside = [ln for ln in lines if intersection(ln.box, region) > 0.5 * area(ln.box) and not ln.vertical]
    if len(inside) < 4:
        return False
    return sum(area(ln.box) for ln in inside) > share * area(region)


def grow(fig: Box, cap: Box, spare: list[Box], walls: list[Box], lines: list[Line] | None = None) -> Box:
    """Absorb unmatched regions on the figure's side of its caption (panels drawn apart)."""
    above = fig[3] <= cap[1] + 4
    changed = True
    while changed:
        changed = False
        for k, r in enumerate(spare):
            same_side = r[3] <= cap[1] + 4 if above else r[1] >= cap[3] - 4
            if not same_side:
                continue
            ov = min(r[2], fig[2]) - max(r[0], fig[0])
            vov = min(r[3], fig[3]) - max(r[1], fig[1])
            near = gap(r, fig) <= GROW_GAP and (ov > 0 or vov > 0)
            # a panel beside the figure, over the same caption: side-by-side subfigures
            beside = (vov > 0.5 * min(r[3] - r[1], fig[3] - fig[1]) and r[0] >= cap[0] - 10
                      and r[2] <= cap[2] + 10)
            if not (near or beside):
                continue
            candidate = union(fig, r)
            if any(intersection(candidate, w) > 0.5 * area(w) and intersection(fig, w) <= 0.5 * area(w)
                   and intersection(r, w) <= 0.5 * area(w) for w in walls):
                continue  # running text between the two
            if lines is not None and text_heavy(r, lines):
                continue  # a table beside the figure, not a panel of it
            fig = candidate
            spare.pop(k)
            changed = True
            break
    return fig


__all__ = ["text_heavy", "Region", "graphic_regions", "match", "grow", "space_region", "edge_cost", "body_width", "is_body_line"]

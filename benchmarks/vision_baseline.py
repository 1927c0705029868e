"""The baseline the vision benchmark compares against, in the same run.

Whitespace XY-cuts (no labels, no count prior) + a naive regex caption splitter that only knows
"(a)"-style labels + reading-order pairing. Also an interim caption splitter used for figlink's own
rows until :func:`figlink.text.captions.split_caption` is available.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from figlink.model import CaptionSplit, Panel, Subcaption
from figlink.vision.image_io import load_image, to_gray
from figlink.vision.panels import reading_order
from figlink.vision.segment import merge_fragments, xy_cut

_PAREN = re.compile(r"\(([A-Za-z](?:\s*[-–,]\s*[A-Za-z])*)\)")


def regex_split(caption: str) -> CaptionSplit:
    """Naive: every "(x)", "(x–y)" or "(x,y)" anywhere starts a subcaption that runs to the next one."""
    marks = list(_PAREN.finditer(caption))
    if not marks:
        return CaptionSplit(shared_text=caption.strip())
    subs = []
    for m, nxt in zip(marks, marks[1:] + [None]):
        end = nxt.start() if nxt else len(caption)
        subs.append(Subcaption(labels=_expand(m.group(1)), text=caption[m.end():end].strip(),
                               spans=[[m.start(), end]]))
    return CaptionSplit(shared_text=caption[:marks[0].start()].strip(), subcaptions=subs)


_LAB = r"[A-Za-z](?:\s*[-–,]\s*[A-Za-z])*"
_START = re.compile(r"(?:^|(?<=[.;:]\s))(?:\((" + _LAB + r")\)|(" + _LAB + r"))\s+(?=\S)"
                    r"|\((" + _LAB + r")\)\s+(?=[A-Za-z])")


def _expand(spec: str) -> list[str]:
    out: list[str] = []
    for part in re.split(r"\s*,\s*", spec):
        ends = re.split(r"\s*[-–]\s*", part)
        if len(ends) == 2 and len(ends[0]) == 1 and len(ends[1]) == 1 and ends[0] <= ends[1]:
            out += [chr(c) for c in range(ord(ends[0].lower()), ord(ends[1].lower()) + 1)]
        elif part:
            out.append(part.lower())
    return out


def interim_split(caption: str) -> CaptionSplit:
    """Stand-in splitter: "(a) …", "a …" after a sentence end, "(a–c) …", "c, d …" start subcaptions."""
    marks = []
    for m in _START.finditer(caption):
        spec = m.group(1) or m.group(2) or m.group(3)
        if m.group(2) and not re.match(r"\s*[A-Z0-9]", caption[m.end():m.end() + 2]):
            continue  # a bare letter must be followed by a capitalised word ("a Filtered …")
        if m.group(2) and len(m.group(2)) == 1 and m.group(2) in "AI" and m.start() > 0:
            continue  # "A HAADF" / "I" are words, not labels, mid-caption
        labs = _expand(spec)
        if m.group(3) and marks and set(labs) & set(marks[-1][2]):
            continue  # "(d)" inside the subcaption of "c, d" points back; it starts nothing
        marks.append((m.start(), m.end(), labs))
    if not marks:
        return CaptionSplit(shared_text=caption.strip())
    subs = []
    for (s, e, labs), nxt in zip(marks, marks[1:] + [None]):
        end = nxt[0] if nxt else len(caption)
        subs.append(Subcaption(labels=labs, text=caption[e:end].strip(), spans=[[s, end]]))
    return CaptionSplit(shared_text=caption[:marks[0][0]].strip(), subcaptions=subs)


def caption_splitter() -> tuple[Callable[[str], CaptionSplit], str]:
    """figlink's splitter when it has landed, else the interim one; with its name for the table."""
    try:
        from figlink.text.captions import split_caption  # type: ignore[import-not-found]

        return split_caption, "figlink.text.captions"
    except ImportError:
        return interim_split, "interim (benchmarks/vision_baseline.py)"


def baseline_panels(image) -> list[Panel]:
    """Whitespace cuts only: large XY-cut pieces, small ones merged in, in reading order."""
    gray = to_gray(load_image(image))
    H, W = gray.shape
    boxes = merge_fragments(xy_cut(gray, min_gap=2), W, H) or [(0, 0, W, H)]
    return reading_order([Panel(label=None, bbox=[float(v) for v in b], score=0.5) for b in boxes])


def baseline_align(panels: list[Panel], split: CaptionSplit) -> list[Panel]:
    """Reading-order pairing; extra panels take the last subcaption."""
    subs = split.subcaptions
    for n, p in enumerate(panels):
        p.subcaption = subs[min(n, len(subs) - 1)].text if subs else None
    return panels


def baseline(image, caption: str) -> list[Panel]:
    return baseline_align(baseline_panels(image), regex_split(caption))


__all__ = ["regex_split", "interim_split", "caption_splitter", "baseline", "baseline_panels", "np"]

"""Merging a PDF's figures with the same article's JATS (MedICaT, Appendix A).

A PDF figure is matched to an XML figure by figure index (the key of its label), or, where the
index is missing or unknown, by the token Jaccard similarity of the two captions (> 0.8). The merged
paper keeps the XML's metadata, captions and inline references, and takes the PDF's image, page and
bounding box.
"""

from __future__ import annotations

import re
from dataclasses import replace

from figlink.model import Figure, Paper
from figlink.text.mentions import figure_key

JACCARD_MIN = 0.8
_TOKEN = re.compile(r"\w+")


def caption_tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)}


def jaccard(a: str, b: str) -> float:
    ta, tb = caption_tokens(a), caption_tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


def _key(fig: Figure) -> str | None:
    return figure_key(fig.label) if fig.label else None


def pair_figures(xml_figs: list[Figure], pdf_figs: list[Figure]) -> dict[int, int]:
    """XML figure index → PDF figure index: by figure key first, then by caption Jaccard > 0.8."""
    pairs: dict[int, int] = {}
    used: set[int] = set()
    by_key: dict[str, int] = {}
    for j, f in enumerate(pdf_figs):
        k = _key(f)
        if k is not None:
            by_key.setdefault(k, j)
    for i, f in enumerate(xml_figs):
        k = _key(f)
        if k is not None and k in by_key and by_key[k] not in used:
            pairs[i] = by_key[k]
            used.add(by_key[k])
    for i, f in enumerate(xml_figs):
        if i in pairs or not f.caption:
            continue
        best, best_j = JACCARD_MIN, None
        for j, g in enumerate(pdf_figs):
            if j in used:
                continue
            s = jaccard(f.caption, g.caption)
            if s > best:
                best, best_j = s, j
        if best_j is not None:
            pairs[i] = best_j
            used.add(best_j)
    return pairs


def merge_jats_pdf(xml_paper: Paper, pdf_paper: Paper) -> Paper:
    """The XML paper with each matched figure's image, page, bbox and caption_bbox taken from the PDF."""
    pairs = pair_figures(xml_paper.figures, pdf_paper.figures)
    figures = []
    for i, f in enumerate(xml_paper.figures):
        if i in pairs:
            g = pdf_paper.figures[pairs[i]]
            f = replace(f, image=g.image or f.image, page=g.page, bbox=g.bbox, caption_bbox=g.caption_bbox)
        figures.append(f)
    matched = set(pairs.values())
    warnings = list(xml_paper.warnings) + list(pdf_paper.warnings)
    for j, g in enumerate(pdf_paper.figures):
        if j not in matched:
            warnings.append(f"PDF figure {g.label or g.figure_id} (page {g.page}) has no match in the XML")
    return replace(xml_paper, source="jats+pdf", figures=figures, warnings=warnings)


__all__ = ["merge_jats_pdf", "pair_figures", "jaccard", "caption_tokens"]

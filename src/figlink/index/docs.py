"""Papers → search documents: one per figure and one per panel, with weighted text fields.

A figure document holds the caption, the citing sentences, the OCR text and the paper title. A panel
document holds what is about that panel only (its subcaption, the citing sentences that name its
letter, the OCR text inside its box) and the figure's shared text as a separate, lower-weighted field.

Panel letters come from whatever the enrich stages filled: ``caption_split`` subcaptions, detected
``panels`` and the panel letters of inline references. A figure with no known panel still gets one
panel-level document (label ``None``) standing for the whole figure, so panel search covers every
figure. For the dense signal a document has at most two vectors: its own caption or subcaption, and the
centroid of its citing sentences. Everything here is a pure function of the :class:`~figlink.model.Paper`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from figlink.model import Box, Figure, OcrText, Paper

FIELDS = ("title", "main", "refs", "ocr", "shared")
MAX_REFS = 12  # citing sentences kept per document (the most-cited figures cite dozens)
MAX_FIELD_CHARS = 6000


@dataclass
class Doc:
    """One search document: where it points, its fields, the texts to embed and what a hit shows."""

    level: str  # "figure" | "panel"
    paper_id: str
    figure_id: str
    panel: Optional[str]
    fields: dict[str, str]
    dense: list[list[str]]  # groups of texts; each group is one vector (the mean of its texts' embeddings)
    meta: dict = field(default_factory=dict)  # filters and display: year, open, medical, figure_type, …


def _clip(s: str) -> str:
    return s[:MAX_FIELD_CHARS]


def _panel_labels(fig: Figure) -> list[str]:
    """Panel letters known for the figure, in first-seen order (subcaptions, detected panels, refs)."""
    seen: dict[str, None] = {}
    if fig.caption_split:
        for sc in fig.caption_split.subcaptions:
            for lab in sc.labels:
                seen.setdefault(lab.lower(), None)
    for p in fig.panels:
        if p.label:
            seen.setdefault(p.label.lower(), None)
    for r in fig.inline_refs:
        for lab in r.panels:
            seen.setdefault(lab.lower(), None)
    return list(seen)


def _subcaption(fig: Figure, label: str) -> tuple[str, list[list[int]]]:
    """The subcaption text of one panel and its spans in the caption (from caption_split, else panels)."""
    texts: list[str] = []
    spans: list[list[int]] = []
    if fig.caption_split:
        for sc in fig.caption_split.subcaptions:
            if label in (x.lower() for x in sc.labels):
                texts.append(sc.text)
                spans.extend(list(s) for s in sc.spans)
    if not texts:
        for p in fig.panels:
            sub = fig.panel_subcaption(p) if p.label and p.label.lower() == label else None
            if sub:
                texts.append(sub)
    return " ".join(texts), spans


def _inside(o: OcrText, box: Box) -> bool:
    cx, cy = o.bbox.center
    return box.x0 <= cx <= box.x1 and box.y0 <= cy <= box.y1


def _ocr_text(lines: Iterable[OcrText]) -> str:
    return " ".join(o.text for o in lines if o.text and o.role != "panel_label")


def _figure_meta(paper: Paper, fig: Figure) -> dict:
    return {
        "year": paper.year, "open": bool(paper.license.open), "medical": fig.is_medical,
        "figure_type": fig.figure_type.label if fig.figure_type else None,
        "label": fig.label, "caption": fig.caption, "image": fig.image, "title": paper.title,
        "n_panels": len(fig.panels),
    }


def figure_doc(paper: Paper, fig: Figure) -> Doc:
    """The figure-level document."""
    refs = [r.text for r in fig.inline_refs][:MAX_REFS]
    caption = fig.caption or fig.label or fig.figure_id
    fields = {"title": paper.title or "", "main": _clip(caption), "refs": _clip(" ".join(refs)),
              "ocr": _clip(_ocr_text(fig.ocr)), "shared": ""}
    meta = _figure_meta(paper, fig)
    meta["refs"] = refs[:3]
    return Doc("figure", paper.paper_id, fig.figure_id, None, fields, [[caption]] + ([refs] if refs else []), meta)


def panel_docs(paper: Paper, fig: Figure) -> list[Doc]:
    """One document per known panel, or one whole-figure document when no panel is known."""
    base = _figure_meta(paper, fig)
    labels = _panel_labels(fig)
    if not labels:
        d = figure_doc(paper, fig)
        return [Doc("panel", d.paper_id, d.figure_id, None, d.fields, d.dense, d.meta)]
    shared = fig.caption_split.shared_text if fig.caption_split and fig.caption_split.shared_text else fig.caption
    boxes = {p.label.lower(): p for p in fig.panels if p.label}
    docs = []
    for lab in labels:
        sub, spans = _subcaption(fig, lab)
        refs = [r.text for r in fig.inline_refs if lab in (x.lower() for x in r.panels)][:MAX_REFS]
        panel = boxes.get(lab)
        ocr = _ocr_text(o for o in fig.ocr if panel is not None and _inside(o, panel.bbox))
        fields = {"title": paper.title or "", "main": _clip(sub), "refs": _clip(" ".join(refs)), "ocr": _clip(ocr),
                  "shared": _clip(shared or "")}
        dense = [g for g in ([sub] if sub else [], refs) if g] or [[shared or fig.caption or fig.label or fig.figure_id]]
        meta = dict(base, subcaption=sub, spans=spans, refs=refs[:3],
                    bbox=None if panel is None else panel.bbox.xyxy())
        docs.append(Doc("panel", paper.paper_id, fig.figure_id, lab, fields, dense, meta))
    return docs


def paper_docs(paper: Paper) -> list[Doc]:
    """Every figure and panel document of a paper."""
    out: list[Doc] = []
    for fig in paper.figures:
        out.append(figure_doc(paper, fig))
        out.extend(panel_docs(paper, fig))
    return out

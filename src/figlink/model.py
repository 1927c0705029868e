"""The figlink data model: one :class:`Paper` per article, with its figures in context.

Every record is a plain dataclass with ``to_dict``/``from_dict`` that round-trip through JSON
exactly (``Paper.from_dict(json.loads(json.dumps(p.to_dict()))) == p``). Coordinates are pixels of
the figure image (panels, OCR) or PDF points of the page (figure bbox). Panel labels are lower case;
caption spans are character offsets into ``Figure.caption``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

BBox = list[float]  # [x0, y0, x1, y1]


@dataclass
class License:
    """An article's license: SPDX id (or ``LicenseRef-…``), its URL, and whether it is open (SciOL)."""

    spdx: Optional[str] = None
    url: Optional[str] = None
    open: bool = False
    text: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        return {"spdx": self.spdx, "url": self.url, "open": self.open, "text": self.text}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "License":
        return cls(spdx=d.get("spdx"), url=d.get("url"), open=bool(d.get("open", False)), text=d.get("text"))


@dataclass
class InlineRef:
    """A body sentence that cites a figure: the sentence, the mention as written, the panels it names."""

    text: str
    mention: str
    panels: list[str] = field(default_factory=list)
    section: Optional[str] = None
    tagged: bool = True  # True when the citation was an <xref>; False when found in plain text

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "mention": self.mention, "panels": list(self.panels),
                "section": self.section, "tagged": self.tagged}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "InlineRef":
        return cls(text=d["text"], mention=d.get("mention", ""), panels=list(d.get("panels", [])),
                   section=d.get("section"), tagged=bool(d.get("tagged", True)))


@dataclass
class Subcaption:
    """The part of a caption about some panels only; ``spans`` index into the figure caption."""

    labels: list[str]
    text: str
    spans: list[list[int]] = field(default_factory=list)
    # Spatial parts the text is about ("left", "top-right", "row 2", "inset"); a subcaption with positions
    # refines the text of its labels (or of the shared text when it has no labels).
    positions: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "text": self.text, "spans": [list(s) for s in self.spans],
                "positions": list(self.positions)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Subcaption":
        return cls(labels=list(d.get("labels", [])), text=d.get("text", ""),
                   spans=[list(s) for s in d.get("spans", [])], positions=list(d.get("positions", [])))


@dataclass
class CaptionSplit:
    """A caption cut into text shared by all panels and per-panel subcaptions."""

    shared_text: str = ""
    subcaptions: list[Subcaption] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"shared_text": self.shared_text, "subcaptions": [s.to_dict() for s in self.subcaptions]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CaptionSplit":
        return cls(shared_text=d.get("shared_text", ""),
                   subcaptions=[Subcaption.from_dict(s) for s in d.get("subcaptions", [])])


@dataclass
class NormalizedCaption:
    """SciCap caption normalization and selection fields (see ``figlink.text.normalize``)."""

    basic: str = ""  # lower case, figure label removed, numbers -> [NUM]
    advanced: str = ""  # basic + equations -> [EQUATION], bracketed spans -> [BRACKET]
    first_sentence: str = ""  # first sentence of the caption, basic-normalized
    n_sentences: int = 0
    n_tokens: int = 0  # tokens of the basic-normalized caption

    def to_dict(self) -> dict[str, Any]:
        return {"basic": self.basic, "advanced": self.advanced, "first_sentence": self.first_sentence,
                "n_sentences": self.n_sentences, "n_tokens": self.n_tokens}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "NormalizedCaption":
        return cls(basic=d.get("basic", ""), advanced=d.get("advanced", ""),
                   first_sentence=d.get("first_sentence", ""), n_sentences=int(d.get("n_sentences", 0)),
                   n_tokens=int(d.get("n_tokens", 0)))


@dataclass
class Panel:
    """One panel (subfigure) of a compound figure, in figure-image pixels."""

    label: Optional[str]
    bbox: BBox
    subcaption: Optional[str] = None
    score: Optional[float] = None

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "bbox": list(self.bbox), "subcaption": self.subcaption, "score": self.score}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Panel":
        return cls(label=d.get("label"), bbox=list(d.get("bbox", [])), subcaption=d.get("subcaption"),
                   score=d.get("score"))


@dataclass
class OcrText:
    """A line of text read inside a figure, with its role (panel_label, axis_label, tick_label, …)."""

    text: str
    bbox: BBox
    role: Optional[str] = None
    score: Optional[float] = None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "bbox": list(self.bbox), "role": self.role, "score": self.score}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "OcrText":
        return cls(text=d.get("text", ""), bbox=list(d.get("bbox", [])), role=d.get("role"), score=d.get("score"))


@dataclass
class FigureType:
    label: str
    score: Optional[float] = None

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "score": self.score}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "FigureType":
        return cls(label=d["label"], score=d.get("score"))


@dataclass
class Figure:
    """A figure with its caption and its context in the paper."""

    figure_id: str
    label: Optional[str] = None
    number: Optional[str] = None
    caption: str = ""
    image: Optional[str] = None
    page: Optional[int] = None
    bbox: Optional[BBox] = None
    parent: Optional[str] = None  # figure_id of the main figure, for eLife figure supplements
    graphic: Optional[str] = None  # the image reference as written in the source (xlink:href)
    inline_refs: list[InlineRef] = field(default_factory=list)
    caption_split: Optional[CaptionSplit] = None
    panels: list[Panel] = field(default_factory=list)
    ocr: list[OcrText] = field(default_factory=list)
    figure_type: Optional[FigureType] = None
    is_compound: Optional[bool] = None
    is_medical: Optional[bool] = None
    expected_panels: Optional[int] = None  # panel count read from the caption (labels, positions)
    medical_keywords: list[str] = field(default_factory=list)  # stage-1 keywords that matched
    caption_normalized: Optional[NormalizedCaption] = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "figure_id": self.figure_id, "label": self.label, "number": self.number, "caption": self.caption,
            "image": self.image, "page": self.page, "bbox": None if self.bbox is None else list(self.bbox),
            "parent": self.parent, "graphic": self.graphic,
            "inline_refs": [r.to_dict() for r in self.inline_refs],
            "caption_split": None if self.caption_split is None else self.caption_split.to_dict(),
            "panels": [p.to_dict() for p in self.panels],
            "ocr": [o.to_dict() for o in self.ocr],
            "figure_type": None if self.figure_type is None else self.figure_type.to_dict(),
            "is_compound": self.is_compound, "is_medical": self.is_medical,
            "expected_panels": self.expected_panels, "medical_keywords": list(self.medical_keywords),
            "caption_normalized": None if self.caption_normalized is None else self.caption_normalized.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Figure":
        return cls(
            figure_id=d["figure_id"], label=d.get("label"), number=d.get("number"), caption=d.get("caption", ""),
            image=d.get("image"), page=d.get("page"), bbox=None if d.get("bbox") is None else list(d["bbox"]),
            parent=d.get("parent"), graphic=d.get("graphic"),
            inline_refs=[InlineRef.from_dict(r) for r in d.get("inline_refs", [])],
            caption_split=None if d.get("caption_split") is None else CaptionSplit.from_dict(d["caption_split"]),
            panels=[Panel.from_dict(p) for p in d.get("panels", [])],
            ocr=[OcrText.from_dict(o) for o in d.get("ocr", [])],
            figure_type=None if d.get("figure_type") is None else FigureType.from_dict(d["figure_type"]),
            is_compound=d.get("is_compound"), is_medical=d.get("is_medical"),
            expected_panels=d.get("expected_panels"), medical_keywords=list(d.get("medical_keywords", [])),
            caption_normalized=None if d.get("caption_normalized") is None
            else NormalizedCaption.from_dict(d["caption_normalized"]),
        )


@dataclass
class Paper:
    """One article: metadata, license, and its figures in context."""

    paper_id: str
    source: str  # "jats" | "pdf" | "jats+pdf"
    doi: Optional[str] = None
    pmcid: Optional[str] = None
    title: Optional[str] = None
    journal: Optional[str] = None
    year: Optional[int] = None
    license: License = field(default_factory=License)
    figures: list[Figure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper_id": self.paper_id, "source": self.source, "doi": self.doi, "pmcid": self.pmcid,
            "title": self.title, "journal": self.journal, "year": self.year, "license": self.license.to_dict(),
            "figures": [f.to_dict() for f in self.figures], "warnings": list(self.warnings),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Paper":
        return cls(
            paper_id=d["paper_id"], source=d.get("source", "jats"), doi=d.get("doi"), pmcid=d.get("pmcid"),
            title=d.get("title"), journal=d.get("journal"), year=d.get("year"),
            license=License.from_dict(d.get("license") or {}),
            figures=[Figure.from_dict(f) for f in d.get("figures", [])],
            warnings=list(d.get("warnings", [])),
        )

    def to_json(self, indent: Optional[int] = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_json(cls, text: str) -> "Paper":
        return cls.from_dict(json.loads(text))

    def figure(self, figure_id: str) -> Optional[Figure]:
        return next((f for f in self.figures if f.figure_id == figure_id), None)


__all__ = ["BBox", "License", "InlineRef", "Subcaption", "CaptionSplit", "NormalizedCaption", "Panel", "OcrText", "FigureType",
           "Figure", "Paper"]

"""The figlink data model: one :class:`Paper` per article, with its figures in context.

Every record is a plain dataclass; its JSON is derived from its fields (:mod:`figlink.model_json`), so a
field added here is written, read back and exported with no other change, and
``Paper.from_dict(json.loads(json.dumps(p.to_dict()))) == p``. A paper's JSON carries
``schema_version``; :meth:`Paper.from_dict` reads every earlier version (:func:`upgrade_paper`).

Coordinates are :class:`Box` values that name their space: pixels of the figure image (panels, OCR) or
PDF points of a page, origin at the top-left (a figure's ``bbox`` on its ``page``, ``caption_bbox``).
Panel labels are lower case; subcaption spans are character offsets into ``Figure.caption`` and
mention spans offsets into the inline reference's sentence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Literal, Mapping, Optional, Sequence

from figlink.model_json import Derived, JsonRecord, from_json_dict

# 1: figlink before model v2 (no schema_version key); 2: boxes name their space, panels point at their
# subcaptions, inline references carry mention spans, PDF figures carry caption_bbox
SCHEMA_VERSION = 2

BoxSpace = Literal["image_pixels", "pdf_points"]
Source = Literal["jats", "pdf", "jats+pdf", "pairs"]
OcrRole = Literal["panel_label", "axis_title", "tick_label", "legend", "scale_bar", "other"]


@dataclass(frozen=True)
class Box:
    """An axis-aligned box ``x0 <= x1, y0 <= y1`` in a named coordinate space: ``image_pixels`` of the
    figure image, or ``pdf_points`` of a PDF page (the page is given by the record holding the box).

    It iterates and indexes as its four coordinates (``x0, y0, x1, y1 = box``; ``box[2]``). In JSON a
    field ``bbox`` holding a box is written ``"bbox": [x0, y0, x1, y1], "bbox_space": "..."``.
    """

    x0: float
    y0: float
    x1: float
    y1: float
    space: BoxSpace

    @classmethod
    def pixels(cls, xyxy: Iterable[float]) -> "Box":
        """A box in pixels of a figure image."""
        x0, y0, x1, y1 = (float(v) for v in xyxy)
        return cls(x0, y0, x1, y1, "image_pixels")

    @classmethod
    def points(cls, xyxy: Iterable[float]) -> "Box":
        """A box in PDF points of a page, origin at the top-left."""
        x0, y0, x1, y1 = (float(v) for v in xyxy)
        return cls(x0, y0, x1, y1, "pdf_points")

    def xyxy(self) -> list[float]:
        return [self.x0, self.y0, self.x1, self.y1]

    def __iter__(self) -> Iterator[float]:
        return iter((self.x0, self.y0, self.x1, self.y1))

    def __getitem__(self, i: int) -> float:
        return (self.x0, self.y0, self.x1, self.y1)[i]

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def center(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2

    # the flat JSON form (see figlink.model_json.FlatValue)
    @classmethod
    def json_keys(cls, name: str) -> list[tuple[str, Any]]:
        return [(name, list[float]), (f"{name}_space", BoxSpace)]

    def json_items(self, name: str) -> dict[str, Any]:
        return {name: self.xyxy(), f"{name}_space": self.space}

    @classmethod
    def from_json_items(cls, d: Mapping[str, Any], name: str) -> Optional["Box"]:
        xyxy = d[name]
        if xyxy is None:
            return None
        space = d.get(f"{name}_space")
        if space not in ("image_pixels", "pdf_points"):
            raise ValueError(f"{name}_space: {space!r} is not image_pixels or pdf_points")
        if len(xyxy) != 4:
            raise ValueError(f"{name}: a box is [x0, y0, x1, y1], got {xyxy!r}")
        x0, y0, x1, y1 = (float(v) for v in xyxy)
        return cls(x0, y0, x1, y1, space)


@dataclass(frozen=True)
class PageBox(JsonRecord):
    """A box on a page of a PDF: ``{"page": 3, "bbox": [x0, y0, x1, y1], "bbox_space": "pdf_points"}``."""

    page: int  # 1-based
    bbox: Box


@dataclass
class License(JsonRecord):
    """An article's license: SPDX id (or ``LicenseRef-…``), its URL, and whether it is open (SciOL)."""

    spdx: Optional[str] = None
    url: Optional[str] = None
    open: bool = False
    text: Optional[str] = None


@dataclass
class InlineRef(JsonRecord):
    """A body sentence that cites a figure: the sentence, the mention as written (several mentions of the
    figure in one sentence are joined with "; "), the panels it names, and where each mention stands in
    the sentence (``text[a:b]`` for each ``[a, b]`` of ``mention_spans``)."""

    text: str
    mention: str
    panels: list[str] = field(default_factory=list)
    section: Optional[str] = None
    tagged: bool = True  # True when the citation was an <xref>; False when found in plain text
    mention_spans: list[list[int]] = field(default_factory=list)


@dataclass
class Subcaption(JsonRecord):
    """The part of a caption about some panels only; ``spans`` index into the figure caption."""

    labels: list[str]
    text: str
    spans: list[list[int]] = field(default_factory=list)
    # Spatial parts the text is about ("left", "top-right", "row 2", "inset"); a subcaption with positions
    # refines the text of its labels (or of the shared text when it has no labels).
    positions: list[str] = field(default_factory=list)


@dataclass
class CaptionSplit(JsonRecord):
    """A caption cut into text shared by all panels and per-panel subcaptions."""

    shared_text: str = ""
    subcaptions: list[Subcaption] = field(default_factory=list)

    def label_indices(self, label: str) -> list[int]:
        """The subcaptions about panel ``label`` (lower case): their indices, one per distinct non-empty text."""
        texts: list[str] = []
        out: list[int] = []
        for k, sub in enumerate(self.subcaptions):
            if sub.text and sub.text not in texts and label in (lab.strip().lower() for lab in sub.labels):
                texts.append(sub.text)
                out.append(k)
        return out


def subcaption_text(split: Optional[CaptionSplit], indices: Sequence[int]) -> Optional[str]:
    """The text of the subcaptions ``indices`` of ``split``, joined; None when there are none."""
    if split is None or not indices:
        return None
    return " ".join(split.subcaptions[i].text for i in indices)


@dataclass
class NormalizedCaption(JsonRecord):
    """SciCap caption normalization and selection fields (see ``figlink.text.normalize``)."""

    basic: str = ""  # lower case, figure label removed, numbers -> [NUM]
    advanced: str = ""  # basic + equations -> [EQUATION], bracketed spans -> [BRACKET]
    first_sentence: str = ""  # first sentence of the caption, basic-normalized
    n_sentences: int = 0
    n_tokens: int = 0  # tokens of the basic-normalized caption


def _panel_subcaption(panel: "Panel", holder: Any) -> Optional[str]:
    return subcaption_text(getattr(holder, "caption_split", None), panel.subcaption_indices)


@dataclass
class Panel(JsonRecord):
    """One panel (subfigure) of a compound figure, in figure-image pixels. ``subcaption_indices`` are the
    subcaptions of the figure's ``caption_split`` aligned with it; the JSON also carries their text as
    ``subcaption`` (:meth:`Figure.panel_subcaption`)."""

    label: Optional[str]
    bbox: Box
    subcaption_indices: list[int] = field(default_factory=list)
    score: Optional[float] = None

    json_derived = (Derived("subcaption", Optional[str], "subcaption_indices", _panel_subcaption),)


@dataclass
class OcrText(JsonRecord):
    """A line of text read inside a figure, in figure-image pixels, with its role (from geometry)."""

    text: str
    bbox: Box
    role: Optional[OcrRole] = None
    score: Optional[float] = None


@dataclass
class FigureType(JsonRecord):
    label: str
    score: Optional[float] = None


@dataclass
class Figure(JsonRecord):
    """A figure with its caption and its context in the paper."""

    figure_id: str
    label: Optional[str] = None
    number: Optional[str] = None
    caption: str = ""
    image: Optional[str] = None
    page: Optional[int] = None  # 1-based page of a figure read from a PDF
    bbox: Optional[Box] = None  # the figure's region on ``page`` (pdf_points)
    caption_bbox: Optional[PageBox] = None  # where its caption starts, when read from a PDF
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

    def panel_subcaption(self, panel: Panel) -> Optional[str]:
        """The text of the subcaptions aligned with ``panel`` (None when none is)."""
        return subcaption_text(self.caption_split, panel.subcaption_indices)


@dataclass
class Paper(JsonRecord):
    """One article: metadata, license, and its figures in context."""

    schema_version: int = field(default=SCHEMA_VERSION, init=False)  # of the JSON; always the current one
    paper_id: str
    source: Source
    doi: Optional[str] = None
    pmcid: Optional[str] = None
    title: Optional[str] = None
    journal: Optional[str] = None
    year: Optional[int] = None
    license: License = field(default_factory=License)
    figures: list[Figure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Paper":
        """A paper from its JSON object, of this schema version or an earlier one."""
        return from_json_dict(cls, upgrade_paper(d))

    def to_json(self, indent: Optional[int] = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_json(cls, text: str) -> "Paper":
        return cls.from_dict(json.loads(text))

    def figure(self, figure_id: str) -> Optional[Figure]:
        return next((f for f in self.figures if f.figure_id == figure_id), None)


# ------------------------------------------------------------------------------ reading earlier versions

def upgrade_paper(d: Mapping[str, Any]) -> Mapping[str, Any]:
    """A paper's JSON object brought up to :data:`SCHEMA_VERSION` (the input is not modified)."""
    version = d.get("schema_version", 1)
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise ValueError(f"paper {d.get('paper_id')!r}: schema_version {version!r} is not one this figlink "
                         f"reads (1 to {SCHEMA_VERSION})")
    if version == 1:
        d = {**d, "schema_version": 2, "figures": [_figure_v1(f) for f in d.get("figures", [])]}
    return d


def _figure_v1(f: Mapping[str, Any]) -> dict[str, Any]:
    """Version 1 → 2: boxes get their space (a figure's bbox was PDF points, panel and OCR boxes pixels of
    the image); a panel's subcaption text becomes the indices of the subcaptions it was made of; inline
    references get the spans of their mentions, found in the sentence; no caption_bbox is made up."""
    split = None if f.get("caption_split") is None else from_json_dict(CaptionSplit, f["caption_split"])
    return {**f, "bbox_space": None if f.get("bbox") is None else "pdf_points",
            "inline_refs": [{**r, "mention_spans": _mention_spans_v1(r.get("text", ""), r.get("mention", ""))}
                            for r in f.get("inline_refs", [])],
            "panels": [{**p, "bbox_space": "image_pixels",
                        "subcaption_indices": _panel_indices_v1(split, p.get("label"), p.get("subcaption"))}
                       for p in f.get("panels", [])],
            "ocr": [{**o, "bbox_space": "image_pixels"} for o in f.get("ocr", [])]}


def _mention_spans_v1(sentence: str, mention: str) -> list[list[int]]:
    spans = []
    for part in mention.split("; ") if mention else []:
        i = sentence.find(part)
        if i >= 0 and [i, i + len(part)] not in spans:
            spans.append([i, i + len(part)])
    return spans


def _panel_indices_v1(split: Optional[CaptionSplit], label: Optional[str], text: Optional[str]) -> list[int]:
    """The subcaptions whose text a version-1 panel held: those of its label (as alignment joins them),
    else the one subcaption with that text; none when the text is not found."""
    if split is None or text is None:
        return []
    if label:
        by_label = split.label_indices(label.lower())
        if by_label and subcaption_text(split, by_label) == text:
            return by_label
    return next(([k] for k, s in enumerate(split.subcaptions) if s.text == text), [])


__all__ = ["SCHEMA_VERSION", "upgrade_paper", "Box", "BoxSpace", "PageBox", "Source", "OcrRole", "License", "InlineRef",
           "Subcaption", "CaptionSplit", "subcaption_text", "NormalizedCaption", "Panel", "OcrText",
           "FigureType", "Figure", "Paper"]

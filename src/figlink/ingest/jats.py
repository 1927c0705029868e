"""JATS / PMC .nxml articles → :class:`~figlink.model.Paper` with figures and inline references.

One lxml parse per article. Figures are every ``<fig>`` element (eLife figure supplements inside a
``<fig-group>`` keep their parent). Inline references (MedICaT) are the sentences of text blocks that
cite a figure, through ``<xref>`` markup or through plain-text mentions read with the shared mention
grammar; the sentence is found with the fast splitter only in blocks that cite something.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Optional

from lxml import etree

from figlink.errors import ParseError
from figlink.ingest.jats_refs import add_inline_refs, landmarks
from figlink.ingest.jats_xml import DEFAULT_MAX_BYTES, MATHML, XLINK_HREF, collapse_ws, element_text, \
    ids_in, parse_xml_bytes, read_bytes, without_ref_lists
from figlink.ingest.licenses import normalize_license
from figlink.model import Figure, Paper
from figlink.paper_ids import safe_id
from figlink.text.mentions import figure_key, figure_number

__all__ = ["DEFAULT_MAX_BYTES", "paper_from_root", "parse_jats", "parse_jats_bytes", "parse_xml_bytes", "read_bytes",
           "safe_id", "without_ref_lists"]


# --------------------------------------------------------------------------------------------- metadata

def _article_id(meta: Optional[etree._Element], kind: str) -> Optional[str]:
    if meta is None:
        return None
    for el in meta.iterfind("article-id"):
        if el.get("pub-id-type") == kind and el.text and el.text.strip():
            return el.text.strip()
    return None


def _year(meta: Optional[etree._Element]) -> Optional[int]:
    if meta is None:
        return None
    best: Optional[int] = None
    for d in meta.iterfind("pub-date"):
        y = d.findtext("year")
        if y and y.strip().isdigit():
            year = int(y.strip())
            kind = d.get("pub-type") or d.get("date-type") or ""
            if kind in {"epub", "pub", "ppub"}:
                return year
            best = best or year
    return best


def _license(meta: Optional[etree._Element]):
    lic = None if meta is None else meta.find("permissions/license")
    if lic is None:
        stmt = None if meta is None else meta.find("permissions/copyright-statement")
        return normalize_license(None, element_text(stmt) or None)
    url = lic.get(XLINK_HREF)
    if not url:
        for ext in lic.iter("ext-link", "{http://www.niso.org/schemas/ali/1.0/}license_ref", "license_ref"):
            url = ext.get(XLINK_HREF) or (ext.text or "").strip() or None
            if url:
                break
    return normalize_license(url, element_text(lic) or None, lic.get("license-type"))


# --------------------------------------------------------------------------------------------- figures

_NOT_CAPTION_PROSE = frozenset({"supplementary-material", "media", "object-id", "fig", "table-wrap",
                                "tex-math", MATHML + "annotation", MATHML + "annotation-xml"})
_DOI_LINE = re.compile(r"^DOI:\s*\S+$")


def _prose(el: etree._Element) -> str:
    """Text of an element without the attachments nested in it (source data files, media, DOIs)."""
    parts: list[str] = []

    def walk(e: etree._Element) -> None:
        if e.text:
            parts.append(e.text)
        for child in e:
            if isinstance(child.tag, str) and child.tag not in _NOT_CAPTION_PROSE:
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(el)
    return collapse_ws("".join(parts))


def _caption_text(fig: etree._Element) -> str:
    cap = fig.find("caption")
    if cap is None:
        return ""
    parts: list[str] = []
    for child in cap:
        if not isinstance(child.tag, str) or child.tag in _NOT_CAPTION_PROSE:
            continue
        if next(child.iter(*_NOT_CAPTION_PROSE), None) is None:  # no attachments: serialize in C
            t = collapse_ws(etree.tostring(child, method="text", encoding=str, with_tail=False))
        else:
            t = _prose(child)
        if t and not _DOI_LINE.match(t):  # eLife's "DOI: http://dx.doi.org/…" line is not caption prose
            parts.append(t)
    return " ".join(parts)


def _figures(figs: list[etree._Element]) -> list[Figure]:
    """The figures of the article's ``<fig>`` elements (in document order)."""
    figures: list[Figure] = []
    seen: set[str] = set()
    for n, fig in enumerate(figs, 1):
        fid = fig.get("id") or f"fig-{n}"
        base, k = fid, 2
        while fid in seen:
            fid, k = f"{base}-{k}", k + 1
        seen.add(fid)
        fig.set("_fid", fid)
        label = element_text(fig.find("label")) or None
        parent = None
        anc = fig.getparent()
        while anc is not None:
            if anc.tag == "fig":
                parent = anc.get("_fid")
                break
            if anc.tag == "fig-group":
                first = next((f for f in anc.iterfind("fig") if f.get("specific-use") != "child-fig"), None)
                if first is not None and first is not fig:
                    parent = first.get("_fid") or first.get("id")
                break
            anc = anc.getparent()
        graphic = next(fig.iter("graphic"), None)
        key = figure_key(label)
        figures.append(Figure(
            figure_id=fid, label=label, number=figure_number(key), caption=_caption_text(fig),
            parent=parent, graphic=None if graphic is None else graphic.get(XLINK_HREF),
        ))
    return figures


# --------------------------------------------------------------------------------------------- entry points

def paper_from_root(root: etree._Element, *, name: str = "", warnings: Optional[list[str]] = None,
                    cut_ids: Iterable[str] = ()) -> Paper:
    """Build the Paper of a parsed JATS ``<article>`` element; ``cut_ids`` are ids of elements cut out
    before parsing (they still count as existing xref targets)."""
    warnings = list(warnings or [])
    meta = root.find("front/article-meta")
    pmcid = _article_id(meta, "pmc") or _article_id(meta, "pmcid")
    if pmcid and not pmcid.upper().startswith("PMC"):
        pmcid = "PMC" + pmcid
    doi = _article_id(meta, "doi")
    pmid = _article_id(meta, "pmid")
    paper_id = safe_id(pmcid or (doi and doi.replace("/", "_")) or (pmid and f"PMID{pmid}")
                       or _article_id(meta, "publisher-id") or Path(name).stem or "paper")
    title = element_text(None if meta is None else meta.find("title-group/article-title")) or None
    journal = element_text(root.find("front/journal-meta//journal-title")) or None
    marks = landmarks(root)
    figures = _figures(marks.figs)
    for f in figures:
        if not f.caption:
            warnings.append(f"figure {f.figure_id} has no caption")
        if not f.label:
            warnings.append(f"figure {f.figure_id} has no label")
    add_inline_refs(root, figures, warnings, cut_ids, marks)
    return Paper(paper_id=paper_id, source="jats", doi=doi, pmcid=pmcid, title=title, journal=journal,
                 year=_year(meta), license=_license(meta), figures=figures, warnings=warnings)


def parse_jats_bytes(data: bytes, name: str = "") -> Paper:
    """Parse the bytes of a JATS/.nxml article (its reference lists are not parsed: nothing is read there)."""
    lean, cut = without_ref_lists(data)
    if cut:
        try:
            root, warnings = parse_xml_bytes(lean)
        except ParseError:  # report the error on the article as written
            root, warnings = parse_xml_bytes(data)
            cut = []
    else:
        root, warnings = parse_xml_bytes(data)
    cut_ids = ids_in(cut)
    return paper_from_root(root, name=name, warnings=warnings, cut_ids=cut_ids)


def parse_jats(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Paper:
    """Parse a JATS/.nxml article file."""
    p = Path(path)
    return parse_jats_bytes(read_bytes(p, max_bytes), name=p.name)

"""PDF ingestion: figures (crops, page, bbox in points), captions, and the body sentences citing them.

``parse_pdf(path)`` reads the document page by page (bounded memory, a per-document time limit);
``parse_pdf(path, xml=...)`` merges the result with the article's JATS (see :mod:`figlink.ingest.merge`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium

from figlink.errors import FiglinkError, ParseError
from figlink.ingest.pdf_body import RunningHeads, inline_refs, inside, is_margin, paragraphs, reading_order, running_lines
from figlink.ingest.pdf_captions import Caption, find_captions, resolve_hyphens
from figlink.ingest.pdf_doc import Limits, TimeLimit, iter_pages, open_pdf, render_scale
from figlink.ingest.pdf_figures import (MIN_SIDE, Region, body_width, graphic_regions, grow, is_body_line, match,
                                        space_region, text_heavy)
from figlink.ingest.pdf_meta import find_doi, find_title
from figlink.ingest.pdf_page import MAX_PAGE_OBJECTS, Box, Line, PageContent, area, intersection, read_page
from figlink import model
from figlink.model import Figure, PageBox, Paper
from figlink.paper_ids import safe_id
from figlink.text.mentions import figure_number

_WORD = re.compile(r"[\w-]+")
LAYOUT_SCALE = 1.0  # the layout model resizes to ~800 px anyway
OCR_DPI = 150.0


@dataclass
class Options:
    """How to read a PDF: crop resolution, the models to use, the caps."""

    dpi: float = 150.0
    layout: bool = True  # layout model where the PDF's own graphics leave a caption unmatched
    ocr: bool = True  # OCR pages that have no text layer
    limits: Limits = field(default_factory=Limits)


@dataclass
class _Found:
    caption: Caption
    box: Box
    page: int
    source: str


def _is_scanned(content: PageContent) -> bool:
    if len("".join(ln.text for ln in content.lines)) > 20:
        return False
    page_area = content.width * content.height
    return any(g.kind == "image" and area(g.box) > 0.4 * page_area for g in content.graphics)


def _ocr_page(page: pdfium.PdfPage, content: PageContent, opts: Options) -> None:
    from figlink.ingest.pdf_models import ocr_lines

    scale = render_scale(content.width, content.height, OCR_DPI, opts.limits)
    image = page.render(scale=scale).to_numpy()
    content.lines = ocr_lines(image[:, :, :3], scale)
    content.ocr = True
    page_area = content.width * content.height
    content.graphics = [g for g in content.graphics if area(g.box) < 0.4 * page_area]


def _layout_regions(page: pdfium.PdfPage, content: PageContent, opts: Options) -> list[Region]:
    from figlink.ingest.pdf_models import layout_boxes

    scale = render_scale(content.width, content.height, 72.0 * LAYOUT_SCALE, opts.limits)
    image = page.render(scale=scale).to_numpy()[:, :, :3]
    full = body_width(content.lines)
    body = [ln.box for ln in content.lines if is_body_line(ln, full)]
    out = []
    for label, box, score in layout_boxes(image, scale):
        if label != "figure":
            continue
        if sum(1 for b in body if inside(b, box)) >= 3:
            continue  # running text that the model took for a figure
        out.append(Region(box, "layout", score))
    return out


def _space_regions(page: pdfium.PdfPage, content: PageContent, captions: list[Caption], missing: list[int],
                   walls: list[Box], opts: Options) -> list[Region]:
    """For captions left alone: what is drawn in the empty space above (else below) each of them."""
    out = []
    for i in missing:
        for above in (True, False):
            space = space_region(captions[i].box, content, walls, above)
            ink = _ink_box(page, content, space, opts) if space else None
            if ink is not None and min(ink[2] - ink[0], ink[3] - ink[1]) >= 3 * MIN_SIDE \
                    and not text_heavy(ink, content.lines):
                out.append(Region(ink, "space", 0.5))
                break
    return out


def _page_figures(page: pdfium.PdfPage, content: PageContent, opts: Options,
                  warnings: list[str], carry: Caption | None = None) -> list[_Found]:
    """Captions of the page with their figure regions: the PDF's own graphics first, then the layout
    model, then the drawn ink next to the caption, each only for the captions still unmatched.
    ``carry``: a caption of the page before that runs on onto this one."""
    captions = find_captions(content, carry)
    if not captions:
        return []
    full = body_width(content.lines)
    walls = [ln.box for ln in content.lines if is_body_line(ln, full)] + [c.box for c in captions]
    regions = graphic_regions(content, captions)
    pairs = match(captions, regions, content)
    for fallback in ("layout", "space"):
        missing = [i for i, c in enumerate(captions) if i not in pairs and not c.continuation]
        if not missing or (fallback == "layout" and not opts.layout):
            continue
        if fallback == "layout":
            try:
                extra = _layout_regions(page, content, opts)
            except Exception as exc:  # noqa: BLE001 - the model is an aid; the page goes on without it
                warnings.append(f"page {content.index + 1}: layout model failed ({type(exc).__name__}: {exc})")
                extra = []
            extra = [r for r in extra if not any(intersection(r.box, g.box) > 0.5 * area(r.box) for g in regions)]
        else:
            extra = _space_regions(page, content, captions, missing, walls, opts)
        if extra:
            regions = regions + extra
            pairs = match(captions, regions, content)
    spare = [r.box for j, r in enumerate(regions) if j not in pairs.values() and r.source != "space"]
    none = (0.0, 0.0, 0.0, 0.0)
    found = []
    for i, cap in enumerate(captions):
        if i not in pairs:
            found.append(_Found(cap, none, content.index, "none"))
            continue
        region = regions[pairs[i]]
        box = grow(region.box, cap.box, spare, [w for w in walls if w != cap.box], content.lines)
        if min(box[2] - box[0], box[3] - box[1]) < 3 * MIN_SIDE or text_heavy(box, content.lines, 0.5):
            found.append(_Found(cap, none, content.index, "none"))  # a rule or a table, not a figure
        else:
            found.append(_Found(cap, box, content.index, region.source))
    return found


def _ink_box(page: pdfium.PdfPage, content: PageContent, box: Box, opts: Options) -> Box | None:
    """The box of what is drawn (non-white pixels) inside ``box``, or None when it is blank."""
    scale = render_scale(box[2] - box[0], box[3] - box[1], 72.0, opts.limits)
    bitmap = page.render(scale=scale, crop=(box[0], content.height - box[3], content.width - box[2], box[1]))
    gray = bitmap.to_numpy()[:, :, :3].min(axis=2)
    ys, xs = np.nonzero(gray < 235)
    if len(xs) < 50:
        return None
    x0, x1 = np.percentile(xs, [0.2, 99.8])
    y0, y1 = np.percentile(ys, [0.2, 99.8])
    out = (float(box[0] + x0 / scale), float(box[1] + y0 / scale), float(box[0] + (x1 + 1) / scale),
           float(box[1] + (y1 + 1) / scale))
    if out[2] - out[0] < MIN_SIDE or out[3] - out[1] < MIN_SIDE:
        return None
    return out


def _crop(page: pdfium.PdfPage, content: PageContent, box: Box, opts: Options, out: Path) -> None:
    pad = 2.0
    x0, y0 = max(0.0, box[0] - pad), max(0.0, box[1] - pad)
    x1, y1 = min(content.width, box[2] + pad), min(content.height, box[3] + pad)
    scale = render_scale(x1 - x0, y1 - y0, opts.dpi, opts.limits)
    bitmap = page.render(scale=scale, crop=(x0, content.height - y1, content.width - x1, y0))
    bitmap.to_pil().save(out, format="PNG", optimize=False)


@dataclass
class PageFigure:
    """A figure as found on one page, with its caption's box (for evaluation and debugging)."""

    key: str
    label: str
    caption: str
    caption_box: Box
    box: Box | None  # None when no region was found for the caption
    continuation: bool = False


def page_figures(path: str | Path, page_index: int, options: Options | None = None) -> list[PageFigure]:
    """The figures and captions on one page (0-based index) of a PDF, boxes in points."""
    opts = options or Options()
    path = Path(path)
    doc = open_pdf(path, opts.limits)
    warnings: list[str] = []
    try:
        page = doc[page_index]
        try:
            content = read_page(page, page_index)
            if _is_scanned(content) and opts.ocr:
                _ocr_page(page, content, opts)
            return [PageFigure(f.caption.key, f.caption.label, f.caption.text, f.caption.box,
                               None if f.source == "none" else f.box, f.caption.continuation)
                    for f in _page_figures(page, content, opts, warnings)]
        finally:
            page.close()
    finally:
        doc.close()


def _points(box: Box) -> model.Box:
    """A page box as the model's, in PDF points rounded to 0.01."""
    return model.Box.points(round(float(v), 2) for v in box)


def _figure_id(key: str) -> str:
    return "fig" + re.sub(r"[^A-Za-z0-9]", "", key.replace("-s", "s"))


def parse_pdf(path: str | Path, xml: str | Path | None = None, image_dir: Path | None = None,
              options: Options | None = None) -> Paper:
    """One :class:`Paper` from a PDF (source ``"pdf"``), or merged with its JATS (``"jats+pdf"``).

    Figure crops are written as PNG files ``<figure_id>.png`` into ``image_dir`` when given (``Figure.image``
    is then the file name). The paper id is the file name's stem made safe (merged: the JATS paper's id).
    ``Figure.page`` is 1-based; ``Figure.bbox`` and ``Figure.caption_bbox`` (the caption's first part) are
    in PDF points, origin at the top-left of the page. Raises :class:`~figlink.errors.InputError` or
    :class:`~figlink.errors.ParseError` with a one-line reason for a bad file.
    """
    opts = options or Options()
    path = Path(path)
    paper_id = safe_id(path.stem)
    clock = TimeLimit(opts.limits.time_limit_s, path.name)
    doc = open_pdf(path, opts.limits)
    warnings: list[str] = []
    figures: dict[str, Figure] = {}
    extra_text: dict[str, list[str]] = {}
    body_pages: list[tuple[float, float, list[Line]]] = []
    vocab: Counter[str] = Counter()
    pictures = 0
    heads = RunningHeads()
    carry: Caption | None = None  # a caption cut off at the foot of the page before
    doi: str | None = None
    title: str | None = None
    if image_dir is not None:
        image_dir = Path(image_dir)
        image_dir.mkdir(parents=True, exist_ok=True)
    try:
        for i, page in iter_pages(doc, path.name, opts.limits, clock):
            if page.get_rotation():
                # boxes and crops share one frame: the page as its content stream draws it
                warnings.append(f"page {i + 1}: /Rotate {page.get_rotation()} ignored (read unrotated)")
                page.set_rotation(0)
            content = read_page(page, i)
            if content.graphics_skipped:
                warnings.append(f"page {i + 1}: draws over {MAX_PAGE_OBJECTS:,} objects; its graphics were not read")
            content.lines = heads.strip(content.lines)
            scanned = _is_scanned(content)
            pictures += scanned
            # a picture-only page in a document that has a text layer elsewhere is a figure page,
            # not a scan: OCR only while most pages so far have had no text
            if scanned and opts.ocr and pictures >= 0.5 * (i + 1):
                try:
                    _ocr_page(page, content, opts)
                    warnings.append(f"page {i + 1}: no text layer, read by OCR")
                except FiglinkError:
                    raise
                except Exception as exc:  # noqa: BLE001
                    warnings.append(f"page {i + 1}: OCR failed ({type(exc).__name__}: {exc})")
            if content.width * content.height > opts.limits.max_render_pixels / (opts.dpi / 72.0) ** 2:
                warnings.append(f"page {i + 1}: {content.width:.0f}x{content.height:.0f} points; "
                                "rendered below the requested resolution")
            taken: list[Box] = []
            found = _page_figures(page, content, opts, warnings, carry)
            carry = next((f.caption for f in reversed(found) if f.caption.open_end), None)
            for f in found:
                cap = f.caption
                taken.extend(ln.box for ln in cap.lines)
                if cap.continuation:
                    extra_text.setdefault(cap.key, []).append(cap.text)
                    continue
                if f.source != "none":
                    taken.append(f.box)
                if cap.key in figures:
                    warnings.append(f"page {i + 1}: a second caption for {cap.label} was skipped")
                    continue
                fig = Figure(figure_id=_figure_id(cap.key), label=cap.label, number=figure_number(cap.key),
                             caption=cap.text, page=i + 1, caption_bbox=PageBox(i + 1, _points(cap.box)))
                if "-s" in cap.key:
                    fig.parent = _figure_id(cap.key.split("-s", 1)[0])
                if f.source != "none":
                    fig.bbox = _points(f.box)
                    if image_dir is not None:
                        name = f"{fig.figure_id}.png"
                        _crop(page, content, f.box, opts, image_dir / name)
                        fig.image = name
                else:
                    warnings.append(f"page {i + 1}: no figure region found for {cap.label}")
                figures[cap.key] = fig
            vocab.update(w.lower() for ln in content.lines for w in _WORD.findall(ln.text))
            if i == 0:
                doi, title = find_doi(content.lines), find_title(content.lines, content.height)
            keep = [ln for ln in content.lines
                    if not any(inside(ln.box, t, 0.6) for t in taken)]
            body_pages.append((content.width, content.height, keep))
            clock.check(f"page {i + 1}")
    except pdfium.PdfiumError as exc:
        raise ParseError(f"{path.name}: unreadable PDF ({exc})") from exc
    finally:
        doc.close()

    for key, texts in extra_text.items():
        if key in figures:
            figures[key].caption = " ".join([figures[key].caption] + [t for t in texts if t]).strip()
    for fig in figures.values():
        fig.caption = resolve_hyphens(fig.caption, vocab)

    running = running_lines([(h, lines) for _, h, lines in body_pages])
    blocks: list[list[Line]] = []
    for w, h, lines in body_pages:
        blocks.extend(reading_order([ln for ln in lines if not is_margin(ln, h, running)], w))
    refs = inline_refs([resolve_hyphens(p, vocab) for p in paragraphs(blocks)], set(figures))
    for key, fig in figures.items():
        fig.inline_refs = refs.get(key, [])

    paper = Paper(paper_id=paper_id, source="pdf", doi=doi, title=title, figures=list(figures.values()),
                  warnings=warnings)
    if xml is not None:
        from figlink.ingest.merge import merge_jats_pdf
        from figlink.ingest.jats import parse_jats

        paper = merge_jats_pdf(parse_jats(Path(xml)), paper)
    return paper


__all__ = ["Options", "PageFigure", "page_figures", "parse_pdf"]

"""Panel gold from vector figures in PDFs: labels in the text layer, subcaptions from the JATS markup.

When a figure is drawn as vector graphics (not a pasted raster), its panel labels ("A", "B", …) are text
objects of the PDF: a bold, single capital letter standing alone on its line. Their positions are gold
for the panel count and for label reading, and each label point lies in its panel. The subcaptions come
from the figure's JATS caption, where eLife marks every label in bold: "(<bold>A</bold>) text …
(<bold>B, C</bold>) text …". A bold label opens a subcaption only at the start of the caption or after
a sentence end (";", ":", "."), so "Same as (<bold>A</bold>) …" stays text; text before the first label
is shared; text of a group label goes to each panel of the group (MedICaT's subcaption: the panel's own
and group text, nothing shared).

A figure enters the gold only when the letters found in its text layer are exactly the labels of its
JATS caption (and at least two): that rejects figures with letters inside plots (axis names, gel lanes)
and rasters whose labels cannot be read from the text layer. The figure region is found by figlink's
PDF reader and widened to hold every label; the crop is rendered at 150 dpi, label points are given in
its pixels.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

_LABEL_TEXT = re.compile(r"^\(?\s*([A-Z](?:\s*(?:[,–—-]|and)\s*[A-Z])*)\s*\)?$")
_BOLD_FONT = re.compile(r"(?i)bold|black|heavy|semibold|demi")


@dataclass
class GoldPanel:
    label: str                 # lower case
    point: tuple[float, float]  # the label's centre in crop pixels
    subcaption: str


@dataclass
class GoldFigure:
    key: str                   # "<folder>/<pdf name>#<figure label>"
    doc: str                   # the eLife folder (split key)
    label: str
    caption: str               # the JATS caption (title + paragraphs)
    image: Path                # the rendered crop
    panels: list[GoldPanel] = field(default_factory=list)
    size: tuple[int, int] = (0, 0)


def _expand(spec: str) -> list[str]:
    out: list[str] = []
    for part in re.split(r"\s*(?:,|and)\s*", spec.strip()):
        ends = re.split(r"\s*[–—-]\s*", part)
        if len(ends) == 2 and ends[0] and ends[1] and ends[0] <= ends[1]:
            out += [chr(c) for c in range(ord(ends[0]), ord(ends[1]) + 1)]
        elif part:
            out.append(part)
    return [x.lower() for x in out]


def caption_subcaptions(caption_el) -> tuple[str, dict[str, str]]:
    """(caption text, label → subcaption) from a JATS ``<caption>`` whose labels are bold."""
    pieces: list[tuple[str, Optional[list[str]]]] = []  # (text, labels when this piece is a label)

    def walk(el) -> None:
        tag = el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""
        if tag == "bold":
            text = "".join(el.itertext())
            m = _LABEL_TEXT.match(text.strip())
            if m:
                pieces.append((text, _expand(m.group(1))))
                return
        if el.text:
            pieces.append((el.text, None))
        for ch in el:
            walk(ch)
            if ch.tail:
                pieces.append((ch.tail, None))
        if tag in ("title", "p"):
            pieces.append((" ", None))

    walk(caption_el)
    text = " ".join("".join(t for t, _ in pieces).split())
    subs: dict[str, list[str]] = {}
    current: Optional[list[str]] = None
    buf: list[str] = []
    before = ""

    def flush() -> None:
        if current:
            seg = " ".join("".join(buf).split()).strip(" ()")
            for lab in current:
                subs.setdefault(lab, []).append(seg)

    for t, labs in pieces:
        if labs is not None:
            between = "".join(buf).strip(" ()")
            if current is not None and re.fullmatch(r"\s*(?:[,–—-]|and|to)?\s*", between):
                # "(C)–(H)", "(E, F)" written as two bold labels: one group
                if between.strip() in ("–", "—", "-", "to") and len(labs) == 1:
                    a, b = current[-1], labs[0]
                    labs = [chr(c) for c in range(ord(a) + 1, ord(b) + 1)] if a < b else labs
                current, buf = current + [x for x in labs if x not in current], []
                continue
            prior = (before + "".join(buf)).rstrip(" (")
            if not prior.strip() or prior.rstrip()[-1:] in ".;:":
                flush()
                current, buf = labs, []
                continue
            buf.append(t)
            continue
        if current is None:
            before += t
        else:
            buf.append(t)
    flush()
    return text, {k: " ".join(v) for k, v in subs.items()}


def text_layer_labels(page, region: tuple[float, float, float, float]) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Bold single capital letters standing alone inside ``region`` (top-left origin, points)."""
    import pypdfium2.raw as raw

    tp = page.get_textpage()
    H = page.get_size()[1]
    n = tp.count_chars()
    chars = []
    buf = ctypes.create_string_buffer(256)
    flags = ctypes.c_int()
    for i in range(n):
        c = tp.get_text_range(i, 1)
        if not c.strip():
            continue
        l, b, r, t = tp.get_charbox(i)
        chars.append((i, c, (l, H - t, r, H - b)))
    out = []
    x0, y0, x1, y1 = region
    for i, c, box in chars:
        if not (len(c) == 1 and "A" <= c <= "Z"):
            continue
        if not (x0 <= box[0] and box[2] <= x1 and y0 <= box[1] and box[3] <= y1):
            continue
        raw.FPDFText_GetFontInfo(tp.raw, i, buf, 256, ctypes.byref(flags))
        if not (_BOLD_FONT.search(buf.value.decode("latin-1")) or raw.FPDFText_GetFontWeight(tp.raw, i) >= 600):
            continue
        h = max(1.0, box[3] - box[1])
        alone = True
        for j, d, other in chars:
            if j == i:
                continue
            same_line = min(box[3], other[3]) - max(box[1], other[1]) > 0.3 * h
            near = max(other[0] - box[2], box[0] - other[2]) < 0.8 * h
            if same_line and near:
                alone = False
                break
        if alone:
            out.append((c, box))
    return out


def build_gold(folder: Path, cache: Path, dpi: int = 150) -> tuple[list[GoldFigure], list[str]]:
    """Gold figures of one eLife folder (its figures-only and article PDFs); and why others were left out."""
    import pypdfium2 as pdfium
    from lxml import etree

    from figlink.ingest.pdf import parse_pdf
    from figlink.text.mentions import figure_key

    notes: list[str] = []
    xmls = list(folder.glob("*.xml"))
    if not xmls:
        return [], notes
    root = etree.parse(str(xmls[0])).getroot()
    for sub in list(root.iter("sub-article")):
        sub.getparent().remove(sub)
    captions: dict[str, tuple[str, dict[str, str]]] = {}
    for fig in root.iter("fig"):
        lab = fig.find("label")
        cap = fig.find("caption")
        if lab is None or cap is None:
            continue
        k = figure_key("".join(lab.itertext()))
        if k:
            captions[k] = caption_subcaptions(cap)
    gold: list[GoldFigure] = []
    cache.mkdir(parents=True, exist_ok=True)
    for pdf in sorted(folder.glob("*.pdf")):
        paper = parse_pdf(pdf)
        doc = pdfium.PdfDocument(str(pdf))
        try:
            for f in paper.figures:
                k = figure_key(f.label)
                if not f.bbox or not f.page or k not in captions:
                    continue
                text, subs = captions[k]
                page = doc[f.page - 1]
                W, H = page.get_size()
                x0, y0, x1, y1 = f.bbox
                region = (max(0, x0 - 12), max(0, y0 - 12), min(W, x1 + 12), min(H, y1 + 12))
                labels = text_layer_labels(page, region)
                found = sorted(c.lower() for c, _ in labels)
                if len(subs) < 2:
                    continue
                if found != sorted(subs):
                    notes.append(f"{pdf.name} {f.label}: text-layer letters {''.join(found) or '-'} "
                                 f"!= caption labels {''.join(sorted(subs))}")
                    continue
                cx0 = min([x0] + [b[0] - 2 for _, b in labels])
                cy0 = min([y0] + [b[1] - 2 for _, b in labels])
                cx1 = max([x1] + [b[2] + 2 for _, b in labels])
                cy1 = max([y1] + [b[3] + 2 for _, b in labels])
                scale = dpi / 72
                img = page.render(scale=scale, crop=(cx0, H - cy1, W - cx1, cy0)).to_pil()
                out = cache / f"{pdf.stem}_{k}.png"
                img.save(out)
                panels = [GoldPanel(c.lower(), (((b[0] + b[2]) / 2 - cx0) * scale, ((b[1] + b[3]) / 2 - cy0) * scale),
                                    subs[c.lower()]) for c, b in labels]
                gold.append(GoldFigure(f"{folder.name}/{pdf.name}#{f.label}", folder.name, f.label or k, text, out,
                                       sorted(panels, key=lambda p: p.label), img.size))
        finally:
            doc.close()
    return gold, notes

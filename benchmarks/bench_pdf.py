"""PDF ingestion against a naive extractor, on real papers.

* eLife (article PDF vs its own JATS): main-figure recall/precision by figure number, caption WER
  against the JATS caption (a missed caption counts 100), inline-reference recall against the xrefs
  of the article body (sub-articles such as the decision letter are not in the PDF); pairs whose PDF
  is another article, or whose XML has no figures, are skipped and named. The figures-only PDFs are
  scored on every figure, figure supplements included.
* DocBank (arXiv pages with labelled tokens, 0–1000 coordinates, 0-based page index): share of
  labelled figure regions and figure-caption regions found with IoU ≥ 0.7, per labelled box and per
  figure (the boxes of subfigures set side by side over one caption taken together).
* DocBank also: box recall and precision of figures (adjacent boxes merged) and captions at IoU >= 0.5 and
  0.7, and caption text WER against the caption's labelled tokens (label prefix dropped on both sides).
* Speed: pages/s per core, seconds per paper (p50/p99), peak memory on a 300-page PDF.

Split (issue 15): eLife by folder name, DocBank by arXiv paper id (``figlink.eval.splits.split_of``); every
table shows tune and check with the naive extractor of the same run. Target on check: caption WER <= 1/3
of naive's; no row below naive. ``--failures`` writes the tune part's missed figures and captions with
WER > 10 to benchmarks/out/pdf_tune_failures.jsonl.

The naive baseline (pdfplumber) merges embedded image boxes per page region and takes text blocks
that start with "Figure N" as captions, each paired with the nearest image region.
Usage: ``python benchmarks/bench_pdf.py [--part tune|check|both] [--quick] [--failures] [--no-memory]``.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import add_part_args, parts_of, print_table, require_shared_data, split_table, write_failures  # noqa: E402

import jiwer  # noqa: E402
import numpy as np  # noqa: E402
import pdfplumber  # noqa: E402
import pypdfium2 as pdfium  # noqa: E402

from figlink.eval.splits import doc_key, split_of  # noqa: E402
from figlink.ingest.jats import parse_jats  # noqa: E402
from figlink.ingest.pdf import page_figures, parse_pdf  # noqa: E402
from figlink.ingest.pdf_page import iou  # noqa: E402
from figlink.text.mentions import figure_key  # noqa: E402

Box = tuple[float, float, float, float]
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": "\"", "\u201d": "\""})
_NAIVE_CAPTION = re.compile(r"^\s*(?:Figure|Fig\.?|FIGURE|FIG\.?)\s*(\d+)\s*[.:|]?\s*")


# ------------------------------------------------------------------------------------ naive baseline

@dataclass
class NaiveFigure:
    key: str
    caption: str
    page: int
    box: Box | None
    caption_box: Box
    refs: list[str] = field(default_factory=list)


def _merge_boxes(boxes: list[Box], tol: float = 10.0) -> list[Box]:
    boxes = list(boxes)
    changed = True
    while changed:
        changed = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                if a[0] - tol <= b[2] and b[0] - tol <= a[2] and a[1] - tol <= b[3] and b[1] - tol <= a[3]:
                    boxes[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    boxes.pop(j)
                    changed = True
                    break
            if changed:
                break
    return boxes


def _text_blocks(page: pdfplumber.page.Page) -> list[tuple[str, Box]]:
    lines = page.extract_text_lines(return_chars=False)
    blocks: list[tuple[str, Box]] = []
    last_h = 0.0
    for ln in lines:
        box = (ln["x0"], ln["top"], ln["x1"], ln["bottom"])
        h = max(box[3] - box[1], last_h)
        last_h = box[3] - box[1]
        if blocks:
            text, b = blocks[-1]
            if -h <= box[1] - b[3] < 0.8 * h and min(b[2], box[2]) - max(b[0], box[0]) > 0:
                blocks[-1] = (text + " " + ln["text"], (min(b[0], box[0]), b[1], max(b[2], box[2]), max(b[3], box[3])))
                continue
        blocks.append((ln["text"], box))
    return blocks


def naive_extract(path: Path, page_index: int | None = None) -> list[NaiveFigure]:
    """The baseline: image regions per page + "Figure N" text blocks, nearest pairs."""
    out: dict[str, NaiveFigure] = {}
    body: list[str] = []
    with pdfplumber.open(str(path)) as pdf:
        pages = pdf.pages if page_index is None else [pdf.pages[page_index]]
        for page in pages:
            regions = _merge_boxes([(im["x0"], im["top"], im["x1"], im["bottom"]) for im in page.images])
            for text, box in _text_blocks(page):
                m = _NAIVE_CAPTION.match(text)
                if m is None or m.group(1) in out:
                    body.append(text)
                    continue
                best = min(regions, key=lambda r: min(abs(box[1] - r[3]), abs(r[1] - box[3])), default=None)
                out[m.group(1)] = NaiveFigure(m.group(1), text[m.end():], page.page_number, best, box)
            page.flush_cache()
    text = " ".join(body)
    for sent in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text):
        for m in re.finditer(r"Fig(?:ure)?s?\.?\s*(\d+)", sent):
            if m.group(1) in out:
                out[m.group(1)].refs.append(sent)
    return list(out.values())


# --------------------------------------------------------------------------------------------- eLife

def _norm_words(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.translate(_QUOTES)
    text = re.sub(r"\s+", " ", text)
    return text.strip()


def caption_wer(ref: str, hyp: str | None) -> float:
    if hyp is None or not hyp.strip():
        return 100.0
    r, h = _norm_words(ref), _norm_words(hyp)
    if not r:
        return 0.0
    return 100.0 * min(1.0, jiwer.wer(r, h))


def _tokens(s: str) -> set[str]:
    return set(re.findall(r"\w+", s.lower()))


def ref_found(gold: str, preds: list[str]) -> bool:
    g = _tokens(gold)
    if not g:
        return True
    return any(len(g & _tokens(p)) / min(len(g), max(1, len(_tokens(p)))) >= 0.7 for p in preds)


def article_only(xml_path: Path):  # type: ignore[no-untyped-def]
    """The JATS paper without its sub-articles (decision letter, author response): not in the PDF."""
    from lxml import etree

    from figlink.ingest.jats import parse_jats_bytes

    root = etree.fromstring(xml_path.read_bytes())
    for sub in list(root.iter("sub-article")):
        sub.getparent().remove(sub)
    return parse_jats_bytes(etree.tostring(root), name=xml_path.name)


def elife_pairs(data: Path) -> list[tuple[Path, Path]]:
    pairs = []
    for d in sorted((data / "pdf" / "elife").iterdir()):
        for pdf in sorted(d.glob("*.pdf")):
            if pdf.stem.endswith("-figures"):
                continue
            xml = d / (pdf.stem + ".xml")
            if xml.exists():
                pairs.append((pdf, xml))
    return pairs


def _main_key(label: str | None) -> str | None:
    k = figure_key(label)
    return k if k and k.isdigit() else None


def same_article(pdf_path: Path, doi: str | None) -> bool:
    """True when the PDF's first pages carry the XML's DOI number (a dev pair can be mismatched)."""
    nums = re.findall(r"\d{4,}", doi or "")
    if not nums:
        return True
    with pdfium.PdfDocument(str(pdf_path)) as doc:
        text = " ".join(doc[i].get_textpage().get_text_range() for i in range(min(2, len(doc))))
    return nums[-1] in text


def _new_stats() -> dict:
    return {"tp": 0, "gold": 0, "pred": 0, "wer": [], "refs": 0, "refs_found": 0, "docs": 0}


def _score_figures(st: dict, gold: dict, got: dict, captions: dict, refs: bool) -> list[tuple[str, float]]:
    """Add one document to ``st``; returns (figure key, caption WER) per gold figure."""
    st["docs"] += 1
    st["gold"] += len(gold)
    st["pred"] += len(got)
    st["tp"] += len(set(gold) & set(got))
    out = []
    for k, g in gold.items():
        w = caption_wer(g.caption, captions[k][0] if k in captions else None)
        st["wer"].append(w)
        out.append((k, w))
        if refs:
            for r in g.inline_refs:
                st["refs"] += 1
                st["refs_found"] += ref_found(r.text, got[k][1] if k in got else [])
    return out


def bench_elife(data: Path, parts: tuple[str, ...], fails: list[dict] | None) -> tuple[dict, list[float], int, list[str]]:
    """Article PDFs against their JATS, per part of the split (by folder name)."""
    stats = {(n, p): _new_stats() for n in ("naive", "figlink") for p in parts}
    lat: list[float] = []
    pages = 0
    notes: list[str] = []
    for pdf_path, xml_path in elife_pairs(data):
        part = split_of(doc_key(pdf_path.parent.name))
        if part not in parts:
            continue
        xml_paper = article_only(xml_path)
        gold = {k: f for f in xml_paper.figures if (k := _main_key(f.label))}
        if not gold:
            notes.append(f"{pdf_path.name}: skipped, its XML has no figures")
            continue  # a registered report, an accepted manuscript without figures
        if not same_article(pdf_path, xml_paper.doi):
            notes.append(f"{pdf_path.name}: skipped, the PDF is not the article of its XML ({xml_paper.doi})")
            continue
        with pdfium.PdfDocument(str(pdf_path)) as doc:
            pages += len(doc)
        t = time.process_time()
        ours = parse_pdf(pdf_path)
        lat.append(time.process_time() - t)
        pred = {k: (f.caption, [r.text for r in f.inline_refs]) for f in ours.figures
                if (k := _main_key(f.label)) and f.bbox is not None}
        naive_found = naive_extract(pdf_path)
        naive_all = {f.key: (f.caption, f.refs) for f in naive_found}
        naive = {f.key: (f.caption, f.refs) for f in naive_found if f.box is not None}
        captions = {"naive": naive_all, "figlink": pred}  # the baseline's captions count even without an image
        for name, got in (("naive", naive), ("figlink", pred)):
            scored = _score_figures(stats[name, part], gold, got, captions[name], refs=True)
            if fails is not None and name == "figlink" and part == "tune":
                fails.extend(_figure_failures(pdf_path, gold, got, captions[name], scored))
    return stats, lat, pages, notes


def _figure_failures(pdf_path: Path, gold: dict, got: dict, captions: dict, scored: list) -> list[dict]:
    out = []
    for k, w in scored:
        if k not in got or w > 10.0:
            out.append({"pdf": f"{pdf_path.parent.name}/{pdf_path.name}", "figure": k, "found": k in got,
                        "caption_wer": round(w, 2), "gold_caption": gold[k].caption,
                        "predicted_caption": captions[k][0] if k in captions else None})
    return out


def bench_figure_pdfs(data: Path, lat: list[float], parts: tuple[str, ...], fails: list[dict] | None) -> tuple[dict, int]:
    """eLife figures-only PDFs: every figure, figure supplements included, against the JATS."""
    stats = {(n, p): _new_stats() for n in ("naive", "figlink") for p in parts}
    pages = 0
    for d in sorted((data / "pdf" / "elife").iterdir()):
        part = split_of(doc_key(d.name))
        if part not in parts:
            continue
        for pdf_path in sorted(d.glob("*-figures.pdf")):
            xml_path = d / (pdf_path.stem[: -len("-figures")] + ".xml")
            if not xml_path.exists():
                continue
            gold = {k: f for f in article_only(xml_path).figures
                    if (k := figure_key(f.label)) and re.fullmatch(r"\d+(-s\d+)?", k)}
            with pdfium.PdfDocument(str(pdf_path)) as doc:
                pages += len(doc)
            t = time.process_time()
            paper = parse_pdf(pdf_path)
            lat.append(time.process_time() - t)
            ours = {k: (f.caption, []) for f in paper.figures if (k := figure_key(f.label)) and f.bbox}
            naive = {f.key: (f.caption, []) for f in naive_extract(pdf_path) if f.box is not None}
            for name, got in (("naive", naive), ("figlink", ours)):
                scored = _score_figures(stats[name, part], gold, got, got, refs=False)
                if fails is not None and name == "figlink" and part == "tune":
                    fails.extend(_figure_failures(pdf_path, gold, got, got, scored))
    return stats, pages


def elife_rows(stats: dict, refs: bool) -> list[list[str]]:
    def get(name: str, part: str, fn) -> str:
        st = stats.get((name, part))
        return fn(st) if st and st["docs"] else "-"

    rec = lambda st: f"{100 * st['tp'] / max(1, st['gold']):.1f}%"  # noqa: E731
    prec = lambda st: f"{100 * st['tp'] / max(1, st['pred']):.1f}%"  # noqa: E731
    wer = lambda st: f"{np.mean(st['wer']):.2f}" if st["wer"] else "-"  # noqa: E731
    ref = lambda st: f"{100 * st['refs_found'] / max(1, st['refs']):.1f}%"  # noqa: E731
    n = lambda st: f"{st['docs']} PDFs, {st['gold']} figures" + (f", {st['refs']} refs" if refs else "")  # noqa: E731
    naive_check = stats.get(("naive", "check"))
    wer_target = (f"<= {np.mean(naive_check['wer']) / 3:.2f} (naive / 3)" if naive_check and naive_check["wer"]
                  else "<= naive / 3")
    rows = [["figure recall", get("figlink", "tune", rec), get("figlink", "check", rec), get("naive", "tune", rec),
             get("naive", "check", rec), ">= naive"],
            ["figure precision", get("figlink", "tune", prec), get("figlink", "check", prec), get("naive", "tune", prec),
             get("naive", "check", prec), ">= naive"],
            ["caption WER (%, missed = 100)", get("figlink", "tune", wer), get("figlink", "check", wer),
             get("naive", "tune", wer), get("naive", "check", wer), wer_target]]
    if refs:
        rows.append(["inline-ref recall", get("figlink", "tune", ref), get("figlink", "check", ref),
                     get("naive", "tune", ref), get("naive", "check", ref), ">= naive"])
    rows.append(["gold", get("figlink", "tune", n), get("figlink", "check", n), "", "", ""])
    return rows


# ------------------------------------------------------------------------------------------- DocBank

def _components(boxes: list[Box], tol: float) -> list[list[int]]:
    parent = list(range(len(boxes)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i], boxes[j]
            if a[0] - tol <= b[2] and b[0] - tol <= a[2] and a[1] - tol <= b[3] and b[1] - tol <= a[3]:
                parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(boxes)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def docbank_gold(txt: Path, w: float, h: float) -> tuple[list[Box], list[Box], list[Box]]:
    """Labelled figure regions (nested boxes merged) and figure-caption regions, in points.

    DocBank labels a caption's "Fig. 3." prefix as paragraph; it is put back into the caption box.
    """
    tokens: list[tuple[str, Box, str]] = []
    for line in txt.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.rstrip("\r").split("\t")
        if len(parts) < 10:
            continue
        box = (int(parts[1]) * w / 1000, int(parts[2]) * h / 1000, int(parts[3]) * w / 1000, int(parts[4]) * h / 1000)
        tokens.append((parts[0], box, parts[9]))
    figs = [b for _, b, lab in tokens if lab == "figure"]
    gold_figs = [_union([figs[i] for i in g]) for g in _components(figs, 0.0)]
    caps: list[int] = [i for i, t in enumerate(tokens) if t[2] == "caption"]
    gold_caps = []
    texts: list[str] = []
    for g in _components([tokens[i][1] for i in caps], 8.0):
        idx = sorted(caps[k] for k in g)
        first = idx[0]
        label = [j for j in range(max(0, first - 3), first)
                 if tokens[j][2] != "caption" and re.match(r"^(fig(ure)?s?\.?|\d+[.:]?|[A-Z]?\d+[.:]?)$", tokens[j][0], re.I)]
        if not any(re.match(r"^fig", tokens[j][0], re.I) for j in label):
            if not re.match(r"^\s*(fig|figure)\b", tokens[first][0], re.I):
                continue
        gold_caps.append(_union([tokens[j][1] for j in label + idx]))
        texts.append(" ".join(tokens[j][0] for j in label + idx))
    # a figure drawn as several included files (subfigures side by side over one caption, or over one
    # "Figure N" label that DocBank left unlabelled) is one figure
    anchors = gold_caps + [_union([tokens[j][1], tokens[j + 1][1]]) for j in range(len(tokens) - 1)
                           if re.match(r"^(fig|figure)\.?$", tokens[j][0], re.I)
                           and re.match(r"^[A-Z]?\d+[.:]?$", tokens[j + 1][0])]
    owner = [_nearest_caption(b, anchors) for b in gold_figs]
    for k, b in enumerate(gold_figs):  # a box beside an owned one, under the same centred label
        if owner[k] is not None:
            continue
        for m, o in enumerate(owner):
            if o is None:
                continue
            c, other = anchors[o], gold_figs[m]
            vov = min(b[3], other[3]) - max(b[1], other[1])
            hgap = max(b[0], other[0]) - min(b[2], other[2])
            u = _union([b, other])
            if vov > 0.5 * min(b[3] - b[1], other[3] - other[1]) and hgap < 20 and u[0] <= (c[0] + c[2]) / 2 <= u[2]:
                owner[k] = o
                break
    groups: dict[object, list[Box]] = {}
    for k, (b, o) in enumerate(zip(gold_figs, owner)):
        groups.setdefault(o if o is not None else ("alone", k), []).append(b)
    merged = [_union(g) for g in groups.values()]
    docbank_gold.caption_texts = texts  # type: ignore[attr-defined]  (read by bench_docbank)
    return gold_figs, merged, gold_caps


def _nearest_caption(fig: Box, caps: list[Box], reach: float = 80.0) -> int | None:
    best, best_d = None, reach
    for i, c in enumerate(caps):
        if min(fig[2], c[2]) - max(fig[0], c[0]) <= 0:
            continue
        d = c[1] - fig[3] if c[1] >= fig[3] - 2 else (fig[1] - c[3] if fig[1] >= c[3] - 2 else None)
        if d is not None and d < best_d:
            best, best_d = i, d
    return best


_LABEL_PREFIX = re.compile(r"^\s*(?:fig(?:ure)?s?\.?|FIG(?:URE)?\.?)\s*[A-Z]?\d+\s*[.:|]?\s*", re.I)


def _caption_body(text: str) -> str:
    """A caption without its "Figure N." label (the gold tokens hold it, extractors may not)."""
    return _LABEL_PREFIX.sub("", text or "", count=1)


def arxiv_id(txt: Path) -> str:
    """The arXiv paper id in a DocBank file name ("10.tar_1701.04170.gz_…" → "1701.04170")."""
    m = re.search(r"_(\d{4}\.\d{4,5})\.gz", txt.name)
    return m.group(1) if m else txt.name


def bench_docbank(data: Path, limit: int | None, parts: tuple[str, ...],
                  fails: list[dict] | None) -> tuple[dict, list[float], int]:
    """Figure and caption boxes (recall and precision at IoU >= .5 and .7) and caption text WER per part."""
    folder = data / "pdf" / "docbank"
    counts = {(n, p): {"fig": 0, "cap": 0, "pfig": 0, "pcap": 0, "pages": 0, "wer": [],
                       **{f"{k}{t}": 0 for k in ("fig_hit", "cap_hit", "pfig_ok", "pcap_ok") for t in (5, 7)}}
              for n in ("naive", "figlink") for p in parts}
    lat: list[float] = []
    skipped = 0
    txts = sorted(folder.glob("*.txt"))
    for txt in txts[:limit] if limit else txts:
        m = re.match(r"(.*)_(\d+)\.txt$", txt.name)
        if m is None:
            continue
        part = split_of(arxiv_id(txt))
        if part not in parts:
            continue
        pdf_path = folder / f"{m.group(1)}_black.pdf"
        if not pdf_path.exists():
            continue
        index = int(m.group(2))
        try:
            with pdfium.PdfDocument(str(pdf_path)) as doc:
                if index >= len(doc):
                    continue
                w, h = doc[index].get_size()
        except pdfium.PdfiumError:
            skipped += 1
            continue
        gold_figs, gold_merged, gold_caps = docbank_gold(txt, w, h)
        gold_texts = docbank_gold.caption_texts  # type: ignore[attr-defined]
        if not gold_figs and not gold_caps:
            continue
        t = time.process_time()
        ours = [f for f in page_figures(pdf_path, index) if not f.continuation]
        lat.append(time.process_time() - t)
        preds = {"figlink": ([f.box for f in ours if f.box], [(f.caption_box, f.caption) for f in ours])}
        naive = naive_extract(pdf_path, index)
        preds["naive"] = ([f.box for f in naive if f.box], [(f.caption_box, f.caption) for f in naive])
        for name, (pf, pc) in preds.items():
            c = counts[name, part]
            c["pages"] += 1
            for thr, tag in ((0.5, 5), (0.7, 7)):
                c[f"fig_hit{tag}"] += sum(max((iou(g, p) for p in pf), default=0.0) >= thr for g in gold_merged)
                c[f"cap_hit{tag}"] += sum(max((iou(g, b) for b, _ in pc), default=0.0) >= thr for g in gold_caps)
                c[f"pfig_ok{tag}"] += sum(max((iou(g, p) for g in gold_merged + gold_figs), default=0.0) >= thr for p in pf)
                c[f"pcap_ok{tag}"] += sum(max((iou(g, b) for g in gold_caps), default=0.0) >= thr for b, _ in pc)
            c["fig"] += len(gold_merged)
            c["cap"] += len(gold_caps)
            c["pfig"] += len(pf)
            c["pcap"] += len(pc)
            for gbox, gtext in zip(gold_caps, gold_texts):
                best = max(pc, key=lambda bc: iou(gbox, bc[0]), default=None)
                hyp = _caption_body(best[1]) if best is not None and iou(gbox, best[0]) > 0 else None
                wv = caption_wer(_caption_body(gtext), hyp)
                c["wer"].append(wv)
                if fails is not None and name == "figlink" and part == "tune" and wv > 10.0:
                    fails.append({"docbank_page": txt.name, "caption_wer": round(wv, 2), "gold_caption": gtext,
                                  "predicted_caption": hyp, "gold_box": [round(v, 1) for v in gbox]})
    return counts, lat, skipped


def docbank_rows(counts: dict) -> list[list[str]]:
    def get(name: str, part: str, num: str, den: str) -> str:
        c = counts.get((name, part))
        if not c or not c["pages"]:
            return "-"
        return f"{100 * c[num] / c[den]:.1f}%" if c[den] else "-"

    def wer(name: str, part: str) -> str:
        c = counts.get((name, part))
        return f"{np.mean(c['wer']):.2f}" if c and c["wer"] else "-"

    rows = []
    for what, hit, ok, den_g, den_p in (("figure", "fig_hit", "pfig_ok", "fig", "pfig"),
                                        ("caption", "cap_hit", "pcap_ok", "cap", "pcap")):
        for tag, thr in ((5, "0.5"), (7, "0.7")):
            rows.append([f"{what} box recall, IoU >= {thr}"] + [get(n, p, f"{hit}{tag}", den_g) for n in ("figlink", "naive")
                                                               for p in ("tune", "check")] + [">= naive"])
            rows.append([f"{what} box precision, IoU >= {thr}"] + [get(n, p, f"{ok}{tag}", den_p) for n in ("figlink", "naive")
                                                                  for p in ("tune", "check")] + [">= naive"])
    naive_check = counts.get(("naive", "check"))
    target = f"<= {np.mean(naive_check['wer']) / 3:.2f} (naive / 3)" if naive_check and naive_check["wer"] else "<= naive / 3"
    rows.append(["caption text WER (%, labelled tokens)", wer("figlink", "tune"), wer("figlink", "check"),
                 wer("naive", "tune"), wer("naive", "check"), target])

    def n(part: str) -> str:
        c = counts.get(("figlink", part))
        return f"{c['pages']} pages, {c['fig']} figures, {c['cap']} captions" if c else "-"
    rows.append(["gold", n("tune"), n("check"), "", "", ""])
    return rows


# --------------------------------------------------------------------------------------------- speed

def build_long_pdf(sources: list[Path], n_pages: int, out: Path) -> int:
    """A PDF of ``n_pages`` real pages, made by concatenating the sources' pages over and over."""
    dest = pdfium.PdfDocument.new()
    while len(dest) < n_pages:
        for src in sources:
            with pdfium.PdfDocument(str(src)) as s:
                take = min(len(s), n_pages - len(dest))
                dest.import_pages(s, list(range(take)))
            if len(dest) >= n_pages:
                break
    dest.save(str(out))
    n = len(dest)
    dest.close()
    return n


_MEM_CHILD = """
import resource, sys, time
from figlink.ingest.pdf import parse_pdf
t = time.perf_counter()
p = parse_pdf(sys.argv[1])
print(len(p.figures), time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def bench_memory(sources: list[Path], n_pages: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long.pdf"
        n = build_long_pdf(sources, n_pages, path)
        res = subprocess.run([sys.executable, "-c", _MEM_CHILD, str(path)], capture_output=True, text=True,
                             check=True)
        figs, secs, rss = res.stdout.split()
    return [f"{n}-page PDF", f"{n / float(secs):.1f} pages/s", f"{float(secs):.1f} s", f"{float(rss):.0f} MB peak RSS",
            f"{figs} figures"]


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_part_args(ap)
    ap.add_argument("--no-memory", action="store_true", help="skip the long-document memory run")
    args = ap.parse_args(argv)
    data = require_shared_data("the PDF benchmark")
    parts = parts_of(args.part)
    fails: list[dict] | None = [] if args.failures and "tune" in parts else None
    t0 = time.perf_counter()
    stats, lat, pages, notes = bench_elife(data, parts, fails)
    split_table("eLife article PDFs vs their JATS (main figures; split by folder)", elife_rows(stats, True), parts, "naive")
    for note in notes:
        print("  note:", note)
    fstats, fpages = bench_figure_pdfs(data, lat, parts, fails)
    pages += fpages
    split_table("eLife figures-only PDFs vs their JATS (figures and figure supplements)", elife_rows(fstats, False),
                parts, "naive")
    counts, dlat, skipped = bench_docbank(data, 12 if args.quick else None, parts, fails)
    split_table("DocBank arXiv pages (split by arXiv id): boxes and caption text", docbank_rows(counts), parts, "naive")
    if skipped:
        print(f"  note: {skipped} DocBank PDFs unreadable by both")
    speed = []
    if lat:
        a = np.asarray(lat)
        speed.append(["eLife PDFs (figlink)", f"{pages / a.sum():.2f} pages/s/core", f"{np.percentile(a, 50):.2f} s",
                      f"{np.percentile(a, 99):.2f} s", f"{len(a)} PDFs, {pages} pages"])
    if dlat:
        d = np.asarray(dlat)
        speed.append(["DocBank single pages", f"{len(d) / d.sum():.2f} pages/s/core", f"{np.percentile(d, 50):.2f} s",
                      f"{np.percentile(d, 99):.2f} s", f"{len(d)} pages"])
    print_table("Speed (CPU time, one core)", ["set", "throughput", "p50", "p99", "n"], speed)
    if not args.no_memory:
        sources = [p for p, _ in elife_pairs(data)]
        mem = bench_memory(sources, 60 if args.quick else 300)
        print_table("Long document (streamed page by page, own process)",
                    ["input", "throughput", "wall", "memory", "found"], [mem])
    print(f"\nbench_pdf: {time.perf_counter() - t0:.0f} s; this process peaked at "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if fails is not None:
        write_failures("pdf", fails)


if __name__ == "__main__":
    main()

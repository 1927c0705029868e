"""The data model v2: JSON derived from the dataclasses, old (v1) papers and corpora still read, boxes that
name their space, panels that point at their subcaptions, mention spans, PDF caption boxes."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from figlink.corpus import Corpus
from figlink.exports import export
from figlink.ingest.jats import parse_jats
from figlink.ingest.pdf import parse_pdf
from figlink.model import SCHEMA_VERSION, Box, CaptionSplit, Figure, InlineRef, OcrText, Panel, Paper, Subcaption

REPO = Path(__file__).resolve().parents[1]
V1 = REPO / "tests" / "data" / "v1"
PDF = REPO / "samples" / "elife" / "elife-15600.pdf"
V2_KEYS = frozenset({"schema_version", "bbox_space", "caption_bbox", "mention_spans", "subcaption_indices"})


def without_v2(value):
    """A paper's JSON without the keys v2 added: what a v1 reader sees."""
    if isinstance(value, dict):
        return {k: without_v2(v) for k, v in value.items() if k not in V2_KEYS}
    if isinstance(value, list):
        return [without_v2(v) for v in value]
    return value


def mentions_located(ref: InlineRef) -> bool:
    """The spans' texts, each once, joined as figlink joins several mentions, are the mention (a mention can
    hold "; " itself: "(…; Figure 1F; Figure 2B,C)" is one run of xrefs)."""
    texts = dict.fromkeys(ref.text[a:b] for a, b in ref.mention_spans)
    return bool(texts) and "; ".join(texts) == ref.mention


@pytest.fixture(scope="module")
def v1_paper() -> dict:
    return json.loads((V1 / "elife-15600.paper.json").read_text())


# ----------------------------------------------------------------------------------- JSON and versions

def test_a_v1_paper_reads_and_writes_every_v1_field_as_it_was(v1_paper):
    assert "schema_version" not in v1_paper  # written by figlink before v2
    paper = Paper.from_dict(v1_paper)
    assert paper.schema_version == SCHEMA_VERSION == 2
    out = paper.to_dict()
    assert out["schema_version"] == 2 and without_v2(out) == v1_paper
    assert Paper.from_json(paper.to_json()) == paper  # v2 round-trips exactly


def test_v1_panel_subcaptions_become_indices_of_the_caption_split(v1_paper):
    fig1 = Paper.from_dict(v1_paper).figure("fig1")
    subs = fig1.caption_split.subcaptions
    by_label = {p.label: p for p in fig1.panels}
    assert by_label["a"].subcaption_indices == [0] and subs[0].labels == ["a"]
    # panel c was aligned with all three subcaptions about c: the whole text, then its left and right parts
    assert by_label["c"].subcaption_indices == [2, 3, 4]
    assert [subs[k].positions for k in (2, 3, 4)] == [[], ["left"], ["right"]]
    old = {p["label"]: p["subcaption"] for p in v1_paper["figures"][0]["panels"]}
    assert {p.label: fig1.panel_subcaption(p) for p in fig1.panels} == old


def test_v1_inline_refs_get_the_spans_of_their_mentions(v1_paper):
    paper = Paper.from_dict(v1_paper)
    refs = [r for f in paper.figures for r in f.inline_refs]
    assert len(refs) == 32 and all(mentions_located(r) for r in refs)
    two = next(r for r in refs if r.mention == "Figure 2B; Figure 2A")
    assert [two.text[a:b] for a, b in two.mention_spans] == ["Figure 2B", "Figure 2A"]


def test_boxes_are_written_as_v1_lists_with_their_space():
    fig = Figure("f1", page=2, bbox=Box.points((10, 20, 300, 400)),
                 caption_split=CaptionSplit(subcaptions=[Subcaption(["a"], "Left panel.")]),
                 panels=[Panel("a", Box.pixels((0, 0, 50.5, 60)), [0], 0.9)],
                 ocr=[OcrText("Time (s)", Box.pixels((1, 2, 3, 4)), "axis_title")])
    d = fig.to_dict()
    assert (d["page"], d["bbox"], d["bbox_space"], d["caption_bbox"]) == (2, [10.0, 20.0, 300.0, 400.0], "pdf_points", None)
    assert d["panels"] == [{"label": "a", "bbox": [0.0, 0.0, 50.5, 60.0], "bbox_space": "image_pixels",
                            "subcaption_indices": [0], "subcaption": "Left panel.", "score": 0.9}]
    assert d["ocr"][0] == {"text": "Time (s)", "bbox": [1.0, 2.0, 3.0, 4.0], "bbox_space": "image_pixels",
                           "role": "axis_title", "score": None}
    assert Figure.from_dict(d) == fig and Figure("f2").to_dict()["bbox_space"] is None
    x0, y0, x1, y1 = fig.panels[0].bbox
    assert (x1, fig.panels[0].bbox[3], fig.panels[0].bbox.width) == (50.5, 60.0, 50.5)


def test_bad_values_are_errors_when_read():
    paper = Paper("P1", "jats", figures=[Figure("f1", ocr=[OcrText("x", Box.pixels((0, 0, 1, 1)), "legend")])]).to_dict()
    paper["figures"][0]["ocr"][0]["role"] = "<img src=x>"
    with pytest.raises(ValueError, match="OcrText.role"):
        Paper.from_dict(paper)
    paper["figures"][0]["ocr"][0].update(role="legend", bbox_space="inches")
    with pytest.raises(ValueError, match="bbox_space"):
        Paper.from_dict(paper)
    with pytest.raises(ValueError, match="schema_version 3"):
        Paper.from_dict({**paper, "schema_version": 3})


# ---------------------------------------------------------------------------------- spans and PDF boxes

def test_jats_mention_spans_locate_every_mention_in_the_samples():
    refs = [r for p in sorted((REPO / "samples" / "jats").glob("*.*ml")) for f in parse_jats(p).figures
            for r in f.inline_refs]
    assert len(refs) == 224 and all(mentions_located(r) for r in refs)
    assert sum(not r.tagged for r in refs) == 5 and sum(len(r.mention_spans) > 1 for r in refs) == 20
    # the xref "Figure 1A" of elife-15600's first citing sentence, with its figure word
    fig1 = parse_jats(REPO / "samples" / "elife" / "elife-15600.xml").figure("fig1")
    ref = next(r for r in fig1.inline_refs if r.text.startswith("We isolated inputs"))
    assert ref.mention_spans == [[len(ref.text) - len("Figure 1A)."), len(ref.text) - 2]]


@pytest.fixture(scope="module")
def pdf_paper() -> Paper:
    return parse_pdf(PDF)


def test_pdf_mention_spans_and_caption_boxes(pdf_paper):
    refs = [r for f in pdf_paper.figures for r in f.inline_refs]
    assert len(refs) > 20 and all(not r.tagged and mentions_located(r) for r in refs)
    doc = pdfium.PdfDocument(PDF)
    try:
        for f in pdf_paper.figures:
            cb = f.caption_bbox
            assert cb is not None and cb.page == f.page and cb.bbox.space == "pdf_points" and f.bbox.space == "pdf_points"
            page = doc[cb.page - 1]
            h = page.get_height()  # pdfium's origin is the bottom-left; figlink's the top-left
            text = page.get_textpage().get_text_bounded(cb.bbox.x0, h - cb.bbox.y1, cb.bbox.x1, h - cb.bbox.y0)
            assert text.startswith(f"{f.label}. ") and f.caption[:40] in " ".join(text.split())
            assert cb.bbox.y0 >= f.bbox.y1 - 1  # these captions sit below their figures
    finally:
        doc.close()


# ------------------------------------------------------------------------------------- a v1 corpus

@pytest.fixture(scope="module")
def v1_corpus(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("v1") / "corpus"
    shutil.copytree(V1 / "corpus", d)
    return d


def test_a_v1_corpus_opens_searches_and_exports(v1_corpus, tmp_path, monkeypatch):
    from figlink.index import Searcher, build_index

    with sqlite3.connect(v1_corpus / "corpus.sqlite") as db:  # the JSON as the v1 code stored it
        (stored,) = [json.loads(js) for (js,) in db.execute("SELECT json FROM papers")]
    with Corpus(v1_corpus, readonly=True) as c:
        (paper,) = list(c.papers())
    assert "schema_version" not in stored and without_v2(paper.to_dict()) == stored
    assert paper.source == "jats+pdf" and len(paper.figures) == 7 and paper.schema_version == 2
    fig1 = paper.figure("fig1")
    assert fig1.page == 3 and fig1.bbox.space == "pdf_points" and fig1.caption_bbox is None  # v1 had none
    assert all(len(p.subcaption_indices) >= 1 for f in paper.figures for p in f.panels)

    monkeypatch.setenv("FIGLINK_EMBEDDER", "none")  # lexical index: enough to show the corpus is searchable
    build_index(v1_corpus)
    hits = Searcher(v1_corpus).search("raster plots stages", k=3, level="panel")
    top = hits[0]
    assert (top.figure_id, top.panel) == ("fig1", "c") and top.subcaption.startswith("Example raster plots")

    with Corpus(v1_corpus, readonly=True) as c:
        reports = {fmt: export(c, fmt, tmp_path / fmt) for fmt in ("jsonl", "parquet", "medicat", "scicap",
                                                                     "coco", "webdataset")}
    assert all(r.failed == 0 and r.written > 0 for r in reports.values())
    (line,) = (tmp_path / "jsonl").read_text().splitlines()
    assert Paper.from_json(line) == paper
    coco = json.loads((tmp_path / "coco" / "annotations.json").read_text())
    fig1_image = next(im["id"] for im in coco["images"] if im["figure_id"] == "fig1")
    texts = [a["subcaption"] for a in coco["annotations"] if a["image_id"] == fig1_image]
    assert texts == [fig1.panel_subcaption(p) for p in fig1.panels] and texts[2].count("Example raster plots") == 2

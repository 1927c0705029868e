"""PDF ingestion on a real eLife article (samples/elife, CC BY) and on small built pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from figlink.ingest.jats import parse_jats
from figlink.ingest.pdf import Options, page_figures, parse_pdf
from figlink.ingest.pdf_captions import caption_label, resolve_hyphens
from figlink.ingest.pdf_figures import Region, match
from figlink.ingest.pdf_page import Graphic, Line, PageContent
from figlink.ingest.pdf_body import reading_order
from figlink.model import Paper
from figlink.text.mentions import leading_figure_index

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "elife"
PDF = SAMPLES / "elife-15600.pdf"
XML = SAMPLES / "elife-15600.xml"


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Paper, Path]:
    out = tmp_path_factory.mktemp("crops")
    return parse_pdf(PDF, image_dir=out), out


def test_every_main_figure_is_found_with_its_caption(parsed: tuple[Paper, Path]) -> None:
    paper, _ = parsed
    assert paper.source == "pdf"
    assert [f.number for f in paper.figures] == ["1", "2", "3", "4", "5", "6", "7"]
    gold = {f.number: f.caption for f in parse_jats(XML).figures if f.number and f.parent is None}
    fig1 = paper.figures[0]
    assert fig1.label == "Figure 1" and fig1.figure_id == "fig1"
    assert fig1.caption.startswith("Multisensory integration in tectal neurons is dependent on interstimulus")
    for f in paper.figures:
        assert "DOI" not in f.caption
        words = set(gold[f.number].split())
        assert len(words & set(f.caption.split())) / len(words) > 0.9


def test_caption_continued_on_the_next_page_is_joined(parsed: tuple[Paper, Path]) -> None:
    paper, _ = parsed
    fig3 = paper.figure("fig3")
    assert fig3 is not None and "Distribution of cells by interaction type" in fig3.caption


def test_crops_are_png_at_150_dpi_with_bbox_in_points(parsed: tuple[Paper, Path]) -> None:
    paper, out = parsed
    for f in paper.figures:
        assert f.image and f.bbox and f.page
        x0, y0, x1, y1 = f.bbox
        assert 0 <= x0 < x1 <= 612 and 0 <= y0 < y1 <= 792
        assert (x1 - x0) * (y1 - y0) > 0.15 * 612 * 792  # whole figures, not a stray panel
        with Image.open(out / f.image) as im:
            assert im.format == "PNG"
            assert im.width >= (x1 - x0) * 150 / 72 - 2


def test_inline_references_carry_sentences_and_panels(parsed: tuple[Paper, Path]) -> None:
    paper, _ = parsed
    fig2 = paper.figure("fig2")
    assert fig2 is not None and len(fig2.inline_refs) >= 5
    by_mention = {r.mention.rstrip(")"): r for r in fig2.inline_refs}
    assert by_mention["Figure 2D"].panels == ["d"]
    assert "wider range of crossmodal ISIs" in by_mention["Figure 2D"].text
    assert all(not r.tagged for r in fig2.inline_refs)


def test_merge_with_jats_keeps_xml_text_and_pdf_images(tmp_path: Path) -> None:
    merged = parse_pdf(PDF, xml=XML, image_dir=tmp_path, options=Options(layout=False))
    xml = parse_jats(XML)
    assert merged.source == "jats+pdf" and merged.doi == xml.doi
    main = [f for f in merged.figures if f.number and f.parent is None and f.label and f.label.startswith("Figure")]
    assert len(main) == 7
    for f in main:
        x = xml.figure(f.figure_id)
        assert x is not None and f.caption == x.caption and f.inline_refs == x.inline_refs
        assert f.image and (tmp_path / f.image).exists() and f.page and f.bbox


def test_parse_dispatch_with_image_dir(tmp_path: Path) -> None:
    from figlink.ingest import parse

    paper = parse(PDF, image_dir=tmp_path)
    assert paper.paper_id == "elife-15600" and paper.figures[0].image == "fig1.png"
    assert (tmp_path / "fig1.png").exists()


def test_page_figures_gives_caption_boxes() -> None:
    found = page_figures(PDF, 2, Options(layout=False))
    assert [f.key for f in found] == ["1"]
    cap, box = found[0].caption_box, found[0].box
    assert box is not None and box[3] <= cap[1] + 4  # the figure sits above its caption


@pytest.mark.parametrize("text,key", [
    ("Figure 3. Growth curves of mutants.", "3"),
    ("Fig. 3: Growth curves", "3"),
    ("FIGURE 3 Growth curves", "3"),
    ("Fig. 12 | Overview", "12"),
    ("Supplementary Figure S1. Controls", "S1"),
    ("Figure 1—figure supplement 2. Spectra", "1-s2"),
    ("Figure 2 shows the growth", None),
    ("Figures 3–5 show", None),
    ("Figure 3A shows", None),
    ("Table 1. Strains", None),
    ("Figure 1—source data 1. Raw counts", None),
    # Opened by the shared grammar's qualifiers (these three were never PDF captions before issue 17).
    ("Appendix 1—figure 2. Distribution of cell sizes", "A1-2"),
    ("Supp. Fig. 3. Controls", "S3"),
    ("Author response image 1. Western blot", "R1"),
])
def test_caption_openers(text: str, key: str | None) -> None:
    got = caption_label(text)
    assert (got[0] if got else None) == key
    if key is not None:  # the caption reader reads the same label at the start of a caption
        idx = leading_figure_index(text)
        assert idx is not None and idx.key == key and text[idx.end:] == got[2]


def test_line_end_hyphens_follow_the_document() -> None:
    vocab = {"treatment": 3, "single-cell": 2}
    assert resolve_hyphens("IR treat\u00adment of single\u00adcell", vocab) == "IR treatment of single-cell"
    assert resolve_hyphens("Ku80\u00addefective", {}) == "Ku80-defective"


def _page(lines: list[Line], graphics: list[Graphic]) -> PageContent:
    return PageContent(index=0, width=612, height=792, lines=lines, graphics=graphics)


def test_hungarian_pairs_captions_above_and_below_and_drops_strays() -> None:
    from figlink.ingest.pdf_captions import find_captions

    lines = [Line((72, 300, 400, 310), "Figure 1. A plot above its caption."),
             Line((72, 420, 400, 430), "Figure 2. A caption above its figure.")]
    page = _page(lines, [])
    caps = find_captions(page)
    regions = [Region((72, 100, 400, 290), "graphics"), Region((72, 440, 400, 600), "graphics"),
               Region((500, 700, 520, 720), "graphics")]
    pairs = match(caps, regions, page)
    assert pairs == {0: 0, 1: 1}


def test_reading_order_takes_the_left_column_first() -> None:
    left = [Line((50, 100 + 12 * i, 290, 110 + 12 * i), f"left {i}") for i in range(5)]
    right = [Line((320, 100 + 12 * i, 560, 110 + 12 * i), f"right {i}") for i in range(5)]
    title = [Line((50, 60, 560, 75), "A title across both columns")]
    blocks = reading_order(right + title + left, 612)
    texts = [ln.text for b in blocks for ln in b]
    assert texts == ["A title across both columns"] + [f"left {i}" for i in range(5)] + [f"right {i}" for i in range(5)]


def test_reading_order_on_a_page_of_thousands_of_lines_is_fast() -> None:
    import time

    lines = [Line((50.0, 20.0 * i, 100.0, 20.0 * i + 8), str(i)) for i in range(5000)]
    t = time.perf_counter()
    blocks = reading_order(lines, 612)
    assert time.perf_counter() - t < 2.0
    assert [ln.text for b in blocks for ln in b] == [str(i) for i in range(5000)]

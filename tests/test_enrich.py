"""The enrich stages: new records out, inputs untouched, warnings as data, one bad figure never stops a paper."""

from __future__ import annotations

from pathlib import Path

from figlink.enrich import Enriched, enrich, figure_stages
from figlink.enrich.captions import enrich_caption
from figlink.enrich.vision import enrich_vision
from figlink.images import ImageFolder
from figlink.ingest import parse
from figlink.model import Figure, Paper

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "jats" / "elife06726.xml"


def test_enrich_returns_a_new_paper_and_leaves_the_parsed_one_as_it_was() -> None:
    paper = parse(SAMPLE)
    before = paper.to_json()
    out = enrich(paper)
    assert paper.to_json() == before
    assert out is not paper and out.paper_id == paper.paper_id
    assert len(out.figures) == len(paper.figures)
    # every figure went through the captions stage; compound captions were split
    assert all(f.caption_normalized is not None for f in out.figures)
    assert any(f.caption_split and len(f.caption_split.subcaptions) > 1 for f in out.figures)
    assert [f.figure_id for f in out.figures] == [f.figure_id for f in paper.figures]


def test_a_stage_failing_on_one_figure_keeps_it_as_it_was_and_goes_on() -> None:
    paper = Paper("P", "jats", figures=[Figure("f1", caption="(A) CT. (B) MRI."), Figure("f2", caption="Bad."),
                                        Figure("f3", caption="(a) x; (b) y.")])

    def picky(fig: Figure) -> Enriched:
        if fig.figure_id == "f2":
            raise ValueError("no luck")
        return enrich_caption(fig)

    out = enrich(paper, [("captions", picky)])
    assert out.warnings == ["f2: stage captions failed: ValueError: no luck"]
    assert out.figures[1] is paper.figures[1]
    assert out.figures[0].expected_panels == 2 and out.figures[2].expected_panels == 2
    assert paper.warnings == []


def test_warnings_of_the_stages_are_added_in_figure_order() -> None:
    big = "x" * 100_001
    paper = Paper("P", "jats", warnings=["parse: odd"], figures=[Figure("a", caption=big), Figure("b", caption=big)])
    out = enrich(paper)
    assert [w.split(":")[0] for w in out.warnings] == ["parse", "a", "b"]
    assert paper.warnings == ["parse: odd"]


def test_vision_stage_without_an_image_file_returns_the_figure(tmp_path: Path) -> None:
    images = ImageFolder(tmp_path / "images", "images/")
    fig = Figure("f1", caption="A figure.", image="images/P/f1.png")
    assert enrich_vision(fig, images) == Enriched(fig)  # the file is not there
    assert enrich_vision(Figure("f2"), images) == Enriched(Figure("f2"))
    assert [name for name, _ in figure_stages(images)] == ["captions", "vision"]
    assert [name for name, _ in figure_stages()] == ["captions"]


def test_vision_stage_on_a_damaged_image_gives_a_warning(tmp_path: Path) -> None:
    (tmp_path / "P").mkdir()
    (tmp_path / "P" / "f1.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    fig = Figure("f1", caption="A figure.", image="images/P/f1.png", is_medical=True)
    out, warnings = enrich_vision(fig, ImageFolder(tmp_path, "images/"))
    assert out is fig
    assert len(warnings) == 1 and warnings[0].startswith("f1: vision: not a readable image: f1.png")


def test_image_folder_maps_figure_images_to_files(tmp_path: Path) -> None:
    assert ImageFolder(tmp_path, "images/").path("images/P/f.png") == tmp_path / "P" / "f.png"
    assert ImageFolder(tmp_path).path("P/f.png") == tmp_path / "P" / "f.png"

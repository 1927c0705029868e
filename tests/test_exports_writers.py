"""Export writers: one interface for every format, Parquet columns derived from the data model."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Literal, Optional

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from figlink.corpus import Corpus
from figlink.exports import FOLDER_FORMATS, WRITERS, export
from figlink.exports.parquet import arrow_type, figure_schema
from figlink.model import Box as ModelBox, Figure, Panel, Paper


def test_parquet_columns_are_the_model_json_keys_and_rows_read_back_as_the_model(corpus_dir, tmp_path):
    paper_fields = [k for k in Paper("P", "jats").to_dict() if k not in ("figures", "warnings")]
    assert paper_fields[:3] == ["schema_version", "paper_id", "source"]
    # every figure field, a box as its list and its space, a panel's derived subcaption text among its keys
    figure_keys = list(Figure("f", bbox=ModelBox.points((1, 2, 3, 4)), panels=[Panel("a", ModelBox.pixels((0, 0, 1, 1)))]).to_dict())
    assert figure_keys[5:9] == ["page", "bbox", "bbox_space", "caption_bbox"]
    assert len(figure_keys) == len(dataclasses.fields(Figure)) + 1
    assert figure_schema().names == paper_fields + figure_keys
    panel_type = figure_schema().field("panels").type.value_type
    assert [f.name for f in panel_type] == ["label", "bbox", "bbox_space", "subcaption_indices", "subcaption", "score"]
    with Corpus(corpus_dir, readonly=True) as c:
        report = export(c, "parquet", tmp_path / "f.parquet")
        papers = {p.paper_id: p for p in c.papers()}
    rows = pq.read_table(tmp_path / "f.parquet").to_pylist()
    assert report.written == len(rows) == sum(len(p.figures) for p in papers.values())
    for row in rows:
        paper = papers[row["paper_id"]]
        assert row["license"] == paper.license.to_dict() and row["year"] == paper.year
        fig = Figure.from_dict({k: row[k] for k in figure_schema().names[len(paper_fields):]})
        assert fig == paper.figure(row["figure_id"])
    enriched = next(r for r in rows if r["paper_id"] == "PMC3166277" and r["figure_id"] == "F2")  # see conftest
    assert [p["label"] for p in enriched["panels"]] == ["a", "b"] and enriched["figure_type"]["label"] == "histogram"
    split = enriched["caption_split"]["subcaptions"]
    assert [p["subcaption"] for p in enriched["panels"]] == [split[0]["text"], split[1]["text"]]
    assert enriched["panels"][1]["bbox"] == [200.0, 0.0, 400.0, 150.0] and enriched["panels"][1]["bbox_space"] == "image_pixels"


@dataclass
class Box:
    page: int
    xyxy: list[float]


@dataclass
class Record:
    name: str
    role: Literal["panel_label", "axis_title"]
    boxes: list[Box] = field(default_factory=list)
    score: Optional[float] = None
    flag: bool | None = None


@dataclass
class Loose:
    extra: dict


def test_arrow_types_follow_the_annotations():
    assert arrow_type(Record) == pa.struct([
        ("name", pa.string()), ("role", pa.string()),
        ("boxes", pa.list_(pa.struct([("page", pa.int64()), ("xyxy", pa.list_(pa.float64()))]))),
        ("score", pa.float64()), ("flag", pa.bool_())])
    with pytest.raises(TypeError, match="Loose.extra"):
        arrow_type(Loose)


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_every_writer_has_the_same_interface_and_an_abort_leaves_no_partial_file(fmt, corpus_dir, tmp_path):
    out = tmp_path / ("out" if fmt in FOLDER_FORMATS else "out.data")
    with Corpus(corpus_dir, readonly=True) as c:
        papers = list(c.papers())
        writer = WRITERS[fmt](out, c)
        writer.open()
        for p in papers:
            writer.write(p)
        report = writer.close()
        assert report.fmt == fmt and report.failed == 0 and report.written > 0 and report.out == out
        assert report.summary().startswith("wrote ")

        stopped = WRITERS[fmt](tmp_path / "stopped" / out.name, c)
        stopped.open()
        stopped.write(papers[0])
        stopped.abort()
    # no temporary, part, index or half-written file; coco keeps the images it had linked (as a rerun would)
    left = [p.relative_to(tmp_path / "stopped").parts for p in (tmp_path / "stopped").rglob("*") if p.is_file()]
    assert [p for p in left if not (fmt == "coco" and p[:2] == ("out", "images"))] == []


def test_file_exports_count_their_records(corpus_dir, tmp_path):
    with Corpus(corpus_dir, readonly=True) as c:
        n_papers, n_figures = c.stats().papers, c.stats().figures
        reports = {fmt: export(c, fmt, tmp_path / fmt) for fmt in ("jsonl", "medicat", "scicap")}
    assert reports["jsonl"].written == n_papers
    assert reports["medicat"].written == reports["scicap"].written == n_figures
    assert reports["jsonl"].summary() == f"wrote {n_papers} records to {tmp_path / 'jsonl'}"
    lines = (tmp_path / "jsonl").read_text(encoding="utf-8").splitlines()
    assert [Paper.from_json(line).paper_id for line in lines] == sorted(json.loads(l)["paper_id"] for l in lines)
    with Corpus(corpus_dir, readonly=True) as c, pytest.raises(ValueError, match="unknown format 'csv'"):
        export(c, "csv", tmp_path / "x.csv")

"""The figure-pairs reader on the OpenStax sample, and one clear error per bad line."""

from __future__ import annotations

import json
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from figlink.errors import FiglinkError, InputError
from figlink.ingest import parse, source_kind
from figlink.ingest.pairs import paper_id_of, read_pairs
from figlink.model import Paper

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "pairs" / "openstax-sample.jsonl"


def _png_header_only(path: Path, w: int, h: int) -> None:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))  # noqa: E731
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b""))


def test_sample_reads_into_papers():
    raw = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    results = list(read_pairs(SAMPLE))
    assert [n for n, _ in results] == list(range(1, 41))
    papers = [r for _, r in results]
    assert all(isinstance(p, Paper) for p in papers)
    assert len({p.paper_id for p in papers}) == 40
    for rec, paper in zip(raw, papers):
        fig = paper.figures[0]
        assert paper.source == "pairs" and fig.figure_id == rec["id"]
        assert fig.caption == rec["caption"].strip() and fig.graphic == rec["image"]
        assert Path(fig.image).is_file() and Path(fig.image).is_absolute()
        assert [r.text for r in fig.inline_refs] == [m.strip() for m in rec["mentions"] if m.strip()]
        assert all(not r.tagged and r.mention == "" for r in fig.inline_refs)
        assert paper.license.spdx == "CC-BY-4.0" and paper.license.open
        assert paper.journal == rec["source"]
    # the sample's first line, read by hand: Harold Ewen's horn antenna, cited by one paragraph on the 21-cm line
    first = papers[0]
    assert first.figures[0].figure_id == "astronomy/OSC_Astro_20_02_Antenna"
    assert first.paper_id.startswith("astronomy_OSC_Astro_20_02_Antenna-") and len(first.paper_id) == 34 + 8
    assert first.figures[0].caption.startswith("We see Harold Ewen in 1952")
    assert len(first.figures[0].inline_refs) == 1
    assert first.figures[0].inline_refs[0].text.startswith("Equipment sensitive enough to detect the 21-cm line")
    assert Paper.from_json(first.to_json()) == first


def test_paper_ids_are_safe_stable_and_distinct():
    assert paper_id_of("PMC123_fig1") == "PMC123_fig1"
    a, b = paper_id_of("book/ch1 fig"), paper_id_of("book_ch1_fig")
    assert a != b and a.startswith("book_ch1_fig-") and a == paper_id_of("book/ch1 fig")
    assert all(c.isalnum() or c in "._-" for c in a)


def test_each_bad_line_gets_one_clear_error(tmp_path):
    good_image = next((SAMPLE.parent / "images").glob("*.jpg"))
    shutil.copy(good_image, tmp_path / "ok.jpg")
    (tmp_path / "notes.txt").write_text("not an image")
    _png_header_only(tmp_path / "huge.png", 40_000, 40_000)
    ok = {"id": "ok", "image": "ok.jpg", "caption": "A real caption.", "mentions": ["As shown ()."],
          "license": "CC-BY-4.0"}
    lines = [
        json.dumps(ok),
        "{not json",
        json.dumps({**ok, "id": "missing", "image": "gone.jpg"}),
        json.dumps({**ok, "id": "text", "image": "notes.txt"}),
        json.dumps({**ok, "id": "huge", "image": "huge.png"}),
        json.dumps({**ok, "id": "empty", "caption": "   "}),
        json.dumps(ok),  # the same id again
        "",
        json.dumps([1, 2]),
        json.dumps({**ok, "id": "nc", "license": "CC BY-NC 4.0"}),
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode() + b'{"id": "\xff"}\n')
    got = {n: r for n, r in read_pairs(path)}
    assert isinstance(got[1], Paper) and isinstance(got[10], Paper)
    assert got[10].license.spdx == "CC-BY-NC-4.0" and not got[10].license.open
    expected = {2: "not JSON", 3: "image not found", 4: "not a readable image", 5: "image too large",
                6: "empty caption", 7: "repeats an earlier line", 9: "not a JSON object", 11: "not UTF-8"}
    assert set(got) == {1, 10} | set(expected)  # the blank line 8 is skipped
    for n, words in expected.items():
        assert isinstance(got[n], FiglinkError), n
        assert words in str(got[n]) and "\n" not in str(got[n])


def test_pairs_files_are_detected_and_parse_points_to_the_reader(tmp_path):
    assert source_kind(SAMPLE) == "pairs"
    with pytest.raises(InputError, match="figlink ingest"):
        parse(SAMPLE)
    with pytest.raises(InputError, match="no such pairs file"):
        list(read_pairs(tmp_path / "absent.jsonl"))


def _small_pairs_folder(tmp_path: Path) -> tuple[Path, list[dict]]:
    """Three sample lines with their images, then bad lines: not JSON, a missing image, an empty caption, a
    repeated id, and a text file posing as an image."""
    folder = tmp_path / "set"
    (folder / "images").mkdir(parents=True)
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:3]]
    for r in records:
        shutil.copy(SAMPLE.parent / r["image"], folder / r["image"])
    (folder / "images" / "notes.png").write_text("not an image")
    bad = ["{not json",
           json.dumps({"id": "x/missing", "image": "images/gone.png", "caption": "A figure."}),
           json.dumps({"id": "x/empty", "image": records[0]["image"], "caption": "  "}),
           json.dumps(records[1]),
           json.dumps({"id": "x/text", "image": "images/notes.png", "caption": "Text posing as an image."})]
    (folder / "pairs.jsonl").write_text("\n".join([json.dumps(r) for r in records] + bad) + "\n", encoding="utf-8")
    (folder / "errors.jsonl").write_text("{}\n")  # a .jsonl that is not named as pairs: not read
    return folder, records


def test_ingest_builds_a_searchable_corpus_from_pairs(tmp_path, monkeypatch):
    import figlink
    from figlink.corpus import Corpus
    from figlink.index.searcher import Searcher

    monkeypatch.setenv("FIGLINK_EMBEDDER", "none")  # lexical index only: fast
    folder, records = _small_pairs_folder(tmp_path)
    report = figlink.build([folder], tmp_path / "c", vision=False, progress=False)
    assert (report.ingest.seen, report.ingest.ok, report.failed) == (8, 3, 5)
    pairs_file = str(folder / "pairs.jsonl")
    failures = {name: (stage, reason) for name, stage, reason in report.ingest.failures}
    assert failures[f"{pairs_file}:4"] == ("parse", failures[f"{pairs_file}:4"][1])
    assert failures[f"{pairs_file}:4"][1].startswith("not JSON")
    assert "image not found" in failures[f"{pairs_file}:5"][1]
    assert failures[f"{pairs_file}:6"][1] == "x/empty: empty caption"
    assert failures[f"{pairs_file}:7"][1] == f"{records[1]['id']}: id repeats an earlier line"
    assert "not a readable image: notes.png" in failures[f"{pairs_file}:8"][1]
    with Corpus(tmp_path / "c", readonly=True) as c:
        papers = {p.figures[0].figure_id: p for p in c.papers()}
        assert set(papers) == {r["id"] for r in records}
        for r in records:
            paper = papers[r["id"]]
            fig = paper.figures[0]
            assert paper.source == "pairs" and fig.caption == r["caption"].strip()
            assert [x.text for x in fig.inline_refs] == [m.strip() for m in r["mentions"] if m.strip()]
            assert paper.license.spdx == "CC-BY-4.0" and paper.license.open
            # the image was copied into the corpus, byte for byte, and is named relative to it
            copied = c.image_folder().path(fig.image)
            assert not Path(fig.image).is_absolute() and copied.is_file()
            assert copied.read_bytes() == (SAMPLE.parent / r["image"]).read_bytes()
            assert copied.parent == c.image_dir_for(paper.paper_id)
    # the sample's first figure (Ewen's horn antenna) is found by words of its caption
    hits = Searcher(tmp_path / "c").search("horn antenna interstellar 21-cm radiation", k=3)
    assert hits[0].figure_id == "astronomy/OSC_Astro_20_02_Antenna"

    again = figlink.build([folder / "pairs.jsonl"], tmp_path / "c", index=False, progress=False)
    assert (again.ingest.ok, again.ingest.skipped, again.failed) == (0, 3, 5)  # bad lines are tried again


def test_ingest_cli_reports_each_bad_pairs_line_once(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from figlink.cli import app

    monkeypatch.setenv("FIGLINK_EMBEDDER", "none")
    folder, _ = _small_pairs_folder(tmp_path)
    res = CliRunner().invoke(app, ["ingest", str(folder / "pairs.jsonl"), "--corpus", str(tmp_path / "c"),
                                   "--no-vision", "--no-index"])
    assert res.exit_code == 1
    failed = [line for line in res.output.splitlines() if line.startswith("failed: ")]
    names = [line.split(": ")[1] for line in failed]  # the repeated id is found first, while planning
    assert sorted(names, key=lambda n: int(n.rsplit(":", 1)[1])) == [f"{folder / 'pairs.jsonl'}:{n}" for n in range(4, 9)]
    assert "3 ingested, 0 already done, 5 failed" in res.output

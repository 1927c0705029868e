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

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "pairs" / "pairs.jsonl"


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
    with pytest.raises(InputError, match="read_pairs"):
        parse(SAMPLE)
    with pytest.raises(InputError, match="no such pairs file"):
        list(read_pairs(tmp_path / "absent.jsonl"))

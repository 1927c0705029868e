"""`figlink index`, `figlink search --json` and `figlink demo --no-serve`."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from figlink.cli import app

from conftest import SAMPLES

runner = CliRunner()


def test_search_json(corpus_dir):
    r = runner.invoke(app, ["search", "holin hole formation", "--corpus", str(corpus_dir), "-k", "2", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    hit = out["hits"][0]
    assert set(hit) >= {"rank", "score", "paper_id", "figure_id", "panel", "caption", "image"}
    assert (hit["rank"], hit["figure_id"], hit["panel"]) == (1, "F1", None) and len(out["hits"]) == 2
    r = runner.invoke(app, ["search", "variation in lysis time", "--corpus", str(corpus_dir), "--level", "panel",
                            "--figure-type", "histogram", "--open", "--json"])
    assert r.exit_code == 0 and {h["figure_type"] for h in json.loads(r.stdout)["hits"]} == {"histogram"}


def test_search_errors(corpus_dir, tmp_path):
    for args in (["", "--corpus", str(corpus_dir)], ["cell", "--corpus", str(corpus_dir), "-k", "0"],
                 ["cell", "--corpus", str(corpus_dir), "--level", "page"], ["cell", "--corpus", str(tmp_path)]):
        r = runner.invoke(app, ["search", *args])
        assert r.exit_code == 2 and "error" in r.output, (args, r.output)


def test_index_is_a_no_op_when_up_to_date(corpus_dir):
    r = runner.invoke(app, ["index", "--corpus", str(corpus_dir)])
    assert r.exit_code == 0 and "0 papers added" in r.output and "7 unchanged" in r.output


def test_demo_no_serve(tmp_path, searcher):
    d = tmp_path / "demo"
    r = runner.invoke(app, ["demo", "--corpus", str(d), "--samples", str(SAMPLES), "--workers", "1", "--no-serve"])
    assert r.exit_code == 0, r.output
    assert "index v000001" in r.output and (d / "index" / "CURRENT").exists()


def test_ingest_updates_the_index(tmp_path, searcher):
    """An ingest ends with an index that holds the new paper; a second ingest of another paper adds to it."""
    d = tmp_path / "c"
    first, second = SAMPLES / "1471-2180-11-174.nxml", SAMPLES / "ehp-116-1694.nxml"  # PMC3166277, PMC2599765

    def said(r) -> str:
        return " ".join(r.output.split())  # the console wraps long lines

    r = runner.invoke(app, ["ingest", str(first), "--corpus", str(d), "--no-vision"])
    assert r.exit_code == 0, r.output
    assert "index v000001: 1 papers added" in said(r)
    r = runner.invoke(app, ["ingest", str(second), "--corpus", str(d), "--no-vision"])
    assert r.exit_code == 0 and "index v000002: 1 papers added" in said(r) and "1 unchanged" in said(r)
    r = runner.invoke(app, ["search", "lysis time", "--corpus", str(d), "-k", "1", "--json"])
    assert json.loads(r.stdout)["hits"][0]["paper_id"] == "PMC3166277"
    r = runner.invoke(app, ["ingest", str(first), "--corpus", str(d), "--no-index"])
    assert r.exit_code == 0 and "index v0" not in r.output

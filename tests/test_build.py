"""figlink.build: the library call behind ``figlink ingest`` gives the same corpus and reports as the CLI."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

import figlink
from figlink.cli import app
from figlink.corpus import Corpus
from figlink.engine.common import EngineError


def _papers(corpus) -> dict[str, str]:
    with Corpus(corpus, readonly=True) as c:
        return {p.paper_id: p.to_json() for p in c.papers()}


def test_build_and_the_cli_make_the_same_corpus(jats_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("FIGLINK_EMBEDDER", "none")  # lexical index only: fast
    bad = tmp_path / "bad.nxml"
    bad.write_text("<article><body><p>unclosed")
    seen = []
    report = figlink.build([jats_dir, bad], tmp_path / "api", workers=1, progress=False, on_ingested=seen.append)
    n = len(list(jats_dir.glob("*.*xml")))
    assert (report.ingest.ok, report.failed, report.ingest.skipped) == (n, 1, 0)
    assert seen == [report.ingest]
    assert report.index is not None and report.index.added == n and report.index.dense is None
    with Corpus(tmp_path / "api", readonly=True) as c:
        assert report.index.figures == c.stats().figures
    assert [f[1] for f in report.ingest.failures] == ["parse"]

    res = CliRunner().invoke(app, ["ingest", str(jats_dir), str(bad), "--corpus", str(tmp_path / "cli")])
    assert res.exit_code == 1  # one input failed
    assert f"{n} ingested, 0 already done, 1 failed" in res.output
    assert "failed: " + str(bad) + ": parse: malformed XML" in res.output
    assert f"index v000001: {n} papers added" in res.output
    assert _papers(tmp_path / "cli") == _papers(tmp_path / "api")

    again = figlink.build([jats_dir], tmp_path / "api", index=False, progress=False)
    assert (again.ingest.ok, again.ingest.skipped, again.index) == (0, n, None)


def test_an_unknown_engine_is_one_clear_error(jats_dir, tmp_path):
    with pytest.raises(EngineError, match="unknown engine 'spark': choose local or ray"):
        figlink.build([jats_dir], tmp_path / "c", engine="spark")
    res = CliRunner().invoke(app, ["ingest", str(jats_dir), "--corpus", str(tmp_path / "c"), "--engine", "spark"])
    assert res.exit_code == 2 and "unknown engine 'spark'" in res.output


def test_corpus_names_its_images_and_fingerprints_its_papers(jats_dir, tmp_path):
    for name in ("elife05031.xml", "elife06726.xml"):
        shutil.copy(jats_dir / name, tmp_path / name)
    figlink.build([tmp_path / "elife05031.xml", tmp_path / "elife06726.xml"], tmp_path / "c", index=False,
                  progress=False)
    assert Corpus.exists(tmp_path / "c") and not Corpus.exists(tmp_path)
    with Corpus(tmp_path / "c", readonly=True) as c:
        folder = c.image_folder()
        assert folder.path(f"{folder.prefix}P1/f.png") == c.image_dir_for("P1") / "f.png"
        ids = c.paper_ids()
        assert [p.paper_id for p in c.papers_with_ids(reversed(ids))] == ids
        assert [p.paper_id for p in c.papers_with_ids([ids[1], "nope"])] == [ids[1]]
        before = c.fingerprints()
        assert set(before) == set(ids)
    art = tmp_path / "elife05031.xml"  # an updated version of the article, at the same path
    art.write_bytes((jats_dir / "elife05031.xml").read_bytes() + b"\n")
    figlink.build([art], tmp_path / "c", index=False, progress=False)
    with Corpus(tmp_path / "c", readonly=True) as c:
        after = c.fingerprints()
    changed = {pid for pid in before if before[pid] != after[pid]}
    assert changed == {"10.7554_eLife.05031"}

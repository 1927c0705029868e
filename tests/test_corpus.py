"""Ingest into a corpus: resumable, incremental, bad inputs logged, the batch goes on."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from figlink.cli import app
from figlink.corpus import Corpus
from figlink.engine.local import ingest
from figlink.model import Paper


def _bad_inputs(folder):
    (folder / "empty.xml").write_bytes(b"")
    (folder / "broken.nxml").write_text("<article><body><p>unclosed")
    (folder / "fake.tar.gz").write_bytes(b"\x1f\x8b not really gzip")


def test_ingest_with_bad_inputs_resume_and_update(jats_dir, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(jats_dir, src)
    _bad_inputs(src)
    corpus_dir = tmp_path / "corpus"
    n_good = len(list(jats_dir.glob("*.*xml")))

    report = ingest([src], corpus_dir, workers=2)
    assert (report.ok, report.failed, report.skipped) == (n_good, 3, 0)
    with Corpus(corpus_dir, readonly=True) as c:
        stats = c.stats()
        assert stats.papers == n_good and stats.inputs_failed == 3
        assert stats.figures == sum(len(p.figures) for p in c.papers())
        p = c.paper("10.7554_eLife.05031")
        assert p is not None and len(p.figures) == 6
        errors = {e["path"].rsplit("/", 1)[-1]: e for e in c.errors()}
    assert set(errors) == {"empty.xml", "broken.nxml", "fake.tar.gz"}
    assert errors["empty.xml"]["reason"] == "empty file"
    assert errors["broken.nxml"]["stage"] == "parse"
    log = [json.loads(line) for line in (corpus_dir / "errors.jsonl").read_text().splitlines()]
    assert len(log) == 3

    again = ingest([src], corpus_dir, workers=1)  # done inputs are skipped; failed ones are tried again
    assert (again.ok, again.skipped, again.failed) == (0, n_good, 3)

    # a changed article is ingested again and replaces its paper; the others stay
    art = src / "elife05031.xml"
    art.write_text(art.read_text(encoding="utf-8").replace("Specificity in endoplasmic", "Specificity in ER"),
                   encoding="utf-8")
    third = ingest([art], corpus_dir)
    assert third.ok == 1
    with Corpus(corpus_dir, readonly=True) as c:
        assert c.stats().papers == n_good
        assert c.paper("10.7554_eLife.05031").title.startswith("Specificity in ER")


def test_uncommitted_batch_leaves_no_trace(jats_dir, tmp_path):
    from figlink.ingest.jats import parse_jats
    c = Corpus(tmp_path / "c")
    c.put_paper(parse_jats(jats_dir / "elife05031.xml"), "abc", "x")
    c.db.close()  # a crash before commit
    with Corpus(tmp_path / "c", readonly=True) as again:
        assert again.stats().papers == 0 and again.stats().figures == 0


def test_cli_parse_ingest_show_export(jats_dir, tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["parse", str(jats_dir / "elife05031.xml"), str(tmp_path / "missing.xml"), "--json"])
    assert res.exit_code == 1  # one input failed, the other was printed
    paper = Paper.from_json(res.stdout.strip().splitlines()[0])
    assert paper.doi == "10.7554/eLife.05031"

    corpus = tmp_path / "corpus"
    res = runner.invoke(app, ["ingest", str(jats_dir), "--corpus", str(corpus), "--workers", "1"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["show", "--corpus", str(corpus), "10.7554_eLife.05031", "--figure", "fig2"])
    assert res.exit_code == 0 and json.loads(res.stdout)["label"] == "Figure 2."
    res = runner.invoke(app, ["show", "--corpus", str(corpus), "nope"])
    assert res.exit_code == 1

    import pyarrow.parquet as pq
    out = tmp_path / "figs.parquet"
    res = runner.invoke(app, ["export", "--corpus", str(corpus), "--format", "parquet", "--out", str(out)])
    assert res.exit_code == 0
    table = pq.read_table(out)
    with Corpus(corpus, readonly=True) as c:
        assert table.num_rows == c.stats().figures


def test_kill_mid_run_leaves_a_consistent_corpus_and_resumes(jats_dir, tmp_path):
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    src = tmp_path / "src"
    src.mkdir()
    data = (jats_dir / "elife05031.xml").read_bytes()
    for i in range(150):  # distinct articles (their own DOI), so every copy is a paper of its own
        (src / f"copy{i:03d}.xml").write_bytes(data.replace(b"10.7554/eLife.05031", f"10.7554/copy.{i}".encode()))
    corpus_dir = tmp_path / "corpus"
    proc = subprocess.Popen([sys.executable, "-m", "figlink.cli", "ingest", str(src), "--corpus", str(corpus_dir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = corpus_dir / "corpus.sqlite"
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if db.exists():
            try:
                with Corpus(corpus_dir, readonly=True) as c:
                    if c.stats().inputs_done > 0:
                        break
            except sqlite3.OperationalError:
                pass  # the writer is still creating the schema
        time.sleep(0.02)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    with Corpus(corpus_dir, readonly=True) as c:
        done = c.stats().inputs_done
        assert 0 < done <= 150
        n_figs = c.db.execute("SELECT COUNT(*), (SELECT SUM(n_figures) FROM papers) FROM figures").fetchone()
        assert n_figs[0] == n_figs[1]  # no paper without its figures, no figures without their paper
        for paper in c.papers():
            assert len(paper.figures) == 6
    report = ingest([src], corpus_dir)
    assert report.skipped == done and report.ok == 150 - done and report.failed == 0


def test_medicat_and_scicap_exports(jats_dir, tmp_path):
    corpus = tmp_path / "corpus"
    ingest([jats_dir / "journal.pone.0005723.xml"], corpus)
    runner = CliRunner()
    for fmt in ("medicat", "scicap"):
        out = tmp_path / f"{fmt}.jsonl"
        res = runner.invoke(app, ["export", "--corpus", str(corpus), "--format", fmt, "--out", str(out)])
        assert res.exit_code == 0, res.output
        recs = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(recs) == 14
    med = [json.loads(line) for line in (tmp_path / "medicat.jsonl").read_text().splitlines()]
    # Figure 4 of the Darwinius paper: "Micro-CT of the skull …", cited with its CT images
    fig4 = next(r for r in med if r["fig_key"] == "Figure4")
    assert fig4["s2_caption"].startswith("Figure 4. Micro-CT of the skull")
    assert fig4["radiology"] is True and "CT" in fig4["medical_keywords"]
    assert any("shaded CT image" in s for s in fig4["s2orc_references"])
    sci = [json.loads(line) for line in (tmp_path / "scicap.jsonl").read_text().splitlines()]
    rec = next(r for r in sci if r["figure_id"] == "pone-0005723-g004")
    assert rec["contains-subfigure"] is True
    assert rec["2-normalized"]["2-1-basic-num"]["caption"].startswith("micro-ct of the skull")


def test_pdf_and_xml_of_one_article_ingest_as_one_merged_paper_with_vision(elife_corpus):
    corpus, report = elife_corpus  # samples/elife ingested (conftest; the exports tests read it too)
    assert (report.seen, report.ok, report.failed) == (1, 1, 0)
    with Corpus(corpus, readonly=True) as c:
        (paper,) = list(c.papers())
        assert paper.source == "jats+pdf" and paper.doi == "10.7554/eLife.15600"
        fig1 = paper.figure("fig1")
        assert fig1.caption.startswith("Multisensory integration")  # the XML's caption is kept
        assert (corpus / fig1.image).is_file() and fig1.page == 3  # the PDF's crop and page
        # Figure 1 has panels A-D side by side and stacked; each gets its subcaption
        assert [p.label for p in fig1.panels] == ["a", "b", "c", "d"]
        assert all(fig1.panel_subcaption(p) for p in fig1.panels)

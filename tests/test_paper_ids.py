"""Paper ids are unique in a corpus whatever the file names are; a collision is numbered or reported, never
a silent replacement; identical bytes share their outcome; a resumed run gives the ids of a clean one."""

from __future__ import annotations

import ctypes
import hashlib
import re
import shutil
from pathlib import Path
from typing import Iterator

import pypdfium2 as pdfium
import pytest
import pypdfium2.raw as pdfium_c
from typer.testing import CliRunner

from figlink.cli import app
from figlink.corpus import Corpus
from figlink.engine.common import Result, Task, run_ingest, run_task
from figlink.engine.local import ingest, process_pool_runner
from figlink.pipeline import PipelineOptions

REPO = Path(__file__).resolve().parents[1]
PDF = REPO / "samples" / "elife" / "elife-15600.pdf"
XML = REPO / "samples" / "elife" / "elife-15600.xml"
JATS = REPO / "samples" / "jats"
NO_VISION = PipelineOptions(vision=False)


def _text(obj: pdfium.PdfObject, textpage: pdfium.PdfTextPage) -> str:
    n = pdfium_c.FPDFTextObj_GetText(obj, textpage, None, 0)
    buf = (ctypes.c_ushort * n)()
    pdfium_c.FPDFTextObj_GetText(obj, textpage, buf, n)
    return bytes(buf).decode("utf-16-le", errors="ignore").rstrip("\x00")


def _pages(dest: Path, pages: list[int], doi: bool = True) -> Path:
    """A PDF of some pages of the sample eLife article (page 3 shows Figure 1, page 5 Figure 2, page 7
    Figure 3); without ``doi``, the footer that prints the article's DOI is removed, so that figlink cannot
    tell it is the same article as another excerpt."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with pdfium.PdfDocument(str(PDF)) as src:
        doc = pdfium.PdfDocument.new()
        doc.import_pages(src, pages)
        for page in ([] if doi else doc):
            textpage = page.get_textpage()
            for obj in [o for o in page.get_objects(max_depth=1) if o.type == pdfium_c.FPDF_PAGEOBJ_TEXT
                        and "10.7554" in _text(o, textpage)]:
                page.remove_obj(obj)
            page.gen_content()
        doc.save(str(dest))
        doc.close()
    return dest


def _without_ids(src: Path, dest: Path) -> Path:
    """A real JATS article with its <article-id>s removed: its paper id falls back to the file name."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    data = re.sub(rb"<article-id[^>]*>[^<]*</article-id>", b"", src.read_bytes())
    dest.write_bytes(data)
    return dest


def _by_path(corpus: Path) -> dict[str, str]:
    """input file (relative to the corpus's parent) → paper id."""
    with Corpus(corpus, readonly=True) as c:
        rows = c.db.execute("SELECT input_path, paper_id FROM papers").fetchall()
    return {Path(p).relative_to(corpus.parent).as_posix(): pid for p, pid in rows}


def _image_digests(corpus: Path, paper_id: str) -> dict[str, str]:
    with Corpus(corpus, readonly=True) as c:
        paper = c.paper(paper_id)
    return {f.figure_id: hashlib.sha256((corpus / f.image).read_bytes()).hexdigest()
            for f in paper.figures if f.image}


def test_two_pdfs_with_one_file_name_are_two_papers_each_with_its_own_figures(tmp_path):
    """Two different PDFs called paper.pdf were one paper (the second replaced the first). The larger one
    sorts first and is slower, so with two workers the other finishes first: the ids must not depend on it."""
    a = _pages(tmp_path / "src" / "a" / "paper.pdf", [2, 3, 4])  # Figures 1 and 2
    b = _pages(tmp_path / "src" / "b" / "paper.pdf", [6], doi=False)  # Figure 3, of "another article"
    corpus = tmp_path / "corpus"
    report = ingest([tmp_path / "src"], corpus, workers=2, options=NO_VISION, progress=False)
    assert (report.ok, report.failed) == (2, 0)
    assert _by_path(corpus) == {"src/a/paper.pdf": "paper", "src/b/paper.pdf": "paper-2"}
    assert report.renamed == [(str(b), "paper", "paper-2", str(a))]
    with Corpus(corpus, readonly=True) as c:
        first, second = c.paper("paper"), c.paper("paper-2")
        assert [f.number for f in first.figures] == ["1", "2"] and [f.number for f in second.figures] == ["3"]
        assert any("stored as paper-2" in w for w in second.warnings)
        assert {f.image for f in first.figures} == {"images/paper/fig1.png", "images/paper/fig2.png"}
        assert [f.image for f in second.figures] == ["images/paper-2/fig3.png"]
    for pid in ("paper", "paper-2"):
        assert all(p.is_file() for p in (corpus / "images" / pid).iterdir())
    assert not (corpus / ".staging").exists() or not any((corpus / ".staging").iterdir())

    again = ingest([tmp_path / "src"], corpus, options=NO_VISION, progress=False)  # nothing changes
    assert (again.ok, again.skipped, again.failed, again.renamed) == (0, 2, 0, [])


def test_two_pdf_xml_pairs_with_one_file_name_keep_their_own_images(tmp_path):
    """Two PDF + XML pairs called x.pdf/x.xml: images were stored under the PDF's stem, so one paper was
    served the other's figures. Now each paper's images live under its own id."""
    _pages(tmp_path / "src" / "a" / "x.pdf", [2])  # Figure 1 of elife-15600, merged with its XML
    shutil.copy(XML, tmp_path / "src" / "a" / "x.xml")
    _pages(tmp_path / "src" / "b" / "x.pdf", [4])  # a page with another figure, merged with another article
    shutil.copy(JATS / "elife05031.xml", tmp_path / "src" / "b" / "x.xml")
    corpus = tmp_path / "corpus"
    report = ingest([tmp_path / "src"], corpus, options=NO_VISION, progress=False)
    assert (report.ok, report.failed) == (2, 0)
    ids = _by_path(corpus)
    assert ids == {"src/a/x.pdf": "10.7554_eLife.15600", "src/b/x.pdf": "10.7554_eLife.05031"}
    with Corpus(corpus, readonly=True) as c:
        for pid in ids.values():
            images = [f.image for f in c.paper(pid).figures if f.image]
            assert images and all(im.startswith(f"images/{pid}/") for im in images), images
    one, two = (_image_digests(corpus, pid) for pid in ids.values())
    assert one and two and not set(one.values()) & set(two.values())  # each its own page's crops
    solo = tmp_path / "solo"
    ingest([tmp_path / "src" / "a"], solo, options=NO_VISION, progress=False)  # the pair alone
    assert _image_digests(solo, "10.7554_eLife.15600") == one


def test_the_same_article_twice_is_reported_and_an_update_at_its_path_replaces_it(tmp_path):
    """Two files with the same DOI but different bytes: the second is a reported duplicate, not a silent
    replacement; a new version written over the first file's path replaces the paper."""
    first = tmp_path / "src" / "a" / "article.xml"
    second = tmp_path / "src" / "b" / "article-v2.xml"
    first.parent.mkdir(parents=True)
    second.parent.mkdir(parents=True)
    data = (JATS / "elife05031.xml").read_bytes()
    first.write_bytes(data)
    second.write_bytes(data.replace(b"Specificity in endoplasmic", b"Specificity in ER"))
    corpus = tmp_path / "corpus"
    report = ingest([tmp_path / "src"], corpus, options=NO_VISION, progress=False)
    assert (report.ok, report.failed) == (1, 1)
    ((path, stage, reason),) = report.failures
    assert (path, stage) == (str(second), "duplicate")
    assert f"as {first}" in reason and "DOI 10.7554/eLife.05031" in reason
    with Corpus(corpus, readonly=True) as c:
        assert c.paper_ids() == ["10.7554_eLife.05031"]
        assert c.paper("10.7554_eLife.05031").title.startswith("Specificity in endoplasmic")
        assert [(e["stage"], Path(e["path"]).name) for e in c.errors()] == [("duplicate", "article-v2.xml")]

    first.write_bytes(second.read_bytes())  # the update, where the corpus's paper came from
    update = ingest([first], corpus, options=NO_VISION, progress=False)
    assert (update.ok, update.failed) == (1, 0)
    with Corpus(corpus, readonly=True) as c:
        assert c.paper_ids() == ["10.7554_eLife.05031"] and c.stats().inputs_done == 1
        assert c.paper("10.7554_eLife.05031").title.startswith("Specificity in ER")


@pytest.mark.parametrize("workers", [1, 2])
def test_identical_bytes_share_the_outcome_of_the_first_copy(tmp_path, workers):
    """The second copy of bytes that failed was reported "already done"; it fails like the first. With one
    worker the copy is planned after the first is written (the corpus and the run's failures say the
    outcome); with two, while the first is in flight (a twin)."""
    src = tmp_path / "src"
    src.mkdir()
    broken = (JATS / "elife05031.xml").read_bytes()[:5000]
    (src / "broken-1.xml").write_bytes(broken)
    (src / "broken-2.xml").write_bytes(broken)
    shutil.copy(JATS / "elife06726.xml", src / "good-1.xml")
    shutil.copy(JATS / "elife06726.xml", src / "good-2.xml")
    report = ingest([src], tmp_path / "corpus", workers=workers, options=NO_VISION, progress=False)
    assert (report.seen, report.ok, report.skipped, report.failed) == (4, 1, 1, 2)
    failed = {Path(p).name: (stage, reason) for p, stage, reason in report.failures}
    assert set(failed) == {"broken-1.xml", "broken-2.xml"}
    assert failed["broken-1.xml"][0] == failed["broken-2.xml"][0] == "parse"
    assert failed["broken-2.xml"][1] == f"{failed['broken-1.xml'][1]} (the same bytes as {src / 'broken-1.xml'})"
    with Corpus(tmp_path / "corpus", readonly=True) as c:
        assert sorted(Path(e["path"]).name for e in c.errors()) == ["broken-1.xml", "broken-2.xml"]


def _colliding_articles(root: Path) -> list[Path]:
    """The seven sample articles, each as <folder>/article.xml without its ids: seven papers proposing
    the one id "article"."""
    return [_without_ids(p, root / p.stem / "article.xml") for p in sorted(JATS.glob("*.*xml"))]


def test_a_resumed_run_gives_the_ids_of_an_uninterrupted_one(tmp_path):
    """Stopped after three results and run again, the corpus equals a clean run's: the ids, the paths
    they belong to, and the figure records."""
    _colliding_articles(tmp_path / "src")
    clean = tmp_path / "clean"
    report = ingest([tmp_path / "src"], clean, workers=2, options=NO_VISION, progress=False)
    assert report.ok == 7 and len(report.renamed) == 6
    want = _by_path(clean)
    assert sorted(want.values()) == ["article"] + [f"article-{n}" for n in range(2, 8)]
    assert want[sorted(want)[0]] == "article"  # the first input in order keeps the plain id

    class Killed(BaseException):
        pass

    def dies_after_three(tasks: list[Task]) -> Iterator[Result]:
        for i, task in enumerate(tasks):
            if i == 3:
                raise Killed
            yield run_task(task)

    resumed = tmp_path / "resumed"
    try:
        run_ingest([tmp_path / "src"], resumed, dies_after_three, options=NO_VISION, progress=False)
    except Killed:
        pass
    assert len(_by_path(resumed)) == 3
    rest = run_ingest([tmp_path / "src"], resumed, process_pool_runner(2), options=NO_VISION, progress=False)
    assert (rest.ok, rest.skipped) == (4, 3)
    assert {k.replace("resumed", "clean"): v for k, v in _by_path(resumed).items()} == want
    with Corpus(clean, readonly=True) as a, Corpus(resumed, readonly=True) as b:
        assert a.db.execute("SELECT * FROM figures ORDER BY 1, 2").fetchall() == \
            b.db.execute("SELECT * FROM figures ORDER BY 1, 2").fetchall()


def test_the_pool_yields_results_in_task_order(tmp_path):
    """A slow first task (a PDF, its layout model loaded on first use): the JATS articles after it finish
    first, and the writer still gets every result in task order."""
    paths = [_pages(tmp_path / "slow.pdf", [2, 3, 4, 5, 6])]
    paths += [shutil.copy(p, tmp_path / f"{i}-{p.name}") for i, p in enumerate(sorted(JATS.glob("*.*xml")) * 2)]
    tasks = [Task(str(p), None, str(i), str(tmp_path / "staging" / str(i)), NO_VISION) for i, p in enumerate(paths)]
    got = [(r.task.path, r.paper is not None) for r in process_pool_runner(2)(tasks)]
    assert got == [(str(p), True) for p in paths]


def test_a_pdf_named_dots_gets_a_safe_id_and_parse_writes_inside_its_folder(tmp_path):
    """"...pdf" gave the paper id ".." and `parse --images` wrote ".._fig1.png" outside the folder."""
    src = _pages(tmp_path / "in" / "...pdf", [2])
    out = tmp_path / "out" / "images"
    res = CliRunner().invoke(app, ["parse", str(src), "--images", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert '"paper_id": "paper"' in res.stdout
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["in/...pdf", "out/images/paper/fig1.png"]


def test_parse_with_images_keeps_two_inputs_with_one_id_apart(tmp_path):
    a = _pages(tmp_path / "a" / "paper.pdf", [2])
    b = _pages(tmp_path / "b" / "paper.pdf", [4], doi=False)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["parse", str(a), str(b), "--images", str(out), "--json"])
    assert res.exit_code == 0, res.output
    ids = re.findall(r'"paper_id": "([^"]+)"', res.stdout)
    assert ids == ["paper", "paper-2"]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "paper-2/fig2.png", "paper/fig1.png"]

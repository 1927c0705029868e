"""Shared fixtures: one corpus of the shipped sample articles, indexed once per test session.

One real figure (PMC3166277 Figure 2, "Samples of a lysis recording …") is given what the PDF and
vision stages add — an image, two panel boxes, a caption split, OCR, a figure type — so that the
image, crop and outline paths are exercised; its caption also gets markup to check escaping.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Iterator

import pytest

os.environ.setdefault("FIGLINK_OCR_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples" / "jats"
ENRICHED = ("PMC3166277", "F2")
MARKUP = ' <img src=x onerror="window.__xss=1"><b>bold</b>'


def enrich_figure(corpus_dir: Path) -> None:
    """Give the chosen real figure an image, panels a/b, a caption split, OCR and a type."""
    from PIL import Image, ImageDraw

    from figlink.corpus import Corpus
    from figlink.model import Box, CaptionSplit, FigureType, OcrText, Panel, Subcaption

    pid, fid = ENRICHED
    with Corpus(corpus_dir) as c:
        paper = c.paper(pid)
        fig = paper.figure(fid)
        cap = fig.caption
        a0 = cap.index("(A)")
        b0 = cap.index("(B)")
        fig.caption_split = CaptionSplit(
            shared_text=cap[:a0].strip(),
            subcaptions=[Subcaption(["a"], cap[a0 + 3:b0].strip(), [[a0 + 4, b0 - 1]]),
                         Subcaption(["b"], cap[b0 + 3:].strip(), [[b0 + 4, len(cap)]])])
        fig.caption = cap + MARKUP
        fig.panels = [Panel("a", Box.pixels((0, 0, 200, 150)), [0], 0.9),
                      Panel("b", Box.pixels((200, 0, 400, 150)), [1], 0.9)]
        fig.ocr = [OcrText("Frequency", Box.pixels((220, 120, 300, 140)), "axis_title"),
                   OcrText("cell recording", Box.pixels((20, 10, 120, 30)), "other")]
        fig.figure_type = FigureType("histogram", 0.9)
        fig.is_medical = False
        folder = c.image_dir_for(pid)
        folder.mkdir(parents=True, exist_ok=True)
        im = Image.new("RGB", (400, 150), "white")
        d = ImageDraw.Draw(im)
        d.rectangle([10, 10, 190, 140], outline="black", fill=(200, 220, 255))
        for i, h in enumerate([30, 80, 120, 60, 20]):
            d.rectangle([220 + i * 35, 140 - h, 245 + i * 35, 140], fill="gray")
        im.save(folder / f"{fid}.png")
        fig.image = f"images/{pid}/{fid}.png"
        c.put_paper(paper, hashlib.sha256(b"enriched").hexdigest(), "enriched")
        c.commit()


def add_zebra_paper(corpus_dir: Path, paper_id: str) -> None:
    """Add a one-figure paper (a copy of PMC3166277 Figure 3, captioned "Zebra stripes counted under a
    microscope.") to a corpus, without indexing it."""
    from figlink.corpus import Corpus

    with Corpus(corpus_dir) as c:
        p = c.paper("PMC3166277")
        p.paper_id = paper_id
        p.figures = [f for f in p.figures if f.figure_id == "F3"]
        p.figures[0].caption = "Zebra stripes counted under a microscope."
        c.put_paper(p, hashlib.sha256(paper_id.lower().encode()).hexdigest(), paper_id.lower())
        c.commit()


def write_png(path: Path, width: int, height: int, mode: str, row: Callable[[int], bytes], bit_depth: int = 8) -> None:
    """A PNG written row by row (filter 0), so a test can make a huge image without holding it. ``mode``
    is L, LA, RGB or RGBA; ``row(y)`` gives the row's samples (``bit_depth`` 8 or 16, big-endian)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    color = {"L": 0, "RGB": 2, "LA": 4, "RGBA": 6}[mode]
    z = zlib.compressobj(1)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color, 0, 0, 0)))
        for y in range(height):
            data = z.compress(b"\0" + row(y))
            if data:
                f.write(chunk(b"IDAT", data))
        f.write(chunk(b"IDAT", z.flush()) + chunk(b"IEND", b""))


def corpus_content(corpus_dir: Path) -> dict:
    """Everything a corpus holds that does not depend on when it was written."""
    db = sqlite3.connect(corpus_dir / "corpus.sqlite")
    try:
        papers = [json.loads(js) for (js,) in db.execute("SELECT json FROM papers ORDER BY paper_id")]
        paper_cols = db.execute("SELECT paper_id, source, doi, pmcid, title, journal, year, license_spdx, "
                                "license_open, n_figures, input_sha256, input_path FROM papers ORDER BY paper_id"
                                ).fetchall()
        figures = db.execute("SELECT * FROM figures ORDER BY paper_id, figure_id").fetchall()
        inputs = db.execute("SELECT sha256, path, paper_id, status, stage, reason FROM inputs ORDER BY sha256"
                            ).fetchall()
        errors = db.execute("SELECT path, sha256, stage, reason FROM errors ORDER BY path").fetchall()
    finally:
        db.close()
    images = {p.relative_to(corpus_dir).as_posix(): p.read_bytes()
              for p in sorted((corpus_dir / "images").rglob("*")) if p.is_file()}
    return {"papers": papers, "paper_cols": paper_cols, "figures": figures, "inputs": inputs, "errors": errors,
            "images": images}


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory) -> Path:
    """The sample articles ingested, one figure enriched, and indexed (MiniLM + BM25)."""
    os.environ.setdefault("FIGLINK_TORCH_THREADS", "2")
    from figlink.engine.local import ingest
    from figlink.index import build_index

    d = tmp_path_factory.mktemp("corpus")
    report = ingest([SAMPLES], d, workers=1, progress=False)
    assert report.ok == 7 and report.failed == 0
    enrich_figure(d)
    build_index(d)
    return d


@pytest.fixture(scope="session")
def elife_corpus(tmp_path_factory):
    """The sample eLife article (PDF + JATS, merged) ingested with the vision stage on: real figure crops with
    detected panels, labels and subcaptions. Returns (corpus folder, ingest report); tests only read it."""
    from figlink.engine.local import ingest

    d = tmp_path_factory.mktemp("elife-corpus")
    report = ingest([REPO / "samples" / "elife"], d, progress=False)
    return d, report


@pytest.fixture(scope="session")
def searcher(corpus_dir):
    from figlink.index import Searcher

    return Searcher(corpus_dir)


@contextlib.contextmanager
def readers_running(read: Callable[[], None], n: int = 3) -> Iterator[list[BaseException]]:
    """Run ``read`` in a loop on ``n`` threads for the duration of the block; yields the errors seen."""
    errors: list[BaseException] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                read()
            except BaseException as e:  # noqa: BLE001 - handed to the test
                errors.append(e)
                return

    threads = [threading.Thread(target=loop) for _ in range(n)]
    for t in threads:
        t.start()
    try:
        yield errors
    finally:
        stop.set()
        for t in threads:
            t.join()


@pytest.fixture(scope="session")
def jats_dir() -> Path:
    return SAMPLES


@pytest.fixture(scope="session")
def sample(jats_dir):
    def get(name: str) -> Path:
        return jats_dir / name
    return get


# ---- screenshots a person can look at (the web-page tests save them; the run lists where) ----------------

SCREENSHOTS: list[Path] = []


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory) -> Path:
    """Where the web tests save screenshots: $FIGLINK_SCREENSHOTS, else a folder of pytest's tmp dir."""
    env = os.environ.get("FIGLINK_SCREENSHOTS")
    d = Path(env) if env else tmp_path_factory.mktemp("screenshots")
    d.mkdir(parents=True, exist_ok=True)
    return d


def pytest_terminal_summary(terminalreporter) -> None:
    if SCREENSHOTS:
        terminalreporter.write_sep("-", "screenshots of the search page")
        for p in SCREENSHOTS:
            terminalreporter.write_line(str(p))


PAIRS_SAMPLE = REPO / "samples" / "pairs" / "openstax-sample.jsonl"  # 40 OpenStax figure pairs (SOURCE.md)


@pytest.fixture(scope="session")
def feature_cache(tmp_path_factory):
    """One feature cache for the learning tests (features of the sample pairs are computed once)."""
    from figlink.learn.cache import FeatureCache

    return FeatureCache(tmp_path_factory.mktemp("features"))


@pytest.fixture(scope="session")
def sample_pairs():
    """The 40 sample pairs, read and checked: all good."""
    from figlink.learn.records import read_pair_file

    pairs, bad = read_pair_file(PAIRS_SAMPLE)
    assert len(pairs) == 40 and not bad
    return pairs

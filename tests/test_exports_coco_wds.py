"""COCO and WebDataset exports of a corpus built from the real sample papers with the vision stage on.

The eLife sample (PDF + JATS) gives seven real figure crops with detected panels, labels and subcaptions
(the ``elife_corpus`` fixture of conftest, shared with the ingest test); a damaged copy adds a JATS article
whose figures have no image, deletes one image file, overwrites another with text and drops a figure's
panels.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from figlink.cli import app
from figlink.corpus import Corpus
from figlink.engine.local import ingest
from figlink.exports import export, parse_size
from figlink.exports.coco import coco_box
from figlink.exports.webdataset import SHARD_PATTERN, _unique_key, sample_key
from figlink.model import Figure

JATS = Path(__file__).resolve().parents[1] / "samples" / "jats" / "journal.pone.0005723.xml"  # 14 figures
ELIFE = "10.7554_eLife.15600"
# how WebDataset splits a member name into key and extension (webdataset.tariterators.base_plus_ext)
WDS_NAME = re.compile(r"^((?:.*/|)[^.]+)[.]([^/]*)$")


def _figures(corpus: Path) -> dict[tuple[str, str], Figure]:
    with Corpus(corpus, readonly=True) as c:
        return {(p.paper_id, f.figure_id): f for p in c.papers() for f in p.figures}


def _run(*args: str):
    return CliRunner().invoke(app, ["export", *args])


def _samples(shard: Path) -> dict[str, dict[str, bytes]]:
    """A shard read with the standard library, grouped into samples the way WebDataset groups them."""
    samples: dict[str, dict[str, bytes]] = {}
    last = None
    with tarfile.open(shard) as tar:
        for m in tar:
            key, ext = WDS_NAME.match(m.name).groups()
            assert m.isfile() and (key == last or key not in samples), "a sample's files must be consecutive"
            samples.setdefault(key, {})[ext.lower()] = tar.extractfile(m).read()
            last = key
    return samples


@pytest.fixture(scope="module")
def damaged(elife_corpus, tmp_path_factory) -> Path:
    src, _ = elife_corpus
    d = tmp_path_factory.mktemp("damaged") / "corpus"
    shutil.copytree(src, d)
    report = ingest([JATS], d, progress=False)
    assert report.ok == 1
    with Corpus(d) as c:
        paper = c.paper(ELIFE)
        (d / paper.figure("fig2").image).unlink()
        (d / paper.figure("fig3").image).write_text("not an image\n")
        paper.figure("fig4").panels = []
        c.put_paper(paper, hashlib.sha256(b"damaged").hexdigest(), "damaged")
        c.commit()
    return d


def test_coco_export_matches_the_corpus_and_evaluates_to_ap_1(elife_corpus, tmp_path):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    corpus, _ = elife_corpus
    figs = _figures(corpus)
    assert len(figs) == 7 and all(f.image and f.panels for f in figs.values())
    out = tmp_path / "coco"
    res = _run("--corpus", str(corpus), "--format", "coco", "--out", str(out))
    assert res.exit_code == 0, res.output
    assert "wrote 7 images" in res.stderr and "0 failed" in res.stderr

    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(out / "annotations.json"))
    assert [c["name"] for c in gt.loadCats(gt.getCatIds())] == ["subfigure"]
    assert len(gt.getImgIds()) == 7
    assert len(gt.getAnnIds()) == sum(len(f.panels) for f in figs.values())
    lic = {x["id"]: x for x in gt.dataset["licenses"]}
    for img in gt.loadImgs(gt.getImgIds()):
        fig = figs[(img["paper_id"], img["figure_id"])]
        assert img["caption"] == fig.caption and img["figure_type"] == fig.figure_type.label
        assert lic[img["license"]]["name"] == "CC-BY-4.0"
        path = out / img["file_name"]
        assert path.read_bytes() == (corpus / fig.image).read_bytes()
        assert os.path.samefile(path, corpus / fig.image)  # hard-linked, not copied
        with Image.open(path) as im:
            assert im.size == (img["width"], img["height"])
        anns = gt.loadAnns(gt.getAnnIds(imgIds=[img["id"]]))
        assert [(a["label"], a["subcaption"]) for a in anns] == [(p.label, fig.panel_subcaption(p)) for p in fig.panels]
        for a, p in zip(anns, fig.panels):
            x, y, w, h = a["bbox"]
            assert 0 <= x and 0 <= y and w > 0 and h > 0
            assert x + w <= img["width"] + 1e-6 and y + h <= img["height"] + 1e-6
            assert a["bbox"] == pytest.approx([p.bbox[0], p.bbox[1], p.bbox[2] - p.bbox[0], p.bbox[3] - p.bbox[1]],
                                              abs=0.02)
            assert a["area"] == pytest.approx(w * h, abs=0.05) and a["iscrowd"] == 0 and a["category_id"] == 1

    dets = [{"image_id": a["image_id"], "category_id": 1, "bbox": a["bbox"], "score": 1.0}
            for a in gt.dataset["annotations"]]
    with contextlib.redirect_stdout(io.StringIO()):
        ev = COCOeval(gt, gt.loadRes(dets), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    assert ev.stats[0] == pytest.approx(1.0) and ev.stats[1] == pytest.approx(1.0)

    # a second export into the same folder (copying this time) replaces the images and the annotations
    res = _run("--corpus", str(corpus), "--format", "coco", "--out", str(out), "--copy-images")
    assert res.exit_code == 0, res.output
    img = json.loads((out / "annotations.json").read_text())["images"][0]
    assert not os.path.samefile(out / img["file_name"], corpus / figs[(img["paper_id"], img["figure_id"])].image)
    assert sorted(p.name for p in out.iterdir()) == ["annotations.json", "images"]


def test_webdataset_shards_hold_every_figure_and_round_trip(elife_corpus, tmp_path):
    corpus, _ = elife_corpus
    figs = _figures(corpus)
    out = tmp_path / "wds"
    res = _run("--corpus", str(corpus), "--format", "webdataset", "--out", str(out), "--shard-size", "3")
    assert res.exit_code == 0, res.output
    shards = sorted(out.glob("figlink-*.tar"))
    assert [s.name for s in shards] == ["figlink-000000.tar", "figlink-000001.tar", "figlink-000002.tar"]
    assert not list(out.glob(".*"))  # no temporary files left
    index = json.loads((out / "figlink-shards.json").read_text())
    assert [s["nsamples"] for s in index["shardlist"]] == [3, 3, 1]
    assert [s["filesize"] for s in index["shardlist"]] == [s.stat().st_size for s in shards]

    seen = {}
    for shard in shards:
        seen.update(_samples(shard))
    assert len(seen) == 7
    for key, sample in seen.items():
        assert re.fullmatch(r"[A-Za-z0-9_-]+", key)
        assert set(sample) == {"png", "json", "txt"}  # the PDF crops are PNG
        meta = json.loads(sample["json"])
        fig = figs[(meta["paper_id"], meta["figure_id"])]
        assert meta["key"] == key == sample_key(meta["paper_id"], meta["figure_id"])
        assert Figure.from_dict(meta) == fig  # caption, refs, split, panels + subcaptions, OCR, type
        assert sample["txt"].decode("utf-8") == fig.caption
        assert sample["png"] == (corpus / fig.image).read_bytes()  # bytes as stored
        assert meta["license"]["spdx"] == "CC-BY-4.0" and meta["paper"]["doi"] == "10.7554/eLife.15600"
        with Image.open(io.BytesIO(sample["png"])) as im:
            assert im.size == (meta["width"], meta["height"])
    assert seen[sample_key(ELIFE, "fig1")]["json"]
    assert json.loads(seen["10_7554_eLife_15600__fig1"]["json"])["inline_refs"]


def test_webdataset_package_reads_the_shards(elife_corpus, tmp_path):
    import webdataset as wds  # a test dependency (requirements-dev.txt)
    corpus, _ = elife_corpus
    with Corpus(corpus, readonly=True) as c:
        report = export(c, "webdataset", tmp_path, shard_size=4)
    urls = [str(tmp_path / (SHARD_PATTERN % i)) for i in range(report.shards)]
    samples = list(wds.WebDataset(urls, shardshuffle=False))
    assert len(samples) == 7 and all({"png", "json", "txt"} <= set(s) for s in samples)


def test_bad_figures_are_reported_one_line_each_and_skipped(damaged, tmp_path):
    res = _run("--corpus", str(damaged), "--format", "coco", "--out", str(tmp_path / "coco"))
    assert res.exit_code == 1
    failed = [line for line in res.stderr.splitlines() if line.startswith("failed:")]
    assert failed == [
        f"failed: {ELIFE}/fig2: image: image file missing: images/{ELIFE}/fig2.png",
        f"failed: {ELIFE}/fig3: image: unreadable image images/{ELIFE}/fig3.png: "
        "not an image file (or an unknown format)",
    ]
    assert "wrote 4 images" in res.stderr and "14 figures without an image, 1 without panels" in res.stderr

    figs = _figures(damaged)
    with Corpus(damaged, readonly=True) as c:
        report = export(c, "coco", tmp_path / "coco2")
    assert (report.figures, report.written, report.no_image, report.no_panels, report.failed) == (21, 4, 14, 1, 2)
    coco = json.loads((tmp_path / "coco2" / "annotations.json").read_text())
    assert sorted(i["figure_id"] for i in coco["images"]) == ["fig1", "fig5", "fig6", "fig7"]
    assert len(coco["annotations"]) == report.annotations == sum(
        len(figs[(ELIFE, f)].panels) for f in ("fig1", "fig5", "fig6", "fig7"))

    res = _run("--corpus", str(damaged), "--format", "webdataset", "--out", str(tmp_path / "wds"))
    assert res.exit_code == 1
    assert sum(line.startswith("failed:") for line in res.stderr.splitlines()) == 2
    samples = _samples(tmp_path / "wds" / "figlink-000000.tar")
    # fig4 has an image (its panels are gone): it is a sample; the JATS figures have no image
    assert sorted(json.loads(s["json"])["figure_id"] for s in samples.values()) == [
        "fig1", "fig4", "fig5", "fig6", "fig7"]


def test_a_crash_leaves_only_whole_shards_and_a_rerun_replaces_old_ones(elife_corpus, tmp_path, monkeypatch):
    import figlink.exports.webdataset as ex

    corpus, _ = elife_corpus
    real, calls = ex.webdataset_sample, []

    def crash_on_fifth(*a, **k):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(ex, "webdataset_sample", crash_on_fifth)
    with Corpus(corpus, readonly=True) as c, pytest.raises(KeyboardInterrupt):
        export(c, "webdataset", tmp_path, shard_size=2)
    # shard 0 (samples 1-2) was complete; shard 1 (samples 3-4) was still open: it is gone, no temporary file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figlink-000000.tar"]
    assert len(_samples(tmp_path / "figlink-000000.tar")) == 2

    monkeypatch.setattr(ex, "webdataset_sample", real)
    with Corpus(corpus, readonly=True) as c:
        report = export(c, "webdataset", tmp_path, shard_size=1000, shard_bytes="400KB")
    # the PNGs are 120-215 kB: a shard takes samples while it stays under 400 kB, and no more
    shards = sorted(tmp_path.glob("figlink-*.tar"))
    assert report.written == 7 and report.shards == len(shards) > 2
    assert [p.name for p in shards] == [SHARD_PATTERN % i for i in range(len(shards))]
    assert all(p.stat().st_size <= 400_000 for p in shards)
    for shard, following in zip(shards, shards[1:]):
        first = next(iter(_samples(following).values()))
        assert shard.stat().st_size + sum(len(b) for b in first.values()) > 400_000

    with Corpus(corpus, readonly=True) as c:  # fewer shards this time: the old ones beyond them go
        report = export(c, "webdataset", tmp_path)
    assert report.shards == 1 and sorted(p.name for p in tmp_path.iterdir()) == [
        "figlink-000000.tar", "figlink-shards.json"]
    assert len(_samples(tmp_path / "figlink-000000.tar")) == 7


def test_keys_boxes_and_sizes():
    assert sample_key("10.1371/journal.pone.0005723", "pone-0005723-g004") == \
        "10_1371_journal_pone_0005723__pone-0005723-g004"
    used: set[str] = set()
    keys = [_unique_key("a.b", "f1", used), _unique_key("a_b", "f1", used), _unique_key("a b", "f1", used)]
    assert len(set(keys)) == 3 and all(re.fullmatch(r"[A-Za-z0-9_-]+", k) for k in keys)
    assert len(sample_key("x" * 300, "fig1")) <= 150

    assert coco_box([10, 20, 110, 70], 200, 100) == [10, 20, 100, 50]
    assert coco_box([-5, -5, 250, 50], 200, 100) == [0, 0, 200, 50]  # clipped to the image
    assert coco_box([110, 70, 10, 20], 200, 100) == [10, 20, 100, 50]  # corners in any order
    assert coco_box([250, 0, 300, 50], 200, 100) is None  # outside
    assert coco_box([10, 10, 10.5, 50], 200, 100) is None  # under a pixel wide
    assert coco_box([0, 0, float("nan"), 5], 200, 100) is None and coco_box([0, 0, 5], 200, 100) is None

    assert parse_size("500MB") == 500_000_000 and parse_size("1GiB") == 1 << 30 and parse_size("4096") == 4096
    with pytest.raises(ValueError):
        parse_size("lots")
    res = _run("--corpus", "/nonexistent", "--format", "webdataset", "--out", "/tmp/x", "--shard-bytes", "lots")
    assert res.exit_code == 2 and "not a size" in res.stderr


def test_damaged_images_are_told_from_good_ones(elife_corpus, tmp_path):
    from figlink.errors import InputError
    from figlink.exports.images import image_ext, probe

    figures = Path(__file__).resolve().parents[1] / "samples" / "figures"
    jpg = (figures / "s41467-018-06211-3_fig2.jpg").read_bytes()
    png = next((elife_corpus[0] / "images").rglob("*.png")).read_bytes()
    assert probe(jpg, "fig2.jpg") == ("JPEG", 685, 745) and probe(png, "x.png")[0] == "PNG"
    # fig4.jpg of the samples is really a PNG: samples are named by what their bytes are
    fig4 = figures / "s41467-018-06211-3_fig4.jpg"
    assert image_ext(probe(fig4, fig4.name)[0], fig4) == "png"
    assert probe(jpg + b"\0\0\n", "padded.jpg")[0] == "JPEG"
    (tmp_path / "cut.jpg").write_bytes(jpg[: len(jpg) // 2])
    for bad in (jpg[: len(jpg) // 2], tmp_path / "cut.jpg", png[: len(png) // 2], png[:40], b""):
        with pytest.raises(InputError, match="unreadable image"):
            probe(bad, "bad")

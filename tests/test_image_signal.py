"""Text search with the matcher's image signal (`figlink index --image`): figures embedded by the image
tower, queries carried into that space by the text tower, fused into figure search. Built on six OpenStax
sample pairs with the shipped matcher, OCR off (fast)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

import figlink  # noqa: E402
from figlink.index import build_index, store  # noqa: E402
from figlink.index.searcher import Searcher  # noqa: E402
from figlink.learn import image_search  # noqa: E402
from figlink.learn.embedder import load_matcher  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "pairs"


class _NoOcr:
    """The shipped matcher with OCR off; its dual encoder stays reachable (``model``) for the query map."""

    def __init__(self) -> None:
        self.inner = load_matcher()
        self.model, self.dim, self.lexical = self.inner.model, self.inner.dim, self.inner.lexical
        self.hubness = self.inner.hubness
        self.manifest = {**self.inner.manifest, "test": "no-ocr"}

    def embed(self, pairs, text_mode, cache, device="cpu", ocr=True):
        return self.inner.embed(pairs, text_mode, cache, device, ocr=False)


def _pairs(folder: Path, lines: list[str]) -> Path:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    for line in lines:
        shutil.copy(SAMPLE / json.loads(line)["image"], folder / json.loads(line)["image"])
    (folder / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "pairs.jsonl"


@pytest.fixture(scope="module")
def matcher():
    return _NoOcr()


@pytest.fixture(scope="module")
def lines():
    return (SAMPLE / "openstax-sample.jsonl").read_text(encoding="utf-8").splitlines()


@pytest.fixture
def corpus(tmp_path, monkeypatch, matcher, lines):
    monkeypatch.setenv("FIGLINK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(image_search, "load_matcher", lambda: matcher)
    report = figlink.build([_pairs(tmp_path / "src", lines[:6])], tmp_path / "c", vision=False, index=False,
                           progress=False)
    assert report.ingest.ok == 6
    return tmp_path / "c"


def test_index_image_adds_the_signal_and_ranks_with_it(corpus, matcher):
    signal = image_search.image_signal(corpus, matcher)
    report = build_index(corpus, image=signal)
    assert report.image_figures == 6
    manifest = store.read_manifest(store.index_dir(corpus) / report.version)
    assert manifest["signals"] == ["lexical", "text_dense", "image"]

    # the query map is the text tower for a text alone: the same vector as embedding it as a caption
    text = "a diagram of forces acting on a block"
    qvec = figlink.index.embed.default_embedder().encode([text])[0]
    tower = matcher.model.encode_text(__import__("torch").from_numpy(qvec[None, :])).detach().numpy()[0]
    searcher = Searcher(corpus)
    v = searcher.version()
    assert v.image is not None
    assert np.allclose(v.image.project(qvec), tower, atol=1e-5)

    with_image = searcher.search(text, k=6, rerank=False)
    assert len(with_image) == 6 and all("image" in h.signals for h in with_image)
    without = Searcher(corpus, image_signal=False).search(text, k=6, rerank=False)
    assert all("image" not in h.signals for h in without)
    # a filter that no figure passes (the samples are all CC BY) leaves the image signal nothing either
    assert searcher.search(text, k=6, rerank=False, filters={"open": False}) == []
    assert len(searcher.search(text, k=6, rerank=False, filters={"open": True})) == 6
    # the image signal's own order: each hit's image rank follows the cosines of the stored vectors
    store_vecs = image_search.update_figure_vectors(corpus, matcher)
    cos = {fid: float(store_vecs.image[i] @ v.image.project(qvec)) for i, (_, fid) in enumerate(store_vecs.keys)}
    by_rank = sorted(with_image, key=lambda h: h.signals["image"])
    assert [cos[h.figure_id] for h in by_rank] == sorted(cos.values(), reverse=True)


def test_an_update_keeps_the_image_vectors_of_the_figures_it_keeps(corpus, matcher, lines, tmp_path):
    build_index(corpus, image=image_search.image_signal(corpus, matcher))
    more = _pairs(tmp_path / "src2", lines[6:7])
    report = figlink.build([more], corpus, vision=False, progress=False)  # ingest + index, no image signal
    assert report.index.figures == 7 and report.index.image_figures == 6
    v = Searcher(corpus).version()
    assert v.image is not None and len(v.image.vectors.docs) == 6


def test_an_image_signal_needs_the_index_text_model(corpus, matcher, monkeypatch):
    signal = image_search.image_signal(corpus, matcher)
    monkeypatch.setenv("FIGLINK_EMBEDDER", "none")
    with pytest.raises(ValueError, match="text embedder"):
        build_index(corpus, image=signal)


def test_cli_index_image(corpus):
    from figlink.cli.application import app

    result = CliRunner().invoke(app, ["index", "--corpus", str(corpus), "--image"])
    assert result.exit_code == 0, result.output
    assert "+ image (6 figures)" in result.output
    result = CliRunner().invoke(app, ["index", "--corpus", str(corpus / "nope"), "--image"])
    assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1


def test_cli_index_image_names_each_figure_it_leaves_out(corpus):
    from figlink.cli.application import app

    broken = sorted((corpus / "images").rglob("*.*"))[0]
    broken.write_bytes(b"not an image")
    result = CliRunner().invoke(app, ["index", "--corpus", str(corpus), "--image"])
    failed = [line for line in result.output.splitlines() if line.startswith("failed:")]
    assert result.exit_code == 1, result.output
    assert len(failed) == 1 and broken.parent.name in failed[0] and "image signal" in failed[0], result.output
    assert "+ image (5 figures)" in result.output

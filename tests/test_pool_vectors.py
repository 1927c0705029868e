"""`figlink embed --score full`: rows whose dot products rank as the matcher's whole score over the file
(figlink.learn.pool_vectors), checked on the 40 OpenStax sample pairs and on hand-computed BM25."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

import figlink.learn.pool_vectors as pv  # noqa: E402
from figlink.learn.embedder import load_matcher  # noqa: E402
from figlink.learn.evaluate import bm25_ocr_baseline, both_ways  # noqa: E402
from figlink.learn.hubness import Hubness, balance  # noqa: E402
from figlink.learn.lexical import LexicalWeights  # noqa: E402
from figlink.learn.records import read_pair_file  # noqa: E402

from conftest import PAIRS_SAMPLE as PAIRS  # noqa: E402
from test_matcher import _app  # noqa: E402

MODE = "caption+mentions"


@pytest.fixture(scope="module")
def sample(feature_cache):
    """The shipped matcher's tower vectors, OCR texts and texts of the 40 sample pairs."""
    matcher = load_matcher()
    pairs, bad = read_pair_file(PAIRS)
    assert not bad
    emb = matcher.embed(pairs, MODE, feature_cache)
    return matcher, emb, [p.text(MODE) for p in pairs]


def test_bm25_forms_give_bm25_by_hand():
    from figlink.learn.lexical import term_counts

    docs = ["cat sat", "dog dog sat", "bird flew", "fish swam", "cow ate"]
    q, d = pv.bm25_forms(term_counts(["dog"]), term_counts(docs), pv._Hasher(1 << 20))
    got = (q @ d.T).toarray()[0]
    # idf(dog) = ln((5 - 1 + .5) / (1 + .5)) = ln 3; doc 2: tf 2, length 3, mean length 2.2;
    # saturated tf = 2 · 2.2 / (2 + 1.2 · (.25 + .75 · 3 / 2.2)) = 1.24742; the query form divides by ln 3
    assert got[1] == pytest.approx(2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2.2)), rel=1e-5)
    assert got[1] * math.log(3) == pytest.approx(1.37043, rel=1e-4)
    assert np.all(got[[0, 2, 3, 4]] == 0)


def test_scaled_by_best_makes_each_query_best_one():
    docs = pv._Hasher(1 << 20).rows([{"a": 2.0}, {"b": 1.0}, {"a": 1.0, "b": 3.0}])
    queries = pv._Hasher(1 << 20).rows([{"a": 1.0}, {"c": 1.0}])
    scores = (pv.scaled_by_best(queries, docs) @ docs.T).toarray()
    assert scores[0].max() == pytest.approx(1.0) and scores[0, 2] == pytest.approx(0.5)
    assert np.all(scores[1] == 0)  # shares nothing: adds nothing


def test_dot_products_are_the_score_over_one_constant(sample):
    matcher, emb, texts = sample
    img, txt = pv.pool_vectors(emb.image, emb.text, emb.ocr_text, texts, matcher.lexical, matcher.hubness)
    assert img.shape == txt.shape == (40, pv.full_dim(matcher.dim, matcher.lexical, matcher.hubness))
    assert img.dtype == txt.dtype == np.float32
    assert np.allclose(np.linalg.norm(img, axis=1), 1, atol=1e-5)
    assert np.allclose(np.linalg.norm(txt, axis=1), 1, atol=1e-5)
    # the same score built apart: cosine + every lexical block's products − both items' normalizers
    blocks = pv.lexical_blocks(emb.ocr_text, texts, matcher.lexical)
    assert len(blocks) == 4  # words and grams, each direction
    s = (emb.text @ emb.image.T).astype(np.float64)
    for bi, bt in blocks:
        s += (bt @ bi.T).toarray()
    h_img = balance(lambda a, b: s[:, a:b], 40, 40, matcher.hubness).normalizers
    h_txt = balance(lambda a, b: s.T[:, a:b], 40, 40, matcher.hubness).normalizers
    s = s - h_img[None, :] - h_txt[:, None]
    dots = (txt @ img.T).astype(np.float64)
    ratio = dots / s
    assert np.all(ratio > 0) and np.allclose(ratio, ratio.mean(), rtol=1e-3)
    # the towers' vectors are the first coordinates, in proportion
    lead = img[:, :matcher.dim] / np.linalg.norm(img[:, :matcher.dim], axis=1, keepdims=True)
    assert np.allclose(lead, emb.image, atol=1e-5)


def test_full_rows_rank_above_the_towers_and_bm25_on_the_sample(sample):
    matcher, emb, texts = sample
    img, txt = pv.pool_vectors(emb.image, emb.text, emb.ocr_text, texts, matcher.lexical, matcher.hubness)
    full, dense = both_ways(txt @ img.T), both_ways(emb.text @ emb.image.T)
    bm25 = bm25_ocr_baseline(texts, emb.ocr_text)
    for way in ("t2i", "i2t"):
        assert full[way]["R@1"] > dense[way]["R@1"] > bm25[way]["R@1"], (way, full, dense, bm25)


def test_a_matcher_without_lexical_term_or_correction_keeps_its_vectors(sample):
    _, emb, texts = sample
    img, txt = pv.pool_vectors(emb.image, emb.text, emb.ocr_text, texts, LexicalWeights(), Hubness(0.0))
    assert img.shape[1] == pv.full_dim(emb.image.shape[1], LexicalWeights(), Hubness(0.0)) == emb.image.shape[1]
    assert np.array_equal(img, emb.image) and np.array_equal(txt, emb.text)


def test_one_figure_no_ocr_text_and_no_figure(sample):
    matcher, emb, texts = sample
    img, txt = pv.pool_vectors(emb.image[:1], emb.text[:1], [""], texts[:1], matcher.lexical, matcher.hubness)
    assert np.isfinite(img).all() and np.isfinite(txt).all()
    assert np.allclose([np.linalg.norm(img), np.linalg.norm(txt)], 1, atol=1e-5)
    img, txt = pv.pool_vectors(emb.image, emb.text, [], texts, matcher.lexical, matcher.hubness)  # --no-ocr
    assert np.isfinite(img).all() and both_ways(txt @ img.T)["pool"] == 40
    img, txt = pv.pool_vectors(emb.image[:0], emb.text[:0], [], [], matcher.lexical, matcher.hubness)  # none left
    assert img.shape == txt.shape == (0, pv.full_dim(matcher.dim, matcher.lexical, matcher.hubness))


def test_cli_full_is_the_default_dense_on_request_and_a_huge_file_refused(tmp_path, feature_cache, monkeypatch):
    cache = ["--cache", str(feature_cache.root)]
    res = CliRunner().invoke(_app(), ["embed", str(PAIRS), "--out", str(tmp_path / "full"), *cache])
    assert res.exit_code == 0, res.output
    matcher = load_matcher()
    d = pv.full_dim(matcher.dim, matcher.lexical, matcher.hubness)
    assert np.load(tmp_path / "full" / "image.npy").shape == (40, d) and f"d={d}, full" in res.output
    res = CliRunner().invoke(_app(), ["embed", str(PAIRS), "--out", str(tmp_path / "dense"), "--score", "dense", *cache])
    assert res.exit_code == 0, res.output
    assert np.load(tmp_path / "dense" / "text.npy").shape == (40, matcher.dim)
    ids = [json.loads(line)["id"] for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    assert (tmp_path / "full" / "ids.txt").read_text().splitlines() == ids

    monkeypatch.setattr(pv, "MAX_FIGURES", 10)
    res = CliRunner().invoke(_app(), ["embed", str(PAIRS), "--out", str(tmp_path / "big"), *cache])
    assert res.exit_code == 2 and "at most 10 figures" in res.output and "--score dense" in res.output
    assert not (tmp_path / "big").exists()
    res = CliRunner().invoke(_app(), ["embed", str(PAIRS), "--out", str(tmp_path / "x"), "--score", "cosine"])
    assert res.exit_code == 2 and "--score must be full or dense" in res.output


def test_terms_are_the_word_terms_porter_stems():
    from figlink.learn.lexical import term_counts

    got = term_counts(["Running dogs ran; the dog RUNS.", "", "Café 3 10"])
    assert got[0] == {"run": 2, "dog": 2, "ran": 1, "the": 1}
    assert got[1] == {} and got[2] == {"cafe": 1, "3": 1, "10": 1}  # diacritics removed, digits kept in documents

"""The learned re-ranker: the shipped models load, re-rank real queries on the sample corpus, can be
turned off (API and CLI), and a model of another version fails at load with a clear message."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from figlink.cli import app
from figlink.index import Searcher
from figlink.index.rerank import FORMAT, MODEL_DIR, RerankModel, RerankModelError, default_model, load
from figlink.index.rerank_features import FEATURES, Candidate, caption_head, features
from figlink.index.store import current, index_dir
from figlink.index import lexical


@pytest.mark.parametrize("level", ["figure", "panel"])
def test_shipped_models_load_with_their_card(level):
    m = default_model(level)
    assert m is not None and m.level == level and m.w1.shape[0] == len(m.features)
    assert m.meta["format"] == FORMAT and m.meta["features"] == list(m.features) and set(m.features) <= set(FEATURES)
    assert (MODEL_DIR / f"rerank_{level}.npz").stat().st_size < 100_000
    card = (MODEL_DIR / "RERANK_CARD.md").read_text()
    assert "tune half" in card and "train_rerank.py" in card and "Licence" in card


def test_citing_sentence_finds_its_figure_and_panel_reranked(searcher):
    # PMC3166277 Figure 2B is cited by "considerable amount of variation in lysis time for the wild-type (WT)
    # λ phage"; the caption's (B) is the lysis-time histogram
    q = "considerable variation in lysis time for the wild-type phage"
    fig = searcher.search(q, k=5)
    assert (fig[0].paper_id, fig[0].figure_id) == ("PMC3166277", "F2") and "fused" in fig[0].signals
    pan = searcher.search(q, k=5, level="panel")
    assert (pan[0].paper_id, pan[0].figure_id, pan[0].panel) == ("PMC3166277", "F2", "b")
    assert [h.rank for h in pan] == [1, 2, 3, 4, 5] and all(a.score >= b.score for a, b in zip(pan, pan[1:]))


def test_rerank_off_is_the_fusion_order(corpus_dir, searcher):
    q = "holin hole formation in the membrane"
    off = searcher.search(q, k=20, rerank=False)
    plain = Searcher(corpus_dir, rerankers={}).search(q, k=20)
    assert [(h.paper_id, h.figure_id) for h in off] == [(h.paper_id, h.figure_id) for h in plain]
    assert all("fused" not in h.signals for h in off)
    on = searcher.search(q, k=20)
    # the re-ranker re-orders the same candidates: the top 20 hold the same figures up to the cut
    assert {h.figure_id for h in on[:5]} <= {h.figure_id for h in off} | {h.figure_id for h in on}
    assert all("fused" in h.signals for h in on)


def test_cli_no_rerank(corpus_dir):
    runner = CliRunner()
    args = ["search", "variation in lysis time", "--corpus", str(corpus_dir), "-k", "3", "--json"]
    on = json.loads(runner.invoke(app, args).stdout)["hits"]
    off = json.loads(runner.invoke(app, args + ["--no-rerank"]).stdout)["hits"]
    assert all("fused" in h["signals"] for h in on) and not any("fused" in h["signals"] for h in off)


def test_model_of_another_version_fails_at_load(tmp_path):
    m = default_model("figure")
    assert m is not None
    old = tmp_path / "old.npz"
    m.save(old)
    z = dict(np.load(old))
    meta = json.loads(str(z["meta"]))
    for change, words in (({"format": "figlink-rerank/0"}, "format"), ({"features": meta["features"][:-1]}, "features"),
                          ({"features": meta["features"][:-1] + ["no_such_feature"]}, "does not compute")):
        with open(old, "wb") as f:
            np.savez(f, **{**z, "meta": np.asarray(json.dumps({**meta, **change}))})
        with pytest.raises(RerankModelError, match=words) as e:
            load(old)
        assert "retrain" in str(e.value)
    (tmp_path / "junk.npz").write_bytes(b"not a model")
    with pytest.raises(RerankModelError, match="not a figlink re-ranker model"):
        load(tmp_path / "junk.npz")


def test_features_count_overlaps_on_a_real_figure(corpus_dir, searcher):
    """The caption of PMC3166277 F1 holds every word of the query: full caption cover, numbers absent."""
    v = searcher.version()
    doc = lexical.find_doc(v.db, "figure", "PMC3166277", "F1", None)
    other = lexical.find_doc(v.db, "figure", "PMC3166277", "F2", None)
    q = "schematic presentation of two models of holin hole formation"
    cands = [Candidate(doc, 1.0, "PMC3166277", "F1"), Candidate(other, 0.5, "PMC3166277", "F2")]
    X = features(v.db, v.vectors.get("figure"), "figure", q, None, cands, {}, len(v.cols["figure"]))
    f = dict(zip(FEATURES, X[0]))
    assert X.shape == (2, len(FEATURES)) and np.isfinite(X).all()
    assert f["cover_main"] == 1.0 and f["num_query"] == 0.0 and f["paper_count"] == pytest.approx(np.log(3))
    g = dict(zip(FEATURES, X[1]))
    assert f["bm25_main_norm"] == 1.0 and g["bm25_main_norm"] < 1.0
    # F1's first caption sentence is the query; F2's ("Samples of a lysis recording and frequency
    # distributions …") shares no word with it
    assert f["head_cover"] == 1.0 and g["head_cover"] == 0.0 and f["bm25_head_log"] > 0.0 == g["bm25_head_log"]
    # the two are siblings (one paper): F1 leads F2 by as much as F2 trails F1, and holds query words F2 lacks
    assert f["sib_wcover_gap"] == pytest.approx(-g["sib_wcover_gap"]) and f["sib_wcover_gap"] > 0
    assert f["sib_fused_gap"] == pytest.approx(0.5) and g["sib_fused_gap"] == pytest.approx(-0.5)
    assert f["sib_unique_wcover"] > g["sib_unique_wcover"]
    assert current(index_dir(corpus_dir)) is not None


def test_caption_head_is_the_first_sentence():
    assert caption_head("Effect of IL-6 on T cells. (A) Counts at 2.5 h. (B) Ratios.") == "Effect of IL-6 on T cells"
    assert caption_head("Schematic of the assay") == "Schematic of the assay"
    # a stop in the first words, after one letter or before a lower-case word ends nothing
    assert caption_head("Fig. 2. Growth of E. coli strains vs. time. Mean of 3.") == "Fig. 2. Growth of E. coli strains vs. time"


def test_rerank_model_scores_rows():
    F = len(FEATURES)
    w1 = np.zeros((F, 2), np.float32)
    w1[FEATURES.index("cover_main"), 0] = 1.0
    m = RerankModel("figure", np.zeros(F, np.float32), np.ones(F, np.float32), w1, np.zeros(2, np.float32),
                    np.asarray([1.0, 0.0], np.float32), 0.0)
    X = np.zeros((3, F), np.float32)
    X[:, FEATURES.index("cover_main")] = [0.2, 0.9, -1.0]
    assert m.score(X).tolist() == pytest.approx([0.2, 0.9, 0.0])
    # a model of two named features reads those columns of the full matrix, whatever their order
    two = RerankModel("figure", np.zeros(2, np.float32), np.ones(2, np.float32), np.asarray([[0.0], [1.0]], np.float32),
                      np.zeros(1, np.float32), np.ones(1, np.float32), 0.0, features=("cover_refs", "cover_main"))
    assert two.score(X).tolist() == pytest.approx([0.2, 0.9, 0.0])


def test_average_scores_the_mean_of_its_models(corpus_dir, searcher):
    """Networks of several seeds stored as one: its score is the mean of theirs on real candidates."""
    from figlink.train.rerank import average

    m = default_model("figure")
    assert m is not None
    other = RerankModel("figure", m.mean, m.std, m.w1[:, ::-1].copy(), m.b1[::-1].copy(), 2 * m.w2[::-1], m.b2 + 1,
                        features=m.features)
    v = searcher.version()
    docs = [lexical.find_doc(v.db, "figure", "PMC3166277", f, None) for f in ("F1", "F2", "F3")]
    cands = [Candidate(d, 1.0 / (i + 1), "PMC3166277", f) for i, (d, f) in enumerate(zip(docs, ("F1", "F2", "F3")))]
    X = features(v.db, v.vectors.get("figure"), "figure", "lysis time of holin mutants", None, cands, {},
                 len(v.cols["figure"]))
    both = average([m, other])
    assert both.w1.shape == (m.w1.shape[0], 2 * m.w1.shape[1])
    assert both.score(X) == pytest.approx((m.score(X) + other.score(X)) / 2, rel=1e-5, abs=1e-5)
    assert not np.allclose(m.score(X), other.score(X))
    with pytest.raises(ValueError, match="standardisation"):
        average([m, RerankModel("figure", m.mean + 1, m.std, m.w1, m.b1, m.w2, m.b2, features=m.features)])


def test_fit_picks_the_epoch_on_the_named_fifth(corpus_dir, searcher):
    """``val_fifth`` names the fifth of the papers that picks the epoch: its groups are held out of the fit."""
    from figlink.train.rerank import Group, fifth, fit

    v = searcher.version()
    figs = ("F1", "F2", "F3")
    docs = [lexical.find_doc(v.db, "figure", "PMC3166277", f, None) for f in figs]
    cands = [Candidate(d, 1.0 / (i + 1), "PMC3166277", f) for i, (d, f) in enumerate(zip(docs, figs))]
    X = features(v.db, v.vectors.get("figure"), "figure", "lysis time of holin mutants", None, cands, {},
                 len(v.cols["figure"]))
    papers = [f"paper{i}" for i in range(20)]  # stand-ins for the papers a corpus holds
    groups = [Group(X, i % 3, p) for i, p in enumerate(papers)]
    for k in (0, 3):
        _, rep = fit(groups, "figure", epochs=2, val_fifth=k)
        held = sum(1 for p in papers if fifth(p) == k)
        assert 0 < held < len(papers) and rep["val_groups"] == held and rep["train_groups"] == len(papers) - held

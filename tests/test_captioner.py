"""The captioner on the 40 OpenStax sample pairs: candidates, the listwise scorer trained in-test in
seconds, scoring and baselines, model directories, `figlink train captioner` / `figlink caption
generate` with bad input. CPU only; OCR is skipped (--no-ocr) to keep it fast."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
import typer
from typer.testing import CliRunner

from figlink.learn.cache import FeatureCache
from figlink.learn.captioner import (FEATURES, FigureInput, agreement, build_candidates, fit_captioner,
                                     mention_candidates, retrieve)
from figlink.learn.captioner_eval import first_mention_baseline, nearest_caption_baseline, reference
from figlink.learn.captioner_recipe import (DEFAULT_CAPTIONER, load_captioner, prepare, save_captioner,
                                            train_on)
from figlink.learn.model_dir import MANIFEST, ModelError
from figlink.text.normalize import caption_tokens

from conftest import PAIRS_SAMPLE as PAIRS  # noqa: E402

SAMPLES = PAIRS.parent


@pytest.fixture(scope="module")
def cache(feature_cache) -> FeatureCache:
    return feature_cache


@pytest.fixture(scope="module")
def data(cache, sample_pairs):
    torch.set_num_threads(1)
    pairs = sample_pairs
    prepared = prepare(pairs, cache, ocr=False)
    assert not prepared.bad and len(prepared.figs) == 40
    return prepared


@pytest.fixture(scope="module")
def captioner(data):
    return train_on(data)


def test_agreement_and_references_by_hand():
    # "a b" vs "a c": unigram F1 1/2, no shared 2-, 3- or 4-gram
    assert agreement(["a", "b"], ["a", "c"]) == pytest.approx(0.5 / 4)
    assert agreement(["x", "y", "z", "w"], ["x", "y", "z", "w"]) == pytest.approx(1.0)
    assert reference("The Sun has 8 planets. Pluto is not one.", "first_sentence") == "the sun has [NUM] planets."
    assert reference("word " * 101, "whole") is None  # SciCap's ≤ 100 token subset
    assert reference("word " * 100, "whole") is not None


def test_scores_by_hand():
    pytest.importorskip("sacrebleu")
    pytest.importorskip("rouge_score")
    from figlink.learn.captioner_eval import bleu4, rouge_l, score_captions

    assert bleu4(["the cell divides into two cells"], ["the cell divides into two cells"]) == pytest.approx(1.0)
    assert bleu4(["a b c d"], ["e f g h"]) == 0.0
    # LCS of "a b c d" and "a c d e" is "a c d": P = R = 3/4
    assert rouge_l(["a b c d"], ["a c d e"]) == pytest.approx(0.75)
    s = score_captions(["the sun has [NUM] planets."], ["The Sun has 8 planets. Pluto is not one."])
    assert s["first_sentence"]["BLEU-4"] == pytest.approx(1.0) and s["first_sentence"]["n"] == 1
    assert s["whole"]["BLEU-4"] < 1.0 and s["whole"]["ROUGE-L"] < 1.0


def test_baselines():
    assert first_mention_baseline([("As shown in the figure, 3 cells divide. Then more.",), ()]) == [
        "as shown in the figure, [NUM] cells divide.", ""]
    img = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    pool = np.array([[0.0, 1.0], [0.8, 0.6]], np.float32)
    got = nearest_caption_baseline(img, pool, ["Up. Second.", "Right. More."])
    assert got == {"first_sentence": ["right.", "up."], "whole": ["right. more.", "up. second."]}


def test_retrieval_excludes_and_candidates_carry_mentions():
    img = np.array([[1.0, 0.0]], np.float32)
    pool = np.array([[1.0, 0.0], [0.6, 0.8]], np.float32)
    assert [t for t, _ in retrieve(img, pool, ["self", "other"], 2)[0]] == ["self", "other"]
    assert [t for t, _ in retrieve(img, pool, ["self", "other"], 2, np.array([[True, False]]))[0]] == ["other"]
    fig = FigureInput("ATP", ("The cell makes ATP. It uses 2 steps.", "Another text."))
    assert [s for _, _, s, stripped, _ in mention_candidates(fig.mentions) if not stripped] == [
        "the cell makes atp.", "it uses [NUM] steps.", "another text."]
    none = build_candidates(fig, [("cells make atp.", 0.9)], "none")
    both = build_candidates(fig, [("cells make atp.", 0.9)], "mentions")
    assert none.texts == ["cells make atp."] and len(both.texts) == 4
    assert both.features[:, 0].tolist() == [0.0, 1.0, 1.0, 1.0]  # the "mention" flag
    # OCR precision: "atp" is read in the image; "the cell makes atp." has 1 of its 4 words there
    assert both.features[1, FEATURES.index("ocr_precision")] == pytest.approx(0.25)


def test_trained_scorer_picks_better_than_a_random_candidate(data, captioner):
    """On its training books (retrieving from the other books, as in training), the chosen candidate
    agrees with the real first sentence more than the average candidate does."""
    chosen, average = [], []
    for context in ("none", "mentions"):
        found = retrieve(data.image_vecs, data.text_vecs, captioner.pool_texts, 10,
                         np.array([[a.group == b.group for b in data.figs] for a in data.figs]))
        for fig, ref, r in zip(data.figs, captioner.pool_texts, found):
            c = build_candidates(fig, r, context)
            if len(c.texts) < 2:
                continue
            scores = captioner.scorers[context](torch.from_numpy(c.features)).detach().numpy()
            agree = [agreement(caption_tokens(t), caption_tokens(ref)) for t in c.texts]
            chosen.append(agree[int(scores.argmax())])
            average.append(float(np.mean(agree)))
        assert len(chosen) >= 30
        assert np.mean(chosen) > np.mean(average) * 1.2, (context, np.mean(chosen), np.mean(average))


def test_generation_writes_candidate_sentences(data, captioner):
    gen = captioner.generate(data.figs, data.image_vecs, "mentions")
    assert len(gen) == 40 and all(gen)
    mention_texts = {c[2] for f in data.figs for c in mention_candidates(f.mentions)}
    assert all(g in mention_texts or g in captioner.pool_texts for g in gen)
    with pytest.raises(ValueError, match="unknown context"):
        fit_captioner(data.figs, data.image_vecs, data.text_vecs, ("summary",))
    one = train_on(data, ("none",))
    with pytest.raises(ValueError, match="trained for --context none"):
        one.generate(data.figs, data.image_vecs, "mentions")


def test_model_directory_round_trip_and_refusals(data, captioner, tmp_path):
    folder = save_captioner(captioner, tmp_path / "cap")
    again = load_captioner(folder)
    assert again.pool_texts == captioner.pool_texts and set(again.scorers) == {"none", "mentions"}
    a = captioner.generate(data.figs, data.image_vecs, "mentions")
    b = again.generate(data.figs, data.image_vecs, "mentions")
    assert sum(x == y for x, y in zip(a, b)) >= 38  # float16 pool vectors may flip a near tie
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["config"]["matcher_sha256"] = "0" * 64
    (folder / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ModelError, match="another matcher"):
        load_captioner(folder)
    with pytest.raises(ModelError, match="not a 'captioner' model"):
        load_captioner(DEFAULT_CAPTIONER.parent / "matcher")


def _app() -> typer.Typer:
    from figlink.cli.application import app

    return app


def test_cli_train_then_generate_with_bad_input(tmp_path, cache):
    model = tmp_path / "model"
    res = CliRunner().invoke(_app(), ["train", "captioner", "--pairs", str(PAIRS), "--out", str(model),
                                      "--context", "mentions", "--no-ocr", "--cache", str(cache.root), "--threads", "1"])
    assert res.exit_code == 0, res.output
    assert json.loads((model / MANIFEST).read_text())["config"]["contexts"] == ["mentions"]

    work = tmp_path / "data"
    shutil.copytree(SAMPLES / "images", work / "images")
    (work / "images" / "not-an-image.png").write_text("hello", encoding="utf-8")
    lines = PAIRS.read_text(encoding="utf-8").splitlines()[:4]
    lines.insert(1, "not json")
    lines.insert(3, json.dumps({"id": "gone", "image": "images/gone.jpg", "caption": "A caption."}))
    lines.insert(4, json.dumps({"id": "text", "image": "images/not-an-image.png", "caption": "A caption."}))
    (work / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "captions.jsonl"
    res = CliRunner().invoke(_app(), ["caption", "generate", str(work / "pairs.jsonl"), "--out", str(out),
                                      "--model", str(model), "--context", "mentions", "--no-ocr",
                                      "--cache", str(cache.root)])
    assert res.exit_code == 1, res.output
    assert "line 2: not JSON" in res.output and "gone: image not found" in res.output
    assert "not-an-image" in res.output
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [json.loads(x)["id"] for x in PAIRS.read_text().splitlines()[:4]]
    assert all(r["caption"] for r in rows)
    # a model trained for one context refuses the other
    res = CliRunner().invoke(_app(), ["caption", "generate", str(PAIRS), "--out", str(tmp_path / "x.jsonl"),
                                      "--model", str(model), "--context", "none", "--no-ocr"])
    assert res.exit_code == 2 and "not none" in res.output and not (tmp_path / "x.jsonl").exists()


def test_default_captioner_ships_and_generates(tmp_path, cache):
    captioner = load_captioner()
    assert set(captioner.scorers) == {"none", "mentions"} and len(captioner.pool_texts) > 3000
    assert (DEFAULT_CAPTIONER / "MODEL_CARD.md").is_file()
    out = tmp_path / "c.jsonl"
    res = CliRunner().invoke(_app(), ["caption", "generate", str(PAIRS), "--out", str(out), "--no-ocr",
                                      "--cache", str(cache.root)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 40 and all(r["caption"] in captioner.pool_texts for r in rows)

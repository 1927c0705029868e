"""The image–text matcher on the 40 OpenStax sample pairs: features, cache, training, metrics, model
directories, `figlink embed` and `figlink train matcher`. CPU only, a few seconds of training."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import typer
from typer.testing import CliRunner

from figlink.learn.cache import FeatureCache
from figlink.learn.dataset import featurize_pairs
from figlink.learn.embedder import DEFAULT_MODEL, load_matcher, save_matcher
from figlink.learn.evaluate import bm25_scores, chance, metrics_from_scores
from figlink.learn.featurize import image_features
from figlink.learn.matcher import DualEncoder, MatcherConfig
from figlink.learn.model_dir import MANIFEST, ModelError
from figlink.learn.pool_vectors import full_dim
from figlink.learn.records import read_pair_file
from figlink.learn.train import TrainSettings, encode_all, evaluate, resolve_device, train_matcher

from conftest import PAIRS_SAMPLE as PAIRS  # noqa: E402

SAMPLES = PAIRS.parent


@pytest.fixture(scope="module")
def cache(feature_cache) -> FeatureCache:
    return feature_cache


@pytest.fixture(scope="module")
def feats(cache, sample_pairs):
    torch.set_num_threads(1)
    pairs = sample_pairs
    f, bad = featurize_pairs(pairs, cache, ocr=False, image_size=MatcherConfig().image_size)
    assert not bad
    return f


@pytest.fixture(scope="module")
def trained(feats):
    result = train_matcher(feats, None, MatcherConfig(use_ocr=False, hidden=128),
                           TrainSettings(epochs=40, batch_size=40, lr=1e-3, seed=0))
    return result


def test_metrics_by_hand():
    # query 0 ranks its match 1st, query 1 ranks it 3rd, query 2 ties it with one other item at the top
    scores = np.array([[0.9, 0.1, 0.2], [0.5, 0.1, 0.3], [0.7, 0.0, 0.7]])
    m = metrics_from_scores(scores, ks=(1, 2))
    assert m["R@1"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert m["R@2"] == pytest.approx((1 + 0 + 1) / 3)
    assert m["MRR"] == pytest.approx((1 + 1 / 3 + (1 + 1 / 2) / 2) / 3)
    # a scorer that cannot tell items apart scores exactly chance
    flat = metrics_from_scores(np.zeros((50, 50)))
    assert flat == pytest.approx(chance(50))
    assert chance(50)["R@10"] == pytest.approx(0.2)
    assert chance(4)["MRR"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)


def test_bm25_ranks_the_document_sharing_rare_words():
    docs = ["Liquid Solid Gas Temperature Pressure", "UUU UUC AUG second letter", "Sun Earth ecliptic"]
    s = bm25_scores(["the codon table: AUG is the start codon (second letter on top)", "solid liquid gas phases",
                     "nothing shared"], docs)
    assert s[0].argmax() == 1 and s[1].argmax() == 0
    assert (s[2] == 0).all()


def test_feature_cache_is_hit_and_bad_images_fail_alone(cache, feats, tmp_path, monkeypatch):
    import figlink.learn.featurize as fz

    def no_decoding(*a, **k):
        raise AssertionError("cached images must not be decoded again")

    monkeypatch.setattr(fz, "trunk_maps", no_decoding)
    paths = [Path(p) for p in sorted((SAMPLES / "images").glob("*.jpg"))[:3]]
    (tmp_path / "text.jpg").write_text("not a picture")
    res = image_features(paths + [tmp_path / "text.jpg", tmp_path / "gone.jpg"], cache, maps=True, ocr=False,
                         size=feats.image_size)
    assert all(r.maps.shape == (192, 11, 11) for r in res[:3])  # 336 px letterboxed: an 11 x 11 map
    assert "not a readable image" in str(res[3]) and "image not found" in str(res[4])


def test_ocr_lines_are_read_and_cached(tmp_path):
    codon_table = SAMPLES / "images" / "microbiology__OSC_Microbio_11_04_GenCode.jpg"
    c = FeatureCache(tmp_path)
    (first,) = image_features([codon_table], c, maps=False, ocr=True)
    words = {line["text"] for line in first.ocr}
    assert {"UUU", "AUG", "second letter"} <= words  # read on the picture of the codon table
    (again,) = image_features([codon_table], c, maps=False, ocr=True)
    assert again.ocr == first.ocr


def test_tiny_model_beats_chance_on_its_training_pairs(trained, feats):
    for mode in ("caption", "caption+mentions"):
        m = evaluate(trained.model, feats, mode)
        assert m["pool"] == 40
        for d in ("t2i", "i2t"):
            assert m[d]["R@1"] >= 0.5 > 10 * m["chance"]["R@1"], (mode, d, m[d])


def test_ocr_fused_model_starts_as_the_ocr_text_match(cache):
    """On the 8 chemistry figures (labelled diagrams): before training, with the visual term at zero, the
    matcher's scores are exactly the cosines of the MiniLM embeddings of the OCR text and the caption;
    training keeps unit vectors in MiniLM's 384-d space and fits its own pairs."""
    pairs, _ = read_pair_file(PAIRS)
    chem = [p for p in pairs if p.id.startswith("chemistry-bundle/")]
    f, bad = featurize_pairs(chem, cache, ocr=True, image_size=MatcherConfig().image_size)
    assert len(f) == 8 and not bad and f.has_ocr.sum() >= 4  # most of these diagrams carry words
    untrained = DualEncoder(MatcherConfig(use_ocr=True, use_mentions=False, visual_init=0.0)).eval()
    image, text = encode_all(untrained, f, "caption")
    has = f.has_ocr > 0
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    assert np.allclose(text @ image[has].T, unit(f.caption) @ unit(f.ocr[has]).T, atol=1e-5)

    r = train_matcher(f, f, MatcherConfig(use_ocr=True, hidden=64), TrainSettings(epochs=30, batch_size=8, seed=1))
    image, text = encode_all(r.model, f, "caption+mentions")
    assert image.shape == (8, 384) and np.allclose(np.linalg.norm(image, axis=1), 1, atol=1e-5)
    m = evaluate(r.model, f, "caption+mentions")
    assert m["t2i"]["R@1"] >= 0.5 and m["i2t"]["R@1"] >= 0.5


def test_model_directory_round_trip_and_refusals(trained, feats, tmp_path):
    folder = save_matcher(trained.model, tmp_path / "m", {"metrics": {}})
    loaded = load_matcher(folder)
    a = encode_all(trained.model, feats, "caption+mentions")
    b = encode_all(loaded.model, feats, "caption+mentions")
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])

    manifest = json.loads((folder / MANIFEST).read_text())
    for change, words in (({"format_version": 99}, "format version 99"), ({"kind": "captioner"}, "'captioner' model"),
                          ({"backend": "mystery"}, "unknown matcher backend"),
                          ({"config": {**manifest["config"], "hidden": 32}}, "weights do not match"),
                          ({"config": {**manifest["config"], "colour": 1}}, "unknown matcher settings")):
        other = tmp_path / f"other{len(list(tmp_path.iterdir()))}"
        shutil.copytree(folder, other)
        (other / MANIFEST).write_text(json.dumps({**manifest, **change}))
        with pytest.raises(ModelError, match=words):
            load_matcher(other)
    with pytest.raises(ModelError, match="not a figlink model directory"):
        load_matcher(SAMPLES)
    with pytest.raises(ModelError, match="no model directory"):
        load_matcher(tmp_path / "absent")


def test_the_input_size_is_a_model_setting_with_its_own_cached_features(tmp_path, sample_pairs):
    """Trunk maps at 224 and 336 px are cached under two kinds and never mix; the pooled feature of the
    336 px maps is EfficientNet's own output on the figure letterboxed at 336; the vision stage (figure
    type) still reads 224 px."""
    from figlink.learn.image_features import pooled_from_maps, spatial_kind
    from figlink.vision.features import embed, extractor, preprocess
    from figlink.vision.image_io import load_image

    c = FeatureCache(tmp_path)
    paths = [p.image for p in sample_pairs[:2]]
    small = image_features(paths, c, maps=True, ocr=False)
    large = image_features(paths, c, maps=True, ocr=False, size=336)
    assert [r.maps.shape for r in small] == [(192, 7, 7)] * 2 and [r.maps.shape for r in large] == [(192, 11, 11)] * 2
    assert (c.count(spatial_kind(224)), c.count(spatial_kind(336))) == (2, 2)
    images = [load_image(p) for p in paths]
    with torch.inference_mode():
        whole = extractor()(torch.stack([preprocess(im, 336) for im in images])).numpy()
    assert np.allclose(pooled_from_maps(np.stack([r.maps for r in large])), whole, atol=0.02)  # float16 maps
    assert np.allclose(pooled_from_maps(np.stack([r.maps for r in small])), embed(images), atol=0.02)
    assert not np.allclose(whole, embed(images), atol=0.05)  # the two views differ


def test_a_model_without_an_input_size_reads_224_px_figures(trained, feats, tmp_path, sample_pairs):
    """A model directory written before the input size was a setting loads as 224 px and embeds from the
    224 px features; features of another size are refused; an input size EfficientNet cannot read fails
    at load."""
    assert trained.model.config.image_size == 336 == feats.image_size
    folder = save_matcher(trained.model, tmp_path / "m", {"metrics": {}})
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["config"]["image_size"] == 336
    old = tmp_path / "old"
    shutil.copytree(folder, old)
    (old / MANIFEST).write_text(json.dumps({**manifest, "config": {k: v for k, v in manifest["config"].items()
                                                                   if k != "image_size"}}))
    older = load_matcher(old)
    assert older.model.config.image_size == 224
    c = FeatureCache(tmp_path / "cache")
    emb = older.embed(sample_pairs[:4], "caption", c, ocr=False)
    small, _ = featurize_pairs(sample_pairs[:4], c, ocr=False)
    assert small.image_size == 224 and np.array_equal(emb.image, encode_all(older.model, small, "caption")[0])
    assert not np.allclose(emb.image, encode_all(trained.model, feats.subset(range(4)), "caption")[0], atol=1e-3)
    with pytest.raises(ValueError, match="features are of images at 224 px, the matcher reads 336 px"):
        encode_all(trained.model, small, "caption")
    (old / MANIFEST).write_text(json.dumps({**manifest, "config": {**manifest["config"], "image_size": 4096}}))
    with pytest.raises(ModelError, match="image size 4096: choose a side from 32 to 1024 px"):
        load_matcher(old)


def test_cuda_is_refused_clearly_without_a_gpu():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match="no CUDA GPU"):
        resolve_device("cuda")


def _app() -> typer.Typer:
    from figlink.cli.learn import embed, train_app

    app = typer.Typer()
    app.add_typer(train_app, name="train")
    app.command("embed")(embed)
    return app


def test_cli_train_then_embed_with_bad_lines(tmp_path, cache):
    model = tmp_path / "model"
    res = CliRunner().invoke(_app(), ["train", "matcher", "--pairs", str(PAIRS), "--out", str(model), "--no-ocr",
                                      "--epochs", "3", "--cache", str(cache.root), "--threads", "1",
                                      "--hold-out", "chemistry-bundle/"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((model / MANIFEST).read_text())
    assert manifest["training"]["counts"]["check"] == 8 and "check" in manifest["metrics"]
    # the 32 training figures come from four books: the epoch count is chosen by leaving each book out
    assert sorted(manifest["metrics"]["validation"]) == ["astronomy", "microbiology", "psychology",
                                                         "university-physics-bundle"]

    work = tmp_path / "data"
    shutil.copytree(SAMPLES / "images", work / "images")
    lines = PAIRS.read_text(encoding="utf-8").splitlines()[:5]
    lines.insert(2, "not json")
    lines.insert(4, json.dumps({"id": "gone", "image": "images/gone.jpg", "caption": "A caption."}))
    (work / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "emb"
    res = CliRunner().invoke(_app(), ["embed", str(work / "pairs.jsonl"), "--out", str(out), "--model", str(model),
                                      "--text", "caption", "--cache", str(cache.root)])
    assert res.exit_code == 1
    assert "line 3: not JSON" in res.output and "line 5: gone: image not found" in res.output
    ids = (out / "ids.txt").read_text().splitlines()
    assert ids == [json.loads(line)["id"] for line in lines if line.startswith("{") and "gone" not in line]
    image, text = np.load(out / "image.npy"), np.load(out / "text.npy")
    trained = load_matcher(model)
    d = full_dim(384, trained.lexical, trained.hubness)  # --score full, the default (test_pool_vectors)
    assert d > 384 and image.dtype == text.dtype == np.float32 and image.shape == text.shape == (5, d)
    assert np.allclose(np.linalg.norm(image, axis=1), 1, atol=1e-5)
    assert np.allclose(np.linalg.norm(text, axis=1), 1, atol=1e-5)


def test_cli_refuses_a_model_of_another_version(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / MANIFEST).write_text(json.dumps({"format": "figlink-model", "format_version": 0, "kind": "matcher"}))
    res = CliRunner().invoke(_app(), ["embed", str(PAIRS), "--out", str(tmp_path / "e"), "--model", str(folder)])
    assert res.exit_code == 2 and "format version 0" in res.output and not (tmp_path / "e").exists()


def test_default_model_ships_and_embeds(tmp_path):
    assert (DEFAULT_MODEL / MANIFEST).is_file() and (DEFAULT_MODEL / "MODEL_CARD.md").is_file()
    matcher = load_matcher()
    pairs, _ = read_pair_file(PAIRS)
    emb = matcher.embed(pairs[:3], "caption+mentions", FeatureCache(tmp_path))
    assert emb.ids == [p.id for p in pairs[:3]] and emb.image.shape == (3, matcher.dim)
    assert np.allclose(np.linalg.norm(emb.text, axis=1), 1, atol=1e-5)


class _TinyImageTower(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 4, stride=4)
        self.proj = torch.nn.Linear(8, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(torch.relu(self.conv(x)).mean(dim=(2, 3)))


class _TinyTextTower(torch.nn.Module):
    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, 16)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask.unsqueeze(-1).float()
        return (self.emb(ids) * m).sum(1) / m.sum(1).clamp(min=1.0)


def _tiny_exported_model(tmp_path: Path, pairs, dim: int = 16):
    """A tiny two-tower model exported with torch.export + a word-level tokenizer.json; the manifest says
    ``dim`` (the towers give 16)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    from figlink.learn.external import write_exported_model

    words = sorted({w for p in pairs[:4] for w in p.caption.lower().split()})
    vocab = {"[PAD]": 0, "[UNK]": 1, **{w: i + 2 for i, w in enumerate(words)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.normalizer = normalizers.Lowercase()
    tok.save(str(tmp_path / "tokenizer.json"))

    torch.manual_seed(0)
    image_tower, text_tower = _TinyImageTower().eval(), _TinyTextTower(len(vocab)).eval()
    batch = torch.export.Dim("batch")
    torch.export.save(torch.export.export(image_tower, (torch.zeros(2, 3, 32, 32),), dynamic_shapes=({0: batch},)),
                      str(tmp_path / "image.pt2"))
    ids = torch.zeros(2, 12, dtype=torch.long)
    # distinct example tensors: torch.export would tie two inputs given as the same tensor
    text_program = torch.export.export(text_tower, (ids, torch.ones_like(ids)), dynamic_shapes=({0: batch}, {0: batch}))
    torch.export.save(text_program, str(tmp_path / "text.pt2"))
    folder = write_exported_model(tmp_path / "model", tmp_path / "image.pt2", tmp_path / "text.pt2",
                                  tmp_path / "tokenizer.json", dim=dim, image_size=32, max_tokens=12)
    return folder, tok, image_tower, text_tower


def test_local_exported_model_behind_the_model_option(tmp_path):
    """A bigger local model (here a tiny one built in the test) exported with torch.export + a tokenizers
    tokenizer.json loads through the same --model option and embeds the pairs."""
    from figlink.learn.external import pixels
    from figlink.vision.image_io import load_image

    pairs, _ = read_pair_file(PAIRS)
    folder, tok, image_tower, text_tower = _tiny_exported_model(tmp_path, pairs)
    matcher = load_matcher(folder)
    emb = matcher.embed(pairs[:4], "caption", FeatureCache.disabled())
    assert emb.ids == [p.id for p in pairs[:4]] and emb.image.shape == emb.text.shape == (4, 16)
    with torch.no_grad():
        x = torch.stack([pixels(load_image(p.image), 32, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
                         for p in pairs[:4]])
        want_image = torch.nn.functional.normalize(image_tower(x), dim=-1).numpy()
        enc = tok.encode(pairs[0].caption)
        first = torch.tensor([enc.ids[:12]])
        want_text = torch.nn.functional.normalize(text_tower(first, torch.ones_like(first)), dim=-1).numpy()
    assert np.allclose(emb.image, want_image, atol=1e-5)
    assert np.allclose(emb.text[0], want_text[0], atol=1e-5)
    assert np.allclose(np.linalg.norm(emb.text, axis=1), 1, atol=1e-5)


def test_train_from_a_corpus(elife_corpus, tmp_path, cache):
    """`--corpus`: the figures of the sample eLife article (PDF crops merged with their JATS captions)."""
    from figlink.corpus import Corpus
    from figlink.learn.records import pairs_from_corpus

    corpus, _ = elife_corpus
    pairs = pairs_from_corpus(corpus)
    with Corpus(corpus, readonly=True) as c:
        expected = [f"{p.paper_id}/{f.figure_id}" for p in c.papers() for f in p.figures if f.image and f.caption]
    assert [p.id for p in pairs] == expected and len(pairs) >= 4
    assert all(p.image.is_file() for p in pairs) and any(p.mentions for p in pairs)
    model = tmp_path / "m"
    res = CliRunner().invoke(_app(), ["train", "matcher", "--corpus", str(corpus), "--out", str(model), "--no-ocr",
                                      "--epochs", "2", "--cache", str(cache.root), "--threads", "1"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((model / MANIFEST).read_text())
    assert manifest["training"]["counts"]["train"] == len(pairs)
    assert manifest["training"]["selection"].startswith("1/10 validation slice")  # one article: no groups to hold out


def test_local_model_through_the_cli_and_a_mismatched_one_fails_at_load(tmp_path):
    pairs, _ = read_pair_file(PAIRS)
    folder, *_ = _tiny_exported_model(tmp_path, pairs)
    res = CliRunner().invoke(_app(), ["embed", str(PAIRS), "--out", str(tmp_path / "e"), "--model", str(folder),
                                      "--text", "caption"])
    assert res.exit_code == 0, res.output
    assert np.load(tmp_path / "e" / "image.npy").shape == (40, 16)
    assert (tmp_path / "e" / "ids.txt").read_text().splitlines() == [p.id for p in pairs]

    wrong = tmp_path / "wrong"
    wrong.mkdir()
    wrong_folder, *_ = _tiny_exported_model(wrong, pairs, dim=32)  # the towers give 16
    with pytest.raises(ModelError, match=r"image module gives vectors of shape \(16,\); the manifest says dim=32"):
        load_matcher(wrong_folder)
    res = CliRunner().invoke(_app(), ["embed", str(PAIRS), "--out", str(tmp_path / "e2"), "--model",
                                      str(wrong_folder)])
    assert res.exit_code == 2 and "the manifest says dim=32" in res.output and not (tmp_path / "e2").exists()


def _png_header_only(path: Path, w: int, h: int) -> None:
    import struct
    import zlib

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))  # noqa: E731
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b""))


def test_bad_inputs_are_one_line_each_and_training_and_embedding_go_on(tmp_path, cache):
    """The issue's bad inputs in one pairs file: a missing image, a file that is not an image, a
    40000×40000 image, an empty caption, a line that is not JSON. Each is one `failed:` line naming its
    line; training and embedding use the other lines."""
    work = tmp_path / "data"
    shutil.copytree(SAMPLES / "images", work / "images")
    (work / "images" / "notes.png").write_text("a text file named like an image")
    _png_header_only(work / "images" / "huge.png", 40_000, 40_000)
    good = PAIRS.read_text(encoding="utf-8").splitlines()[:12]
    bad = {13: json.dumps({"id": "b/missing", "image": "images/gone.jpg", "caption": "A caption."}),
           14: json.dumps({"id": "b/text", "image": "images/notes.png", "caption": "A caption."}),
           15: json.dumps({"id": "b/huge", "image": "images/huge.png", "caption": "A caption."}),
           16: json.dumps({"id": "b/empty", "image": json.loads(good[0])["image"], "caption": ""}),
           17: '{"id": "b/cut", "image": "images/x.jpg", "capt'}
    (work / "pairs.jsonl").write_text("\n".join(good + list(bad.values())) + "\n", encoding="utf-8")
    words = {13: "b/missing: image not found", 14: "b/text: not a readable image: notes.png",
             15: "b/huge: image too large: huge.png", 16: "b/empty: empty caption", 17: "not JSON"}

    def failed_lines(output: str) -> dict[int, str]:
        found = {}
        for line in output.splitlines():
            if line.startswith("failed: "):
                n = int(line.split("line ", 1)[1].split(":", 1)[0])
                assert n not in found, f"line {n} reported twice"
                found[n] = line
        return found

    model = tmp_path / "model"
    res = CliRunner().invoke(_app(), ["train", "matcher", "--pairs", str(work / "pairs.jsonl"), "--out", str(model),
                                      "--no-ocr", "--epochs", "2", "--cache", str(cache.root), "--threads", "1"])
    assert res.exit_code == 1, res.output  # bad lines were skipped: trained, but not clean
    reported = failed_lines(res.output)
    assert sorted(reported) == sorted(bad)
    for n, w in words.items():
        assert w in reported[n], reported[n]
    assert json.loads((model / MANIFEST).read_text())["training"]["counts"]["train"] == len(good)

    out = tmp_path / "emb"
    res = CliRunner().invoke(_app(), ["embed", str(work / "pairs.jsonl"), "--out", str(out), "--model", str(model),
                                      "--no-ocr", "--cache", str(cache.root)])
    assert res.exit_code == 1
    reported = failed_lines(res.output)
    assert sorted(reported) == sorted(bad)
    for n, w in words.items():
        assert w in reported[n], reported[n]
    assert (out / "ids.txt").read_text().splitlines() == [json.loads(x)["id"] for x in good]
    trained = load_matcher(model)
    assert np.load(out / "image.npy").shape == (len(good), full_dim(384, trained.lexical, trained.hubness))

"""Search by image through the matcher: the figure vectors of a corpus (made once, updated when papers
change), `figlink search --image`, and `POST /api/search` with an image. Built on six OpenStax sample
pairs; the shipped matcher runs without OCR here (fast), so pictures are compared by EfficientNet only; the hubness correction is on."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

import figlink  # noqa: E402
from figlink.learn import image_search  # noqa: E402
from figlink.learn.embedder import load_matcher  # noqa: E402
from figlink.learn.hubness import Hubness, item_normalizers  # noqa: E402
from figlink.learn.lexical import LexicalWeights  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "pairs"
WORDS = LexicalWeights(words=0.2)  # the word half of the lexical term alone


class _NoOcr:
    """The shipped matcher with OCR switched off (the test machine's OCR would take most of the time)."""

    def __init__(self, inner=None) -> None:
        self.inner = inner or load_matcher()
        self.dim, self.manifest = self.inner.dim, {**self.inner.manifest, "test": "no-ocr"}
        self.lexical, self.hubness = self.inner.lexical, Hubness()  # the correction on, as shipped
        self.model = self.inner.model  # its text tower, for the index's image signal

    def embed(self, pairs, text_mode, cache, device="cpu", ocr=True):
        return self.inner.embed(pairs, text_mode, cache, device, ocr=False)


@pytest.fixture(scope="module")
def matcher():
    return _NoOcr()


def _pairs(folder: Path, lines: list[str]) -> Path:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    for line in lines:
        shutil.copy(SAMPLE / json.loads(line)["image"], folder / json.loads(line)["image"])
    (folder / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def corpus(tmp_path, monkeypatch, matcher):
    monkeypatch.setenv("FIGLINK_EMBEDDER", "none")
    monkeypatch.setenv("FIGLINK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(image_search, "load_matcher", lambda: matcher)
    lines = (SAMPLE / "openstax-sample.jsonl").read_text(encoding="utf-8").splitlines()
    src = _pairs(tmp_path / "src", lines[:6])
    report = figlink.build([src], tmp_path / "c", vision=False, progress=False)
    assert report.ingest.ok == 6
    return tmp_path / "c", lines


def test_a_stored_figure_is_found_by_its_own_image_and_vectors_update_incrementally(corpus, matcher, tmp_path):
    root, lines = corpus
    first = json.loads(lines[2])
    hits = image_search.search_by_image(root, SAMPLE / first["image"], k=3, matcher=matcher)
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].figure_id == first["id"] and hits[0].image_similarity == pytest.approx(1.0, abs=1e-5)
    assert hits[0].score > hits[1].score

    again = image_search.update_figure_vectors(root, matcher)
    assert (again.embedded, len(again.keys)) == (0, 6)  # nothing new: nothing embedded
    figlink.build([_pairs(tmp_path / "more", lines[6:8])], root, vision=False, index=False, progress=False)
    grown = image_search.update_figure_vectors(root, matcher)
    assert (grown.embedded, len(grown.keys)) == (2, 8)
    assert {k[1] for k in grown.keys} == {json.loads(x)["id"] for x in lines[:8]}


def test_cli_search_by_image(corpus):
    from figlink.cli import app

    root, lines = corpus
    first = json.loads(lines[0])
    res = CliRunner().invoke(app, ["search", "--image", str(SAMPLE / first["image"]), "--corpus", str(root),
                                   "-k", "2", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["hits"][0]["figure_id"] == first["id"] and got["hits"][0]["caption"] == first["caption"].strip()
    assert len(got["hits"]) == 2
    res = CliRunner().invoke(app, ["search", "--image", str(root / "absent.png"), "--corpus", str(root)])
    assert res.exit_code == 2 and "query image: image not found" in res.output
    res = CliRunner().invoke(app, ["search", "words", "--image", str(SAMPLE / first["image"]), "--corpus", str(root)])
    assert res.exit_code == 2 and "not both" in res.output


def test_post_an_image_to_the_api(corpus):
    from fastapi.testclient import TestClient

    from figlink.server.app import create_app

    root, lines = corpus
    client = TestClient(create_app(root))
    assert client.get("/api/health").json()["features"] == {"image_search": True}
    first = json.loads(lines[4])
    data = (SAMPLE / first["image"]).read_bytes()
    r = client.post("/api/search", params={"k": 3}, content=data, headers={"content-type": "image/jpeg"})
    assert r.status_code == 200, r.text
    hit = r.json()["hits"][0]
    assert hit["figure_id"] == first["id"] and hit["image_url"].endswith("/image")
    assert client.get(hit["image_url"]).status_code == 200
    assert len(r.json()["hits"]) == 3
    bad = client.post("/api/search", content=b"not an image", headers={"content-type": "image/png"})
    assert bad.status_code == 400 and "query image: not a readable image" in bad.json()["detail"]
    assert client.post("/api/search", content=data, headers={"content-type": "text/plain"}).status_code == 400
    assert client.post("/api/search", content=b"", headers={"content-type": "image/png"}).status_code == 400


def test_the_store_keeps_each_figures_words_for_the_lexical_term(corpus, matcher):
    root, lines = corpus
    vectors = image_search.update_figure_vectors(root, matcher)
    recs = {json.loads(x)["id"]: json.loads(x) for x in lines[:6]}
    assert len(vectors.words) == len(vectors.keys) == 6
    for (_, fid), words in zip(vectors.keys, vectors.words):
        assert words.startswith(recs[fid]["caption"].strip())  # caption + mentions, as the matcher's text side
    # a query image that reads the opening words of figure 3's caption: the term is the full weight there only
    target = json.loads(lines[3])
    query_words = " ".join(target["caption"].split()[:8])
    sim_image, sim_text, lexical = image_search.figure_scores(vectors, vectors.image[0], query_words, WORDS)
    best = int(lexical.argmax())
    assert vectors.keys[best][1] == target["id"] and lexical[best] == pytest.approx(0.2)
    assert (lexical <= 0.2).all() and sorted(lexical)[-2] < 0.2
    assert not image_search.figure_scores(vectors, vectors.image[0], query_words, LexicalWeights())[2].any()
    assert not image_search.figure_scores(vectors, vectors.image[0], "", WORDS)[2].any()


def test_the_character_term_finds_a_figure_from_words_read_in_pieces(corpus, matcher):
    root, lines = corpus
    vectors = image_search.update_figure_vectors(root, matcher)
    target = json.loads(lines[3])
    # the long words opening figure 3's caption as OCR may read them: each cut in two, no word left whole
    read = " ".join(f"{w[:len(w) // 2]} {w[len(w) // 2:]}" for w in target["caption"].split()[:12] if len(w) > 6)
    chars = image_search.figure_scores(vectors, vectors.image[0], read, LexicalWeights(chars=0.1))[2]
    assert vectors.keys[int(chars.argmax())][1] == target["id"] and chars.max() == pytest.approx(0.1)
    assert vectors.chars is not None and len(vectors.chars.idf) > 0  # indexed on first use, kept with the vectors


def test_the_store_keeps_the_character_n_grams_and_an_update_cuts_only_its_new_figures(corpus, matcher, tmp_path,
                                                                                        monkeypatch):
    from figlink.learn import char_grams

    root, lines = corpus
    queries = [" ".join(json.loads(x)["caption"].split()[:10]) for x in lines[:8]] + ["electro lytic ce11"]
    first = image_search.update_figure_vectors(root, matcher)
    read = image_search.update_figure_vectors(root, matcher)  # nothing new: the index is read from the store
    assert read.embedded == 0 and read.chars is not None and read.chars is not first.chars
    assert read.chars.cosines(queries) == pytest.approx(char_grams.CharIndex(read.words).cosines(queries), abs=1e-12)
    cut: list[int] = []  # how many texts each call cuts into grams
    counts = char_grams.gram_counts
    monkeypatch.setattr(char_grams, "gram_counts", lambda docs, *a, **k: cut.append(len(docs)) or counts(docs, *a, **k))
    figlink.build([_pairs(tmp_path / "two", lines[6:8])], root, vision=False, index=False, progress=False)
    grown = image_search.update_figure_vectors(root, matcher)
    assert grown.embedded == 2 and cut == [2]  # the two new figures' words, and nothing else
    again = image_search.update_figure_vectors(root, matcher)
    fresh = char_grams.CharIndex(again.words)
    assert len(again.chars) == 8 and again.chars.df.tolist() == [fresh.df[fresh.vocabulary[g]]
                                                                 for g in again.chars.grams_in_order()]
    assert again.chars.cosines(queries) == pytest.approx(fresh.cosines(queries), abs=1e-12)
    store = root / image_search.STORE  # a store written before it kept them (match5): built once, then kept
    with np.load(store / "vectors.npz") as z:
        np.savez(store / "vectors.npz", **{k: z[k] for k in z.files if not k.startswith("char_")})
    cut.clear()
    rebuilt = image_search.update_figure_vectors(root, matcher)
    assert rebuilt.embedded == 0 and cut == [8] and np.array_equal(rebuilt.hub, again.hub)
    assert image_search.update_figure_vectors(root, matcher).chars is not None and cut == [8]


def test_the_words_index_on_disk_scores_as_indexing_them_per_query(corpus, matcher):
    root, lines = corpus
    first = image_search.update_figure_vectors(root, matcher)
    again = image_search.update_figure_vectors(root, matcher)  # nothing new: the stored index is read
    assert first.lexicon is not None and again.lexicon == first.lexicon and again.embedded == 0
    in_memory = dataclasses.replace(again, lexicon=None)
    for line in lines[:6]:
        query_words = " ".join(json.loads(line)["caption"].split()[:8])
        on_disk = image_search.figure_scores(again, again.image[0], query_words, WORDS)[2]
        assert on_disk.max() == pytest.approx(0.2)
        assert on_disk == pytest.approx(image_search.figure_scores(in_memory, again.image[0], query_words, WORDS)[2])


def test_a_damaged_words_index_falls_back_to_the_stored_words(corpus, matcher):
    root, lines = corpus
    vectors = image_search.update_figure_vectors(root, matcher)
    query_words = " ".join(json.loads(lines[2])["caption"].split()[:8])
    good = image_search.figure_scores(vectors, vectors.image[0], query_words, WORDS)[2]
    vectors.lexicon.write_bytes(b"not a database")
    assert image_search.figure_scores(vectors, vectors.image[0], query_words, WORDS)[2] == pytest.approx(good)
    vectors.lexicon.unlink()
    assert image_search.figure_scores(vectors, vectors.image[0], query_words, WORDS)[2] == pytest.approx(good)


def test_the_store_keeps_each_figures_hubness_normalizer_and_search_takes_it_off(corpus, matcher):
    root, lines = corpus
    vectors = image_search.update_figure_vectors(root, matcher)
    # no OCR here, so the bank's scores are the cosines of every stored image to every stored text
    by_hand = item_normalizers(vectors.image @ vectors.text.T, Hubness())
    assert vectors.hub is not None and vectors.hub == pytest.approx(by_hand, abs=1e-5)
    assert vectors.ocr == [""] * 6
    again = image_search.update_figure_vectors(root, matcher)  # read back from the store
    assert again.embedded == 0 and again.hub == pytest.approx(vectors.hub)
    query = SAMPLE / json.loads(lines[1])["image"]
    for h in image_search.search_by_image(root, query, k=6, matcher=matcher):
        assert h.score == pytest.approx(h.image_similarity + h.text_similarity + h.lexical - h.hub, abs=1e-5)
    i = [k[1] for k in vectors.keys].index(json.loads(lines[1])["id"])
    assert image_search.search_by_image(root, query, k=1, matcher=matcher)[0].hub == pytest.approx(vectors.hub[i])


def test_normalizers_computed_before_the_character_term_are_recomputed_without_embedding_again(corpus, matcher):
    root, lines = corpus
    vectors = image_search.update_figure_vectors(root, matcher)
    store = root / image_search.STORE
    with np.load(store / "vectors.npz") as z:  # as the previous version wrote them: its normalizers, here zeroed
        old = {k: z[k] for k in z.files}
    np.savez(store / "vectors.npz", **{**old, "hub": np.zeros_like(old["hub"])})
    state = json.loads((store / "state.json").read_text(encoding="utf-8"))
    before = {k: v for k, v in state["hub"].items() if k != "char_weight"}
    (store / "state.json").write_text(json.dumps({**state, "hub": before}))
    again = image_search.update_figure_vectors(root, matcher)
    assert again.embedded == 0 and again.hub == pytest.approx(vectors.hub) and again.hub.any()
    assert json.loads((store / "state.json").read_text(encoding="utf-8"))["hub"]["char_weight"] == 0.1


@pytest.mark.parametrize("written", ["without the best char cosines", "under weights without the char term"])
def test_a_store_written_before_the_character_term_joined_the_kept_bank_is_balanced_fully(corpus, matcher, tmp_path,
                                                                                          written):
    root, lines = corpus
    figlink.build([_pairs(tmp_path / "six", lines[6:12])], root, vision=False, index=False, progress=False)
    image_search.update_figure_vectors(root, matcher)
    store = root / image_search.STORE
    with np.load(store / "vectors.npz") as z:  # as hubstore wrote it: no n-grams, (its bank without char tops)
        old = {k: z[k] for k in z.files if not k.startswith(("char_", "bank_char_"))}
    if written == "without the best char cosines":
        np.savez(store / "vectors.npz", **old)
    else:  # the bank arrays as now, the state naming no char weight
        with np.load(store / "vectors.npz") as z:
            np.savez(store / "vectors.npz", **{k: z[k] for k in z.files if not k.startswith("char_")})
        state = json.loads((store / "state.json").read_text(encoding="utf-8"))
        hub = {k: v for k, v in state["hub"].items() if k != "char_weight"}
        (store / "state.json").write_text(json.dumps({**state, "hub": hub}))
    figlink.build([_pairs(tmp_path / "one", lines[12:13])], root, vision=False, index=False, progress=False)
    grown = image_search.update_figure_vectors(root, matcher)  # 1 of 12: a kept bank would take it, (12, 1)
    assert grown.embedded == 1 and (grown.bank.figures, grown.bank.changed) == (13, 0)
    assert grown.chars is not None and len(grown.chars) == 13


def test_a_store_written_before_the_normalizers_is_embedded_again(corpus, matcher):
    from figlink.cli import app

    root, lines = corpus
    image_search.update_figure_vectors(root, matcher)
    store = root / image_search.STORE
    with np.load(store / "vectors.npz") as z:  # the files as the previous version wrote them
        old = {k: z[k] for k in ("keys", "image", "text", "words")}
    np.savez(store / "vectors.npz", **old)
    state = json.loads((store / "state.json").read_text(encoding="utf-8"))
    (store / "state.json").write_text(json.dumps({k: v for k, v in state.items() if k not in ("hub", "left_out")}))
    res = CliRunner().invoke(app, ["search", "--image", str(SAMPLE / json.loads(lines[0])["image"]),
                                   "--corpus", str(root), "-k", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert "written before it kept each figure's OCR words and hubness normalizer" in res.stderr
    assert json.loads(res.stdout)["hits"][0]["figure_id"] == json.loads(lines[0])["id"]
    vectors = image_search.update_figure_vectors(root, matcher)
    assert vectors.embedded == 0 and vectors.hub is not None and not vectors.notes


def test_a_store_written_by_another_matcher_is_embedded_again_with_a_note(corpus, matcher, tmp_path):
    """The shipped matcher's weights read at the other input size (a model directory naming no size reads
    its figures at 224 px) are another matcher: the store is embedded again, and says so."""
    from figlink.learn.embedder import DEFAULT_MODEL
    from figlink.learn.model_dir import MANIFEST

    root, lines = corpus
    first = image_search.update_figure_vectors(root, matcher)
    folder = tmp_path / "other"
    shutil.copytree(DEFAULT_MODEL, folder)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    config = {k: v for k, v in manifest["config"].items() if k != "image_size"}
    if "image_size" not in manifest["config"]:
        config["image_size"] = 336
    (folder / MANIFEST).write_text(json.dumps({**manifest, "config": config}), encoding="utf-8")
    other = _NoOcr(load_matcher(folder))
    assert {other.model.config.image_size, matcher.model.config.image_size} == {224, 336}
    again = image_search.update_figure_vectors(root, other)
    assert again.embedded == 6 and again.keys == first.keys
    assert any("written by another matcher: its 6 figures are embedded again" in n for n in again.notes)
    assert not np.allclose(again.image, first.image, atol=1e-3)
    query = json.loads(lines[2])
    assert image_search.search_by_image(root, SAMPLE / query["image"], k=1, matcher=other)[0].figure_id == query["id"]


def test_an_update_scores_its_new_figures_against_the_kept_bank_until_a_tenth_has_changed(corpus, matcher, tmp_path):
    root, lines = corpus
    figlink.build([_pairs(tmp_path / "six", lines[6:12])], root, vision=False, index=False, progress=False)
    first = image_search.update_figure_vectors(root, matcher)
    assert first.bank is not None and (first.bank.figures, first.bank.changed, len(first.bank.rows)) == (12, 0, 12)
    figlink.build([_pairs(tmp_path / "one", lines[12:13])], root, vision=False, index=False, progress=False)
    grown = image_search.update_figure_vectors(root, matcher)
    assert grown.embedded == 1 and (grown.bank.figures, grown.bank.changed, len(grown.bank.rows)) == (12, 1, 13)
    assert np.array_equal(grown.hub[:12], first.hub)  # the figures there before keep their normalizers
    read = image_search.update_figure_vectors(root, matcher)  # the bank is read back from the store
    assert read.embedded == 0 and np.array_equal(read.bank.rows, grown.bank.rows) and read.bank.changed == 1
    assert np.array_equal(read.bank.image, grown.bank.image) and np.array_equal(read.hub, grown.hub)
    figlink.build([_pairs(tmp_path / "two", lines[13:14])], root, vision=False, index=False, progress=False)
    again = image_search.update_figure_vectors(root, matcher)  # 2 changes of 12 balanced: balanced fully again
    assert (again.bank.figures, again.bank.changed) == (14, 0)
    assert again.hub == pytest.approx(item_normalizers(again.image @ again.text.T, Hubness()), abs=1e-5)


def test_a_store_written_before_it_kept_the_bank_is_read_then_balanced_fully(corpus, matcher, tmp_path):
    root, lines = corpus
    before = image_search.update_figure_vectors(root, matcher)
    store = root / image_search.STORE
    with np.load(store / "vectors.npz") as z:  # the files as the previous version wrote them
        old = {k: z[k] for k in z.files if not k.startswith("bank_")}
    np.savez(store / "vectors.npz", **old)
    state = json.loads((store / "state.json").read_text(encoding="utf-8"))
    (store / "state.json").write_text(json.dumps({k: v for k, v in state.items() if k != "bank"}))
    read = image_search.update_figure_vectors(root, matcher)
    assert read.embedded == 0 and read.bank is None and not read.notes and np.array_equal(read.hub, before.hub)
    figlink.build([_pairs(tmp_path / "one", lines[6:7])], root, vision=False, index=False, progress=False)
    grown = image_search.update_figure_vectors(root, matcher)
    assert grown.embedded == 1 and (grown.bank.figures, grown.bank.changed) == (7, 0) and not grown.notes


def test_search_by_image_says_how_many_figures_it_leaves_out(corpus, matcher):
    from figlink.cli import app

    root, lines = corpus
    shutil.rmtree(root / image_search.STORE, ignore_errors=True)  # no vectors yet
    gone = next((root / "images").rglob("*.jpg"))
    gone.unlink()  # one figure's image vanished from the corpus: it cannot be embedded
    args = ["search", "--image", str(SAMPLE / json.loads(lines[0])["image"]), "--corpus", str(root), "--json"]
    for _ in range(2):  # the first run embeds, the second finds nothing new: both say it
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        assert "1 figure with an image left out of the search" in res.stderr
        assert len(json.loads(res.stdout)["hits"]) == 5


def test_a_restored_image_is_embedded_by_the_next_index_run_not_by_searches(corpus, matcher):
    root, lines = corpus
    shutil.rmtree(root / image_search.STORE, ignore_errors=True)
    gone = next((root / "images").rglob("*.jpg"))
    saved = gone.read_bytes()
    gone.unlink()
    first = image_search.update_figure_vectors(root, matcher)
    assert (len(first.keys), first.left_out) == (5, 1)
    gone.write_bytes(saved)  # the image is back; the paper itself did not change
    searched = image_search.update_figure_vectors(root, matcher)
    assert (len(searched.keys), searched.left_out, searched.embedded) == (5, 1, 0)  # a search does not retry
    signal = image_search.image_signal(root, matcher)  # what `figlink index --image` runs
    assert len(signal.keys) == 6 and not signal.problems
    again = image_search.update_figure_vectors(root, matcher)
    assert (len(again.keys), again.left_out, again.embedded) == (6, 0, 0)


def test_the_api_keeps_the_vectors_until_the_corpus_is_written(corpus, monkeypatch, tmp_path):
    from fastapi.testclient import TestClient

    from figlink.server.app import create_app

    root, lines = corpus
    updates = []
    real = image_search.update_figure_vectors
    monkeypatch.setattr(image_search, "update_figure_vectors", lambda *a, **kw: updates.append(1) or real(*a, **kw))
    client = TestClient(create_app(root))
    new = json.loads(lines[6])
    data = (SAMPLE / new["image"]).read_bytes()

    def top() -> str:
        r = client.post("/api/search", params={"k": 1}, content=data, headers={"content-type": "image/jpeg"})
        assert r.status_code == 200, r.text
        return r.json()["hits"][0]["figure_id"]

    assert top() != new["id"] and top() != new["id"]  # not in the corpus yet
    assert len(updates) == 1  # the second query reused the vectors
    report = figlink.build([_pairs(tmp_path / "more", lines[6:7])], root, vision=False, progress=False)
    assert report.ingest.ok == 1
    assert top() == new["id"] and len(updates) == 2  # the corpus changed: its new figure is found

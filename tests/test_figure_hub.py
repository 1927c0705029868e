"""The matcher store's hubness normalizers as a corpus grows (`figlink.learn.figure_hub`): a full balance kept
with its bank, figures added later scored against that bank, a full balance again once the corpus has
changed by a tenth. On 24 OpenStax sample figures embedded by the shipped matcher (without OCR, fast); each
figure's picture is taken to read the first words of its caption, so the lexical term is on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from figlink.learn import figure_hub  # noqa: E402
from figlink.learn.cache import FeatureCache  # noqa: E402
from figlink.learn.embedder import load_matcher  # noqa: E402
from figlink.learn.char_grams import CharIndex  # noqa: E402
from figlink.learn.hubness import Hubness, column_normalizers, item_normalizers  # noqa: E402
from figlink.learn.image_search import TEXT_MODE  # noqa: E402
from figlink.learn.lexical import LexicalWeights, char_scores, lexical_scores, write_lexicon  # noqa: E402
from figlink.learn.records import read_pair_file  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "pairs" / "openstax-sample.jsonl"
HUB, WEIGHT = Hubness(), LexicalWeights(words=0.2)


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    pairs, bad = read_pair_file(SAMPLE)
    pairs = pairs[:24]
    assert not bad and len(pairs) == 24
    emb = load_matcher().embed(pairs, TEXT_MODE, FeatureCache(tmp_path_factory.mktemp("cache")), ocr=False)
    assert emb.ids == [p.id for p in pairs]
    words = [p.text(TEXT_MODE) for p in pairs]
    ocr = [" ".join(p.caption.split()[:5]) for p in pairs]
    return emb.image, emb.text, ocr, words


def _lexicon(folder: Path, words: list[str]) -> Path:
    write_lexicon(folder / "words.sqlite", words)
    return folder / "words.sqlite"


def test_the_kept_bank_scores_the_balanced_figures_as_the_balance_did(figures, tmp_path):
    image, text, ocr, words = figures
    lexicon = _lexicon(tmp_path, words)
    norm, bank = figure_hub.full_balance(image, text, ocr, lexicon, WEIGHT, HUB)
    assert (len(bank.rows), bank.figures, bank.changed) == (24, 24, 0)  # under 2,048: every figure is a query
    assert bank.ocr == ocr and (bank.tops > 0).all()  # each picture's words are in its own caption
    # the bank's column step with its kept row scalers gives each figure's normalizer back, lexical term included
    again = column_normalizers(figure_hub._kept_bank_scores(bank, text, lexicon, 0, WEIGHT), bank.rows, HUB)
    assert again == pytest.approx(norm, abs=1e-5)
    # the same words indexed in memory instead of on disk: the same normalizers
    assert figure_hub.full_balance(image, text, ocr, words, WEIGHT, HUB)[0] == pytest.approx(norm, abs=1e-6)
    # without the lexical term the normalizers differ: it is part of what they balance
    assert np.abs(figure_hub.full_balance(image, text, ocr, lexicon, LexicalWeights(), HUB)[0] - norm).max() > 0.01


def test_figures_added_under_a_tenth_are_scored_against_the_kept_bank(figures, tmp_path):
    image, text, ocr, words = figures
    norm, bank = figure_hub.full_balance(image[:22], text[:22], ocr[:22], _lexicon(tmp_path, words[:22]), WEIGHT, HUB)
    lexicon = _lexicon(tmp_path, words)
    grown, kept = figure_hub.updated_normalizers(image, text, ocr, lexicon, norm, bank, 0, WEIGHT, HUB)
    assert (kept.figures, kept.changed, len(kept.rows)) == (22, 2, 24)  # the two joined the bank's queries
    assert np.array_equal(grown[:22], norm)  # the figures there before keep theirs
    full = figure_hub.full_balance(image, text, ocr, lexicon, WEIGHT, HUB)[0]
    # near a full balance's, nearer than the kept bank's column step alone (without the two as queries, whose
    # own matches then count for nothing); bench_hub_update.py measures it on 610-3,058 figures
    alone = column_normalizers(figure_hub._kept_bank_scores(bank, text[22:], lexicon, 22, WEIGHT), bank.rows, HUB)
    assert (np.abs(grown[22:] - full[22:]) < np.abs(alone - full[22:])).all()
    assert np.abs(grown[22:] - full[22:]).max() < 0.1
    # a third figure would pass a tenth of the 22 balanced (3 > 2.2): everything is balanced again
    more = np.r_[image, image[:1]], np.r_[text, text[:1]], ocr + ocr[:1]
    again, fresh = figure_hub.updated_normalizers(*more, _lexicon(tmp_path, words + words[:1]), grown, kept, 0,
                                                  WEIGHT, HUB)
    assert (fresh.figures, fresh.changed) == (25, 0)


def test_a_removed_figure_counts_towards_the_next_full_balance(figures, tmp_path):
    image, text, ocr, words = figures
    norm, bank = figure_hub.full_balance(image, text, ocr, _lexicon(tmp_path, words), WEIGHT, HUB)
    lexicon = _lexicon(tmp_path, words[1:])
    left, kept = figure_hub.updated_normalizers(image[1:], text[1:], ocr[1:], lexicon, norm[1:], bank, 1, WEIGHT, HUB)
    assert np.array_equal(left, norm[1:]) and kept.changed == 1 and kept.figures == 24
    _, again = figure_hub.updated_normalizers(image[3:], text[3:], ocr[3:], _lexicon(tmp_path, words[3:]), left[2:],
                                              kept, 2, WEIGHT, HUB)
    assert (again.figures, again.changed) == (21, 0)  # 3 removed of 24 balanced: more than a tenth


BOTH = LexicalWeights(words=0.2, chars=0.1)  # the shipped matcher's two halves


def test_the_normalizers_score_both_halves_of_the_lexical_term_as_search_by_image_does(figures, tmp_path):
    image, text, ocr, words = figures
    lexicon = _lexicon(tmp_path, words)
    chars = CharIndex(words)
    norm, bank = figure_hub.full_balance(image, text, ocr, lexicon, BOTH, HUB, chars)
    # the bank as search by image scores it, dense: cosine + 0.2 × scaled BM25 + 0.1 × scaled char cosine
    dense = image @ text.T + 0.2 * lexical_scores(ocr, words) + 0.1 * char_scores(chars, ocr)
    # (the sparse term leaves out values under 1 % of a query's best: at most 0.2 × .01 + 0.1 × .01 a score)
    assert norm == pytest.approx(item_normalizers(dense, HUB), abs=3e-3)
    assert np.abs(norm - figure_hub.full_balance(image, text, ocr, lexicon, WEIGHT, HUB)[0]).max() > 0.01
    assert bank.char_tops == pytest.approx(chars.cosines(ocr).max(axis=1))
    # the kept bank's column step scores both halves as the balance did
    again = column_normalizers(figure_hub._kept_bank_scores(bank, text, lexicon, 0, BOTH, chars), bank.rows, HUB)
    assert again == pytest.approx(norm, abs=1e-5)


def test_an_update_with_the_char_index_appended_scores_as_one_built_over_all_the_words(figures, tmp_path):
    image, text, ocr, words = figures
    chars = CharIndex(words[:22])
    norm, bank = figure_hub.full_balance(image[:22], text[:22], ocr[:22], _lexicon(tmp_path, words[:22]), BOTH,
                                         HUB, chars)
    lexicon = _lexicon(tmp_path, words)
    grown, kept = figure_hub.updated_normalizers(image, text, ocr, lexicon, norm, bank, 0, BOTH, HUB,
                                                 chars.extended(words[22:]))
    built, _ = figure_hub.updated_normalizers(image, text, ocr, words, norm, bank, 0, BOTH, HUB)
    assert (kept.changed, len(kept.char_tops)) == (2, 24) and grown == pytest.approx(built, abs=1e-6)
    assert np.array_equal(grown[:22], norm)
    full = figure_hub.full_balance(image, text, ocr, lexicon, BOTH, HUB, CharIndex(words))[0]
    # near a full balance's, nearer than the kept bank's column step alone (bench_hub_update.py measures it)
    alone = column_normalizers(figure_hub._kept_bank_scores(bank, text[22:], lexicon, 22, BOTH, CharIndex(words)),
                               bank.rows, HUB)
    assert (np.abs(grown[22:] - full[22:]) < np.abs(alone - full[22:])).all()

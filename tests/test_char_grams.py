"""The character n-gram half of the matcher's lexical term (`figlink.learn.char_grams`): words OCR split or
misread still find their caption; the TF-IDF is scikit-learn's ``char_wb`` one; on the sample pairs."""

from __future__ import annotations

import numpy as np
import pytest

from figlink.learn.char_grams import CharIndex, grams
from figlink.learn.lexical import LexicalWeights, char_scores, lexical_scores, weighted_lexical


def test_a_word_gives_its_space_padded_3_to_5_grams_and_a_short_one_itself():
    assert grams("H2O") == [" h2", "h2o", "2o ", " h2o", "h2o ", " h2o "]
    assert grams("a  Hg") == [" a ", " hg", "hg ", " hg "]
    assert grams("") == []


def test_the_cosines_are_scikit_learns_char_wb_tfidf(sample_pairs):
    sk = pytest.importorskip("sklearn.feature_extraction.text")
    docs = [p.text("caption+mentions") for p in sample_pairs]
    queries = [p.caption[:60] for p in sample_pairs[::3]] + ["", "zzzz qqqq"]
    ref = sk.TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True).fit(docs)
    want = (ref.transform(queries) @ ref.transform(docs).T).toarray()
    assert CharIndex(docs).cosines(queries) == pytest.approx(want, abs=1e-12)


def test_words_that_ocr_split_or_misread_still_find_their_caption(sample_pairs):
    texts = [p.text("caption+mentions") for p in sample_pairs]
    own = next(i for i, p in enumerate(sample_pairs) if p.id.endswith("_HallHerCell"))
    # "electrolytic cell", "aluminum", "cryolite" as an OCR engine may read them: split, with 1 for l
    read = "electro lytic ce11 alumin um cryo1ite"
    chars = char_scores(CharIndex(texts), [read])[0]
    assert chars.argmax() == own and chars[own] == 1.0 and np.sort(chars)[-2] < 0.8
    assert lexical_scores([read], texts)[0][own] == 0.0  # not one of these words is whole in its text


def test_the_weighted_term_adds_its_halves():
    docs = ["sodium chloride crystal", "hydrogen gas", "water"]
    queries = ["hydro gen", "sodium"]
    both = weighted_lexical(queries, docs, LexicalWeights(0.2, 0.1))
    words = lexical_scores(queries, docs)
    chars = char_scores(CharIndex(docs), queries)
    assert both == pytest.approx(0.2 * words + 0.1 * chars)
    assert words[0].tolist() == [0.0, 0.0, 0.0] and chars[0].argmax() == 1  # the split word, found by its pieces
    assert not weighted_lexical(queries, docs, LexicalWeights()).any()


def _stored(index: CharIndex) -> CharIndex:
    """The index as the matcher store keeps it: its vocabulary in column order and its raw counts."""
    return CharIndex(vocabulary=index.grams_in_order(), counts=index.counts)


def test_an_index_appended_to_or_cut_gives_the_cosines_of_one_built_at_once(sample_pairs):
    docs = [p.text("caption+mentions") for p in sample_pairs]
    queries = [p.caption[:80] for p in sample_pairs[::2]] + ["electro lytic ce11", "", "zzzz"]
    at_once = CharIndex(docs).cosines(queries)
    grown = CharIndex(docs[:7]).extended(docs[7:12]).extended(docs[12:])
    assert grown.counts.shape[0] == len(docs) and _stored(grown).cosines(queries) == pytest.approx(at_once, abs=1e-12)
    assert _stored(grown).cosines(queries, first=10) == pytest.approx(at_once[:, 10:], abs=1e-12)
    # a third of the documents removed: their grams stay in the vocabulary but no query may count them
    rows = [i for i in range(len(docs)) if i % 3]
    cut = grown.subset(rows)
    fresh = CharIndex([docs[i] for i in rows])
    gone = set(grown.vocabulary) - set(fresh.vocabulary)
    asked = [docs[0][:200]]  # a removed document's own words: some of its grams are in no kept document
    assert gone & set(grams(asked[0]))
    assert cut.cosines(queries + asked) == pytest.approx(fresh.cosines(queries + asked), abs=1e-12)
    assert (cut.idf > 0).sum() == len(fresh.vocabulary)

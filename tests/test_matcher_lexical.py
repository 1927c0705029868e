"""The matcher's lexical term (`figlink.learn.lexical`): BM25 of a figure's OCR text against the texts (and
their character n-grams, `test_char_grams.py`), each query's row scaled by its best, added with a weight to
the towers' cosine, each way; on the sample pairs."""

from __future__ import annotations

import numpy as np
import pytest

from figlink.learn.embedder import DualEncoderMatcher, load_matcher
from figlink.learn.featurize import image_features
from figlink.learn.lexical import LexicalWeights, fuse, lexical_scores, per_query_scaled, pool_lexical
from figlink.learn.matcher import DualEncoder, MatcherConfig
from figlink.learn.ocr_text import ocr_string


def test_rows_are_scaled_by_their_best():
    s = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.75]])
    assert per_query_scaled(s).tolist() == [[1.0, 0.5, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.25]]


def test_the_words_read_in_the_codon_table_find_its_caption(sample_pairs, feature_cache):
    codon = next(p for p in sample_pairs if p.id.endswith("_GenCode"))
    (found,) = image_features([codon.image], feature_cache, maps=False, ocr=True)
    words = ocr_string(found.ocr)
    texts = [p.text("caption+mentions") for p in sample_pairs]
    lexical = lexical_scores([words], texts)[0]
    own = sample_pairs.index(codon)
    assert lexical[own] == 1.0 and np.sort(lexical)[-2] < 1.0  # "second letter", "codon" … are in its text only
    # the other way, its caption as the query against the figures' words: a figure without words scores 0
    back = lexical_scores([codon.text("caption")], [words, "", "Sun Earth"])[0]
    assert back.tolist() == [1.0, 0.0, 0.0]


def test_fuse_adds_the_weighted_term_to_the_cosine_each_way():
    dense = np.array([[0.5, 0.4], [0.45, 0.3]])  # texts × images
    t2i_lex = 0.2 * np.array([[0.0, 1.0], [1.0, 0.0]])  # text 0 shares words with image 1 only
    i2t_lex = 0.2 * np.array([[1.0, 0.5], [0.0, 1.0]])  # image 1 shares words with text 1 only
    t2i, i2t = fuse(dense, (t2i_lex, i2t_lex))
    assert np.allclose(t2i, [[0.5, 0.6], [0.65, 0.3]])
    assert np.allclose(i2t, [[0.7, 0.55], [0.4, 0.5]])
    assert i2t[1].argmax() == 1 and dense.T[1].argmax() == 0  # the shared words change image 1's best text


def test_pool_lexical_is_both_directions_of_one_pool(sample_pairs):
    texts = [p.caption for p in sample_pairs[:5]]
    words = [" ".join(t.split()[:6]) for t in texts]  # each figure "reads" the opening words of its own caption
    t2i, i2t = pool_lexical(texts, words, LexicalWeights(words=1.0))
    assert t2i.shape == i2t.shape == (5, 5)
    assert (np.diag(i2t) == 1.0).all()  # its own caption holds every word a figure reads
    assert ((0 <= t2i) & (t2i <= 1)).all() and t2i.max(axis=1).tolist() == [1.0] * 5
    zero = pool_lexical(texts, words, LexicalWeights())
    assert not zero[0].any() and not zero[1].any()


def test_the_shipped_matcher_adds_the_term_and_models_saved_before_it_do_not():
    shipped = load_matcher()
    assert shipped.lexical == LexicalWeights(words=0.2, chars=0.1)
    config = shipped.model.config.to_dict()
    older = {k: v for k, v in config.items() if k not in ("lexical_weight", "char_weight")}
    assert MatcherConfig.from_dict(older).lexical() == LexicalWeights()
    before_chars = {k: v for k, v in config.items() if k != "char_weight"}
    assert MatcherConfig.from_dict(before_chars).lexical() == LexicalWeights(words=0.2)
    assert MatcherConfig(use_ocr=False).lexical_weight == 0.2
    assert DualEncoderMatcher(DualEncoder(MatcherConfig(use_ocr=False))).lexical == LexicalWeights()  # no words read

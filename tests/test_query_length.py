"""Queries are embedded from at most QUERY_PIECES word pieces (the length MiniLM was trained at): a long
citing passage costs what a 128-piece one does, documents keep the model's full length, and the model's
own setting is left as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import figlink
from figlink.index.embed import QUERY_PIECES, default_embedder, encode_queries, encode_query

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "jats" / "ehp-116-1694.nxml"


@pytest.fixture(scope="module")
def minilm():
    emb = default_embedder()
    if emb is None or not hasattr(emb, "model"):
        pytest.skip("the MiniLM embedder is not installed")
    return emb


def _long_passage(minilm) -> str:
    """Citing sentences of a real paper joined until they run past the query cap."""
    words: list[str] = []
    for fig in figlink.parse(SAMPLE).figures:
        for ref in fig.inline_refs:
            words += ref.text.split()
            text = " ".join(words)
            if len(minilm.model.tokenizer(text)["input_ids"]) > QUERY_PIECES + 20:
                return text
    pytest.fail("the sample's citing sentences are too short for this test")


def test_a_long_query_is_embedded_from_its_first_pieces_only(minilm):
    passage = _long_passage(minilm)
    more = passage + " Exposure to phthalates in early pregnancy was measured in urine."
    assert np.allclose(encode_query(minilm, passage), encode_query(minilm, more), atol=1e-6)
    full, full_more = minilm.encode([passage, more])
    assert not np.allclose(full, full_more, atol=1e-3)  # documents still read past the cap
    assert minilm.model.max_seq_length > QUERY_PIECES  # the model's own setting is restored


def test_a_short_query_is_embedded_as_a_document_would_be(minilm):
    q = "urinary phthalate metabolites and anogenital distance"
    v = encode_query(minilm, q)
    assert v.dtype == np.float32 and abs(float(np.linalg.norm(v)) - 1) < 1e-5
    assert np.allclose(v, minilm.encode([q])[0], atol=1e-5)


def test_queries_embedded_in_a_batch_are_capped_as_one_query_is(minilm):
    """The benchmarks embed their queries in batches (encode_queries): each vector must be the one a
    search computes for that query alone, long or short."""
    passage = _long_passage(minilm)
    short = "urinary phthalate metabolites and anogenital distance"
    batch = encode_queries(minilm, [passage, short])
    assert batch.shape == (2, minilm.dim)
    assert np.allclose(batch[0], encode_query(minilm, passage), atol=1e-5)
    assert np.allclose(batch[1], encode_query(minilm, short), atol=1e-5)
    assert not np.allclose(batch[0], minilm.encode([passage])[0], atol=1e-3)  # the full-length vector differs
    assert minilm.model.max_seq_length > QUERY_PIECES


def test_the_benchmarks_caching_embedders_cap_queries_as_the_searcher_does(minilm, tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_search import CachedEmbedder
    from rerank_data import DiskCachedEmbedder

    passage = _long_passage(minilm)
    for wrapper in (CachedEmbedder(minilm), DiskCachedEmbedder(minilm, tmp_path / "emb.npz")):
        wrapper.encode([passage])  # the same text as a document: full length, cached apart
        assert np.allclose(wrapper.encode_queries([passage])[0], encode_query(minilm, passage), atol=1e-5)
        assert np.allclose(wrapper.encode_query(passage), encode_query(minilm, passage), atol=1e-5)
        assert not np.allclose(wrapper.encode([passage])[0], encode_query(minilm, passage), atol=1e-3)

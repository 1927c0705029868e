"""The scale benchmark's replicas (benchmarks/bench_index_scale.py): rewritten copies keep their
structure (mention and subcaption spans move with the text), and the replica embedder gives a base text
its MiniLM vector, a rewritten text a vector as far from its original as the fitted model says, and
sends a text it does not know to the real embedder."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from figlink.corpus import Corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
bench = pytest.importorskip("bench_index_scale")


@pytest.fixture(scope="module")
def papers(corpus_dir):
    with Corpus(corpus_dir, readonly=True) as c:
        return list(c.papers())


def test_copies_rewrite_words_and_move_spans_with_the_text(papers):
    rw = bench.Rewriter(papers)
    checked_mentions = checked_subcaptions = changed = 0
    for base in papers:
        copy = rw.paper(base.to_dict(), 3)
        assert copy.paper_id == f"{base.paper_id}~r3" and len(copy.figures) == len(base.figures)
        assert len(bench.dense_texts(copy)) == len(bench.dense_texts(base))
        for f0, f1 in zip(base.figures, copy.figures):
            changed += f0.caption != f1.caption
            for r0, r1 in zip(f0.inline_refs, f1.inline_refs):
                for (a0, b0), (a1, b1) in zip(r0.mention_spans, r1.mention_spans):
                    assert r1.text[a1:b1] == rw.text(r0.text[a0:b0])  # "Fig. 2B" stays "Fig. 2B"
                    checked_mentions += 1
            if f0.caption_split is None:
                continue
            for s0, s1 in zip(f0.caption_split.subcaptions, f1.caption_split.subcaptions):
                for (a0, b0), (a1, b1) in zip(s0.spans, s1.spans):
                    assert f1.caption[a1:b1] == rw.text(f0.caption[a0:b0])
                    checked_subcaptions += 1
    assert checked_mentions > 20 and checked_subcaptions > 5 and changed > 10
    # a copy's word map is its own and fixed: the same copy twice is the same text, another copy differs
    again = bench.Rewriter(papers)
    assert again.paper(papers[0].to_dict(), 3).to_dict() == rw.paper(papers[0].to_dict(), 3).to_dict()
    assert rw.paper(papers[0].to_dict(), 4).figures[0].caption != rw.paper(papers[0].to_dict(), 3).figures[0].caption


def test_replica_embedder_base_rewritten_and_unknown_texts(monkeypatch):
    rng = np.random.default_rng(1)
    vec = rng.standard_normal((3, 384)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    base = bench.BaseTexts(["alpha cells", "beta cells", "gamma cells"], vec)
    copies = [f"copy {i} of beta" for i in range(200)]
    keys = np.asarray([bench.text_key(t) for t in copies], dtype=np.uint64)
    order = np.argsort(keys)
    table = {"keys": keys[order], "rows": np.full(200, 1, np.int32), "shares": np.full(200, 0.25, np.float32)}
    a = 2.0
    emb = bench.ReplicaEmbedder(base, table, a)

    class Fallback:
        def encode(self, texts):
            return np.ones((len(texts), 384), np.float32) / math.sqrt(384)

    monkeypatch.setattr("figlink.index.embed.default_embedder", lambda: Fallback())
    out = emb.encode(["gamma cells", *copies, "never seen"])
    assert np.array_equal(out[0], vec[2]) and emb.unknown == 1
    assert np.allclose(out[-1], 1 / math.sqrt(384))
    cos = out[1:-1] @ vec[1]
    assert np.allclose(np.linalg.norm(out[1:-1], axis=1), 1, atol=1e-5)
    assert abs(cos.mean() - 1 / math.sqrt(1 + a * 0.25)) < 0.02  # s² = a·f around a unit vector
    assert np.array_equal(emb.encode([copies[5]])[0], out[6])  # seeded by the text: the same vector again

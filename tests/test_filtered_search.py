"""Filtered search: the dense signal returns the exact filtered top-k when a filter is selective and keeps
its recall through the IVF scan when it is broad (more lists probed the fewer rows pass); the lexical
signal's in-Python filter gives exactly the documents a filtered BM25 ranking gives."""

from __future__ import annotations

import numpy as np
import pytest

from figlink.index import Filters, ann, lexical, vectors
from figlink.index.selection import Selection
from figlink.index.vectors import VectorSet

pytest.importorskip("faiss")


@pytest.fixture(scope="module")
def clustered() -> VectorSet:
    """24,000 documents of one or two 64-d unit vectors around 300 centres, with an IVF-PQ index."""
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((300, 64)).astype(np.float32)
    lengths = rng.integers(1, 3, 24_000)
    vec = centres[rng.integers(0, 300, lengths.sum())] + 0.6 * rng.standard_normal((lengths.sum(), 64)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    vs = VectorSet(vec.astype(np.float16), starts, np.arange(len(starts), dtype=np.int64) * 2 + 5)
    vs.ann = ann.train(vs.vec)
    return vs


def _queries(vs: VectorSet, n: int) -> np.ndarray:
    q = np.asarray(vs.vec[np.random.default_rng(4).integers(0, len(vs.vec), n)], dtype=np.float32)
    q += 0.3 * np.random.default_rng(5).standard_normal(q.shape).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_a_selective_filter_returns_exactly_the_filtered_top_k(clustered):
    mask = np.zeros(len(clustered.docs), dtype=bool)
    mask[np.random.default_rng(6).choice(len(mask), 500, replace=False)] = True  # 2% of the documents
    rows = int(np.dot(mask, np.diff(np.append(clustered.starts, len(clustered.vec)))))
    assert rows <= vectors.EXACT_FILTERED_ROWS
    for q in _queries(clustered, 8):
        got, exact = clustered.top(q, 10, mask), clustered.exact_top(q, 10, mask)
        assert [d for d, _ in got] == [d for d, _ in exact]
        assert np.allclose([s for _, s in got], [s for _, s in exact], atol=1e-5)
        assert set(d for d, _ in got) <= set(clustered.docs[mask].tolist())


def test_a_broad_filter_keeps_recall_through_the_ivf_scan(clustered, monkeypatch):
    """A filter passing 10% of the documents, searched through the row bitmap (the exact path turned off):
    every hit is inside the filter, and recall@10 against the exact filtered search is at least the
    unfiltered search's recall against exact search on the same queries (the filter costs no recall)."""
    monkeypatch.setattr(vectors, "EXACT_FILTERED_ROWS", 0)
    mask = np.random.default_rng(7).random(len(clustered.docs)) < 0.1
    allowed = set(clustered.docs[mask].tolist())
    recall, unfiltered = [], []
    for q in _queries(clustered, 40):
        got = clustered.top(q, 10, mask)
        assert len(got) == 10 and {d for d, _ in got} <= allowed
        recall.append(len({d for d, _ in got} & {d for d, _ in clustered.exact_top(q, 10, mask)}) / 10)
        unfiltered.append(len({d for d, _ in clustered.top(q, 10)} & {d for d, _ in clustered.exact_top(q, 10)}) / 10)
    assert np.mean(recall) >= max(0.9, np.mean(unfiltered)), (np.mean(recall), np.mean(unfiltered))


def test_probed_lists_grow_as_the_filter_narrows():
    assert ann.nprobe_for(1024, 1.0) == ann.NPROBE
    assert ann.nprobe_for(1024, 0.5) == 2 * ann.NPROBE
    assert ann.nprobe_for(1024, 0.1) == 10 * ann.NPROBE
    assert ann.nprobe_for(1024, 0.001) == 1024 and ann.nprobe_for(1024, 0.0) == 1024


def test_selection_allows_ids_of_its_level_only():
    sel = Selection(np.array([3, 5, 9], dtype=np.int64), np.array([True, False, True]))
    assert sel.allows(np.array([9, 5, 3, 4, 100, 0])).tolist() == [True, False, True, False, False, False]
    assert sel.count == 2 and sel.share == pytest.approx(2 / 3)
    assert Selection(np.zeros(0, np.int64), np.zeros(0, bool)).allows(np.array([1])).tolist() == [False]


def _reference(db, level: str, query: str, n: int, f: Filters) -> list[int]:
    """Every BM25 match, kept when its docs row passes ``f`` (read from the table, not the columns)."""
    ranked = lexical.search(db, level, query, 10**6)
    rows = dict(((d, (y, o, m, t, p)) for d, y, o, m, t, p in
                 db.execute("SELECT doc, year, open, medical, figure_type, paper_id FROM docs")))

    def passes(doc: int) -> bool:
        y, o, m, t, p = rows[doc]
        return ((f.year_min is None or y >= f.year_min) and (f.year_max is None or 0 < y <= f.year_max)
                and (f.open is None or o == f.open) and (f.is_medical is None or m == f.is_medical)
                and (f.figure_type is None or t in f.figure_type) and (f.paper_id is None or p == f.paper_id))

    return [d for d, _ in ranked if passes(d)][:n]


# 0.001: every query needs the second pass; in SQL: the allowed ids checked before BM25 (IN_SQL_RATIO)
@pytest.mark.parametrize("oversample,in_sql", [(lexical.OVERSAMPLE, False), (0.001, False), (lexical.OVERSAMPLE, True)])
def test_lexical_filter_gives_the_filtered_bm25_ranking(searcher, monkeypatch, oversample, in_sql):
    monkeypatch.setattr(lexical, "OVERSAMPLE", oversample)
    monkeypatch.setattr(lexical, "IN_SQL_RATIO", 1e9 if in_sql else 0.0)
    v = searcher.version()
    filters = [Filters(year_min=2012), Filters(year_max=2011), Filters(is_medical=False),
               Filters(paper_id="PMC3166277"), Filters(figure_type=("histogram",)), Filters(open=False)]
    checked = 0
    for level in lexical.LEVELS:
        for f in filters:
            sel = Selection(v.cols[level].doc, f.mask(v.cols[level]))
            for q in ("lysis time distributions", "cells", "exposure to pesticides", "phylogenetic tree"):
                got = lexical.search(v.db, level, q, 5, sel, len(v.cols[level]))
                want = _reference(v.db, level, q, 5, f)
                assert [d for d, _ in got] == want, (level, f, q)
                checked += bool(want)
    assert checked >= 20  # most cases have hits: the comparison is not vacuous

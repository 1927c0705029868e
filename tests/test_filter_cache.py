"""Filters resolved once per index version (figlink.index.filter_cache): a cached filter gives the hits an
uncached one gives, a repeated filter is not resolved again, and a new index version never uses the
masks of the version before it."""

from __future__ import annotations

import shutil

from figlink.index import Filters, Searcher, build_index
from figlink.index.filter_cache import FilterCache

from conftest import add_zebra_paper

FILTERS = [{"figure_type": "histogram"}, {"figure_type": ["histogram", "pie_chart"]},
           {"figure_type": ["pie_chart", "histogram"]}, {"is_medical": False}, {"open": True},
           {"year_min": 2012}, {"paper_id": "PMC3166277"}, {"open": True, "year_max": 2011}]
QUERIES = ["lysis time distributions", "cells", "holin hole formation", "exposure"]


def _ids(hits):
    return [(h.paper_id, h.figure_id, h.panel, h.score) for h in hits]


def test_cached_and_uncached_filters_give_the_same_hits(corpus_dir):
    cached, uncached = Searcher(corpus_dir), Searcher(corpus_dir)
    uncached.version().selections = FilterCache(size=0)  # remembers nothing: every search resolves its filter
    for level in ("figure", "panel"):
        for filt in FILTERS:
            for q in QUERIES:
                want = _ids(uncached.search(q, k=10, level=level, filters=filt))
                assert _ids(cached.search(q, k=10, level=level, filters=filt)) == want
    cache = cached.version().selections
    # one resolution per distinct filter and level (the two orders of the same types are one filter); a
    # panel search reads both levels, a figure search the figure level
    assert cache.misses == 7 * 2 and len(cache) == 7 * 2
    assert cache.hits == len(FILTERS) * len(QUERIES) * (1 + 2) - cache.misses
    assert uncached.version().selections.hits == 0
    assert cache.nbytes() > 0


def test_the_cache_is_bounded():
    cache = FilterCache(size=3)
    for year in range(2000, 2010):
        cache.get("figure", Filters(year_min=year), lambda: None)
    assert len(cache) == 3 and cache.misses == 10
    cache.get("figure", Filters(year_min=2009), lambda: None)
    assert cache.hits == 1


def test_a_new_index_version_does_not_reuse_the_old_versions_filters(corpus_dir, tmp_path):
    d = shutil.copytree(corpus_dir, tmp_path / "c")
    s = Searcher(d)
    q = "zebra stripes counted under a microscope"
    for level in ("figure", "panel"):  # the filters resolved on the first version, before the paper exists
        assert all(h.paper_id != "COPY0" for h in s.search(q, k=10, level=level, filters={"open": True}))
        assert s.search(q, k=10, level=level, filters={"paper_id": "COPY0"}) == []
    old = s.version()
    add_zebra_paper(d, "COPY0")
    assert build_index(d).added == 1
    for level in ("figure", "panel"):
        for filt in ({"open": True}, {"paper_id": "COPY0"}):
            hits = s.search(q, k=10, level=level, filters=filt)
            if "paper_id" in filt:  # only the new paper passes
                assert hits and {(h.paper_id, h.figure_id) for h in hits} == {("COPY0", "F3")}, level
            elif level == "figure":  # the new figure passes and is the best match
                assert (hits[0].paper_id, hits[0].figure_id) == ("COPY0", "F3")
            assert _ids(hits) == _ids(Searcher(d).search(q, k=10, level=level, filters=filt))
    assert s.version() is not old and len(old.selections) == len(s.version().selections) == 4

"""Stored best documents of very common words (``lexical.write_impacts``): a query left with one such word
reads them instead of scoring every match, and gets exactly what scoring every match gives, with and
without filters, falling back to scoring when the stored list is too short."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from figlink.index import Filters, lexical, store
from figlink.index.selection import Selection

DEPTH = 4  # stored documents per word; the sample corpus's common words have more matches than this


@pytest.fixture(scope="module")
def impact_db(searcher, corpus_dir, tmp_path_factory):
    """A copy of the sample index's lexical file with lists for every word in more than DEPTH documents."""
    folder = store.index_dir(corpus_dir) / searcher.version().name
    path = tmp_path_factory.mktemp("impacts") / "lexical.sqlite"
    shutil.copy(folder / "lexical.sqlite", path)
    db = sqlite3.connect(path, check_same_thread=False)
    lexical.write_impacts(db, min_df=0, depth=DEPTH)
    db.commit()
    yield db
    db.close()


def _scored_all(db, level: str, word: str) -> list[tuple[int, float]]:
    """Every match of one word in BM25 order, straight from FTS5 (no stored lists, no cut-off)."""
    w = ", ".join(str(x) for x in lexical.WEIGHTS[level])
    return [(int(d), float(s)) for d, s in db.execute(
        f"SELECT rowid, -bm25(fts_{level}, {w}) FROM fts_{level} WHERE fts_{level} MATCH ? "
        f"ORDER BY bm25(fts_{level}, {w}) LIMIT -1", (lexical.match_expr([word]),))]


WORDS = ("cells", "expression", "infection", "patients", "time", "growth", "data")


def test_common_words_have_lists_in_bm25_order(impact_db):
    for level in lexical.LEVELS:
        stored = dict(impact_db.execute(f"SELECT term, length(docs) FROM impact_{level}"))
        df = dict(impact_db.execute(f"SELECT term, n FROM df_{level}"))
        common = {t for t, n in df.items() if n > DEPTH}
        # every common word has its list but a stem that stems to another word ("gener" → "gener"?)
        assert set(stored) <= common and len(stored) >= 0.9 * len(common) > 10
        assert set(stored.values()) == {8 * DEPTH}  # DEPTH int64 document ids


@pytest.mark.parametrize("level", lexical.LEVELS)
def test_one_word_queries_equal_scoring_every_match(searcher, impact_db, monkeypatch, level):
    v = searcher.version()
    used = []
    real = lexical._stored_top

    def spy(*a, **k):
        out = real(*a, **k)
        used.append(out is not None)
        return out

    monkeypatch.setattr(lexical, "_stored_top", spy)
    cols = v.cols[level]
    filters = [Filters(), Filters(year_min=2012), Filters(is_medical=False), Filters(open=False)]
    checked = 0
    for word in WORDS:
        everything = _scored_all(impact_db, level, word)
        for f in filters:
            mask = f.mask(cols)
            sel = None if mask is None else Selection(cols.doc, mask)
            allowed = [(d, s) for d, s in everything if sel is None or sel.allows([d])[0]]
            for n in (1, 3, DEPTH, DEPTH + 3):
                got = lexical.search(impact_db, level, word, n, sel, len(cols))
                assert got == allowed[:n], (level, word, f, n)
                checked += bool(allowed)
    assert checked >= 40
    assert any(used) and not all(used)  # lists were read, and too-short ones fell back to scoring

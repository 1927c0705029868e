"""The lexical half of the matcher's score: the words of a figure's OCR text against the texts (SciOL Table 8).

A MiniLM vector of a figure's OCR text blurs the exact tokens it shares with its caption (numbers,
symbols, names, units); BM25 keeps them. OCR also splits and misreads words and reads sub- and
superscripts apart, which whole words miss and their character n-grams still match
(:mod:`figlink.learn.char_grams`). The matcher scores a query against a pool as

    dense cosine + w_words × (the query's BM25 row divided by its largest value)
                 + w_chars × (the query's character n-gram cosines divided by their largest value)

so each half of every query's lexical term lies in [0, 1] and one that shares nothing with any item adds
nothing. Text → image queries a caption against the figures' OCR texts; image → text queries a figure's
OCR text against the captions. This is a score between a query and a pool, not a vector of one figure:
``figlink embed`` writes it into further coordinates of rows made for the whole pool
(:mod:`figlink.learn.pool_vectors`), or the dense vectors alone with ``--score dense``.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from figlink.index.lexical import match_expr
from figlink.learn.char_grams import CharIndex


@dataclass(frozen=True)
class LexicalWeights:
    """The weights of the lexical term's two halves in a matcher's score (0: left out)."""

    words: float = 0.0  # BM25 of the words
    chars: float = 0.0  # cosine of the character n-grams

    @property
    def on(self) -> bool:
        return self.words > 0 or self.chars > 0

_WORD = re.compile(r"\w+", re.UNICODE)


def _fts_query(text: str) -> str:
    return match_expr(dict.fromkeys(w.lower() for w in _WORD.findall(text) if not w.isdigit() or len(w) > 1))


_FTS_TABLE = "CREATE VIRTUAL TABLE d USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')"


def _fill(db: sqlite3.Connection, docs: Sequence[str]) -> None:
    db.execute(_FTS_TABLE)
    db.executemany("INSERT INTO d(rowid, body) VALUES (?, ?)", [(i + 1, t) for i, t in enumerate(docs)])


def term_counts(texts: Sequence[str]) -> list[Counter[str]]:
    """The terms of each text as the word term's index holds them (SQLite FTS5, Porter stems, diacritics
    removed), with their counts."""
    db = sqlite3.connect(":memory:")
    try:
        _fill(db, texts)
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(d, 'instance')")
        out: list[Counter[str]] = [Counter() for _ in texts]
        for term, doc, n in db.execute("SELECT term, doc, count(*) FROM v GROUP BY doc, term"):
            out[doc - 1][term] = n
        return out
    finally:
        db.close()


def _open(source: Path | Sequence[str]) -> sqlite3.Connection:
    """A word index to query: a :func:`write_lexicon` file (read-only), or ``source`` documents indexed in memory."""
    if isinstance(source, Path):
        return sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    db = sqlite3.connect(":memory:")
    _fill(db, source)
    return db


def _matches(db: sqlite3.Connection, queries: Sequence[str], first: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per query, the documents it matches from row ``first`` on: (0-based rows, BM25 higher-is-better)."""
    for q in queries:
        expr = _fts_query(q)
        found = db.execute("SELECT rowid, bm25(d) FROM d WHERE d MATCH ? AND rowid > ?",
                           (expr, first)).fetchall() if expr else []
        yield (np.fromiter((r for r, _ in found), np.int64, len(found)) - 1,
               -np.fromiter((x for _, x in found), np.float64, len(found)))


def _score_rows(db: sqlite3.Connection, queries: Sequence[str], n_docs: int) -> np.ndarray:
    out = np.zeros((len(queries), n_docs), np.float64)
    for qi, (rows, scores) in enumerate(_matches(db, queries)):
        inside = rows < n_docs
        out[qi, rows[inside]] = scores[inside]
    return out


def bm25_scores(queries: Sequence[str], docs: Sequence[str]) -> np.ndarray:
    """(len(queries) × len(docs)) BM25 scores (SQLite FTS5, Porter stemming; higher is better, 0 = no match)."""
    db = _open(docs)
    try:
        return _score_rows(db, queries, len(docs))
    finally:
        db.close()


def write_lexicon(path: Path, docs: Sequence[str]) -> None:
    """Index ``docs`` (row ``i`` is document ``i``) in an FTS5 file at ``path``, written under a temporary
    name and renamed, so that a search reads postings instead of indexing every document per query."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    try:
        with db:
            _fill(db, docs)
            db.execute("INSERT INTO d(d) VALUES ('optimize')")
    finally:
        db.close()
    os.replace(tmp, path)


def lexicon_scores(path: Path, query: str, n_docs: int) -> np.ndarray:
    """One query's lexical term against a :func:`write_lexicon` file of ``n_docs`` documents, scaled to
    [0, 1] by its best: the same numbers as :func:`lexical_scores` over those documents."""
    db = _open(path)
    try:
        return per_query_scaled(_score_rows(db, [query], n_docs))[0]
    finally:
        db.close()


def bm25_matches(source: Path | Sequence[str], queries: Sequence[str],
                 first: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per query, the documents it matches from row ``first`` on: (0-based rows, BM25 higher-is-better), in a
    :func:`write_lexicon` file or in ``source`` documents indexed in memory. The scores are those over all
    the documents (FTS5 reads only the postings past ``first``), so a few new rows cost a few."""
    db = _open(source)
    try:
        yield from _matches(db, queries, first)
    finally:
        db.close()


def per_query_scaled(scores: np.ndarray) -> np.ndarray:
    """Each row divided by its largest value (rows without a positive score become zeros)."""
    top = scores.max(axis=1, keepdims=True) if scores.size else np.zeros((len(scores), 1))
    return np.divide(scores, top, out=np.zeros_like(scores, dtype=np.float64), where=top > 0)


def lexical_scores(queries: Sequence[str], docs: Sequence[str]) -> np.ndarray:
    """BM25 of each query against the docs, scaled per query to [0, 1]."""
    return per_query_scaled(bm25_scores(queries, docs))


def char_scores(index: CharIndex, queries: Sequence[str]) -> np.ndarray:
    """The character n-gram cosines of each query against the documents of ``index``, scaled per query to
    [0, 1] by its best."""
    return per_query_scaled(index.cosines(queries))


def weighted_lexical(queries: Sequence[str], docs: Sequence[str], weights: LexicalWeights) -> np.ndarray:
    """(len(queries) × len(docs)): the lexical term of each query against the docs, its halves weighted."""
    out = np.zeros((len(queries), len(docs)), np.float64)
    if weights.words:
        out += weights.words * lexical_scores(queries, docs)
    if weights.chars:
        out += weights.chars * char_scores(CharIndex(docs), queries)
    return out


def pool_lexical(texts: Sequence[str], ocr_texts: Sequence[str],
                 weights: LexicalWeights) -> tuple[np.ndarray, np.ndarray]:
    """The weighted lexical terms of a pool of figures: (texts × figures for text → image, figures × texts
    for image → text)."""
    return weighted_lexical(texts, ocr_texts, weights), weighted_lexical(ocr_texts, texts, weights)


def fuse(dense: np.ndarray, lexical: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The matcher's (text → image, image → text) score matrices, rows the queries, from the (texts ×
    figures) dense cosines and :func:`pool_lexical`: ``dense + lexical`` each way."""
    dense = np.asarray(dense, np.float64)
    return dense + lexical[0], dense.T + lexical[1]

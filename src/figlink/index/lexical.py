"""The lexical signal: SQLite FTS5 tables (one per level) ranked with BM25 over weighted fields.

The same file holds ``docs``, one row per document with its ids, filter columns and what a hit shows
(JSON); FTS rowids are ``docs.doc``. Queries are free text: words are quoted one by one and OR-ed,
so no query can use FTS syntax, and very common words are dropped before they cost time.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
from pathlib import Path
from typing import Iterable, Optional

import numpy as np

from figlink.index.docs import FIELDS, Doc
from figlink.index.selection import Selection

LEVELS = ("figure", "panel")
# BM25 weight of each field (FIELDS order: title, main, refs, ocr, shared) per level.
WEIGHTS = {"figure": (0.3, 1.0, 0.8, 0.5, 0.0), "panel": (0.2, 1.0, 1.0, 0.5, 0.3)}
MAX_TERMS = 32
# what a panel document shows from its figure: stored once, on the figure document
FIGURE_META = frozenset({"caption", "title", "label", "image", "year", "open", "medical", "figure_type", "n_panels"})
MAX_SCORED_TERMS = 16
MIN_TERMS = 3
COMMON_FRACTION = 0.05  # a word in more than this share of documents is "very common" …
COMMON_MIN_DF = 1000  # … once it is in more than this many
OVERSAMPLE = 2.0  # with a filter: matches checked first, per document wanted and per share passing …
MAX_OVERSAMPLED = 50_000  # … at most this many before every match is
POSTING_BUDGET = 8_000  # documents scored per query, about (rarest words first; at least MIN_TERMS words)
# A word in more than four budgets of documents is scored alone (select_terms), and then its whole posting
# list is scored; each build stores such a word's best IMPACT_DEPTH documents in BM25 order (write_impacts),
# so a query left with that one word reads them instead (write_impacts: why they are exact).
IMPACT_MIN_DF = 4 * POSTING_BUDGET
IMPACT_DEPTH = 4096
# With a filter passing at most this many documents per posting of the query's words, the allowed ids go
# into the SQL and BM25 is computed for allowed matches only (an allowed id costs a fraction of scoring a
# match, and no second pass is needed). At 1M panel documents, tune queries × a mix of 12 filters, both
# levels, CPU p50 / p99: 19.2 / 105.8 ms never in SQL, 16.4 / 77.9 at 1, 13.1 / 37.1 at 4, 16.7 / 79.3 at
# 16, 38.5 / 221.9 always.
IN_SQL_RATIO = 4.0
_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having
he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on once
only or other our ours out over own same she should so some such than that the their theirs them then there
these they this those through to too under until up very was we were what when where which while who whom
why will with would you your fig figs figure figures panel panels shown show shows see
""".split())

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS docs (
  doc INTEGER PRIMARY KEY, level TEXT NOT NULL, paper_id TEXT NOT NULL, figure_id TEXT NOT NULL, panel TEXT,
  year INTEGER, open INTEGER, medical INTEGER, figure_type TEXT, meta TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS docs_paper ON docs(paper_id);
CREATE INDEX IF NOT EXISTS docs_key ON docs(level, paper_id, figure_id, panel);
""" + "".join(
    f"CREATE VIRTUAL TABLE IF NOT EXISTS fts_{lv} USING fts5({', '.join(FIELDS)}, "
    "tokenize='porter unicode61 remove_diacritics 2');\n" for lv in LEVELS)


def query_terms(text: str) -> list[str]:
    """The distinct non-stopword words of a query, lower case, at most MAX_TERMS."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.lower()):
        w = w.replace("_", " ").strip()
        if w and w not in STOPWORDS and (len(w) > 1 or w.isdigit()):
            seen.setdefault(w, None)
        if len(seen) >= MAX_TERMS:
            break
    return list(seen)


def match_expr(terms: Iterable[str]) -> str:
    """An FTS5 MATCH expression OR-ing each term as a quoted phrase (safe for any input)."""
    return " OR ".join('"' + t.replace('"', "") + '"' for t in terms)


def create(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)


def insert(db: sqlite3.Connection, docs: Iterable[Doc], first_id: int) -> list[int]:
    """Insert documents with ids from ``first_id`` on; returns their ids in order."""
    ids: list[int] = []
    for i, d in enumerate(docs, first_id):
        m = d.meta
        shown = m if d.level == "figure" else {k: v for k, v in m.items() if k not in FIGURE_META}
        db.execute("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (i, d.level, d.paper_id, d.figure_id, d.panel, m.get("year") or 0, int(bool(m.get("open"))),
                    -1 if m.get("medical") is None else int(m["medical"]), m.get("figure_type"),
                    json.dumps(shown, ensure_ascii=False)))
        db.execute(f"INSERT INTO fts_{d.level} (rowid, {', '.join(FIELDS)}) VALUES (?,?,?,?,?,?)",
                   (i, *(d.fields.get(f, "") for f in FIELDS)))
        ids.append(i)
    return ids


def delete_papers(db: sqlite3.Connection, paper_ids: Iterable[str]) -> set[int]:
    """Remove every document of these papers; returns the removed ids."""
    gone: set[int] = set()
    for pid in paper_ids:
        rows = db.execute("SELECT doc, level FROM docs WHERE paper_id=?", (pid,)).fetchall()
        for doc, level in rows:
            db.execute(f"DELETE FROM fts_{level} WHERE rowid=?", (doc,))
            gone.add(doc)
        db.execute("DELETE FROM docs WHERE paper_id=?", (pid,))
    return gone


class _Stemmer:
    """The index's own tokenizer (porter, unicode61) applied to query words, through an in-memory FTS5."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE s USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
        self.db.execute("CREATE VIRTUAL TABLE sv USING fts5vocab(s, 'instance')")
        self.lock = threading.Lock()

    def stems(self, words: list[str]) -> dict[str, str]:
        with self.lock:
            self.db.execute("DELETE FROM s")
            self.db.executemany("INSERT INTO s (rowid, x) VALUES (?, ?)", list(enumerate(words)))
            rows = self.db.execute("SELECT doc, term FROM sv").fetchall()
        out: dict[str, str] = {}
        for doc, term in rows:
            out.setdefault(words[doc], term)
        return out


_stemmer = _Stemmer()


def write_df(db: sqlite3.Connection) -> None:
    """Store each level's document frequency per (stemmed) term, for query-term selection."""
    for lv in LEVELS:
        db.execute(f"DROP TABLE IF EXISTS df_{lv}")
        db.execute(f"CREATE TABLE df_{lv} (term TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID")
        db.execute(f"CREATE VIRTUAL TABLE temp.v_{lv} USING fts5vocab(main, fts_{lv}, 'row')")
        db.execute(f"INSERT INTO df_{lv} SELECT term, doc FROM temp.v_{lv}")
        db.execute(f"DROP TABLE temp.v_{lv}")


def write_impacts(db: sqlite3.Connection, min_df: int = IMPACT_MIN_DF, depth: int = IMPACT_DEPTH) -> None:
    """Store, per level, the best ``depth`` documents (ids and BM25 scores, best first) of each word found in
    more than ``min_df`` documents (after :func:`write_df`).

    They are what scoring every document holding the word returns first: the same SQL, on this version's
    own statistics (a version never changes), ties in document order as SQLite's sort leaves them.
    """
    for lv in LEVELS:
        db.execute(f"DROP TABLE IF EXISTS impact_{lv}")
        db.execute(f"CREATE TABLE impact_{lv} (term TEXT PRIMARY KEY, docs BLOB NOT NULL, scores BLOB NOT NULL) "
                   "WITHOUT ROWID")
        terms = [t for (t,) in db.execute(f"SELECT term FROM df_{lv} WHERE n > ?", (max(min_df, depth),))]
        stems = _stemmer.stems(terms)
        sql = _bm25_sql(lv)
        for t in terms:
            if stems.get(t) != t:
                continue  # the stored stem stems to another word: a query of it would match other documents
            rows = db.execute(sql, (match_expr([t]), depth)).fetchall()
            db.execute(f"INSERT INTO impact_{lv} VALUES (?,?,?)",
                       (t, np.array([r for r, _ in rows], np.int64).tobytes(),
                        np.array([sc for _, sc in rows], np.float64).tobytes()))


def _stored_top(db: sqlite3.Connection, level: str, stem: str, n: int, allowed: Optional[Selection]
                ) -> Optional[list[tuple[int, float]]]:
    """The best ``n`` (allowed) documents of a one-word query from the word's stored list, or None when it
    has none or holds fewer than ``n`` allowed documents (then every match must be scored)."""
    try:
        row = db.execute(f"SELECT docs, scores FROM impact_{level} WHERE term=?", (stem,)).fetchone()
    except sqlite3.OperationalError:  # an index built before impact lists
        return None
    if row is None:
        return None
    docs, scores = np.frombuffer(row[0], np.int64), np.frombuffer(row[1], np.float64)
    keep = np.arange(len(docs)) if allowed is None else np.flatnonzero(allowed.allows(docs))
    if len(keep) < n:
        return None
    return [(int(docs[i]), float(scores[i])) for i in keep[:n]]


def _bm25_sql(level: str, restricted: bool = False) -> str:
    """Matches of a MATCH expression in BM25 order (best first), with their scores (higher: better);
    ``restricted``: only documents whose ids are in a JSON array (the second parameter), checked before
    BM25 is computed (the ``+`` keeps SQLite from looking each id up in the full-text index instead)."""
    weights = ", ".join(str(w) for w in WEIGHTS[level])
    only = " AND +rowid IN (SELECT value FROM json_each(?))" if restricted else ""
    return (f"SELECT rowid, -bm25(fts_{level}, {weights}) FROM fts_{level} WHERE fts_{level} MATCH ?{only} "
            f"ORDER BY bm25(fts_{level}, {weights}) LIMIT ?")


def merge_segments(db: sqlite3.Connection, rewrite: bool) -> None:
    """Rewrite each level's FTS index as one segment (``rewrite``), or leave it to automatic merging."""
    if rewrite:
        for lv in LEVELS:
            db.execute(f"INSERT INTO fts_{lv}(fts_{lv}) VALUES ('optimize')")


def select_terms(db: sqlite3.Connection, level: str, words: list[str], n_docs: int) -> list[str]:
    """The query words worth scoring: known to the index, rarest first, without the very common ones.

    BM25 scores every document that holds any query word, so a word found in a large share of a big
    index costs much and tells little: words are taken rarest first while they are not very common and
    their postings fit POSTING_BUDGET; at least MIN_TERMS words are kept unless they alone would
    exceed four budgets (at least one word always is).
    """
    return [w for w, _, _ in _select(db, level, words, n_docs)]


def _select(db: sqlite3.Connection, level: str, words: list[str], n_docs: int) -> list[tuple[str, str, int]]:
    """:func:`select_terms` with each word's stem and document frequency ("" and 0 when the index has no
    document frequencies)."""
    stems = _stemmer.stems(words)
    uniq = sorted(set(stems.values()))
    if not uniq:
        return []
    try:
        df = dict(db.execute(f"SELECT term, n FROM df_{level} WHERE term IN ({','.join('?' * len(uniq))})", uniq))
    except sqlite3.OperationalError:  # an index without document frequencies: score every word
        return [(w, "", 0) for w in words]
    known = sorted((w for w in words if df.get(stems.get(w, ""), 0) > 0), key=lambda w: df[stems[w]])
    cap = max(COMMON_MIN_DF, COMMON_FRACTION * n_docs)
    keep: list[tuple[str, str, int]] = []
    postings = 0
    for w in known:
        postings += df[stems[w]]
        if keep and postings > 4 * POSTING_BUDGET:
            break  # only very common words left: the rarest one(s) must do
        if len(keep) >= MIN_TERMS and (df[stems[w]] > cap or postings > POSTING_BUDGET or len(keep) >= MAX_SCORED_TERMS):
            break
        keep.append((w, stems[w], df[stems[w]]))
    return keep


def search(db: sqlite3.Connection, level: str, text: str, n: int, allowed: Optional[Selection] = None,
           n_docs: int = 0) -> list[tuple[int, float]]:
    """The best ``n`` documents of a level for a free-text query: (doc id, BM25 score, higher better),
    only documents ``allowed`` passes when it is given.

    A filter passing few documents for the query's postings (``IN_SQL_RATIO``) is checked inside SQL
    against the allowed ids, before BM25 is computed; a broader one is applied to BM25's ranking (a join
    of every match with ``docs`` cost hundreds of milliseconds at a million documents): the best
    ``n / share × OVERSAMPLE`` matches are checked against ``allowed``; when fewer than ``n`` of them
    pass and more matches exist, every match is scored and checked. A query left with one very common
    word reads its stored best documents (:func:`write_impacts`) when they hold ``n`` allowed ones. Every
    way, the answer is the exact (filtered) top ``n``.
    """
    words = query_terms(text)
    picked = _select(db, level, words, n_docs) if words and n_docs else [(w, "", 0) for w in words]
    if not picked or (allowed is not None and allowed.count == 0):
        return []
    if len(picked) == 1 and picked[0][1]:
        stored = _stored_top(db, level, picked[0][1], n, allowed)
        if stored is not None:
            return stored
    sql = _bm25_sql(level)
    expr = match_expr(w for w, _, _ in picked)
    if allowed is None:
        return [(int(r), float(s)) for r, s in db.execute(sql, (expr, n))]
    if allowed.count <= IN_SQL_RATIO * sum(df for _, _, df in picked):
        ids = allowed.derived("lexical_ids", lambda: json.dumps(allowed.ids.tolist()))  # kept with a cached filter
        return [(int(r), float(s)) for r, s in db.execute(_bm25_sql(level, restricted=True), (expr, ids, n))]
    limit = int(min(MAX_OVERSAMPLED, math.ceil(OVERSAMPLE * n / allowed.share)))
    rows = db.execute(sql, (expr, limit)).fetchall()
    passed = allowed.allows(np.fromiter((r for r, _ in rows), np.int64, len(rows)))
    if len(rows) == limit and np.count_nonzero(passed) < n:  # too few passed the filter: every match
        rows = db.execute(sql, (expr, -1)).fetchall()
        passed = allowed.allows(np.fromiter((r for r, _ in rows), np.int64, len(rows)))
    return [(int(rows[i][0]), float(rows[i][1])) for i in np.flatnonzero(passed)[:n]]  # rows in BM25 order


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to a published (immutable) lexical file."""
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)


def doc_rows(db: sqlite3.Connection, ids: list[int]) -> dict[int, dict]:
    """Ids, level and hit display data of documents."""
    out: dict[int, dict] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        q = f"SELECT doc, level, paper_id, figure_id, panel, meta FROM docs WHERE doc IN ({','.join('?' * len(chunk))})"
        for doc, level, pid, fid, panel, meta in db.execute(q, chunk):
            out[doc] = {"level": level, "paper_id": pid, "figure_id": fid, "panel": panel, "meta": json.loads(meta)}
    figs: dict[tuple[str, str], dict] = {}
    for row in out.values():
        if row["level"] == "panel":
            key = (row["paper_id"], row["figure_id"])
            if key not in figs:
                r = db.execute("SELECT meta FROM docs WHERE level='figure' AND paper_id=? AND figure_id=? "
                               "AND panel IS NULL", key).fetchone()
                figs[key] = json.loads(r[0]) if r else {}
            row["meta"] = {**{k: v for k, v in figs[key].items() if k in FIGURE_META}, **row["meta"]}
    return out


def find_doc(db: sqlite3.Connection, level: str, paper_id: str, figure_id: str, panel: Optional[str]) -> Optional[int]:
    row = db.execute("SELECT doc FROM docs WHERE level=? AND paper_id=? AND figure_id=? AND panel IS ?",
                     (level, paper_id, figure_id, panel)).fetchone()
    return None if row is None else int(row[0])

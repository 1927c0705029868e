"""Features of a query's top fused candidates, for the learned re-ranker (:mod:`figlink.index.rerank`).

One row per candidate, :data:`FEATURES` in order. Every feature is relative to the candidate list or
bounded (scores divided by the list's best, ranks as logs, overlaps as fractions), so a model trained on
one index applies to an index of another size. Groups:

- the retrievers: fused score and rank, BM25 score and rank, MiniLM cosine and rank;
- BM25 of each field alone (title, main = caption or subcaption, refs = citing sentences, OCR, shared);
- MiniLM cosine of the caption vector and of the citing-sentences vector separately;
- word overlap of the query with each field (plain, and weighted by the rarity of the word among the
  candidates), word pairs, numbers and entity-like tokens (``p53``, ``CD4``, ``IL-6``);
- the document's size (caption words, citing words);
- the paper around it: how many candidates share its paper, how strongly that paper matches overall,
  and the candidate's rank within its paper (a citing sentence is about one paper's figures);
- the query itself (length, the fused list's top margin), which a non-linear model can combine with the rest;
- the caption's head (its first sentence, the figure's title): query words it holds, its BM25;
- the candidate against the other candidates of its own paper (a citing sentence is about one of a
  paper's figures): its margin over the best sibling in fused score, field BM25, cosines and weighted word
  cover, and the share of the query's words that it holds and no sibling does.
"""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from figlink.index import lexical
from figlink.index.vectors import VectorSet

FIELD_NAMES = ("title", "main", "refs", "ocr", "shared")  # lexical.FIELDS order
FEATURES: tuple[str, ...] = (
    "fused_norm", "fused_log_rank", "lex_norm", "lex_log_rank", "lex_present", "dense_cos", "dense_gap",
    "dense_log_rank", "dense_present",
    *(f"bm25_{f}_norm" for f in FIELD_NAMES), *(f"bm25_{f}_log" for f in FIELD_NAMES),
    "cos_main", "cos_refs", "has_refs_vec",
    "cover_main", "cover_refs", "cover_title", "cover_ocr", "cover_shared", "cover_all",
    "wcover_main", "wcover_refs", "wcover_all", "pairs_main", "pairs_refs",
    "num_query", "num_cover", "ent_query", "ent_cover",
    "log_main_words", "log_refs_words",
    "paper_count", "paper_best", "paper_sum", "paper_rank", "figure_count", "figure_signal_log_rank",
    "query_log_terms", "top_margin",
    "head_cover", "bm25_head_log",
    "sib_fused_gap", "sib_main_gap", "sib_refs_gap", "sib_cos_main_gap", "sib_cos_refs_gap", "sib_wcover_gap",
    "sib_unique_wcover",
)
_WORD = re.compile(r"\w+", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]\d)")
_ENTITY = re.compile(r"\b(?=[\w-]*[A-Z])(?=[\w-]*(?:\d|[A-Z].*[A-Z]))[A-Za-z][\w-]*[A-Za-z0-9]\b")


@dataclass
class Candidate:
    """One fused candidate: document id, fused score and its key for grouping (paper, figure)."""

    doc: int
    fused: float
    paper_id: str
    figure_id: str
    figure_rank: Optional[int] = None  # panels: the rank of the panel's figure signal in the fusion


def _key(word: str) -> str:
    """A cheap stem for overlap counts: the first six characters of a lower-cased word."""
    return word[:6]


def _words(text: str) -> list[str]:
    return [_key(w) for w in _WORD.findall(text.lower()) if w not in lexical.STOPWORDS and (len(w) > 1 or w.isdigit())]


class _Matcher:
    """Finds the query's word keys (with counts), adjacent key pairs, numbers and entity tokens in a text
    with one regular-expression scan each (documents are never tokenised word by word)."""

    def __init__(self, query: str) -> None:
        words = _words(query)
        self.keys = sorted(set(words), key=len, reverse=True)
        self.pairs = set(zip(words, words[1:]))
        self.numbers = set(_NUMBER.findall(query))
        self.entities = set(_ENTITY.findall(query))
        alt = "|".join(re.escape(k) for k in self.keys)
        self._word = re.compile(rf"\b({alt})\w*", re.UNICODE) if self.keys else None
        self._num = re.compile(rf"(?<![\w.])(?:{'|'.join(re.escape(n) for n in sorted(self.numbers, key=len, reverse=True))})"
                               r"(?![\w.]\d|\d)") if self.numbers else None
        self._ent = re.compile(rf"\b(?:{'|'.join(re.escape(e) for e in sorted(self.entities, key=len, reverse=True))})\b") \
            if self.entities else None

    def scan(self, lower: str) -> tuple[dict[str, int], int]:
        """Counts of each query key in a lower-cased text, and how many query pairs occur in it as
        neighbours (only stop words or punctuation between them)."""
        if self._word is None:
            return {}, 0
        tf: dict[str, int] = {}
        pairs: set[tuple[str, str]] = set()
        prev: Optional[tuple[str, int]] = None
        for m in self._word.finditer(lower):
            k = m.group(1)
            tf[k] = tf.get(k, 0) + 1
            if prev is not None and (prev[0], k) in self.pairs:
                gap = lower[prev[1]:m.start()]
                if len(gap) < 40 and all(w in lexical.STOPWORDS for w in _WORD.findall(gap)):
                    pairs.add((prev[0], k))
            prev = (k, m.end())
        return tf, len(pairs)

    def number_count(self, text: str) -> int:
        return len(set(self._num.findall(text))) if self._num else 0

    def entity_count(self, text: str) -> int:
        return len(set(self._ent.findall(text))) if self._ent else 0


def key_idf(db: sqlite3.Connection, level: str, query: str, n_docs: int) -> dict[str, float]:
    """BM25 idf of each query key from the index's document frequencies (porter stems; 0 when unknown)."""
    words = [w for w in lexical.query_terms(query)]
    stems = lexical._stemmer.stems(words) if words else {}
    uniq = sorted(set(stems.values()))
    df: dict[str, int] = {}
    if uniq:
        try:
            df = dict(db.execute(f"SELECT term, n FROM df_{level} WHERE term IN ({','.join('?' * len(uniq))})", uniq))
        except sqlite3.OperationalError:
            df = {}
    out: dict[str, float] = {}
    for w in words:
        n = df.get(stems.get(w, ""), 0)
        idf = math.log(1 + (n_docs - n + 0.5) / (n + 0.5)) if n else 0.0
        out[_key(w)] = max(out.get(_key(w), 0.0), idf)
    return out


_HEAD_END = re.compile(r"(?<!\b[A-Za-z])[.!?](?:\s+(?=[A-Z(\[])|\s*$)")  # not after one letter ("E. coli")


def caption_head(text: str) -> str:
    """The first sentence of a caption (its title), or the whole text when it has one sentence; a stop
    in the first 12 characters ("Fig. 2.") or after a single letter ("E. coli") ends nothing."""
    m = _HEAD_END.search(text, 12)
    return text[:m.start()] if m else text


def _sibling_gaps(values: Sequence[float], groups: Sequence[Sequence[int]]) -> list[float]:
    """Each value minus the largest value of the other members of its group (0 when it has none)."""
    out = [0.0] * len(values)
    for idx in groups:
        if len(idx) < 2:
            continue
        top = sorted(((values[i], i) for i in idx), reverse=True)
        for i in idx:
            other = top[1][0] if top[0][1] == i else top[0][0]
            out[i] = values[i] - other
    return out


def _bm25(tf: dict[str, int], length: int, avg: float, gidf: dict[str, float]) -> float:
    """BM25 of one text (k1 1.2, b 0.75) from its query-word counts ``tf``, its length and the mean length."""
    return sum(gidf.get(k, 0.0) * t * 2.2 / (t + 1.2 * (0.25 + 0.75 * length / avg)) for k, t in tf.items())


def _log_rank(r: Optional[int], n: int) -> float:
    return math.log1p(r if r is not None else n + 1)


def field_texts(db: sqlite3.Connection, level: str, docs: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """Each document's field texts (FIELD_NAMES order)."""
    q = (f"SELECT rowid, {', '.join(FIELD_NAMES)} FROM fts_{level} "
         f"WHERE rowid IN ({','.join('?' * len(docs))})")
    return {int(r[0]): tuple(x or "" for x in r[1:]) for r in db.execute(q, list(docs))}


def dense_rows(vectors: Optional[VectorSet], qvec: Optional[np.ndarray], docs: Sequence[int]
               ) -> dict[int, tuple[float, float, bool]]:
    """(cosine of the first vector, cosine of the second or of the first, has a second) per document."""
    if vectors is None or qvec is None or len(vectors.docs) == 0:
        return {}
    out: dict[int, tuple[float, float, bool]] = {}
    pos = np.searchsorted(vectors.docs, np.asarray(docs, dtype=np.int64))
    n_rows = len(vectors.vec)
    for d, i in zip(docs, pos):
        if i >= len(vectors.docs) or vectors.docs[i] != d:
            continue
        start = int(vectors.starts[i])
        end = int(vectors.starts[i + 1]) if i + 1 < len(vectors.starts) else n_rows
        sims = np.asarray(vectors.vec[start:end], dtype=np.float32) @ qvec
        out[d] = (float(sims[0]), float(sims[-1]), end - start > 1)
    return out


def features(db: sqlite3.Connection, vectors: Optional[VectorSet], level: str, query: str,
             qvec: Optional[np.ndarray], cands: Sequence[Candidate], scored: dict[str, list[tuple[int, float]]],
             n_docs: int) -> np.ndarray:
    """The feature matrix [len(cands), len(FEATURES)] of a query's candidates (fused order).

    ``scored`` holds each retriever's own (doc, score) list for this level; ``n_docs`` is the level's
    document count (for the idf of query words).
    """
    n = len(cands)
    X = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if n == 0:
        return X
    docs = [c.doc for c in cands]
    lex = {d: (r, s) for r, (d, s) in enumerate(scored.get("lexical", []), 1)}
    den = {d: (r, s) for r, (d, s) in enumerate(scored.get("text_dense", []), 1)}
    n_lex, n_den = len(scored.get("lexical", [])), len(scored.get("text_dense", []))
    lex_top = max((s for _, s in lex.values()), default=0.0) or 1.0
    texts = field_texts(db, level, docs)
    gidf = key_idf(db, level, query, n_docs)
    dense = dense_rows(vectors, qvec, docs)
    dense_top = max((v[0] if not v[2] else max(v[0], v[1]) for v in dense.values()), default=0.0)
    fused_top = cands[0].fused or 1.0

    qm = _Matcher(query)
    q_set = set(qm.keys)
    empty = ("",) * len(FIELD_NAMES)
    lowered = {d: [t.lower() for t in texts.get(d, empty)] for d in docs}
    scans = {d: [qm.scan(t) for t in lowered[d]] for d in docs}
    doc_sets = {d: [set(tf) for tf, _ in sc] for d, sc in scans.items()}
    # BM25 of each field alone (k1 1.2, b 0.75; field lengths relative to the candidates' mean)
    lengths = {d: [len(t.split()) for t in texts.get(d, empty)] for d in docs}
    avg = [max(1.0, sum(lengths[d][j] for d in docs) / n) for j in range(len(FIELD_NAMES))]
    bm = {d: [_bm25(scans[d][j][0], lengths[d][j], avg[j], gidf) for j in range(len(FIELD_NAMES))] for d in docs}
    bm_top = [max((bm[d][j] for d in docs), default=0.0) or 1.0 for j in range(len(FIELD_NAMES))]
    # rarity of each query word among the candidates (a word every candidate holds says little)
    df = {w: sum(1 for d in docs if any(w in s for s in doc_sets[d])) for w in q_set}
    idf = {w: math.log1p(n / (1 + df[w])) for w in q_set}
    idf_sum = sum(idf.values()) or 1.0

    per_paper: dict[str, list[int]] = {}
    per_figure: dict[tuple[str, str], int] = {}
    for i, c in enumerate(cands):
        per_paper.setdefault(c.paper_id, []).append(i)
        per_figure[(c.paper_id, c.figure_id)] = per_figure.get((c.paper_id, c.figure_id), 0) + 1
    paper_rank = {}
    for idx in per_paper.values():
        for r, i in enumerate(idx, 1):
            paper_rank[i] = r
    margin = (cands[0].fused - cands[1].fused) / fused_top if n > 1 else 1.0
    heads = {d: caption_head(texts.get(d, empty)[1]).lower() for d in docs}
    head_tf = {d: qm.scan(heads[d])[0] for d in docs}
    head_len = {d: len(heads[d].split()) for d in docs}
    head_avg = max(1.0, sum(head_len.values()) / n)
    head_bm = {d: _bm25(head_tf[d], head_len[d], head_avg, gidf) for d in docs}
    unions = [q_set & set().union(*doc_sets[c.doc][1:4]) for c in cands]  # query words in main, refs, ocr
    wcover = [sum(idf[w] for w in u) / idf_sum for u in unions]
    groups = list(per_paper.values())
    dn = [dense.get(c.doc, (0.0, 0.0, False)) for c in cands]
    sib = {
        "sib_fused_gap": _sibling_gaps([c.fused / fused_top for c in cands], groups),
        "sib_main_gap": _sibling_gaps([math.log1p(bm[c.doc][1]) for c in cands], groups),
        "sib_refs_gap": _sibling_gaps([math.log1p(bm[c.doc][2]) for c in cands], groups),
        "sib_cos_main_gap": _sibling_gaps([v[0] for v in dn], groups),
        "sib_cos_refs_gap": _sibling_gaps([v[1] if v[2] else 0.0 for v in dn], groups),
        "sib_wcover_gap": _sibling_gaps(wcover, groups),
    }
    unique = [0.0] * n
    for idx in groups:
        for i in idx:
            others = set().union(*(unions[j] for j in idx if j != i))
            unique[i] = sum(idf[w] for w in unions[i] - others) / idf_sum

    for i, c in enumerate(cands):
        d = c.doc
        f: dict[str, float] = {}
        f["fused_norm"] = c.fused / fused_top
        f["fused_log_rank"] = math.log1p(i + 1)
        lr, ls = lex.get(d, (None, 0.0))
        f["lex_norm"], f["lex_log_rank"], f["lex_present"] = ls / lex_top, _log_rank(lr, n_lex), float(lr is not None)
        cm, cr, has2 = dense.get(d, (0.0, 0.0, False))
        best = max(cm, cr)
        dr, _ = den.get(d, (None, 0.0))
        f["dense_cos"], f["dense_gap"] = best, dense_top - best
        f["dense_log_rank"], f["dense_present"] = _log_rank(dr, n_den), float(dr is not None)
        fb = bm[d]
        for j, name in enumerate(FIELD_NAMES):
            f[f"bm25_{name}_norm"] = fb[j] / bm_top[j]
            f[f"bm25_{name}_log"] = math.log1p(fb[j])
        f["cos_main"], f["cos_refs"], f["has_refs_vec"] = cm, cr if has2 else 0.0, float(has2)
        sets = doc_sets[d]
        nq = len(q_set) or 1
        for j, name in enumerate(FIELD_NAMES):
            f[f"cover_{name}"] = len(q_set & sets[j]) / nq
        f["cover_all"] = len(unions[i]) / nq
        f["wcover_main"] = sum(idf[w] for w in q_set & sets[1]) / idf_sum
        f["wcover_refs"] = sum(idf[w] for w in q_set & sets[2]) / idf_sum
        f["wcover_all"] = wcover[i]
        npairs = len(qm.pairs) or 1
        f["pairs_main"] = scans[d][1][1] / npairs
        f["pairs_refs"] = scans[d][2][1] / npairs
        body = " ".join(texts.get(d, empty)[1:4])
        f["num_query"] = math.log1p(len(qm.numbers))
        f["num_cover"] = qm.number_count(body) / len(qm.numbers) if qm.numbers else 0.0
        f["ent_query"] = math.log1p(len(qm.entities))
        f["ent_cover"] = qm.entity_count(body) / len(qm.entities) if qm.entities else 0.0
        f["log_main_words"] = math.log1p(lengths[d][1])
        f["log_refs_words"] = math.log1p(lengths[d][2])
        same = per_paper[c.paper_id]
        f["paper_count"] = math.log1p(len(same))
        f["paper_best"] = cands[same[0]].fused / fused_top
        f["paper_sum"] = sum(cands[k].fused for k in same) / fused_top
        f["paper_rank"] = math.log1p(paper_rank[i])
        f["figure_count"] = math.log1p(per_figure[(c.paper_id, c.figure_id)])
        f["figure_signal_log_rank"] = _log_rank(c.figure_rank, n) if level == "panel" else 0.0
        f["query_log_terms"] = math.log1p(len(q_set))
        f["top_margin"] = margin
        f["head_cover"] = len(q_set & set(head_tf[d])) / nq
        f["bm25_head_log"] = math.log1p(head_bm[d])
        for name, vals in sib.items():
            f[name] = vals[i]
        f["sib_unique_wcover"] = unique[i]
        X[i] = [f[name] for name in FEATURES]
    return X

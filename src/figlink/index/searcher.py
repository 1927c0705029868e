"""Searching a published index: lexical and dense candidates per level, fused (figures: a weighted sum of
scores; panels: reciprocal rank).
Panel search adds the figure-level ranking as a third signal, so a panel's figure context counts.
When a learned re-ranker is present (:mod:`figlink.index.rerank`; shipped by default) it re-orders the
best fused candidates of each level; ``rerank=False`` turns it off.

A :class:`Searcher` follows the corpus's ``CURRENT`` version: each query checks it and, when a new
version is published, loads it whole before switching, so a query always runs on one complete version.
Safe to share between threads.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np

from figlink.errors import InputError
from figlink.index import columns, image as image_mod, lexical, rerank as rerank_mod, store
from figlink.index.columns import Columns, FigurePanels
from figlink.index.embed import Embedder, default_embedder, encode_query
from figlink.index.filter_cache import FilterCache
from figlink.index.filters import Filters
from figlink.index.selection import Selection
from figlink.index.fusion import rrf, weighted_scores
from figlink.index.vectors import VectorSet

MAX_QUERY_CHARS = 1000
MAX_K = 1000
CANDIDATES = 100  # per signal, before fusion
QUERY_CACHE = 1024  # query embeddings remembered per searcher
RETRY_LOAD_S = 5.0  # a version that failed to load in the background is tried again after this
# MiniLM is general-domain: the weaker signal on papers. "figure" (panel level only) ranks panels by how
# well their whole figure matches (all its citing sentences, caption, OCR), then by their own match.
SIGNAL_WEIGHTS = {"lexical": 1.0, "text_dense": 0.5, "figure": 1.0}
# Figures are ranked by a weighted sum instead: BM25 scaled to the best hit plus the cosine similarity.
# On the benchmark task (citing sentence → figure) this beats RRF (0.58 vs 0.54 R@1): BM25's margin over
# the runner-up carries information that ranks throw away.
# "image" (when the index has an image signal, figlink.index.image): the cosine of the query, carried into
# the image–text matcher's space, with the figure's image vector (pixels + the text read in it).
FIGURE_WEIGHTS = {"lexical": 1.0, "text_dense": 1.0, "image": 1.0}
FIGURE_SCALE = {"lexical": "max", "text_dense": "raw", "image": "raw"}


class IndexMissing(FileNotFoundError):
    """The corpus has no published index yet."""


@dataclass
class Hit:
    """One search result; ``panel`` is the panel letter (None: the whole figure)."""

    rank: int
    score: float
    level: str
    paper_id: str
    figure_id: str
    panel: Optional[str]
    label: Optional[str]
    caption: str
    image: Optional[str]
    title: Optional[str] = None
    year: Optional[int] = None
    figure_type: Optional[str] = None
    is_medical: Optional[bool] = None
    subcaption: Optional[str] = None
    subcaption_spans: list = field(default_factory=list)
    bbox: Optional[list] = None
    refs: list = field(default_factory=list)
    signals: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Version:
    name: str
    manifest: dict
    db: Any
    vectors: dict[str, VectorSet]
    cols: dict[str, Columns]
    panels_of: FigurePanels  # figure doc → its panel docs
    image: Optional[image_mod.ImageIndex] = None  # the image signal of figure documents, when built
    lock: threading.Lock = field(default_factory=threading.Lock)
    facets: Optional[dict] = None  # computed on first use
    selections: FilterCache = field(default_factory=FilterCache)  # filters resolved on this version


def _load(root: Path, name: str) -> _Version:
    folder = root / name
    manifest = store.read_manifest(folder)
    db = lexical.open_readonly(folder / "lexical.sqlite")
    vectors = {lv: VectorSet.load(folder, lv) for lv in lexical.LEVELS} if manifest.get("dense") else {}
    if any(v.ann is not None for v in vectors.values()):
        import faiss

        faiss.omp_set_num_threads(1)  # one query probes a few lists: threads only add contention
    cols, panels_of = columns.load(folder, db)
    image = image_mod.load(folder) if "image" in manifest.get("signals", ()) else None
    return _Version(name, manifest, db, vectors, cols, panels_of, image)


def validate_query(query: Any, k: Any, level: Any) -> tuple[str, int, str]:
    """Checked query text, k and level, or an :class:`InputError` saying what is wrong."""
    if not isinstance(query, str) or not query.strip():
        raise InputError("the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InputError(f"the query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InputError(f"k must be an integer from 1 to {MAX_K}, not {k!r}")
    if level not in lexical.LEVELS:
        raise InputError(f"level must be one of {', '.join(lexical.LEVELS)}, not {level!r}")
    return query.strip(), k, level


class Searcher:
    """Searches the index of one corpus; reloads when a newer version is published.

    By default the first query after a publish loads the new version before it answers.
    ``reload_in_background`` (the server) instead keeps answering from the loaded version while one
    thread loads the new one, and switches when it is complete: no query waits for a load.
    ``rerankers`` maps a level to its re-ranker model (absent or None: none for that level); left out,
    the models shipped in the package are used. ``image_signal=False`` leaves out the index's image
    signal (:mod:`figlink.index.image`) where it has one.
    """

    def __init__(self, corpus_dir: str | Path, embedder: Optional[Embedder] = None,
                 rerankers: Optional[Mapping[str, Any]] = None, *, reload_in_background: bool = False,
                 image_signal: bool = True) -> None:
        self.corpus_dir = Path(corpus_dir)
        self.image_signal = image_signal  # use the index's image signal when it has one
        self._rerankers = rerankers
        self.root = store.index_dir(corpus_dir)
        self._embedder = embedder
        self._version: Optional[_Version] = None
        self._reload = threading.Lock()
        self.reload_in_background = reload_in_background
        self._loader: Optional[threading.Thread] = None
        self._loader_lock = threading.Lock()
        self._failed: tuple[Optional[str], float] = (None, 0.0)
        self._query_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

    def _embedder_for(self, v: _Version) -> Optional[Embedder]:
        if not v.manifest.get("dense"):
            return None
        if self._embedder is None:
            self._embedder = default_embedder()
        if self._embedder is None or self._embedder.name != v.manifest["dense"]:
            return None  # index built with another model: dense signal off, lexical still works
        return self._embedder

    def version(self) -> _Version:
        """The current version, loading it when it changed."""
        for _ in range(5):
            name = store.current(self.root)
            if name is None:
                raise IndexMissing(f"no search index in {self.corpus_dir}; run `figlink index --corpus "
                                   f"{self.corpus_dir}`")
            v = self._version
            if v is not None and v.name == name:
                return v
            if v is not None and self.reload_in_background:
                self._load_later(name)
                return v
            with self._reload:
                if self._version is None or self._version.name != name:
                    try:
                        self._version = _load(self.root, name)
                    except (FileNotFoundError, OSError):
                        continue  # replaced while loading: read CURRENT again
                return self._version
        raise IndexMissing(f"the index in {self.corpus_dir} kept changing while loading; try again")

    def _query_vector(self, emb: Embedder, query: str) -> np.ndarray:
        """The query's embedding; the last QUERY_CACHE queries are remembered (paging through results or
        changing a filter repeats a query, and embedding it is the largest cost of a search)."""
        key = (emb.name, query)
        with self._cache_lock:
            v = self._query_cache.get(key)
            if v is not None:
                self._query_cache.move_to_end(key)
                return v
        v = encode_query(emb, query)
        with self._cache_lock:
            self._query_cache[key] = v
            while len(self._query_cache) > QUERY_CACHE:
                self._query_cache.popitem(last=False)
        return v

    def _load_later(self, name: str) -> None:
        """Start loading version ``name`` in a thread unless one is loading already (or loading it failed
        less than RETRY_LOAD_S ago)."""
        with self._loader_lock:
            if self._loader is not None and self._loader.is_alive():
                return
            failed_name, failed_at = self._failed
            if failed_name == name and time.monotonic() - failed_at < RETRY_LOAD_S:
                return
            self._loader = threading.Thread(target=self._load_into, args=(name,), name="figlink-index-load",
                                            daemon=True)
            self._loader.start()

    def _load_into(self, name: str) -> None:
        try:
            v = _load(self.root, name)
        except Exception:  # noqa: BLE001 - e.g. removed while loading; queries go on from the loaded version
            self._failed = (name, time.monotonic())
            return
        with self._reload:
            if self._version is None or self._version.name < name:
                self._version = v

    def _scored(self, v: _Version, level: str, query: str, qvec: Optional[np.ndarray], sel: Optional[Selection],
                n: int) -> dict[str, list[tuple[int, float]]]:
        """Each signal's best ``n`` documents of one level with their scores (higher is better), only
        documents ``sel`` allows when it is given."""
        scored: dict[str, list[tuple[int, float]]] = {}
        with v.lock:  # one sqlite connection per version
            scored["lexical"] = lexical.search(v.db, level, query, n, sel, len(v.cols[level]))
        if qvec is not None and len(v.vectors[level].docs):
            vs = v.vectors[level]
            rows = None if sel is None else sel.derived("text_dense", lambda: vs.restrict(sel.mask))
            scored["text_dense"] = vs.top(qvec, n, rows=rows)
        if level == "figure" and qvec is not None and v.image is not None and self.image_signal:
            scored["image"] = v.image.top(qvec, n, sel)
        return scored

    def stats(self) -> dict:
        v = self.version()
        return {"version": v.name, "figures": v.manifest["counts"]["figure"], "panels": v.manifest["counts"]["panel"],
                "papers": len(v.manifest["papers"]), "signals": v.manifest["signals"]}

    def search(self, query: str, k: int = 10, level: str = "figure",
               filters: Filters | Mapping[str, Any] | None = None, rerank: bool = True) -> list[Hit]:
        """The best ``k`` documents of ``level`` for ``query``, best first."""
        return self.search_page(query, k=k, level=level, filters=filters, rerank=rerank).hits

    def _reranked(self, v: _Version, level: str, query: str, qvec: Optional[np.ndarray], fused: list,
                  scored: dict, on: bool) -> list:
        """``fused`` re-ordered by the level's re-ranker, when there is one and ``on``."""
        if not on or qvec is None:  # the models learned with the dense signal: without it, fusion alone
            return fused
        model = (self._rerankers or {}).get(level) if self._rerankers is not None else rerank_mod.default_model(level)
        if model is None:
            return fused
        return rerank_mod.rerank(model, v.db, v.lock, v.vectors.get(level), level, query, qvec, fused, scored,
                                 v.cols[level], v.panels_of, len(v.cols[level]))

    def search_page(self, query: str, k: int = 10, level: str = "figure",
                    filters: Filters | Mapping[str, Any] | None = None, offset: int = 0, rerank: bool = True
                    ) -> "Page":
        """Hits ``offset+1`` to ``offset+k`` of the ranking (``offset + k`` at most ``MAX_K``), and its size.

        Each signal contributes its best ``depth`` candidates, ``depth`` the first of 100, 200, 400, …
        (at most ``MAX_K``) that covers the page, so the pages within one depth come from one ranking.
        """
        query, k, level = validate_query(query, k, level)
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_K - k:
            raise InputError(f"offset must be an integer from 0 to {MAX_K} - k = {MAX_K - k}, not {offset!r}")
        f = filters if isinstance(filters, Filters) else Filters.from_mapping(filters)
        v = self.version()
        n = CANDIDATES
        while n < offset + k:
            n *= 2
        n = min(n, MAX_K)
        emb = self._embedder_for(v)
        qvec = self._query_vector(emb, query) if emb is not None else None
        lists: list[list] = []
        sel = {lv: _selection(v, lv, f) for lv in (("figure",) if level == "figure" else lexical.LEVELS)}
        if level == "figure":
            scored = self._scored(v, "figure", query, qvec, sel["figure"], n)
            lists.extend(scored.values())
            fused = self._reranked(v, "figure", query, qvec, weighted_scores(scored, FIGURE_WEIGHTS, FIGURE_SCALE),
                                   scored, rerank)
        else:
            scored = self._scored(v, "panel", query, qvec, sel["panel"], n)
            fig_scored = self._scored(v, "figure", query, qvec, sel["figure"], n)
            lists.extend([*scored.values(), *fig_scored.values()])
            rankings = {name: [d for d, _ in items] for name, items in scored.items()}
            figs = self._reranked(v, "figure", query, qvec, weighted_scores(fig_scored, FIGURE_WEIGHTS, FIGURE_SCALE),
                                  fig_scored, rerank)
            rankings["figure"] = _panels_by_figure(v, [d for d, _, _ in figs], rrf(rankings, SIGNAL_WEIGHTS))
            fused = self._reranked(v, "panel", query, qvec, rrf(rankings, SIGNAL_WEIGHTS), scored, rerank)
        level_sel = sel[level]
        allowed = len(v.cols[level]) if level_sel is None else level_sel.count
        # exact when no signal was cut off (nothing else can match) or every allowed document is ranked
        exact = all(len(items) < n for items in lists) or len(fused) >= allowed
        total = min(len(fused), MAX_K)
        page = fused[offset:offset + k]
        with v.lock:
            rows = lexical.doc_rows(v.db, [d for d, _, _ in page])
        hits = [_hit(i, score, ranks, rows[d]) for i, (d, score, ranks) in enumerate(page, offset + 1) if d in rows]
        return Page(hits, offset, total, exact and len(fused) <= MAX_K)

    def facets(self) -> dict[str, Any]:
        """What the figures of the current index can be filtered by: figure types (with counts), the year
        range, and how many figures are medical, non-medical or unknown, and openly licensed."""
        v = self.version()
        if v.facets is None:
            cols = v.cols["figure"]
            counts = np.bincount(cols.figure_type[cols.figure_type >= 0], minlength=len(cols.figure_types))
            types = Counter({t: int(c) for t, c in zip(cols.figure_types, counts) if t and c})
            years = cols.year[cols.year > 0]
            v.facets = {
                "figures": len(cols),
                "figure_type": [{"label": t, "figures": c} for t, c in sorted(types.items(), key=lambda x: (-x[1], x[0]))],
                "year": {"min": int(years.min()), "max": int(years.max())} if len(years) else None,
                "is_medical": {"true": int((cols.medical == 1).sum()), "false": int((cols.medical == 0).sum()),
                               "unknown": int((cols.medical < 0).sum())},
                "open": {"true": int((cols.open == 1).sum()), "false": int((cols.open == 0).sum())}}
        return v.facets


@dataclass
class Page:
    """One page of a ranking: its hits, where it starts, and how many hits the ranking holds (``total``,
    at most ``MAX_K``; a lower bound unless ``total_exact``)."""

    hits: list[Hit]
    offset: int
    total: int
    total_exact: bool

    @property
    def next_offset(self) -> Optional[int]:
        end = self.offset + len(self.hits)
        return end if end < self.total and self.hits else None


def _selection(v: _Version, level: str, f: Filters) -> Optional[Selection]:
    """What ``f`` allows of one level (None: everything); resolved once per version (``v.selections``)."""
    if f.empty():
        return None

    def build() -> Optional[Selection]:
        mask = f.mask(v.cols[level])
        return None if mask is None else Selection(v.cols[level].doc, mask)

    return v.selections.get(level, f, build)


def _panels_by_figure(v: _Version, figures: list[int], panels: list[tuple[int, float, dict]]) -> list[int]:
    """Panel documents in the order of their figures' ranking (within a figure: the panel ranking)."""
    order = {d: i for i, (d, _, _) in enumerate(panels)}
    out: list[int] = []
    for fig in figures:
        out.extend(sorted(v.panels_of.get(fig).tolist(), key=lambda d: (order.get(d, len(order)), d)))
    return out


def _hit(rank: int, score: float, ranks: dict, row: dict) -> Hit:
    m = row["meta"]
    return Hit(rank=rank, score=round(score, 6), level=row["level"], paper_id=row["paper_id"],
               figure_id=row["figure_id"], panel=row["panel"], label=m.get("label"), caption=m.get("caption", ""),
               image=m.get("image"), title=m.get("title"), year=m.get("year"), figure_type=m.get("figure_type"),
               is_medical=m.get("medical"), subcaption=m.get("subcaption"), subcaption_spans=m.get("spans", []),
               bbox=m.get("bbox"), refs=m.get("refs", []), signals=ranks)


_searchers: dict[Path, Searcher] = {}
_searchers_lock = threading.Lock()


def search(query: str, corpus: str | Path, k: int = 10, level: str = "figure",
           filters: Filters | Mapping[str, Any] | None = None, rerank: bool = True) -> list[Hit]:
    """Search a corpus's index (one cached :class:`Searcher` per corpus folder)."""
    key = Path(corpus).resolve()
    with _searchers_lock:
        s = _searchers.setdefault(key, Searcher(key))
    return s.search(query, k=k, level=level, filters=filters, rerank=rerank)

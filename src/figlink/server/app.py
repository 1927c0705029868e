"""The REST API and web page of ``figlink serve`` (FastAPI).

Routes: ``/api/health``, ``/api/search`` (GET: text; POST: an image, :mod:`figlink.server.image_search`), ``/api/facets``, ``/api/papers/{paper_id}/figures/{figure_id}``
(+ ``/image``, ``/panels/{label}``, ``/panels/{label}/image``), the page at ``/`` and the OpenAPI schema at
``/openapi.json`` (``/docs``). Bad input gets a 4xx with a one-line reason: the query length, ``k``,
``offset``, the level and the filter names are bounded and checked; ids (any stored id, each
percent-encoded as one path segment) are matched against the corpus; images come from the corpus records
only and are decoded within a memory budget (:mod:`figlink.server.images`). Every answer carries a
Content-Security-Policy and the other security headers (:mod:`figlink.server.middleware`).
"""

from __future__ import annotations

import base64
import hashlib
import re
from importlib import resources
from pathlib import Path
from typing import Optional

from fastapi import FastAPI, HTTPException, Path as PathParam, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, JSONResponse, Response

from figlink import __version__
from figlink.errors import InputError
from figlink.index.searcher import MAX_K, MAX_QUERY_CHARS, IndexMissing, Searcher
from figlink.server.image_search import mount as mount_image_search
from figlink.server.images import WEB_FORMATS, ImageStore, ImageUnavailable
from figlink.server.middleware import PAGE_CSP, RawIdPaths, SecurityHeaders, decode_id
from figlink.server.records import IMAGE_TYPES, CorpusReader, figure_record, figure_url, panel_record

ID_CHARS = 1000  # longest id segment, percent-encoded
LABEL = r"^[A-Za-z0-9]{1,4}$"
SEARCH_PARAMS = {"q", "k", "offset", "level", "figure_type", "is_medical", "medical", "open", "year_min",
                 "year_max", "paper_id", "rerank"}
STATIC = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
          "style.css": "text/css; charset=utf-8", "favicon.svg": "image/svg+xml"}
CACHE_IMAGES = "public, max-age=3600"
SWAGGER_CDN = "https://cdn.jsdelivr.net"


def _static() -> dict[str, bytes]:
    folder = resources.files("figlink.server") / "static"
    return {name: (folder / name).read_bytes() for name in STATIC}


def _docs_page() -> tuple[bytes, str]:
    """The Swagger UI page (its assets come from a CDN, so it needs a network) and its CSP, which allows
    that CDN and the page's one inline script by its hash."""
    html = bytes(get_swagger_ui_html(openapi_url="/openapi.json", title="figlink API").body)
    scripts = re.findall(rb"<script>(.*?)</script>", html, re.S)
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s).digest()).decode()}'" for s in scripts)
    csp = (f"default-src 'self'; script-src 'self' {SWAGGER_CDN} {hashes}; style-src 'self' {SWAGGER_CDN}; "
           f"img-src 'self' data: https://fastapi.tiangolo.com; connect-src 'self'; object-src 'none'; "
           f"base-uri 'none'; frame-ancestors 'none'")
    return html, csp


def create_app(corpus_dir: str | Path, searcher: Optional[Searcher] = None,
               images: Optional[ImageStore] = None) -> FastAPI:
    """The app serving one corpus (its index is followed as new versions are published)."""
    reader = CorpusReader(corpus_dir)
    search = searcher or Searcher(reader.root, reload_in_background=True)
    store = images or ImageStore()
    static = _static()
    docs_html, docs_csp = _docs_page()
    app = FastAPI(title="figlink", version=__version__, docs_url=None, redoc_url=None,
                  description="Figure- and panel-level search over a figlink corpus.")
    app.add_middleware(SecurityHeaders, csp_for=lambda path: docs_csp if path == "/docs" else PAGE_CSP)
    app.add_middleware(RawIdPaths, prefix="/api/papers/")

    @app.exception_handler(InputError)
    async def _bad_input(request: Request, exc: InputError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    @app.exception_handler(ImageUnavailable)
    async def _no_image(request: Request, exc: ImageUnavailable) -> JSONResponse:
        return JSONResponse({"detail": f"the stored image cannot be served: {exc}"}, status_code=422)

    @app.exception_handler(IndexMissing)
    async def _no_index(request: Request, exc: IndexMissing) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=503)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        msgs = [f"{'.'.join(str(x) for x in e.get('loc', [])[1:])}: {e.get('msg')}" for e in exc.errors()]
        return JSONResponse({"detail": "; ".join(msgs) or "invalid request"}, status_code=422)

    def _image_size(rel: Optional[str]) -> Optional[list[int]]:
        """[width, height] of a stored image from its header; None when there is none or it is unreadable."""
        path = reader.image_file(rel)
        if path is None:
            return None
        try:
            info = store.info(path)
        except ImageUnavailable:
            return None
        return [info.width, info.height]

    def _with_urls(hit: dict) -> dict:
        """A hit record with the URLs of its figure and image and the image's size."""
        base = figure_url(hit["paper_id"], hit["figure_id"])
        return {**hit, "image_url": f"{base}/image" if hit["image"] else None, "figure_url": base,
                "image_size": _image_size(hit["image"])}

    # what the page and clients may offer: search by image needs the matcher (figlink[learn])
    features = {"image_search": mount_image_search(app, reader.root, _with_urls, MAX_K)}

    @app.get("/api/health", summary="Liveness, index summary and the page's features")
    def health() -> dict:
        try:
            idx = search.stats()
        except IndexMissing as e:
            return {"status": "no-index", "detail": str(e), "version": __version__, "features": features}
        return {"status": "ok", "version": __version__, "index": idx, "features": features}

    @app.get("/api/search", summary="Search figures or panels")
    def api_search(request: Request,
                   q: str = Query(..., min_length=1, max_length=MAX_QUERY_CHARS, description="Free-text query"),
                   k: int = Query(10, ge=1, le=MAX_K, description="Hits per page"),
                   offset: int = Query(0, ge=0, lt=MAX_K, description=f"Hits to skip; offset + k ≤ {MAX_K}"),
                   level: str = Query("figure", pattern="^(figure|panel)$"),
                   figure_type: Optional[str] = Query(None, max_length=500,
                                                      description="Comma-separated figure types"),
                   is_medical: Optional[bool] = Query(None), medical: Optional[bool] = Query(
                       None, description="Same as is_medical"),
                   open: Optional[bool] = Query(None),
                   year_min: Optional[int] = Query(None, ge=1, le=9999),
                   year_max: Optional[int] = Query(None, ge=1, le=9999),
                   paper_id: Optional[str] = Query(None, max_length=ID_CHARS),
                   rerank: bool = Query(True, description="Re-order the best hits with the learned re-ranker")) -> dict:
        unknown = sorted(set(request.query_params) - SEARCH_PARAMS)
        if unknown:
            raise InputError(f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(SEARCH_PARAMS))}")
        if not q.strip():
            raise InputError("the query is empty")
        if offset + k > MAX_K:
            raise InputError(f"offset + k is {offset + k}; the ranking is cut at {MAX_K}")
        if is_medical is not None and medical is not None and is_medical != medical:
            raise InputError("is_medical and medical disagree (they are the same filter)")
        filters = {"figure_type": figure_type, "is_medical": medical if is_medical is None else is_medical,
                   "open": open, "year_min": year_min, "year_max": year_max, "paper_id": paper_id}
        page = search.search_page(q, k=k, level=level, filters=filters, offset=offset, rerank=rerank)
        out = [_with_urls(h.to_dict()) for h in page.hits]
        return {"query": q, "level": level, "k": k, "offset": offset, "total": page.total,
                "total_exact": page.total_exact, "next_offset": page.next_offset, "hits": out}

    @app.get("/api/facets", summary="Figure types, year range and counts to filter by")
    def facets() -> dict:
        return search.facets()

    def _figure(paper_id: str, figure_id: str):
        paper_id, figure_id = decode_id(paper_id), decode_id(figure_id)
        paper, fig = reader.figure(paper_id, figure_id)
        if paper is None:
            raise HTTPException(404, f"no paper {paper_id!r}")
        if fig is None:
            raise HTTPException(404, f"paper {paper_id!r} has no figure {figure_id!r}")
        return paper, fig

    ids = {"paper_id": PathParam(..., max_length=ID_CHARS, description="Paper id, percent-encoded"),
           "figure_id": PathParam(..., max_length=ID_CHARS, description="Figure id, percent-encoded")}

    @app.get("/api/papers/{paper_id}/figures/{figure_id}", summary="A figure record")
    def get_figure(paper_id: str = ids["paper_id"], figure_id: str = ids["figure_id"]) -> dict:
        paper, fig = _figure(paper_id, figure_id)
        rec = figure_record(paper, fig)
        rec["image_size"] = _image_size(fig.image)
        return rec

    @app.get("/api/papers/{paper_id}/figures/{figure_id}/panels/{label}", summary="A panel record")
    def get_panel(paper_id: str = ids["paper_id"], figure_id: str = ids["figure_id"],
                  label: str = PathParam(..., pattern=LABEL)) -> dict:
        paper, fig = _figure(paper_id, figure_id)
        rec = panel_record(paper, fig, label.lower())
        if rec is None:
            raise HTTPException(404, f"figure {fig.figure_id!r} of {paper.paper_id!r} has no panel {label!r}")
        return rec

    @app.get("/api/papers/{paper_id}/figures/{figure_id}/image", summary="The figure image",
             response_class=FileResponse)
    def get_image(paper_id: str = ids["paper_id"], figure_id: str = ids["figure_id"],
                  max_side: Optional[int] = Query(None, ge=16, le=4096,
                                                  description="Longest side wanted (a downscaled copy)")):
        paper, fig = _figure(paper_id, figure_id)
        p = reader.image_path(fig)
        if p is None:
            raise HTTPException(404, f"figure {fig.figure_id!r} of {paper.paper_id!r} has no image in the corpus")
        copy = store.rendered_image(p, max_side)
        headers = {"cache-control": CACHE_IMAGES}
        if copy is None:
            media = WEB_FORMATS.get(store.info(p).format, IMAGE_TYPES[p.suffix.lower()])
            return FileResponse(p, media_type=media, headers=headers)
        return Response(copy[0], media_type=copy[1], headers=headers)

    @app.get("/api/papers/{paper_id}/figures/{figure_id}/panels/{label}/image", summary="A panel crop (PNG)")
    def get_panel_image(paper_id: str = ids["paper_id"], figure_id: str = ids["figure_id"],
                        label: str = PathParam(..., pattern=LABEL)) -> Response:
        paper, fig = _figure(paper_id, figure_id)
        box = next((p for p in fig.panels if p.label and p.label.lower() == label.lower()), None)
        path = reader.image_path(fig)
        if box is None or path is None:
            raise HTTPException(404, f"figure {fig.figure_id!r} of {paper.paper_id!r} has no image of panel {label!r}")
        png = store.crop_png(path, box.bbox.xyxy())
        if png is None:
            raise HTTPException(404, f"panel {label!r} lies outside the figure image")
        return Response(png, media_type="image/png", headers={"cache-control": CACHE_IMAGES})

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        return Response(static["index.html"], media_type=STATIC["index.html"])

    @app.get("/docs", include_in_schema=False)
    def docs() -> Response:
        return Response(docs_html, media_type="text/html; charset=utf-8")

    @app.get("/static/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        if name not in static:
            raise HTTPException(404, "not found")
        return Response(static[name], media_type=STATIC[name])

    app.state.reader, app.state.searcher, app.state.images = reader, search, store
    return app


def serve(corpus_dir: str | Path, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Run the app with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(create_app(corpus_dir), host=host, port=port, log_level=log_level)

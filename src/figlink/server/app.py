"""The REST API and web page of ``figlink serve`` (FastAPI).

Routes: ``/api/health``, ``/api/search``, ``/api/papers/{paper_id}/figures/{figure_id}`` (+ ``/image``,
``/panels/{label}``, ``/panels/{label}/image``), the page at ``/`` and the OpenAPI schema at
``/openapi.json`` (``/docs``). Bad input gets a 4xx with a one-line reason: the query length, ``k``,
the level and the filter names are bounded and checked; ids are matched against the corpus.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Optional

from fastapi import FastAPI, HTTPException, Path as PathParam, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response

from figlink import __version__
from figlink.errors import InputError
from figlink.index.searcher import MAX_QUERY_CHARS, IndexMissing, Searcher
from figlink.server.records import IMAGE_TYPES, CorpusReader, crop_png, figure_record, figure_url, panel_record

MAX_K = 100
ID = r"^[A-Za-z0-9._-]{1,200}$"
LABEL = r"^[A-Za-z0-9]{1,4}$"
SEARCH_PARAMS = {"q", "k", "level", "figure_type", "is_medical", "open", "year_min", "year_max", "paper_id"}
STATIC = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
          "style.css": "text/css; charset=utf-8"}


def _static() -> dict[str, bytes]:
    folder = resources.files("figlink.server") / "static"
    return {name: (folder / name).read_bytes() for name in STATIC}


def create_app(corpus_dir: str | Path, searcher: Optional[Searcher] = None) -> FastAPI:
    """The app serving one corpus (its index is followed as new versions are published)."""
    reader = CorpusReader(corpus_dir)
    search = searcher or Searcher(reader.root)
    static = _static()
    app = FastAPI(title="figlink", version=__version__,
                  description="Figure- and panel-level search over a figlink corpus.")

    @app.exception_handler(InputError)
    async def _bad_input(request: Request, exc: InputError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    @app.exception_handler(IndexMissing)
    async def _no_index(request: Request, exc: IndexMissing) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=503)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        msgs = [f"{'.'.join(str(x) for x in e.get('loc', [])[1:])}: {e.get('msg')}" for e in exc.errors()]
        return JSONResponse({"detail": "; ".join(msgs) or "invalid request"}, status_code=422)

    @app.get("/api/health", summary="Liveness and index summary")
    def health() -> dict:
        try:
            idx = search.stats()
        except IndexMissing as e:
            return {"status": "no-index", "detail": str(e), "version": __version__}
        return {"status": "ok", "version": __version__, "index": idx}

    @app.get("/api/search", summary="Search figures or panels")
    def api_search(request: Request,
                   q: str = Query(..., min_length=1, max_length=MAX_QUERY_CHARS, description="Free-text query"),
                   k: int = Query(10, ge=1, le=MAX_K, description="Number of hits"),
                   level: str = Query("figure", pattern="^(figure|panel)$"),
                   figure_type: Optional[str] = Query(None, max_length=500,
                                                      description="Comma-separated figure types"),
                   is_medical: Optional[bool] = Query(None), open: Optional[bool] = Query(None),
                   year_min: Optional[int] = Query(None, ge=1, le=9999),
                   year_max: Optional[int] = Query(None, ge=1, le=9999),
                   paper_id: Optional[str] = Query(None, pattern=ID)) -> dict:
        unknown = sorted(set(request.query_params) - SEARCH_PARAMS)
        if unknown:
            raise InputError(f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(SEARCH_PARAMS))}")
        if not q.strip():
            raise InputError("the query is empty")
        filters = {"figure_type": figure_type, "is_medical": is_medical, "open": open, "year_min": year_min,
                   "year_max": year_max, "paper_id": paper_id}
        hits = search.search(q, k=k, level=level, filters=filters)
        out = []
        for h in hits:
            d = h.to_dict()
            base = figure_url(h.paper_id, h.figure_id)
            d["image_url"] = f"{base}/image" if h.image else None
            d["figure_url"] = base
            out.append(d)
        return {"query": q, "level": level, "k": k, "hits": out}

    def _figure(paper_id: str, figure_id: str):
        paper, fig = reader.figure(paper_id, figure_id)
        if paper is None:
            raise HTTPException(404, f"no paper {paper_id!r}")
        if fig is None:
            raise HTTPException(404, f"paper {paper_id} has no figure {figure_id!r}")
        return paper, fig

    @app.get("/api/papers/{paper_id}/figures/{figure_id}", summary="A figure record")
    def get_figure(paper_id: str = PathParam(..., pattern=ID), figure_id: str = PathParam(..., pattern=ID)) -> dict:
        return figure_record(*_figure(paper_id, figure_id))

    @app.get("/api/papers/{paper_id}/figures/{figure_id}/panels/{label}", summary="A panel record")
    def get_panel(paper_id: str = PathParam(..., pattern=ID), figure_id: str = PathParam(..., pattern=ID),
                  label: str = PathParam(..., pattern=LABEL)) -> dict:
        paper, fig = _figure(paper_id, figure_id)
        rec = panel_record(paper, fig, label.lower())
        if rec is None:
            raise HTTPException(404, f"figure {figure_id} of {paper_id} has no panel {label!r}")
        return rec

    @app.get("/api/papers/{paper_id}/figures/{figure_id}/image", summary="The figure image",
             response_class=FileResponse)
    def get_image(paper_id: str = PathParam(..., pattern=ID), figure_id: str = PathParam(..., pattern=ID)):
        _, fig = _figure(paper_id, figure_id)
        p = reader.image_path(fig)
        if p is None:
            raise HTTPException(404, f"figure {figure_id} of {paper_id} has no image in the corpus")
        return FileResponse(p, media_type=IMAGE_TYPES[p.suffix.lower()])

    @app.get("/api/papers/{paper_id}/figures/{figure_id}/panels/{label}/image", summary="A panel crop (PNG)")
    def get_panel_image(paper_id: str = PathParam(..., pattern=ID), figure_id: str = PathParam(..., pattern=ID),
                        label: str = PathParam(..., pattern=LABEL)) -> Response:
        _, fig = _figure(paper_id, figure_id)
        box = next((p for p in fig.panels if p.label and p.label.lower() == label.lower() and len(p.bbox) == 4), None)
        path = reader.image_path(fig)
        if box is None or path is None:
            raise HTTPException(404, f"figure {figure_id} of {paper_id} has no image of panel {label!r}")
        png = crop_png(path, box.bbox)
        if png is None:
            raise HTTPException(404, f"panel {label!r} lies outside the figure image")
        return Response(png, media_type="image/png")

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        return Response(static["index.html"], media_type=STATIC["index.html"])

    @app.get("/static/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        if name not in static:
            raise HTTPException(404, "not found")
        return Response(static[name], media_type=STATIC[name])

    app.state.reader, app.state.searcher = reader, search
    return app


def serve(corpus_dir: str | Path, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Run the app with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(create_app(corpus_dir), host=host, port=port, log_level=log_level)

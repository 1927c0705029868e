"""``figlink search`` and ``figlink serve``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from figlink.cli.common import err, fail, out
from figlink.errors import FiglinkError


def search(query: Optional[str] = typer.Argument(None, help="Free-text query (or --image)."),
           corpus: Path = typer.Option(..., "--corpus", help="Corpus folder (with an index)."),
           k: int = typer.Option(10, "-k", "--k", help="Number of hits (1-1000)."),
           level: str = typer.Option("figure", "--level", help="figure | panel"),
           figure_type: Optional[str] = typer.Option(None, "--figure-type", help="Comma-separated figure types."),
           medical: Optional[bool] = typer.Option(None, "--medical/--not-medical", help="Only (non-)medical figures."),
           open_only: bool = typer.Option(False, "--open", help="Only openly licensed papers."),
           year_min: Optional[int] = typer.Option(None, "--year-min"),
           year_max: Optional[int] = typer.Option(None, "--year-max"),
           as_json: bool = typer.Option(False, "--json", help="Print the hits as JSON."),
           image: Optional[Path] = typer.Option(None, "--image", help="Search by this figure image instead, "
                                                "through the image–text matcher (figures only, no filters)."),
           rerank: bool = typer.Option(True, "--rerank/--no-rerank",
                                       help="Re-order the best hits with the learned re-ranker (when shipped)."),
           ) -> None:
    """Search figures or panels of a corpus, by text or by image."""
    from figlink.index import IndexMissing, Searcher

    if image is not None:
        from figlink.cli.learn import image_search

        if query:
            fail("give a QUERY or --image, not both")
        image_search(image, corpus, k, as_json)
        return
    if not query:
        fail("give a QUERY (or --image IMG)")

    filters = {"figure_type": figure_type, "is_medical": medical, "open": True if open_only else None,
               "year_min": year_min, "year_max": year_max}
    try:
        hits = Searcher(corpus).search(query, k=k, level=level, filters=filters, rerank=rerank)
    except IndexMissing as e:
        fail(str(e))
    except FiglinkError as e:
        fail(str(e))
    if as_json:
        keep = ("rank", "score", "level", "paper_id", "figure_id", "panel", "label", "caption", "image", "title",
                "year", "figure_type", "subcaption", "bbox", "refs", "signals")
        sys.stdout.write(json.dumps({"query": query, "level": level, "k": k,
                                     "hits": [{f: h.to_dict()[f] for f in keep} for h in hits]},
                                    ensure_ascii=False) + "\n")
        return
    t = Table(title=f"{level} hits for {query!r}", title_justify="left")
    for col in ("rank", "score", "paper", "figure", "panel", "caption"):
        t.add_column(col, overflow="fold")
    for h in hits:
        t.add_row(str(h.rank), f"{h.score:.4f}", h.paper_id, h.label or h.figure_id, h.panel or "",
                  (h.caption[:100] + "…") if len(h.caption) > 100 else h.caption)
    out.print(t)


def serve(corpus: Path = typer.Option(..., "--corpus", help="Corpus folder (with an index)."),
          host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback by default)."),
          port: int = typer.Option(8000, "--port", min=1, max=65535),
          ) -> None:
    """Serve the REST API (OpenAPI at /docs) and the search page."""
    from figlink.corpus import Corpus
    from figlink.server import serve as run_server

    if not Corpus.exists(corpus):
        fail(f"no corpus at {corpus}")
    if host not in {"127.0.0.1", "localhost", "::1"}:
        err.print(f"[yellow]warning:[/yellow] binding {host}: the server is reachable from other machines",
                  highlight=False)
    err.print(f"figlink serving {corpus} at http://{host}:{port}/  (API docs: /docs; Ctrl-C to stop)",
              highlight=False)
    run_server(corpus, host=host, port=port)

"""The ``figlink`` command line: one subcommand per stage (parse, ingest, show, export, index, search, serve, demo)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from figlink.errors import FiglinkError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="figlink: figures in context from scientific papers.")
err = Console(stderr=True)


def _mount_subcommands() -> None:
    from figlink.text.cli_captions import captions_app

    from figlink.vision.cli_panels import panels_command
    from figlink.learn.cli import embed, train_app
    from figlink.learn.caption_cli import caption_app, train_captioner_command

    app.add_typer(captions_app, name="captions", help="Caption intelligence: subcaptions, cues, normalization.")
    app.command("panels")(panels_command)
    app.add_typer(train_app, name="train", help="Train the learned models (matcher).")
    app.command("embed")(embed)
    train_app.command("captioner")(train_captioner_command)
    app.add_typer(caption_app, name="caption", help="Generate figure captions (learned captioner).")


_mount_subcommands()
out = Console()

REPO_SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _print_failures(failures: list[tuple[str, str, str]]) -> None:
    """One line per failed item (name, stage, reason), never wrapped; names are not read as markup."""
    for item, stage, reason in failures:
        err.print(f"[red]failed:[/red] {escape(f'{item}: {stage}: {reason}')}", highlight=False, soft_wrap=True)


def _fail(msg: str, code: int = 2) -> None:
    err.print(f"[red]error:[/red] {escape(msg)}", highlight=False)
    raise typer.Exit(code)


@app.command()
def parse(paths: List[Path] = typer.Argument(..., help="JATS .xml/.nxml, PMC OA .tar.gz or PDF files."),
          xml: Optional[Path] = typer.Option(None, "--xml", help="JATS XML of the PDF, to merge with it."),
          as_json: bool = typer.Option(False, "--json", help="Print one Paper JSON per input (JSON lines)."),
          pretty: bool = typer.Option(False, "--pretty", help="Indent the JSON."),
          images: Optional[Path] = typer.Option(None, "--images", help="Save figure images under this folder."),
          ) -> None:
    """Parse papers into the figlink data model; bad inputs are reported and the others still parse."""
    from figlink.pipeline import process_source

    failed = 0
    for path in paths:
        try:
            paper = process_source(path, xml=xml, image_root=images)
        except FiglinkError as e:
            failed += 1
            err.print(f"[red]error:[/red] {path}: {e.stage}: {e}", highlight=False)
            continue
        if as_json:
            sys.stdout.write(paper.to_json(indent=2 if pretty else None) + "\n")
        else:
            t = Table(title=f"{paper.paper_id} — {paper.title or ''}", title_justify="left")
            for col in ("figure", "label", "caption", "refs", "panels cited"):
                t.add_column(col, overflow="fold")
            for f in paper.figures:
                panels = sorted({p for r in f.inline_refs for p in r.panels})
                t.add_row(f.figure_id, f.label or "", (f.caption[:80] + "…") if len(f.caption) > 80 else f.caption,
                          str(len(f.inline_refs)), ",".join(panels))
            out.print(t)
            out.print(f"license: {paper.license.spdx} (open: {paper.license.open})  doi: {paper.doi}")
            for w in paper.warnings:
                err.print(f"[yellow]warning:[/yellow] {path}: {w}", highlight=False)
    raise typer.Exit(1 if failed else 0)


@app.command()
def ingest(sources: List[Path] = typer.Argument(..., help="Files and folders of papers."),
           corpus: Path = typer.Option(..., "--corpus", help="Corpus folder (created when missing)."),
           workers: int = typer.Option(1, "--workers", "-w", min=1,
                                       help="Worker processes (local), or CPUs of the local Ray started for the run."),
           engine: str = typer.Option("local", "--engine", help="Execution engine: local | ray."),
           address: Optional[str] = typer.Option(None, "--address", envvar="RAY_ADDRESS",
                                                 help="Ray cluster to run on (engine ray; default: a local Ray)."),
           vision: bool = typer.Option(True, "--vision/--no-vision", help="Run the vision stages on figures."),
           make_index: bool = typer.Option(True, "--index/--no-index", help="Update the search index afterwards."),
           ) -> None:
    """Build or update a corpus, then its search index. Resumable; bad inputs are logged; exit status 1 when
    any input failed."""
    from figlink.pipeline import PipelineOptions

    options = PipelineOptions(vision=vision)
    if engine == "local":
        from figlink.engine.local import ingest as run_local

        report = run_local(sources, corpus, workers=workers, options=options)
    elif engine == "ray":
        from figlink.engine.ray import RayEngineError, ingest as run_ray

        try:
            report = run_ray(sources, corpus, workers=workers, options=options, address=address)
        except RayEngineError as e:
            _fail(str(e))
    else:
        _fail(f"unknown engine {engine!r}: choose local or ray")
    _print_failures(report.failures)
    err.print(f"{report.ok} ingested, {report.skipped} already done, {report.failed} failed "
              f"({report.seen} inputs, {report.seconds:.1f} s) → {corpus}", highlight=False)
    if make_index and (corpus / "corpus.sqlite").exists():
        _report_index(corpus)
    raise typer.Exit(1 if report.failed else 0)


def _report_index(corpus: Path, full: bool = False) -> None:
    """Build or update the corpus's index and print one line about it."""
    from figlink.index import build_index

    try:
        r = build_index(corpus, full=full)
    except FileNotFoundError as e:
        _fail(str(e))
    err.print(f"index {r.version}: {r.added} papers added, {r.replaced} replaced, {r.removed} removed, "
              f"{r.unchanged} unchanged; {r.figures} figures, {r.panels} panels "
              f"({'lexical + ' + r.dense if r.dense else 'lexical only'}, {r.seconds:.1f} s)", highlight=False)


@app.command()
def show(corpus: Path = typer.Option(..., "--corpus", help="Corpus folder."),
         paper_id: Optional[str] = typer.Argument(None, help="A paper to print as JSON."),
         figure: Optional[str] = typer.Option(None, "--figure", help="Only this figure of the paper."),
         errors: bool = typer.Option(False, "--errors", help="List the failed inputs."),
         ) -> None:
    """Corpus summary, one paper or figure as JSON, or the error log."""
    from figlink.corpus import Corpus

    try:
        c = Corpus(corpus, readonly=True)
    except FileNotFoundError as e:
        _fail(str(e))
    with c:
        if errors:
            for e in c.errors():
                sys.stdout.write(json.dumps(e) + "\n")
            return
        if paper_id is None:
            s = c.stats()
            out.print(f"{s.papers} papers, {s.figures} figures, {s.inline_refs} inline references; "
                      f"{s.inputs_done} inputs done, {s.inputs_failed} failed")
            return
        paper = c.paper(paper_id)
        if paper is None:
            _fail(f"no paper {paper_id!r} in {corpus}", 1)
        if figure is not None:
            fig = paper.figure(figure)
            if fig is None:
                _fail(f"paper {paper_id} has no figure {figure!r}", 1)
            sys.stdout.write(json.dumps(fig.to_dict(), ensure_ascii=False, indent=2) + "\n")
        else:
            sys.stdout.write(paper.to_json(indent=2) + "\n")


@app.command()
def export(corpus: Path = typer.Option(..., "--corpus", help="Corpus folder."),
           fmt: str = typer.Option(..., "--format", help="jsonl (papers) | parquet (one row per figure) | medicat | "
                                   "scicap (JSON lines per figure) | coco (subfigure boxes + images) | "
                                   "webdataset (tar shards)."),
           out_path: Path = typer.Option(..., "--out", help="Output file; a folder for coco and webdataset."),
           shard_size: int = typer.Option(1000, "--shard-size", min=1, help="webdataset: samples per shard."),
           shard_bytes: str = typer.Option("1GB", "--shard-bytes", help="webdataset: bytes per shard (e.g. 500MB)."),
           copy_images: bool = typer.Option(False, "--copy-images",
                                            help="coco: copy the images instead of hard-linking them."),
           ) -> None:
    """Export the corpus as a dataset. For coco and webdataset a figure whose image is missing or unreadable
    is reported and skipped; exit status 1 when any figure failed."""
    from figlink.corpus import Corpus
    from figlink.exports import EXPORTERS, ExportReport, parse_size

    if fmt not in EXPORTERS:
        _fail(f"unknown format {fmt!r}; available: {', '.join(sorted(EXPORTERS))}")
    opts: dict = {}
    if fmt == "webdataset":
        try:
            opts = {"shard_size": shard_size, "shard_bytes": parse_size(shard_bytes)}
        except ValueError as e:
            _fail(str(e))
    elif fmt == "coco":
        opts = {"copy_images": copy_images}
    try:
        c = Corpus(corpus, readonly=True)
    except FileNotFoundError as e:
        _fail(str(e))
    with c:
        try:
            result = EXPORTERS[fmt](c, out_path, **opts)
        except OSError as e:
            _fail(f"cannot write {out_path}: {e.strerror or e}")
    if not isinstance(result, ExportReport):
        err.print(f"wrote {result} records to {out_path}")
        return
    _print_failures(result.failures)
    err.print(escape(result.summary()), highlight=False, soft_wrap=True)
    raise typer.Exit(1 if result.failed else 0)


@app.command()
def index(corpus: Path = typer.Option(..., "--corpus", help="Corpus folder."),
          full: bool = typer.Option(False, "--full", help="Rebuild from scratch instead of updating."),
          ) -> None:
    """Build or update the corpus's search index (new papers are added; readers never see a partial index)."""
    _report_index(corpus, full=full)


@app.command()
def search(query: str = typer.Argument(..., help="Free-text query."),
           corpus: Path = typer.Option(..., "--corpus", help="Corpus folder (with an index)."),
           k: int = typer.Option(10, "-k", "--k", help="Number of hits (1-1000)."),
           level: str = typer.Option("figure", "--level", help="figure | panel"),
           figure_type: Optional[str] = typer.Option(None, "--figure-type", help="Comma-separated figure types."),
           medical: Optional[bool] = typer.Option(None, "--medical/--not-medical", help="Only (non-)medical figures."),
           open_only: bool = typer.Option(False, "--open", help="Only openly licensed papers."),
           year_min: Optional[int] = typer.Option(None, "--year-min"),
           year_max: Optional[int] = typer.Option(None, "--year-max"),
           as_json: bool = typer.Option(False, "--json", help="Print the hits as JSON."),
           ) -> None:
    """Search figures or panels of a corpus."""
    from figlink.index import IndexMissing, Searcher

    filters = {"figure_type": figure_type, "is_medical": medical, "open": True if open_only else None,
               "year_min": year_min, "year_max": year_max}
    try:
        hits = Searcher(corpus).search(query, k=k, level=level, filters=filters)
    except IndexMissing as e:
        _fail(str(e))
    except FiglinkError as e:
        _fail(str(e))
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


@app.command()
def serve(corpus: Path = typer.Option(..., "--corpus", help="Corpus folder (with an index)."),
          host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback by default)."),
          port: int = typer.Option(8000, "--port", min=1, max=65535),
          ) -> None:
    """Serve the REST API (OpenAPI at /docs) and the search page."""
    from figlink.server import serve as run_server

    if not (corpus / "corpus.sqlite").exists():
        _fail(f"no corpus at {corpus}")
    if host not in {"127.0.0.1", "localhost", "::1"}:
        err.print(f"[yellow]warning:[/yellow] binding {host}: the server is reachable from other machines",
                  highlight=False)
    err.print(f"figlink serving {corpus} at http://{host}:{port}/  (API docs: /docs; Ctrl-C to stop)",
              highlight=False)
    run_server(corpus, host=host, port=port)


@app.command()
def demo(corpus: Path = typer.Option(Path("demo-corpus"), "--corpus", help="Where to build the demo corpus."),
         samples: Path = typer.Option(REPO_SAMPLES, "--samples", help="Folder of sample papers."),
         workers: int = typer.Option(2, "--workers", "-w", min=1),
         no_serve: bool = typer.Option(False, "--no-serve", help="Build the corpus and index, then exit."),
         host: str = typer.Option("127.0.0.1", "--host"),
         port: int = typer.Option(8000, "--port", min=1, max=65535),
         ) -> None:
    """Build a corpus and search index from the sample papers shipped in the repository and serve it."""
    from figlink.corpus import Corpus
    from figlink.engine.local import ingest as run_local

    if not samples.is_dir():
        _fail(f"sample folder {samples} not found (pass --samples)")
    report = run_local([samples], corpus, workers=workers)
    err.print(f"{report.ok} ingested, {report.skipped} already done, {report.failed} failed → {corpus}")
    with Corpus(corpus, readonly=True) as c:
        t = Table(title="figlink demo corpus", title_justify="left")
        for col in ("paper", "title", "license", "figures", "inline refs", "refs with panels"):
            t.add_column(col, overflow="fold")
        for p in c.papers():
            refs = [r for f in p.figures for r in f.inline_refs]
            t.add_row(p.paper_id, (p.title or "")[:60], p.license.spdx or "?", str(len(p.figures)), str(len(refs)),
                      str(sum(1 for r in refs if r.panels)))
        out.print(t)
    _report_index(corpus)
    if report.failed or no_serve:
        raise typer.Exit(1 if report.failed else 0)
    from figlink.server import serve as run_server

    out.print(f"figlink demo: open http://{host}:{port}/  (Ctrl-C to stop)", highlight=False)
    run_server(corpus, host=host, port=port)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

"""``figlink ingest`` and ``figlink demo``: papers in, a corpus out (``figlink parse``: :mod:`.parse`)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from figlink.cli.common import err, fail, out, print_failures, print_renamed
from figlink.cli.corpus import print_index

REPO_SAMPLES = Path(__file__).resolve().parents[3] / "samples"


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
    from figlink.builder import build
    from figlink.engine.common import EngineError, IngestReport

    def ingested(r: IngestReport) -> None:
        print_failures(r.failures)
        print_renamed(r.renamed)
        if r.nodes:  # the Ray engine says where its tasks ran
            where = ", ".join(f"{node[:12]}: {n}" for node, n in sorted(r.nodes.items()))
            err.print(escape(f"tasks per node ({len(r.nodes)} nodes): {where}"))
        err.print(escape(f"{r.ok} ingested, {r.skipped} already done, {r.failed} failed "
                         f"({r.seen} inputs, {r.seconds:.1f} s) → {corpus}"))

    try:
        report = build(sources, corpus, engine=engine, workers=workers, vision=vision, index=make_index,
                       address=address, on_ingested=ingested)
    except EngineError as e:
        fail(str(e))
    if report.index is not None:
        print_index(report.index)
    raise typer.Exit(1 if report.failed else 0)


def demo(corpus: Path = typer.Option(Path("demo-corpus"), "--corpus", help="Where to build the demo corpus."),
         samples: Path = typer.Option(REPO_SAMPLES, "--samples", help="Folder of sample papers."),
         workers: int = typer.Option(2, "--workers", "-w", min=1),
         no_serve: bool = typer.Option(False, "--no-serve", help="Build the corpus and index, then exit."),
         host: str = typer.Option("127.0.0.1", "--host"),
         port: int = typer.Option(8000, "--port", min=1, max=65535),
         ) -> None:
    """Build a corpus and search index from the sample papers shipped in the repository and serve it."""
    from figlink.builder import build
    from figlink.corpus import Corpus
    from figlink.engine.common import IngestReport

    def ingested(r: IngestReport) -> None:
        print_failures(r.failures)
        print_renamed(r.renamed)
        err.print(escape(f"{r.ok} ingested, {r.skipped} already done, {r.failed} failed → {corpus}"))
        with Corpus(corpus, readonly=True) as c:
            t = Table(title="figlink demo corpus", title_justify="left")
            for col in ("paper", "title", "license", "figures", "inline refs", "refs with panels"):
                t.add_column(col, overflow="fold")
            for p in c.papers():
                refs = [ref for f in p.figures for ref in f.inline_refs]
                t.add_row(p.paper_id, (p.title or "")[:60], p.license.spdx or "?", str(len(p.figures)),
                          str(len(refs)), str(sum(1 for ref in refs if ref.panels)))
            out.print(t)

    if not samples.is_dir():
        fail(f"sample folder {samples} not found (pass --samples)")
    report = build([samples], corpus, workers=workers, on_ingested=ingested)
    if report.index is not None:
        print_index(report.index)
    if report.failed or no_serve:
        raise typer.Exit(1 if report.failed else 0)
    from figlink.server import serve as run_server

    out.print(f"figlink demo: open http://{host}:{port}/  (Ctrl-C to stop)", highlight=False)
    run_server(corpus, host=host, port=port)

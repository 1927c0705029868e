"""``figlink show``, ``figlink export`` and ``figlink index``: read a corpus, export it, index it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.markup import escape

from figlink.cli.common import err, fail, open_corpus, out, print_failures, print_left_out
from figlink.errors import FiglinkError

if TYPE_CHECKING:
    from figlink.index import IndexReport


def print_index(r: IndexReport) -> None:
    """One line about an index update."""
    err.print(f"index {r.version}: {r.added} papers added, {r.replaced} replaced, {r.removed} removed, "
              f"{r.unchanged} unchanged; {r.figures} figures, {r.panels} panels "
              f"({'lexical + ' + r.dense if r.dense else 'lexical only'}"
              f"{f' + image ({r.image_figures} figures)' if r.image_figures else ''}, {r.seconds:.1f} s)", highlight=False)


def show(corpus: Path = typer.Option(..., "--corpus", help="Corpus folder."),
         paper_id: Optional[str] = typer.Argument(None, help="A paper to print as JSON."),
         figure: Optional[str] = typer.Option(None, "--figure", help="Only this figure of the paper."),
         errors: bool = typer.Option(False, "--errors", help="List the failed inputs."),
         ) -> None:
    """Corpus summary, one paper or figure as JSON, or the error log."""
    with open_corpus(corpus) as c:
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
            fail(f"no paper {paper_id!r} in {corpus}", 1)
        if figure is not None:
            fig = paper.figure(figure)
            if fig is None:
                fail(f"paper {paper_id} has no figure {figure!r}", 1)
            sys.stdout.write(json.dumps(fig.to_dict(), ensure_ascii=False, indent=2) + "\n")
        else:
            sys.stdout.write(paper.to_json(indent=2) + "\n")


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
    from figlink.exports import WRITERS, export as run_export, parse_size

    if fmt not in WRITERS:
        fail(f"unknown format {fmt!r}; available: {', '.join(sorted(WRITERS))}")
    opts: dict = {}
    if fmt == "webdataset":
        try:
            opts = {"shard_size": shard_size, "shard_bytes": parse_size(shard_bytes)}
        except ValueError as e:
            fail(str(e))
    elif fmt == "coco":
        opts = {"copy_images": copy_images}
    with open_corpus(corpus) as c:
        try:
            report = run_export(c, fmt, out_path, **opts)
        except OSError as e:
            fail(f"cannot write {out_path}: {e.strerror or e}")
    print_failures(report.failures)
    err.print(escape(report.summary()), highlight=False, soft_wrap=True)
    raise typer.Exit(1 if report.failed else 0)


def index(corpus: Path = typer.Option(..., "--corpus", help="Corpus folder."),
          full: bool = typer.Option(False, "--full", help="Rebuild from scratch instead of updating."),
          image: bool = typer.Option(False, "--image", help="Add the image signal: figures embedded by the "
                                     "image–text matcher (needs figlink[learn])."),
          matcher: Optional[Path] = typer.Option(None, "--matcher", help="Matcher model directory for --image "
                                                 "(default: the one shipped)."),
          ) -> None:
    """Build or update the corpus's search index (new papers are added; readers never see a partial index)."""
    from figlink.index import build_index

    signal = None
    if image or matcher is not None:
        signal = _image_signal(corpus, matcher)
    try:
        r = build_index(corpus, full=full, image=signal)
    except (FileNotFoundError, ValueError) as e:
        fail(str(e))
    left_out = list(signal.problems) if signal is not None else []
    print_failures([(item, "image signal", reason) for item, _, reason in (p.partition(": ") for p in left_out)])
    print_index(r)
    print_left_out(len(left_out), "the image signal")
    if left_out:
        raise typer.Exit(1)


def _image_signal(corpus: Path, matcher: Optional[Path]):
    """The matcher's image signal of a corpus, or a one-line failure (no learn extra, bad model, no corpus)."""
    try:
        from figlink.learn.embedder import load_matcher
        from figlink.learn.image_search import image_signal
    except ImportError as e:
        fail(f"--image needs the learning extra (pip install 'figlink[learn]'): {e}")
    try:
        return image_signal(corpus, load_matcher(matcher) if matcher is not None else None)
    except (FiglinkError, FileNotFoundError, ValueError) as e:
        fail(str(e))

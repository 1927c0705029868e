"""``figlink train captioner`` and ``figlink caption generate``: the captioner's command line.

Mounted by :mod:`figlink.cli` next to the matcher's commands
(``train_app.command("captioner")(train_captioner_command)``, ``app.add_typer(caption_app, name="caption")``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Optional, cast

import typer
from rich.markup import escape

from figlink.errors import FiglinkError
from figlink.learn.records import CONTEXTS
from figlink.cli.common import err
from figlink.cli.learn import _cache, _fail, _failed_lines, _require_learn_extra, _threads

caption_app = typer.Typer(no_args_is_help=True, help="Generate figure captions with a trained captioner.")


def _context(context: str) -> str:
    if context not in CONTEXTS:
        _fail(f"unknown --context {context!r}: choose {' or '.join(CONTEXTS)}")
    return context


def _check_device(device: str) -> None:
    from figlink.learn.train import resolve_device

    try:
        resolve_device(device)
    except ValueError as e:
        _fail(str(e))


def train_captioner_command(
        out_dir: Path = typer.Option(..., "--out", help="Model directory to write."),
        pairs_file: Optional[Path] = typer.Option(None, "--pairs", help="Figure-pairs JSONL file."),
        corpus: Optional[Path] = typer.Option(None, "--corpus", help="Corpus folder (figures with images)."),
        context: str = typer.Option("none", "--context", help="none (image + OCR text) | mentions (also the "
                                    "citing text)"),
        matcher: Optional[Path] = typer.Option(None, "--matcher", help="Matcher model directory (default: the "
                                               "shipped one); generation must use the same."),
        device: str = typer.Option("cpu", "--device", help="cpu | cuda (features and the matcher)"),
        seed: int = typer.Option(0, "--seed"),
        ocr: bool = typer.Option(True, "--ocr/--no-ocr", help="Read the text in the images (the slow part)."),
        cache_dir: Optional[Path] = typer.Option(None, "--cache", help="Feature cache folder."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Compute every feature afresh, store nothing."),
        threads: Optional[int] = typer.Option(None, "--threads", min=1, help="CPU threads for torch and OCR."),
) -> None:
    """Train a captioner on figures with captions and save it. Bad input lines and images are reported
    one per line and skipped; exit status 1 when any was."""
    _require_learn_extra()
    from figlink.learn.captioner import CaptionerSettings
    from figlink.learn.captioner_recipe import prepare, save_captioner, train_on
    from figlink.learn.records import pairs_from_corpus, read_pair_file

    ctx = _context(context)
    if (pairs_file is None) == (corpus is None):
        _fail("give one of --pairs FILE or --corpus DIR")
    _check_device(device)
    _threads(threads)
    bad: list = []
    try:
        pairs, bad = read_pair_file(pairs_file) if pairs_file is not None else (pairs_from_corpus(cast(Path, corpus)), [])
        data = prepare(pairs, _cache(cache_dir, no_cache), matcher, device, ocr)
    except (FiglinkError, FileNotFoundError) as e:
        _fail(str(e))
    failed = bad + data.bad
    _failed_lines(failed)
    start = time.perf_counter()
    try:
        captioner = train_on(data, (ctx,), CaptionerSettings(seed=seed))
    except ValueError as e:
        _fail(str(e))
    seconds = time.perf_counter() - start
    note = f"pairs {pairs_file.name}" if pairs_file is not None else f"corpus {corpus}"
    folder = save_captioner(captioner, out_dir, matcher, extra={"training": {
        "data": note, "figures": len(data.figs), "context": ctx, "seed": seed, "train_seconds": round(seconds, 2)}})
    err.print(f"trained a captioner (--context {ctx}) on {len(captioner.pool_texts)} captions in {seconds:.1f} s, "
              f"{len(failed)} failed → {folder}", highlight=False)
    raise typer.Exit(1 if failed else 0)


@caption_app.command("generate")
def generate_command(
        pairs_file: Path = typer.Argument(..., help="Figure-pairs JSONL file."),
        out_file: Path = typer.Option(..., "--out", help="JSONL file: one {\"id\", \"caption\"} per usable input "
                                      "line, in input order."),
        context: str = typer.Option("none", "--context", help="none (image + OCR text) | mentions (also the "
                                    "citing text)"),
        model: Optional[Path] = typer.Option(None, "--model", help="Captioner model directory (default: the one "
                                             "shipped with figlink)."),
        matcher: Optional[Path] = typer.Option(None, "--matcher", help="The matcher the captioner was built with "
                                               "(default: the shipped one)."),
        device: str = typer.Option("cpu", "--device", help="cpu | cuda"),
        ocr: bool = typer.Option(True, "--ocr/--no-ocr", help="Read the text in the images (the slow part; "
                                 "without it the captioner sees no words in them)."),
        cache_dir: Optional[Path] = typer.Option(None, "--cache", help="Feature cache folder."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Compute every feature afresh, store nothing."),
        threads: Optional[int] = typer.Option(None, "--threads", min=1, help="CPU threads for torch and OCR."),
) -> None:
    """Write a caption (SciCap-normalized: lower case, [NUM], [EQUATION], [BRACKET]) for every figure of a
    pairs file. Bad lines and images are reported one per line and left out; exit status 1 when any was."""
    _require_learn_extra()
    from figlink.learn.captioner_recipe import load_captioner, prepare
    from figlink.learn.records import read_pair_file

    ctx = _context(context)
    _check_device(device)
    _threads(threads)
    try:
        captioner = load_captioner(model, matcher)
        if ctx not in captioner.scorers:
            _fail(f"the captioner at {model or 'the default location'} was trained for --context "
                  f"{' / '.join(captioner.scorers)}, not {ctx}")
        pairs, bad = read_pair_file(pairs_file)
        start = time.perf_counter()
        data = prepare(pairs, _cache(cache_dir, no_cache), matcher, device, ocr)
    except FiglinkError as e:
        _fail(str(e))
    captions = captioner.generate(data.figs, data.image_vecs, ctx)
    seconds = time.perf_counter() - start
    out_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_file.with_name(f".{out_file.name}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for fig_id, caption in zip(data.feats.ids, captions):
            f.write(json.dumps({"id": fig_id, "caption": caption}, ensure_ascii=False) + "\n")
    os.replace(tmp, out_file)
    failed = bad + data.bad
    _failed_lines(failed)
    n = len(captions)
    err.print(f"captioned {n} figures ({len(failed)} failed) → {escape(str(out_file))} "
              f"({n / seconds if seconds > 0 else 0:.1f} figures/s)", highlight=False)
    raise typer.Exit(1 if failed else 0)

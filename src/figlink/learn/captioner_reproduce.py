"""Rebuild the captioner that ships in the package: ``python -m figlink.learn.captioner_reproduce``
(``make model-captioner``).

Data: the OpenStax figure pairs (CC BY 4.0) of ``shared/data/figures/openstax``. Tune: a captioner trained
on three train books is scored on the fourth, :data:`TUNE_BOOK`. Check: the shipped captioner, trained on
all four, is scored on the Chemistry book, never used for training or choosing anything. Both baselines
are scored in the same run. Writes ``figlink/learn/data/captioner/`` (manifest, pool, weights, MODEL_CARD.md).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Optional

from figlink.eval.splits import OPENSTAX_CHECK_BOOK
from figlink.learn.cache import FeatureCache
from figlink.learn.captioner import CaptionerSettings
from figlink.learn.captioner_recipe import DEFAULT_CAPTIONER, Prepared, measure, prepare, save_captioner, train_on
from figlink.learn.reproduce import reproduce_args

TUNE_BOOK = "astronomy"


def split_indices(data: Prepared, tune_book: str = TUNE_BOOK) -> dict[str, list[int]]:
    """Indices of the tune book, the other train books, all train books, and the check book."""
    group = [f.group for f in data.figs]
    return {"tune": [i for i, g in enumerate(group) if g == tune_book],
            "train_for_tune": [i for i, g in enumerate(group) if g not in (tune_book, OPENSTAX_CHECK_BOOK)],
            "train": [i for i, g in enumerate(group) if g != OPENSTAX_CHECK_BOOK],
            "check": [i for i, g in enumerate(group) if g == OPENSTAX_CHECK_BOOK]}


def tune_and_check(data: Prepared, settings: CaptionerSettings = CaptionerSettings()) -> dict:
    """Train for tune and for check, score both with the baselines; the check captioner is returned too."""
    idx = split_indices(data)
    out: dict = {"counts": {k: len(v) for k, v in idx.items()}}
    train = data.subset(idx["train_for_tune"])
    out["tune"] = measure(train_on(train, settings=settings), train, data.subset(idx["tune"]))
    train = data.subset(idx["train"])
    t = time.perf_counter()
    captioner = train_on(train, settings=settings)
    out["train_seconds"] = time.perf_counter() - t
    out["check"] = measure(captioner, train, data.subset(idx["check"]))
    out["captioner"] = captioner
    return out


def metrics_markdown(result: dict) -> str:
    """The tune | check table of every system (BLEU-4 and ROUGE-L, first sentence and whole caption)."""
    head = ("| system | tune BLEU-4 (first) | check BLEU-4 (first) | tune ROUGE-L (first) | check ROUGE-L (first) "
            "| tune BLEU-4 (whole) | check BLEU-4 (whole) | tune ROUGE-L (whole) | check ROUGE-L (whole) |\n"
            "|---|---|---|---|---|---|---|---|---|")
    rows = [head]
    for name in result["tune"]:
        t, c = result["tune"][name], result["check"][name]
        cells = []
        for view in ("first_sentence", "whole"):
            for metric in ("BLEU-4", "ROUGE-L"):
                cells += [f"{t[view][metric]:.4f}", f"{c[view][metric]:.4f}"]
        rows.append(f"| {name} | " + " | ".join(cells[:4] + cells[4:]) + " |")
    n = result["tune"][name]
    m = result["check"][name]
    rows.append(f"\nFigures scored: tune {n['first_sentence']['n']} (whole ≤ 100 tokens: {n['whole']['n']}), "
                f"check {m['first_sentence']['n']} (whole: {m['whole']['n']}).")
    return "\n".join(rows)


def model_card(result: dict, settings: CaptionerSettings) -> str:
    c = result["counts"]
    return f"""# figlink default captioner (retrieve candidate sentences, pick one with a learned scorer)

`figlink caption generate` writes one SciCap-normalized sentence per figure (lower case, numbers as
`[NUM]`, equations as `[EQUATION]`, bracketed spans as `[BRACKET]`). The candidates are the first
sentences of the {settings.k} training captions nearest to the figure's image under the default matcher
(`figlink/learn/data/matcher`: EfficientNet-Lite0 + OCR text in MiniLM's space) and, with
`--context mentions`, the sentences of the paragraphs that cite the figure, each as written and, where
it cites a figure, without the reference and its frame ("As shown in Figure 2, …", "Figure 4 shows that
…", "(see Fig. 3)"; `figlink.text.citing_frame`). A linear scorer per context
(`figlink.learn.captioner`: kind, similarity, rank, place in the citing text, whether the sentence cites
the figure and whether the candidate is stripped, n-gram consensus with the other retrieved captions,
overlap with the OCR words, length) picks one; it was trained listwise to
prefer the candidate with the highest mean 1–4-gram F1 against the figure's real first sentence.

## Data and licence

OpenStax textbooks (Rice University), CC BY 4.0: University Physics, Microbiology, Astronomy and
Psychology — {c['train']} figures; the pool ships their normalized first sentences (`pool.json`) and
matcher vectors. The Chemistry book ({c['check']} figures) was **not** used for training or for
choosing anything. Derived from CC BY 4.0 material: credit OpenStax when you redistribute it.
figlink itself is Apache-2.0.

## Recipe

`make model-captioner` (= `python -m figlink.learn.captioner_reproduce`), settings `{settings}` (the
defaults, not searched). During training each figure retrieves only from the *other* books, as a new
book does in use. Training: {result['train_seconds']:.1f} s on the CPU, once features are cached.

## Metrics (SciCap normalization; BLEU-4 = sacrebleu corpus BLEU / 100, ROUGE-L = rouge-score F1)

tune = the captioner trained on three books, scored on {TUNE_BOOK}; check = the shipped captioner on
{OPENSTAX_CHECK_BOOK}. "first": the reference is the caption's first sentence (every figure); "whole":
the whole caption, for captions of at most 100 tokens.

{metrics_markdown(result)}

## Limits

It writes a sentence that exists already: a training caption's first sentence, or (with mentions) a
sentence of the citing text (or one of its clauses, less the figure reference). It never composes a new one. With `--context none` it loses to the
first-mention baseline, which reads the citing text it is not given. On whole captions a long
retrieved caption escapes BLEU's brevity penalty that one sentence pays. Textbook figures only.
"""


def main(argv: Optional[list[str]] = None) -> int:
    from figlink.learn.records import read_pair_file

    parsed = reproduce_args("Rebuild figlink's default captioner.", DEFAULT_CAPTIONER, argv)
    if parsed is None:
        return 2
    args, data = parsed
    pairs, bad = read_pair_file(data / "figures" / "openstax" / "pairs.jsonl")
    prepared = prepare(pairs, FeatureCache(args.cache))
    settings = CaptionerSettings(seed=args.seed)
    result = tune_and_check(prepared, settings)
    metrics = {k: result[k] for k in ("tune", "check")}
    training = {"data": "OpenStax figure pairs (CC BY 4.0), 4 books", "counts": result["counts"],
                "tune_book": TUNE_BOOK, "hold_out": OPENSTAX_CHECK_BOOK, "train_seconds": round(result["train_seconds"], 1),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out = save_captioner(result["captioner"], args.out, extra={"metrics": metrics, "training": training})
    (out / "MODEL_CARD.md").write_text(model_card(result, settings), encoding="utf-8")
    print(metrics_markdown(result))
    print(f"wrote {out} ({len(bad) + len(prepared.bad)} bad pairs skipped)", file=sys.stderr)
    print(json.dumps(training), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

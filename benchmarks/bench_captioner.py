"""Caption generation benchmark (issue 16 item 4): BLEU-4 and ROUGE-L on SciCap-normalized captions.

Data: OpenStax figure pairs. *tune*: a captioner trained on three train books, scored on the fourth
(astronomy); *check*: the captioner trained on all four train books, scored on the Chemistry book (never
trained or chosen on). Both baselines run on the same figures in the same run: the first sentence of
the figure's first mention, and the training caption nearest to the image under the shipped matcher.
Each score is given for the first sentence (every figure) and the whole caption (captions ≤ 100 tokens).

Costs: feature + matcher time (cached features), training time, peak memory of this process, and
captioning speed after the features (captions/s for the check book, p50/p99 per figure).

    python benchmarks/bench_captioner.py [--cache DIR] [--threads 1] [--matcher DIR]

``--matcher`` names the matcher model directory the captioner retrieves with (default: the shipped one), so
two matchers can be compared in one session.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import peak_rss_mb, print_table, require_shared_data  # noqa: E402

import numpy as np  # noqa: E402


def print_folds(data) -> None:
    """Leave-one-book-out over the four train books: first-sentence BLEU-4 / ROUGE-L of every system."""
    from figlink.eval.splits import OPENSTAX_CHECK_BOOK
    from figlink.learn.captioner_recipe import measure, train_on

    books = sorted({f.group for f in data.figs} - {OPENSTAX_CHECK_BOOK})
    rows, names = [], None
    for book in books:
        train = data.subset([i for i, f in enumerate(data.figs) if f.group not in (book, OPENSTAX_CHECK_BOOK)])
        test = data.subset([i for i, f in enumerate(data.figs) if f.group == book])
        m = measure(train_on(train), train, test)
        names = list(m)
        rows.append([book, str(len(test.figs))] + [f"{m[n]['first_sentence']['BLEU-4']:.4f} / "
                                                   f"{m[n]['first_sentence']['ROUGE-L']:.4f}" for n in names])
    print_table("tune folds (each train book held out; first sentence BLEU-4 / ROUGE-L)",
                ["held out", "figures", *(names or [])], rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=None, help="feature cache folder")
    ap.add_argument("--threads", type=int, default=int(os.environ.get("FIGLINK_TORCH_THREADS", "1")))
    ap.add_argument("--all-folds", action="store_true", help="also hold out each train book in turn (tune only)")
    ap.add_argument("--matcher", type=Path, default=None, help="matcher model directory (default: the shipped one)")
    args = ap.parse_args()
    data_dir = require_shared_data("the captioner benchmark")
    import torch

    torch.set_num_threads(args.threads)
    from figlink.learn.cache import FeatureCache
    from figlink.learn.captioner_reproduce import split_indices, tune_and_check
    from figlink.learn.records import read_pair_file
    from figlink.learn.captioner_recipe import prepare

    t = time.perf_counter()
    pairs, bad = read_pair_file(data_dir / "figures" / "openstax" / "pairs.jsonl")
    data = prepare(pairs, FeatureCache(args.cache), args.matcher)
    print(f"matcher: {args.matcher or 'shipped'}")
    prep_seconds = time.perf_counter() - t
    result = tune_and_check(data)
    counts = result["counts"]

    header = ["system", "BLEU-4 first tune", "check", "ROUGE-L first tune", "check",
              "BLEU-4 whole tune", "check", "ROUGE-L whole tune", "check", "check BLEU-4 first / best baseline"]
    base_names = [n for n in result["check"] if n.startswith("baseline")]
    best_base = max(result["check"][n]["first_sentence"]["BLEU-4"] for n in base_names)
    rows = []
    for name in result["tune"]:
        tu, ch = result["tune"][name], result["check"][name]
        cells = [name]
        for view in ("first_sentence", "whole"):
            for metric in ("BLEU-4", "ROUGE-L"):
                cells += [f"{tu[view][metric]:.4f}", f"{ch[view][metric]:.4f}"]
        ratio = ch["first_sentence"]["BLEU-4"] / best_base if best_base else float("nan")
        rows.append(cells + [f"{ratio:.2f}x"])
    print_table(f"captioning, OpenStax: tune = astronomy ({counts['tune']} figures, trained on "
                f"{counts['train_for_tune']}), check = chemistry ({counts['check']}, trained on {counts['train']})",
                header, rows)

    captioner = result["captioner"]
    check = data.subset(split_indices(data)["check"])
    cost_rows = [["features + matcher (cached)", f"{prep_seconds:.1f} s", f"{len(data.figs)} figures", ""],
                 ["training (both contexts, 4 books)", f"{result['train_seconds']:.1f} s", "", ""]]
    for context in captioner.scorers:
        lat = []
        for i in range(len(check.figs)):
            s = time.perf_counter()
            captioner.generate(check.figs[i:i + 1], check.image_vecs[i:i + 1], context)
            lat.append(time.perf_counter() - s)
        lat_ms = np.array(lat) * 1000
        cost_rows.append([f"captioning, context {context} (after features)", f"{len(lat) / sum(lat):.0f} captions/s",
                          f"p50 {np.percentile(lat_ms, 50):.1f} ms", f"p99 {np.percentile(lat_ms, 99):.1f} ms"])
    cost_rows.append(["peak memory (this process)", f"{peak_rss_mb():.0f} MB", "", ""])
    if args.all_folds:
        print_folds(data)
    print_table(f"costs ({args.threads} torch thread(s); {len(bad) + len(data.bad)} bad pairs skipped)",
                ["step", "value", "", ""], cost_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Subcaption splitting against hand-made splits, tune and check side by side (issue 15, row 2).

Data: ``captions/prostate_gold_splits_dev.json`` (92 PMC captions, 411 gold panels). Split: by paper
(:func:`figlink.eval.splits.figure_paper_key` of the image name, so every figure of a paper falls in
one part), md5 even → tune.

Two scorings, both mean token F1 over gold panels (alphanumeric, lower-cased tokens; a gold label the
split does not name scores 0):
- **MedICaT (strict)**, the primary number: a panel's subcaption is every token about that panel,
  group text included, nothing about all panels. The gold repeats the shared context in every panel;
  :mod:`figlink.eval.subcaption_gold` removes it (caption tokens that every panel's gold covers) and the
  split is scored on the panel's own and group text only (``label_text``), without its shared text.
- **as written**: the gold text as given against the split's shared text + the panel's own text (the
  scoring of ``figlink.eval.caption_eval`` and of the issue's 0.937 / 0.896 numbers). Shared text
  dominates long captions, so it forgives text put in the wrong panel.

Baseline (same run): cut at every "(X)"; text before the first label is shared
(``figlink.eval.caption_eval.naive_split``). Target on check: F1 ≥ 0.92.

    python benchmarks/bench_subcaptions.py [--part tune|check|both] [--failures]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import add_part_args, fmt_num, parts_of, require_shared_data, split_table, write_failures  # noqa: E402

from figlink.eval.splits import split_of  # noqa: E402
from figlink.eval.subcaption_gold import failure_record, load_prostate, score_as_written, score_strict  # noqa: E402
from figlink.eval.caption_eval import naive_split  # noqa: E402
from figlink.text.subcaptions import split_caption  # noqa: E402


def mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_part_args(ap)
    args = ap.parse_args(argv)
    data = require_shared_data("the subcaption benchmark")
    items = load_prostate(data / "captions" / "prostate_gold_splits_dev.json")
    parts = parts_of(args.part)
    res: dict = {}
    fails = []
    t0 = time.perf_counter()
    for name, splitter in (("figlink", split_caption), ("naive", naive_split)):
        for part in parts:
            strict, written, n_cap = [], [], 0
            for it in items:
                if split_of(it.paper) != part:
                    continue
                n_cap += 1
                sp = splitter(it.caption)
                s, w = score_strict(sp, it), score_as_written(sp, it)
                strict += s
                written += w
                if name == "figlink" and part == "tune" and args.failures:
                    rec = failure_record(sp, it, s, w)
                    if rec:
                        fails.append(rec)
            res[name, part] = {"strict": mean(strict), "written": mean(written), "panels": len(strict), "captions": n_cap}
    elapsed = time.perf_counter() - t0

    def cell(name: str, part: str, key: str) -> str:
        r = res.get((name, part))
        return fmt_num(r[key]) if r else "-"

    counts = {p: f"{res['figlink', p]['captions']} captions / {res['figlink', p]['panels']} panels" for p in parts}
    rows = [["subcaption token F1, MedICaT strict", cell("figlink", "tune", "strict"), cell("figlink", "check", "strict"),
             cell("naive", "tune", "strict"), cell("naive", "check", "strict"), ">= 0.92"],
            ["subcaption token F1, as written (shared + own)", cell("figlink", "tune", "written"),
             cell("figlink", "check", "written"), cell("naive", "tune", "written"), cell("naive", "check", "written"),
             ">= 0.92"],
            ["gold", counts.get("tune", "-"), counts.get("check", "-"), "", "", ""]]
    split_table("Subcaption splitting (prostate hand splits; baseline: naive '(X)' regex)", rows, parts, "naive")
    print(f"\nbench_subcaptions: {elapsed:.1f} s")
    if args.failures and "tune" in parts:
        write_failures("subcaptions", fails)
    return 0


if __name__ == "__main__":
    sys.exit(main())

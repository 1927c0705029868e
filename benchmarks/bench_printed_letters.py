"""The panel letters the vision stage looks for, checked against the Europe PMC xref gold.

The vision stage reads the labels of :func:`figlink.enrich.align.printed_letters`: the letters the caption
names as labels, plus the letters between its first and last (a caption may describe a panel in prose,
"the scatter plot in B"). The body's figure xrefs are gold for letters a figure really has ("Fig 2C" → the
figure prints a C): this benchmark scores, per part, (1) the cited letters that each set holds, over
figures whose caption names letters, and (2) of the letters the run adds, how many the body cites (a letter
no sentence cites may still be printed, so this is a lower bound on the fill's precision). Baseline: the
caption's own labels (:func:`figlink.enrich.align.caption_labels`), same run.

    python benchmarks/bench_printed_letters.py [--part tune|check|both] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_inline_refs import europepmc_files  # noqa: E402
from common import add_part_args, fmt_pct, parts_of, peak_rss_mb, require_shared_data, split_table  # noqa: E402

from figlink.enrich.align import caption_labels, printed_letters  # noqa: E402
from figlink.errors import FiglinkError  # noqa: E402
from figlink.eval.xref_gold import gold_refs  # noqa: E402
from figlink.ingest.jats import parse_jats  # noqa: E402
from figlink.text.subcaptions import split_caption  # noqa: E402


def score(files: list[Path]) -> Counter:
    st: Counter = Counter()
    for f in files:
        try:
            gold, _ = gold_refs(f)
            paper = parse_jats(f)
        except (FiglinkError, OSError, ValueError):
            st["errors"] += 1
            continue
        cited: dict[str, set[str]] = defaultdict(set)
        for ref in gold:
            cited[ref.figure_id] |= {p.lower() for p in ref.panels if len(p) == 1}
        for fig in paper.figures:
            split = split_caption(fig.caption or "")
            named = {x.lower() for x in caption_labels(split)}
            run = {x.lower() for x in printed_letters(split)}
            gold_letters = cited.get(fig.figure_id, set())
            st["figures"] += 1
            added = run - named
            if added and gold_letters:
                st["added"] += len(added)
                st["added_cited"] += len(added & gold_letters)
            if named and gold_letters:
                st["cited"] += len(gold_letters)
                st["held_named"] += len(gold_letters & named)
                st["held_run"] += len(gold_letters & run)
    return st


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_part_args(ap, failures=False)
    args = ap.parse_args(argv)
    data = require_shared_data("the printed-letters benchmark")
    res, secs = {}, {}
    for part in parts_of(args.part):
        files = europepmc_files(data, part, args.quick)
        t0 = time.process_time()
        res[part] = score(files)
        secs[part] = (time.process_time() - t0, len(files))

    def cell(part: str, num: str, den: str) -> str:
        st = res.get(part)
        return fmt_pct(st[num] / st[den], st[den]) if st and st[den] else "-"

    rows = [["cited letters held (figures whose caption names letters)", cell("tune", "held_run", "cited"),
             cell("check", "held_run", "cited"), cell("tune", "held_named", "cited"),
             cell("check", "held_named", "cited"), ">= baseline"],
            ["letters the run adds that the body cites (figures with cites)", cell("tune", "added_cited", "added"),
             cell("check", "added_cited", "added"), "-", "-", "-"]]
    split_table("Letters the vision stage looks for, against the Europe PMC xref gold "
                "(baseline: the caption's named labels)", rows, parts_of(args.part), "named")
    for part, (cpu, n) in secs.items():
        st = res[part]
        print(f"  {part}: {n} articles, {st['figures']} figures, {st['errors']} unreadable; "
              f"{n / cpu:.1f} articles per CPU-second (gold + parse + split)")
    print(f"  peak RSS {peak_rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

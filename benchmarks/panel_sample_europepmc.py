"""Print a fixed sample of 50 gold (sentence, figure) pairs from the tune articles of Europe PMC, each
with the raw XML around its xrefs, for the hand check in benchmarks/panel_check_europepmc.md.

    python benchmarks/panel_sample_europepmc.py > benchmarks/out/panel_sample_europepmc.txt
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_inline_refs import europepmc_files  # noqa: E402
from common import require_shared_data  # noqa: E402

from figlink.eval.xref_gold import gold_refs  # noqa: E402

SEED = 15


def main() -> None:
    data = require_shared_data("the panel sample")
    files = europepmc_files(data, "tune", False)
    rng = random.Random(SEED)
    picked = rng.sample(files, 300)
    pairs, hard = [], []
    for f in picked:
        gold, _ = gold_refs(f)
        if not gold:
            continue
        if len(pairs) < 25:
            pairs.append((f, rng.choice(gold)))
        # the hard half: letters written outside the xref text, spread over several xrefs, or a range
        tricky = [g for g in gold if g.panels and (len(g.xrefs) > 1 or len(g.panels) > 2 or
                                                  not re.search(r"\d[A-Za-z]", " ".join(g.xrefs)))]
        if tricky:
            hard.append((f, rng.choice(tricky)))
    sample = pairs[:25] + rng.sample(hard, 25)
    for i, (f, g) in enumerate(sample, 1):
        raw = f.read_text(encoding="utf-8", errors="replace")
        print(f"{i:2d}. {f.name} {g.figure_id} gold={sorted(g.panels)} xrefs={g.xrefs}")
        for m in re.finditer(r'<xref[^>]*rid="[^"]*\b' + re.escape(g.figure_id) + r'\b[^"]*"[^>]*>', raw):
            ctx = raw[max(0, m.start() - 90): m.end() + 90].replace("\n", " ")
            if any(x.split()[-1][:4] in ctx for x in g.xrefs if x.split()):
                print("      XML:", ctx)
        print("      sentence:", g.sentence[:400])


if __name__ == "__main__":
    main()

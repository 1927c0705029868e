"""Check the mention spans of inline references on real papers: ``sentence[a:b]`` is the mention text.

For every input of ``paper_identity.py`` (the JATS samples, the dev JATS articles, the eLife PDFs alone
and merged with their XML, and with ``--europepmc DIR`` the Europe PMC articles), every inline reference
must have at least one span, and the spans' texts, each once and in order, joined with "; " (as figlink
joins several mentions of a figure in one sentence) must be the mention. A JATS mention widened to a figure
word that the sentence splitter left in the previous sentence has its span clipped to the sentence: those
are counted apart ("clipped"), as the place where the mention and its sentence disagree. Prints the counts per kind of reference and the first
few failures; exit 1 when any reference fails. Skips (exit 0) without ../shared/data.

Usage: ``python benchmarks/mention_spans.py [--europepmc DIR] [--no-pdf]``
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import shared_data  # noqa: E402
from paper_identity import inputs  # noqa: E402

from figlink.errors import FiglinkError  # noqa: E402
from figlink.model import InlineRef  # noqa: E402
from figlink.pipeline import PipelineOptions, process_source  # noqa: E402


def span_problem(ref: InlineRef) -> str | None:
    """Why the spans of ``ref`` do not locate its mentions, or None when they do."""
    if not ref.mention_spans:
        return "no span"
    joined = "; ".join(dict.fromkeys(ref.text[a:b] for a, b in ref.mention_spans))
    if joined == ref.mention:
        return None
    at_edge = any(a == 0 or b == len(ref.text) for a, b in ref.mention_spans)
    if at_edge and all(ref.text[a:b] in ref.mention for a, b in ref.mention_spans):
        return "clipped"
    return f"spans give {joined!r}, mention is {ref.mention!r}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--europepmc", type=Path)
    ap.add_argument("--no-pdf", action="store_true")
    a = ap.parse_args()
    if shared_data() is None:
        print("skipped: ../shared/data not found")
        return 0
    counts: Counter[str] = Counter()
    bad: Counter[str] = Counter()
    clipped: Counter[str] = Counter()
    examples: list[str] = []
    opts = PipelineOptions(vision=False)
    for name, path, xml in inputs(a.europepmc, not a.no_pdf):
        try:
            paper = process_source(path, xml=xml, options=opts)
        except FiglinkError:
            continue
        kind = "pdf" if paper.source == "pdf" else "jats"
        for fig in paper.figures:
            for ref in fig.inline_refs:
                key = f"{kind} {'xref' if ref.tagged else 'plain'}"
                counts[key] += 1
                problem = span_problem(ref)
                if problem == "clipped":
                    clipped[key] += 1
                    examples.append(f"clipped: {name} {fig.figure_id}: mention {ref.mention!r}, sentence {ref.text[:80]!r}")
                elif problem:
                    bad[key] += 1
                    if len(examples) < 10:
                        examples.append(f"{name} {fig.figure_id}: {problem}: {ref.text[:120]!r}")
    print(f"{'references':<12} {'checked':>9} {'clipped':>8} {'failed':>7}")
    for key in sorted(counts):
        print(f"{key:<12} {counts[key]:>9,} {clipped[key]:>8,} {bad[key]:>7,}")
    print(f"{'all':<12} {sum(counts.values()):>9,} {sum(clipped.values()):>8,} {sum(bad.values()):>7,}")
    for e in examples:
        print("  " + e)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

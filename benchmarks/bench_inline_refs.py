"""Inline references and their panel letters on Europe PMC, tune and check side by side (issue 15, row 4).

Data: the 1,823 Europe PMC articles of ``jats/europepmc.tar.xz`` (unpacked into ``$FIGLINK_EUROPEPMC``,
``/work/scratch/europepmc_dev`` or a temporary folder). Split: by file name (``PMCnnnnnnn``), md5 even → tune.

Gold (:mod:`figlink.eval.xref_gold`, lxml directly, not figlink's reader): every figure xref of the body
outside captions gives, per cited figure, its sentence and the panel letters the markup writes in or
right after the xref; pairs of one sentence and figure are merged. Hand-checked on 50 pairs:
``benchmarks/panel_check_europepmc.md``.

- **coverage**: share of body figure xref citations (one per cited figure of each xref) whose figure got
  an inline reference holding that xref (its tokens with three tokens each side, inside the gold
  sentence, appear contiguously in the reference's sentence);
- **panel letters**: share of gold (sentence, figure) pairs whose reference has exactly the gold panel
  set (a pair without a reference counts wrong); also over the pairs that name letters.

Baseline (same run): paragraph level — every paragraph holding a figure xref cites that figure, with
no panel letters. Targets on check: coverage ≥ 99%, panel letters ≥ 98%.

    python benchmarks/bench_inline_refs.py [--part tune|check|both] [--quick] [--failures]
"""

from __future__ import annotations

import argparse
import os
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import add_part_args, fmt_pct, parts_of, require_shared_data, split_table, write_failures  # noqa: E402

from figlink.errors import FiglinkError  # noqa: E402
from figlink.eval.splits import doc_key, split_of  # noqa: E402
from figlink.eval.xref_gold import gold_refs, matches, padded, paragraph_baseline  # noqa: E402
from figlink.ingest.jats import parse_jats  # noqa: E402


def europepmc_folder(data: Path) -> Path:
    """The unpacked Europe PMC articles: $FIGLINK_EUROPEPMC, /work/scratch/europepmc_dev, or unpacked
    from the shared tarball into a temporary folder (kept for the run)."""
    for cand in (os.environ.get("FIGLINK_EUROPEPMC"), "/work/scratch/europepmc_dev"):
        if cand and Path(cand).is_dir() and any(Path(cand).glob("*.xml")):
            return Path(cand)
    tmp = Path(tempfile.mkdtemp(prefix="figlink-europepmc-"))
    with tarfile.open(data / "jats" / "europepmc.tar.xz") as tf:
        for m in tf.getmembers():
            if m.isfile() and m.name.endswith(".xml") and "/" not in m.name.strip("./").rsplit("/", 1)[-1]:
                m.name = Path(m.name).name
                tf.extract(m, tmp, filter="data")
    return tmp


def europepmc_files(data: Path, part: str, quick: bool) -> list[Path]:
    files = sorted(europepmc_folder(data).glob("*.xml"))
    files = [f for f in files if split_of(doc_key(f.name)) == part]
    return files[::10] if quick else files


def score_part(files: list[Path], want_failures: bool) -> tuple[dict, list[dict]]:
    st = {"cites": 0, "found": 0, "base_found": 0, "pairs": 0, "pairs_ok": 0, "pairs_found": 0,
          "letter_pairs": 0, "letter_ok": 0, "base_pairs_ok": 0, "base_letter_ok": 0, "errors": 0, "files": len(files)}
    fails: list[dict] = []
    for f in files:
        try:
            gold, _ = gold_refs(f)
            paper = parse_jats(f)
        except (FiglinkError, OSError, ValueError) as e:
            st["errors"] += 1
            if want_failures:
                fails.append({"article": f.name, "error": f"{type(e).__name__}: {e}"})
            continue
        refs = {fig.figure_id: [(padded(r.text), r) for r in fig.inline_refs] for fig in paper.figures}
        base = paragraph_baseline(f)
        for g in gold:
            cands = refs.get(g.figure_id, [])
            hit = None
            for a in g.anchors:
                st["cites"] += 1
                found = next((r for toks, r in cands if matches(a, toks)), None)
                st["found"] += found is not None
                st["base_found"] += any(matches(a, t) for t in base.get(g.figure_id, []))
                hit = hit or found
            base_hit = any(matches(a, t) for a in g.anchors for t in base.get(g.figure_id, []))
            st["pairs"] += 1
            st["pairs_found"] += hit is not None
            ok = hit is not None and frozenset(hit.panels) == g.panels
            st["pairs_ok"] += ok
            st["base_pairs_ok"] += base_hit and not g.panels
            if g.panels:
                st["letter_pairs"] += 1
                st["letter_ok"] += ok
            if want_failures and not ok:
                fails.append({"article": f.name, "figure_id": g.figure_id, "kind": "no reference" if hit is None
                              else "panels", "gold_panels": sorted(g.panels),
                              "predicted_panels": None if hit is None else hit.panels, "xrefs": g.xrefs,
                              "context": g.context, "gold_sentence": g.sentence,
                              "predicted_sentence": None if hit is None else hit.text,
                              "figure_refs": None if hit is not None else [r.text for _, r in cands][:5]})
    return st, fails


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_part_args(ap)
    args = ap.parse_args(argv)
    data = require_shared_data("the inline-reference benchmark")
    parts = parts_of(args.part)
    res, all_fails = {}, []
    t0 = time.perf_counter()
    for part in parts:
        files = europepmc_files(data, part, args.quick)
        res[part], fails = score_part(files, args.failures and part == "tune")
        if part == "tune":
            all_fails = fails

    def pct(part: str, num: str, den: str) -> str:
        r = res.get(part)
        return fmt_pct(r[num] / r[den]) if r and r[den] else "-"

    rows = [["coverage: xref citations with a reference", pct("tune", "found", "cites"), pct("check", "found", "cites"),
             pct("tune", "base_found", "cites"), pct("check", "base_found", "cites"), ">= 99%"],
            ["panel letters: (sentence, figure) pairs exactly right", pct("tune", "pairs_ok", "pairs"),
             pct("check", "pairs_ok", "pairs"), pct("tune", "base_pairs_ok", "pairs"),
             pct("check", "base_pairs_ok", "pairs"), ">= 98%"],
            ["panel letters: pairs that name letters", pct("tune", "letter_ok", "letter_pairs"),
             pct("check", "letter_ok", "letter_pairs"), "0.0%", "0.0%", ""],
            ["pairs with a reference at all", pct("tune", "pairs_found", "pairs"), pct("check", "pairs_found", "pairs"),
             "", "", ""]]
    counts = [f"{r['files']} articles ({r['errors']} errors), {r['cites']:,} citations, {r['pairs']:,} pairs "
              f"({r['letter_pairs']:,} with letters)" for r in (res.get(p) for p in ("tune", "check")) if r]
    rows.append(["gold"] + [c for c in counts] + ["-"] * (2 - len(counts)) + ["", "", ""])
    split_table("Inline references on Europe PMC (gold: xref markup; baseline: paragraph level)", rows, parts,
                "paragraph")
    print(f"\nbench_inline_refs: {time.perf_counter() - t0:.0f} s")
    if args.failures and "tune" in parts:
        write_failures("inline_refs", all_fails)
    return 0


if __name__ == "__main__":
    sys.exit(main())

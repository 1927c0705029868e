"""JATS ingestion: quality on the dev articles and speed against pubmed_parser, in one run.

Quality
- figures found / <fig> elements;
- figure xrefs (outside figure captions) whose figure gets an inline reference holding that xref;
- a deterministic sample of 100 xrefs that name panels or could (written to
  benchmarks/out/panel_sample.txt for checking by hand; the verdicts are in benchmarks/panel_check.md).
Speed
- articles/s per core: figlink.parse (metadata + figures + inline references with panels) against
  pubmed_parser's parse_pubmed_xml + parse_pubmed_caption + parse_pubmed_paragraph (metadata, captions,
  paragraphs with reference ids — less than figlink extracts), same files, same process, passes alternating
  between the two, each file's best of 5.
- peak memory of a 4-worker ingest (parse + corpus writes; the index has its own benchmark) of all dev
  articles at 1x and 4x the input.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, distinct_copy, ingest_peak, latency_row, print_table, require_shared_data, timed  # noqa: E402

from figlink.ingest.jats import parse_jats, parse_xml_bytes  # noqa: E402
from figlink.ingest.jats_xml import collapse_ws  # noqa: E402


def quality(files: list[Path]) -> tuple[list[list[str]], list[str]]:
    n_fig_el = n_figs = n_x = n_hit = 0
    sample_pool: list[tuple[str, str, str, list[str], str]] = []
    for f in files:
        paper = parse_jats(f)
        raw = f.read_text(encoding="utf-8", errors="replace")
        n_fig_el += len(re.findall(r"<fig[\s>]", raw))
        n_figs += len(paper.figures)
        root, _ = parse_xml_bytes(f.read_bytes())
        fig_ids = {el.get("id") for el in root.iter("fig")}
        by_id = {fg.figure_id: fg for fg in paper.figures}
        for x in root.iter("xref"):
            rids = [r for r in (x.get("rid") or "").split() if r in fig_ids]
            if not rids:
                continue
            anc = x.getparent()
            while anc is not None and anc.tag not in ("fig", "fig-group"):
                anc = anc.getparent()
            if anc is not None:
                continue  # a figure caption citing a figure is not a body sentence
            xt = collapse_ws("".join(x.itertext()))
            for r in rids:
                n_x += 1
                refs = [ref for ref in by_id[r].inline_refs if xt in ref.text] if r in by_id else []
                n_hit += bool(refs)
                if refs:
                    sample_pool.append((f.name, r, xt, refs[0].panels, refs[0].text))
    rng = random.Random(20261122)
    sample = rng.sample(sample_pool, min(100, len(sample_pool)))
    lines = [f"{i + 1:3d}. {name} {rid} xref=«{xt}» panels={panels}\n     {text}"
             for i, (name, rid, xt, panels, text) in enumerate(sample)]
    rows = [["figures found / <fig> elements", f"{n_figs}/{n_fig_el} = {n_figs / n_fig_el:.2%}"],
            ["figure xrefs with an inline reference", f"{n_hit}/{n_x} = {n_hit / n_x:.2%}"]]
    return rows, lines


def speed(files: list[Path], repeat: int) -> list[list[str]]:
    import pubmed_parser as pp

    def pubmed(f: Path):
        s = str(f)
        return pp.parse_pubmed_xml(s), pp.parse_pubmed_caption(s), pp.parse_pubmed_paragraph(s, all_paragraph=True)

    def ours(f: Path):
        return parse_jats(f)

    ok: list[Path] = []
    for f in files:  # compare on the files pubmed_parser can read at all
        try:
            pubmed(f)
            ok.append(f)
        except Exception:
            pass
    failed = len(files) - len(ok)
    # Passes alternate between the two parsers, and each file keeps its best time, so a burst of load
    # from elsewhere on the machine hits both alike.
    lat_pp = [float("inf")] * len(ok)
    lat_fl = [float("inf")] * len(ok)
    papers: list = []
    for _ in range(repeat):
        lat, _ = timed(pubmed, ok)
        lat_pp = [min(a, b) for a, b in zip(lat_pp, lat)]
        lat, papers = timed(ours, ok)
        lat_fl = [min(a, b) for a, b in zip(lat_fl, lat)]
    refs = sum(len(fg.inline_refs) for p in papers for fg in p.figures)
    ratio = sum(lat_pp) / sum(lat_fl)
    return [latency_row("pubmed_parser (xml + caption + paragraph)", lat_pp, "articles",
                        f"metadata, captions, paragraphs with ref ids; crashed on {failed}/{len(files)} files"),
            latency_row("figlink.parse", lat_fl, "articles",
                        f"+ {refs} inline refs with panels; {ratio:.2f}x pubmed_parser")]


def memory(files: list[Path]) -> list[list[str]]:
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="figlink-input-"))
    try:
        for copies in (1, 4):
            src = tmp / f"x{copies}"
            src.mkdir()
            for c in range(copies):
                for f in files:  # each copy its own article (its ids suffixed), so none is a duplicate
                    (src / f"{c}-{f.name}").write_bytes(distinct_copy(f.read_bytes(), c) if c else f.read_bytes())
            corpus = Path(tempfile.mkdtemp(prefix="figlink-bench-"))
            try:
                peak, wall = ingest_peak([str(src)], corpus, ["--workers", "4", "--no-vision", "--no-index"])
            finally:
                shutil.rmtree(corpus, ignore_errors=True)
            n = copies * len(files)
            rows.append([f"ingest {n} articles, 4 workers", f"{peak:,.0f} MB peak (all processes)",
                         f"{n / wall:.1f} articles/s wall"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-memory", action="store_true")
    args = ap.parse_args()
    data = require_shared_data("the JATS benchmark")
    files = sorted((data / "jats").glob("*/*.*xml"))
    rows, sample = quality(files)
    out = REPO / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "panel_sample.txt").write_text("\n".join(sample) + "\n")
    print_table(f"JATS quality on {len(files)} dev articles (PLOS, eLife, PMC)", ["measure", "value"], rows)
    print_table("Parse speed (one core, best of %d, files both parsers read)" % args.repeat,
                ["parser", "throughput", "p50", "p99", "notes"], speed(files, args.repeat))
    if not args.no_memory:
        print_table("Ingest memory as the input grows", ["run", "memory", "speed"], memory(files))


if __name__ == "__main__":
    main()

"""Fast sentence splitter vs pysbd on every citing sentence of the dev JATS articles.

For each figure xref in a text block, the sentence holding it is taken from figlink's splitter and
from pysbd (the reference); the table reports how many are identical, the speed of both, and the
differing cases are written to benchmarks/out/sentence_diffs.txt for reading.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, print_table, require_shared_data  # noqa: E402

import pysbd  # noqa: E402

from figlink.ingest.jats import _block_text, _blocks, parse_xml_bytes  # noqa: E402
from figlink.text.sentences import sentence_at, sentence_spans  # noqa: E402


def main() -> None:
    data = require_shared_data("the sentence benchmark")
    files = sorted((data / "jats").glob("*/*.*xml"))
    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
    blocks: list[tuple[str, list[tuple[int, int]], str]] = []
    for f in files:
        root, _ = parse_xml_bytes(f.read_bytes())
        ids = {fig.get("id"): 0 for fig in root.iter("fig") if fig.get("id")}
        for b in _blocks(root):
            text, xrefs = _block_text(b, ids)
            if xrefs:
                blocks.append((text, [(x.start, x.end) for x in xrefs], f.name))
    t = time.perf_counter()
    ours = [sentence_spans(text, xr) for text, xr, _ in blocks]
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    ref = [[(s.start, s.end) for s in seg.segment(text)] for text, _, _ in blocks]
    t_ref = time.perf_counter() - t
    same = total = 0
    diffs: list[str] = []
    for (text, xrefs, name), o, r in zip(blocks, ours, ref):
        r = [(s, e) for s, e in r if text[s:e].strip()]
        r = [(s + len(text[s:e]) - len(text[s:e].lstrip()), e - (len(text[s:e]) - len(text[s:e].rstrip())))
             for s, e in r]
        for xs, _ in xrefs:
            total += 1
            a = o[sentence_at(o, xs)]
            b = r[sentence_at(r, xs)]
            if text[a[0]:a[1]] == text[b[0]:b[1]]:
                same += 1
            else:
                diffs.append(f"{name}\n  figlink: {text[a[0]:a[1]]}\n  pysbd:   {text[b[0]:b[1]]}\n")
    out = REPO / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "sentence_diffs.txt").write_text("\n".join(diffs))
    n = len(blocks)
    print_table(
        f"Citing sentences: figlink splitter vs pysbd ({n} citing blocks, {total} xrefs, {len(files)} articles)",
        ["splitter", "blocks/s", "ms per article", "citing sentences identical to pysbd"],
        [["figlink", f"{n / t_ours:,.0f}", f"{t_ours / len(files) * 1e3:.2f}", f"{same}/{total} = {same / total:.2%}"],
         ["pysbd", f"{n / t_ref:,.0f}", f"{t_ref / len(files) * 1e3:.2f}", "(reference)"]])
    print(f"speed-up: {t_ref / t_ours:.0f}x; differences in {out / 'sentence_diffs.txt'}")


if __name__ == "__main__":
    main()

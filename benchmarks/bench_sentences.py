"""Fast sentence splitter vs pysbd on every citing sentence of the dev JATS articles.

For each figure xref in a text block, the sentence holding it is taken from figlink's splitter and
from pysbd (the reference); the table reports how many are identical, the speed of both, and the
differing cases are written to benchmarks/out/sentence_diffs.txt for reading.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, print_table, require_shared_data  # noqa: E402

import pysbd  # noqa: E402

from figlink.ingest.jats_refs import block_text, text_blocks  # noqa: E402
from figlink.ingest.jats_xml import parse_xml_bytes  # noqa: E402
from figlink.text.sentences import sentence_at, sentence_spans  # noqa: E402


_ABBREV_END = re.compile(r"(?:\bet al|\b[Ff]igs?|\bca|\bpl|\bp|\bsp|\be\.g|\bi\.e|\bcf|\bvs)\.\s*$")
_GENE_START = re.compile(r"[a-z]+[A-Z0-9]")


def _depth(text: str, q: int) -> int:
    return text.count("(", 0, q) - text.count(")", 0, q)


def _judge_cut(text: str, q: int, who: str, xrefs: list[tuple[int, int]], breaks: list[int]) -> str:
    """Why a sentence cut at offset q that only one splitter makes is right or wrong (rules written after
    reading every difference; each verdict starts with who is right)."""
    before, after = text[:q].rstrip(), text[q:].lstrip()
    if who == "pysbd":
        if after[:1] in ("\u201d", "\u2019", '"'):
            return "figlink right: a closing quote belongs to the sentence it closes"
        if after[:1] == ")" and before[-1:] in ".!?":
            return "tie: stray punctuation after the end mark in the source ('… S4). ).')"
        if _depth(text, q) > 0:
            return "pysbd wrong: cut inside brackets"
        if _ABBREV_END.search(before):
            return "pysbd wrong: cut after an abbreviation (et al., Fig., ca., pl., p., sp.)"
        if before[-1:] not in ".!?\"'\u201d\u2019)]":
            return "pysbd wrong: cut without an end mark"
        if after[:1].islower() and not _GENE_START.match(after):
            return "pysbd wrong: cut before a lower-case word"
        if re.match(r"\d+\)|[a-z]\)|\([a-z]\)", after):
            return "tie: pysbd cuts before list items 1) 2)"
        if any(s < q < e for s, e in xrefs):
            return "pysbd right: the publisher's xref markup runs past the sentence end ('Figure 7. I')"
        if before[-1:] == ")" and before[-2:-1] not in ".!?" and after[:1].isupper():
            return "pysbd right: an item without an end mark runs into the next ('(See Fig 3) Dialog …')"
        return "unclassified (pysbd cut)"
    if any(q <= b and not text[q:b].strip() for b in breaks):
        return "figlink right: a list item starts a new sentence"
    if _depth(text, q) > 0:
        return "tie: figlink cuts two sentences inside one parenthesis, pysbd keeps it whole"
    if re.search(r"\b[A-Z]\.$", before):
        return "figlink right: a sentence ends after a single capital ('Lobe A. Consistent', 'Fig. 3 A. For')"
    if re.search(r"(?:Figs?|Figures?|Table)\.? \d+[A-Za-z]?\.$", before) or re.search(r"[?!][\"'\u201d\u2019]?$", before):
        return "figlink right: sentence ends after a figure number or a question"
    return "unclassified (figlink cut)"


def adjudicate(text: str, ours: tuple[int, int], ref: tuple[int, int], xrefs: list[tuple[int, int]],
               breaks: list[int]) -> str:
    """A verdict for the first boundary where the two sentences differ."""
    if ref[0] != ours[0]:
        return _judge_cut(text, max(ref[0], ours[0]), "pysbd" if ref[0] > ours[0] else "figlink", xrefs, breaks)
    return _judge_cut(text, min(ref[1], ours[1]), "pysbd" if ref[1] < ours[1] else "figlink", xrefs, breaks)


def _winner(verdict: str) -> str:
    if verdict.startswith(("figlink right", "pysbd wrong")):
        return "figlink"
    if verdict.startswith("pysbd right"):
        return "pysbd"
    return "tie" if verdict.startswith("tie") else "unclassified"


def main() -> None:
    data = require_shared_data("the sentence benchmark")
    files = sorted((data / "jats").glob("*/*.*xml"))
    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
    blocks: list[tuple[str, list[tuple[int, int]], list[int], str]] = []
    for f in files:
        root, _ = parse_xml_bytes(f.read_bytes())
        ids = {fig.get("id"): 0 for fig in root.iter("fig") if fig.get("id")}
        for b in text_blocks(root):
            breaks: list[int] = []
            text, xrefs = block_text(b, ids, breaks)
            if xrefs:
                blocks.append((text, [(x.start, x.end) for x in xrefs], breaks, f.name))
    t = time.perf_counter()
    ours = [sentence_spans(text, xr, br) for text, xr, br, _ in blocks]
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    ref = [[(s.start, s.end) for s in seg.segment(text)] for text, _, _, _ in blocks]
    t_ref = time.perf_counter() - t
    same = total = 0
    diffs: list[str] = []
    verdicts: Counter[str] = Counter()
    for (text, xrefs, breaks, name), o, r in zip(blocks, ours, ref):
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
                verdict = adjudicate(text, a, b, xrefs, breaks)
                verdicts[verdict] += 1
                diffs.append(f"{name} [{verdict}]\n  figlink: {text[a[0]:a[1]]}\n  pysbd:   {text[b[0]:b[1]]}\n")
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
    print_table("Where the citing sentences differ: which splitter the rules say is right",
                ["verdict", "xrefs"], [[k, str(v)] for k, v in verdicts.most_common()])
    wins: Counter[str] = Counter()
    for verdict, n_v in verdicts.items():
        wins[_winner(verdict)] += n_v
    print_table("Citing sentences by outcome", ["outcome", "xrefs"],
                [["identical to pysbd", f"{same}/{total} = {same / total:.2%}"],
                 ["identical, or different and figlink right", f"{same + wins['figlink']}/{total} = "
                                                                f"{(same + wins['figlink']) / total:.2%}"],
                 ["different and pysbd right", f"{wins['pysbd']}/{total} = {wins['pysbd'] / total:.2%}"],
                 ["different, neither wrong (tie)", str(wins["tie"])],
                 ["different, not classified", str(wins["unclassified"])]])


if __name__ == "__main__":
    main()

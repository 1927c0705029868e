"""The retrieval task of bench_search.py, built from JATS articles.

Per article, the paragraphs that cite a figure are split in two by position (even/odd). Sentences of
the odd ("query") paragraphs that cite exactly one figure become queries, with the citation removed;
the cited figure (and, when one panel is named, that panel) is the answer. The query paragraphs are
removed from the article before it is parsed for the index, so the index holds the captions, the
citing sentences of the even paragraphs only, and never a query paragraph.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from figlink.ingest.jats import _TRAILING_LETTERS, _block_text, _blocks, paper_from_root, parse_xml_bytes
from figlink.model import CaptionSplit, Paper, Subcaption
from figlink.text.grammar import KEYWORD_BEFORE
from figlink.text.mentions import find_mentions
from figlink.text.sentences import sentence_spans


@dataclass
class Query:
    text: str
    paper_id: str
    figure_id: str
    panel: Optional[str]  # set when the sentence names exactly one panel of the figure


_LEFTOVER = [(re.compile(r"\(\s*[,;:.\s]*(?:and|see|e\.g\.,?|i\.e\.,?)?\s*[,;:.\s]*\)"), ""),
             (re.compile(r"\[\s*[,;\s]*\]"), ""), (re.compile(r"\s+([,.;:)])"), r"\1"),
             (re.compile(r"\(\s+"), "("), (re.compile(r"\s{2,}"), " ")]


def strip_citations(text: str, cuts: list[tuple[int, int]]) -> str:
    """The sentence without the figure citations at ``cuts`` (and the brackets they leave empty)."""
    out, last = [], 0
    for s, e in sorted(cuts):
        if s >= last:
            out.append(text[last:s])
            last = e
    out.append(text[last:])
    s = "".join(out)
    for pat, rep in _LEFTOVER:
        s = pat.sub(rep, s)
    return s.strip()


def _citation_cuts(text: str, xrefs) -> list[tuple[int, int]]:
    cuts = []
    for x in xrefs:
        start, end = x.start, x.end
        m = KEYWORD_BEFORE.search(text, max(0, start - 30), start)
        if m:
            start = m.start()
        t = _TRAILING_LETTERS.match(text, end)
        if t:
            end = t.end()
        cuts.append((start, end))
    cuts.extend((m.start, m.end) for m in find_mentions(text))
    return cuts


_KEEP = {"fig", "fig-group", "table-wrap", "supplementary-material", "media", "disp-formula"}


def _empty_block(block) -> None:
    """Remove a paragraph's prose, keeping the figures and tables that some articles nest inside it."""
    block.text = None
    for child in list(block):
        if isinstance(child.tag, str) and child.tag in _KEEP:
            child.tail = None
        else:
            block.remove(child)


def build_article(path: Path) -> tuple[Optional[Paper], list[Query]]:
    """The article as indexed (query paragraphs removed) and its queries."""
    root, _ = parse_xml_bytes(path.read_bytes())
    full = paper_from_root(copy.deepcopy(root), name=path.name)
    cited: dict[str, list[tuple[str, list[str]]]] = {}
    for f in full.figures:
        for r in f.inline_refs:
            cited.setdefault(r.text, []).append((f.figure_id, r.panels))
    ids = {fig.get("id"): 0 for fig in root.iter("fig") if fig.get("id")}
    citing = []
    for b in _blocks(root):
        text, xrefs = _block_text(b, ids)
        if xrefs:
            citing.append((b, text, xrefs))
    queries: list[Query] = []
    for i, (b, text, xrefs) in enumerate(citing):
        if i % 2 == 0:
            continue
        spans = sentence_spans(text, [(x.start, x.end) for x in xrefs])
        for s, e in spans:
            inside = [x for x in xrefs if s <= x.start < e]
            sent = text[s:e]
            figs = cited.get(sent, [])
            if not inside or len({f for f, _ in figs}) != 1:
                continue
            fid, panels = figs[0][0], sorted({p for _, ps in figs for p in ps})
            q = strip_citations(sent, [(a - s, c - s) for a, c in _citation_cuts(text, inside)] +
                                [(m.start, m.end) for m in find_mentions(sent)])
            if len(re.findall(r"\w+", q)) >= 4:
                queries.append(Query(q, full.paper_id, fid, panels[0] if len(panels) == 1 else None))
        _empty_block(b)
    return paper_from_root(root, name=path.name), queries


# ----------------------------------------------------------------------------- regex subcaption baseline

_MARKER = re.compile(r"(?:(?<=^)|(?<=[\s.;:]))\(([A-Za-z])\)\s*|(?:(?<=^)|(?<=[.;]\s))([A-Z])[.:)]\s+")


def regex_split(caption: str) -> CaptionSplit:
    """A plain regex caption splitter (the baseline): text after "(A)", "A.", "A)" … up to the next marker."""
    marks = [(m.start(), m.end(), (m.group(1) or m.group(2)).lower()) for m in _MARKER.finditer(caption)]
    letters = [lab for *_, lab in marks]
    if len(marks) < 2 or letters != sorted(letters):
        return CaptionSplit(shared_text=caption, subcaptions=[])
    subs = []
    for j, (s, e, lab) in enumerate(marks):
        end = marks[j + 1][0] if j + 1 < len(marks) else len(caption)
        subs.append(Subcaption(labels=[lab], text=caption[e:end].strip(), spans=[[e, end]]))
    return CaptionSplit(shared_text=caption[:marks[0][0]].strip(), subcaptions=subs)


# ----------------------------------------------------------------------------- a split task (issue 15)

def load_split_task(files: list[Path], max_queries: int | None = None, seed: int = 15) -> tuple[list[Paper], list[Query], int]:
    """The articles of one part as indexed (their query paragraphs removed) and their queries; with
    ``max_queries`` a fixed-seed sample of the figure queries (the panel queries among them kept).
    Returns (papers, queries, files that could not be read)."""
    import random

    papers: list[Paper] = []
    queries: list[Query] = []
    bad = 0
    for f in files:
        try:
            paper, qs = build_article(f)
        except Exception:  # a bad file must not stop the benchmark; counted
            bad += 1
            continue
        if paper is not None:
            papers.append(paper)
            queries.extend(qs)
    if max_queries is not None and len(queries) > max_queries:
        queries = random.Random(seed).sample(queries, max_queries)
    return papers, queries, bad

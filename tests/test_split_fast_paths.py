"""The caption splitter's own fast paths (sentence ends read from a one-group match, pieces cleaned and grouped
with one trailing space taken first and no sort where the groups are in order, free sentences kept as
pieces) give what the plain forms they replace give.

The plain forms below are the code as it was before each shortcut; they are compared on random strings
over an alphabet of the characters the code looks at, and on real-looking captions.
"""

from __future__ import annotations

import random
import re

from figlink.model import CaptionSplit, Subcaption
from figlink.text import caption_sentences as cs
from figlink.text import mentions, subcaptions as sc
from figlink.text.label_roles import Tok, assign_roles, find_label_tokens
from figlink.text.labels import label_order

from test_caption_fast_paths import _samples
from test_label_fast_paths import LABEL_TEXTS

_PLAIN_END = re.compile(
    r"""(?P<punct>[.!?][.!?]*)(?P<close>["'\u201d\u2019\]]*)
        (?:(?P<space>\s+)(?=[A-Z0-9(\[\"'\u201c\u2018*#\u00a0]|[a-z][ \u00a0]+\S|[a-z](?:[-\u2013][a-z])?[).:,]\s)|(?=[A-Z(\[]))""",
    re.X,
)


def _plain_sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    s = start
    for m in _PLAIN_END.finditer(text, start, stop):
        dot = m.start("punct")
        prev = text[dot - 1:dot]
        single = m.group("punct") == "."  # only a lone period can close an abbreviation
        if prev.isalpha():
            if single and cs._is_abbreviation(text, dot):
                continue
            if dot >= 1 and cs._LABEL_BEFORE.search(text, max(0, dot - 4), dot):
                continue
        elif prev == "." and single and cs._is_abbreviation(text, dot):
            continue
        if m.group("space") is None:
            before = text[dot - 2:dot] if dot >= 2 else ""
            if len(before) < 2 or not before.isalpha() or not before[1].islower():
                continue
        e = m.end("close")
        if e > s:
            a, b = s, e
            while a < b and text[a].isspace():
                a += 1
            if b > a:
                spans.append((a, b))
        s = m.end()
    a, b = s, stop
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    if b > a:
        spans.append((a, b))
    return spans


_SENTENCE_ALPHABET = ["a", "b", "e", "g", "i", "A", "B", "X", "fig", "al", "et", "vs", "approx", "cells", "\u00e9",
                      "\u0130", "\u017f", "1", "0", ".", ".", ".", "!", "?", " ", " ", "  ", "\u00a0", "\n", ")", "(",
                      "[", "]", '"', "'", "\u201d", "\u2019", "\u201c", ";", ":", ",", "-", "\u2013", "*", "#",
                      "\ud800", "\x00"]


def _random_texts(alphabet: list[str], count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def test_sentence_spans_match_named_group_form() -> None:
    texts = _samples() + LABEL_TEXTS + _random_texts(_SENTENCE_ALPHABET, 20000, 7)
    for text in texts:
        for start in (0, 1, 5):
            if start <= len(text):
                assert cs.sentence_spans(text, start) == _plain_sentence_spans(text, start)
        assert cs.sentence_spans(text, 0, len(text) // 2) == _plain_sentence_spans(text, 0, len(text) // 2)


def _plain_clean(text: str, a: int, b: int) -> tuple[int, int]:
    if a < b and text[a] == " ":
        a += 1
    return sc._trim(text, a, b)


def _plain_build(text: str, pieces: list[tuple]) -> CaptionSplit:
    shared: list[str] = []
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[tuple[int, int]]] = {}
    for p in pieces:
        a, b = _plain_clean(text, p[0], p[1])
        if b <= a or not re.search(r"\w", text[a:b]):
            continue
        positions = p[3] if len(p) > 3 else ()
        if not p[2] and not positions:
            shared.append(text[a:b])
            continue
        spans = groups.setdefault((tuple(sc.sort_labels(p[2])), positions), [])
        if spans and spans[-1][1] >= a:
            spans[-1] = (spans[-1][0], max(spans[-1][1], b))
        else:
            spans.append((a, b))
    subs = [Subcaption(list(labels), " ".join(text[a:b] for a, b in spans), [[a, b] for a, b in spans],
                       list(positions)) for (labels, positions), spans in groups.items()]
    subs.sort(key=lambda sub: (sub.spans[0][0], len(sub.positions)))
    return CaptionSplit(" ".join(shared), subs)


_PIECE_ALPHABET = ["x", "y", "1", "_", " ", " ", "  ", "\u00a0", ",", ";", ":", ".", ")", ")", "(", "[", "-",
                   "\u2014", "and", " and", "AND", "or", " or", "d", "r", "R", "\u00e9", "\ud800", "\t"]
_LABEL_SETS = [(), (), ("a",), ("b",), ("a", "b"), ("b", "a"), ("c",), ("ii",), ("1",)]
_POSITION_SETS = [("left",), ("top-left",), ("inset",), ("left", "right")]


def _random_pieces(rng: random.Random, n: int, positional: bool) -> list[tuple]:
    pieces: list[tuple] = []
    for _ in range(rng.randint(0, 8)):
        a = rng.randint(0, n)
        b = rng.randint(0, n) if rng.random() < 0.1 else min(n, a + rng.randint(0, 12))
        labels = rng.choice(_LABEL_SETS)
        if positional and rng.random() < 0.4:
            pieces.append((a, b, labels, rng.choice(_POSITION_SETS)))
        else:
            pieces.append((a, b, labels))
    pieces.sort(key=lambda p: p[0])
    return pieces


def test_build_matches_plain_clean_group_and_sort() -> None:
    rng = random.Random(11)
    for text in _random_texts(_PIECE_ALPHABET, 20000, 3):
        pieces = _random_pieces(rng, len(text), positional=rng.random() < 0.3)
        assert sc._build(text, pieces) == _plain_build(text, pieces)


def _plain_segment(ctx: sc._Ctx, body: int) -> None:
    text, tokens, add = ctx.text, ctx.tokens, ctx.pieces.append
    group: tuple[str, ...] = ()
    opener_group: tuple[str, ...] = ()
    free: list[tuple[int, int, tuple[str, ...], list[Tok]]] = []
    last_anchor_sentence: list[Tok] = []
    for s, e in ctx.sents:
        if e <= body:
            continue
        s = max(s, body)
        toks = [t for t in tokens if s <= t.start < e]
        anchors = [t for t in toks if t.role in ("open", "trail")]
        if not anchors:
            refs = tuple(sorted({lab for t in toks for lab in t.labels}, key=label_order))
            if refs and not group:
                add((s, e, refs))
                continue
            free.append((s, e, group, toks))
            continue
        for fs, fe, fg, _ in free:
            add((fs, fe, fg))
        free = []
        group, opener_group = sc._anchored(text, s, e, anchors, group, opener_group, add)
        last_anchor_sentence = anchors
    shared = sc._list_style(ctx, last_anchor_sentence) or not group
    for s, e, fg, ref_toks in free:
        if ref_toks:
            named = {lab for t in ref_toks for lab in t.labels}
            ref_labels = tuple(sorted(named, key=label_order)) if named - set(group) else ()
            if ref_labels:
                add((s, e, ref_labels))
                continue
        if not shared and sc._is_generic(text[s:e]):
            shared = True
        add((s, e, () if shared else fg))


_CAPTION_PARTS = ["Figure 2. ", "Fig. 3 ", "(A) ", "(B) ", "(C, D) ", "(a) ", "b) ", "A. ", "B: ", "(panel A) ",
                  "Cells were stained ", "in (A) and (B) ", "as in A, ", "whereas mice (D) ", "Scale bars, 50 \u00b5m. ",
                  "Data are mean \u00b1 SD. ", "All panels show the same. ", "Arrows mark cells. ", "shown. ", ". ",
                  "; ", ", and ", "(see Fig. 1) ", "(upper left) ", "Left: ", "top panel ", "e.g. ", "x (E). "]


def test_segment_matches_plain_token_filter_form() -> None:
    rng = random.Random(5)
    texts = _samples() + LABEL_TEXTS + ["".join(rng.choice(_CAPTION_PARTS) for _ in range(rng.randint(1, 14)))
                                        for _ in range(3000)]
    for text in texts:
        idx = mentions.leading_figure_index(text)
        body = idx.end if idx else 0
        sents = cs.sentence_spans(text, body)
        tokens = find_label_tokens(text, body, sents)
        assign_roles(text, body, tokens, {s for s, _ in sents})
        fast = sc._Ctx(text, sents, tokens)
        sc._segment(fast)
        plain = sc._Ctx(text, sents, tokens)
        _plain_segment(plain, body)
        assert fast.pieces == plain.pieces


def _plain_merge_pieces(text: str, pieces: list[tuple]) -> list[tuple]:
    out: list[tuple] = []
    for p in sorted(pieces, key=lambda p: p[0]):
        if out and out[-1][2] == p[2] and (p[0] <= out[-1][1] or not text[out[-1][1]:p[0]].strip()):
            out[-1] = (out[-1][0], max(out[-1][1], p[1]), out[-1][2])
        else:
            out.append(p)
    return out


def test_merge_pieces_matches_plain_form() -> None:
    rng = random.Random(13)
    for text in _random_texts(_PIECE_ALPHABET, 20000, 4):
        pieces = _random_pieces(rng, len(text), positional=False)
        rng.shuffle(pieces)
        assert sc._merge_pieces(text, pieces) == _plain_merge_pieces(text, pieces)

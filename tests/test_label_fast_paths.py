"""The panel-label finder's fast paths give what the plain forms they replace give.

Each shortcut (a regex written so the engine does less bookkeeping, a scan that skips what cannot give a
token, a phase left out where it provably changes nothing) is compared with the straightforward form.
"""

from __future__ import annotations

import random
import re
import sys

from figlink.text import grammar as g
from figlink.text import label_roles, labels, mentions
from figlink.text.caption_sentences import sentence_spans

from test_caption_fast_paths import _samples

LABEL_TEXTS = [
    "Figure 1. (A) Top left panel; (B) lower rows, and C: insets. a) x b) y (C, in red, 200x) (i)\u2013(iv).",
    "Fig. 2 A. Cells; B: mice, C, left: rats. (a, c, and e) (A-left) (panels A and B) panel C and D. i. ii.",
    "Fig. 3 a) one. b) two (see Fig. 1(A) and Figure 2 A. ), c) three; (Figs. 1A-C) 0.05, 1. 2: x",
    "Supplementary Fig. S2 (b). Fig 5 (a, b) image 3 A. Fig. 2, a: (FMNH PR 2512 Vertebra B) (a (b) c) d)",
    "Genotypes A: wild type. A Representative image. b *10 magnification. (ab, cd) (aa) (C') A' B'' iv)",
]

# The patterns as written before optional groups became "(?:X|)" (same matches, more engine bookkeeping).
_POS = r"(?:\s*[,\-\u2013]?\s*(?:top|bottom|upper|lower|middle|cent(?:er|re)|left|right|inset)s?" \
       r"(?:[\s\-]+(?:left|right|middle|cent(?:er|re)))?(?:\s+(?:panels?|images?|parts?))?)"
_LIST = rf"{g.LABEL_ATOM}{_POS}?(?:{g.LABEL_SEPARATOR}{g.LABEL_ATOM}{_POS}?)*"
PLAIN = {
    "paren": re.compile(rf"\(\s*(?:panels?\s+)?(?P<list>{_LIST})\s*(?P<note>[,;:]\s*[^()]{{0,60}}?)?\s*\)"),
    "panelparen": re.compile(rf"\((?:[^()]{{0,40}}?[;,]\s*)?(?:panels?|images?)\s+(?P<list>{_LIST})\s*\)", re.I),
    "half": re.compile(rf"(?<![^\s,;:.])(?P<list>{_LIST})\)$"),
    "dot": re.compile(rf"(?=[^\W_]{{1,4}}(?![^\W_]))(?<![\w'])(?P<list>{_LIST})\s*(?P<p>[.:,])(?=\s|$|[A-Z(])"),
}
FAST = {"paren": g.LABEL_PAREN, "panelparen": g.LABEL_PANEL_PAREN, "half": g.LABEL_HALF, "dot": g.LABEL_PUNCT}


def _texts() -> list[str]:
    return _samples() + LABEL_TEXTS + [t.swapcase() for t in LABEL_TEXTS] + [t.replace(" ", "") for t in LABEL_TEXTS]


def test_optional_groups_match_question_mark_forms() -> None:
    for text in _texts():
        for name, plain in PLAIN.items():
            for i in range(len(text) + 1):
                a, b = plain.match(text, i), FAST[name].match(text, i)
                assert (a and (a.span(), a.groupdict())) == (b and (b.span(), b.groupdict()))
        for k in range(len(text) + 1):
            a = re.match(r"\s*(?:,\s*)?(?P<sep>and|&|or|to|through|[-\u2013]|,)?\s*$", text[k:k + 8], re.I)
            b = label_roles._JOIN.fullmatch(text[k:k + 8])
            assert (a and a.group("sep")) == (b and b.group("sep"))


def test_qualifier_precheck_never_skips_a_qualifier() -> None:
    for text in _texts() + ["ſupplementary Fig. 2", "Extended  Data Fig 4", "Appendix 1\u2014figure 2"]:
        low = text.lower()
        if len(low) != len(text):
            continue
        for k in range(len(text) + 1):
            if g.QUALIFIER_BEFORE.search(text, max(0, k - 40), k):
                assert mentions._may_qualify(low, k)


def _raw_plain(text: str, body: int, starts: list[int], low: str) -> list[labels.LabelToken]:
    maybe = "fig" in low or ("image" in low and label_roles._IMAGE_NUMBER.search(low) is not None)
    masked = [(m.start, m.end) for m in mentions.find_mentions(text, low) if m.end > body] if maybe else []
    return labels.raw_label_tokens(text, body, masked, starts, low)


def test_mentions_masked_only_where_they_matter() -> None:
    for text in _texts():
        idx = mentions.leading_figure_index(text)
        body = idx.end if idx else 0
        starts = [s for s, _ in sentence_spans(text, body)]
        low = text.lower()
        assert label_roles._raw_outside_mentions(text, body, starts, low) == _raw_plain(text, body, starts, low)


def test_half_labels_match_walk_over_every_parenthesis() -> None:
    def plain(text: str, start: int) -> list[labels.LabelToken]:
        out = []
        for i, ch in enumerate(text):
            if ch != ")" or i < start:
                continue
            j = labels._word_before(text, start, i)
            if j < 0 or labels._closes_note(text, start, j):
                continue
            m = g.LABEL_HALF.search(text, max(start, i - 40), i + 1)
            tok = labels._token(m, "half") if m is not None else None
            if tok is not None:
                out.append(tok)
        return out

    for text in _texts():
        for start in (0, 1, 3):
            assert labels._scan_half(text, start, len(text), []) == plain(text, start)


def test_dot_labels_match_punct_at_every_clause_start() -> None:
    plain_end = re.compile(r"[;,]\s*(?:and|or)\s+|[.;:!?(]\s*")
    for text in _texts():
        starts = {m.end() for m in plain_end.finditer(text)} | {0}
        plain = [t for t in (labels._token(m, "dot") for m in (g.LABEL_PUNCT.match(text, s) for s in starts)
                             if m is not None) if t is not None]
        hits = labels._clause_label_hits(text, 0)
        found = {m.end() for m in hits}
        fast = labels._clause_dot_tokens(hits, []) + labels._dot_label_tokens(text, starts - found, [])
        assert sorted(fast, key=lambda t: t.start) == sorted(plain, key=lambda t: t.start)


def _random_texts(seed: int, pieces: list[str], count: int = 400) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randrange(40))) for _ in range(count)]


def test_every_close_ends_note_matches_paired_span_count() -> None:
    plain = re.compile(r"\([^()]{0,195}\)")
    pieces = ["(", ")", "a", " ", "x" * 60, "x" * 195, "A)", "(b", "\u00e9", "\ud800", "\x00"]
    for text in _texts() + _random_texts(3, pieces) + _random_texts(4, pieces[:5] + ["x" * 97]):
        for start in (0, 1, 5):
            expected = text.count(")", start) == len(plain.findall(text, start))
            assert labels._every_close_ends_note(text, start) == expected


def test_heading_word_matches_backtracking_form() -> None:
    plain = re.compile(r"[A-Z][a-z]+\s+(?=[A-Za-z]{1,4}\s*:)")
    pieces = ["A", "Ab", "abcde", "ab", " ", "\t", "\u00a0", "\u2003", ":", " :", "x", "\u00e9", "\ud800", "."]
    for text in _texts() + _random_texts(5, pieces) + _random_texts(6, pieces[:4] + [" ", ":"]):
        for i in range(len(text) + 1):
            m, p = labels._HEADING_WORD.match(text, i), plain.match(text, i)
            assert (m and m.span()) == (p and p.span())


def test_figure_index_opener_gate() -> None:
    def plain(caption: str) -> object:
        i = 0
        while i < len(caption) and caption[i] in " \t\n\u00a0":
            i += 1
        return g.KEYWORD.match(caption, i)

    firsts = [chr(o) for o in range(0x250)] + ["\u2003", "\u212a", "\ud800", "\U0001d400"]
    for first in firsts:
        for rest in ("igure 1. x", "upplementary Fig. 2", "xtended Data Fig. 3 |", "mage 4", "ppendix 1\u2014figure 2", ""):
            caption = first + rest
            if plain(caption) is None:
                assert mentions.leading_figure_index(caption) is None
            if first not in mentions._INDEX_OPENERS and first.isascii():
                assert plain(caption) is None  # the gate's claim
    assert mentions.leading_figure_index("") is None


def test_mention_free_tokens_before_the_first_keyword() -> None:
    pieces = ["(A) ", "(b) ", "Fig. 1", "figure 2a", "Supplementary ", "Extended Data ", "Appendix 1\u2014",
              "image 3 ", "IMAGE 4B", "FIG 5", " ", "x" * 30, ". ", "\u0130", "and ", "(C, D)", "a) "]
    rng = random.Random(9)
    # Tokens, then a gap of about 40 characters (a qualifier may stand there), then keywords.
    split = [a + rng.choice(["", " ", "Supplementary ", "Extended Data "]).rjust(rng.randrange(34, 46)) + b
             for a, b in zip(_random_texts(6, pieces[:2] + pieces[-3:]), _random_texts(7, pieces[2:10]))]
    for text in _texts() + _random_texts(5, pieces) + split:
        low = text.lower()
        if len(low) == len(text):
            keys = [k for k in (low.find("fig"), low.find("image")) if k >= 0]
            assert all(m.start >= min(keys) - 40 for m in mentions.find_mentions(text, low))
        idx = mentions.leading_figure_index(text)
        body = idx.end if idx else 0
        starts = [s for s, _ in sentence_spans(text, body)]
        assert label_roles._raw_outside_mentions(text, body, starts, low) == _raw_plain(text, body, starts, low)


def test_dot_labels_none_at_or_past_the_end() -> None:
    for text in _texts():
        assert labels._dot_label_tokens(text, {len(text), len(text) + 1, len(text) + 7}, []) == []


def test_panel_word_needs_panel_in_lower_case() -> None:
    # "anel" ignoring case matches ASCII letters only, so a _PANELWORD match lower-cases to "panel".
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    for ch in "anel":
        assert set(re.findall(f"(?i:{ch})", every)) == {ch, ch.upper()}
    pieces = ["Panel", "PANELS", "panel", "pAnEl", "\u0130", "\u017f", " A", " and B", "-", "(", ")", "x", " "]
    for text in _texts() + _random_texts(8, pieces):
        if g.LABEL_PANEL_WORD.search(text):
            assert "panel" in text.lower()

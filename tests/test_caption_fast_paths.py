"""The caption stage's fast paths give what the plain forms they replace give.

Each shortcut (a regex rewritten so the engine can skip ahead, a membership test before a regex, a
whitespace check before a split) is compared with the straightforward form on tricky strings.
"""

from __future__ import annotations

import re
import sys

from figlink.text import grammar as g
from figlink.text import caption_sentences, labels, mentions, normalize, spatial, subcaptions

SAMPLES = [
    "",
    " ",
    "Figure 1. (A) Top left panel; (B) lower rows, and C: insets. Arrows mark narrow flowers.",
    "Fig. 2: a) x=1, b) p < 0.05 (n = 12); c. the right-hand side, 3.5 µm; far-left top-row columns",
    "(a. U-fiber; b. ILF; see Fig 1) across 2,000 cells.In all panels, data are mean ± SD.",
    "Supplementary Fig. S3 and Appendix 1\u2014figure 2; (Fig. 4) ſupplementary image 5",
    "Centre\tcenter\u00a0CENTRE  left\n\nright \u2009 top_row -bottom x1top",
    "e.g. A. Photographs; and b: the ratio r2=0.72 (P \u2264 0.01) [in {braces}] (unbalanced",
    "\u0663\u0664 \u0661.\u0662 digits, a1 22b _3 4_ \x015",
]


def _samples() -> list[str]:
    out = list(SAMPLES)
    out += [s.lower() for s in SAMPLES] + [s.upper() for s in SAMPLES]
    out += [s[i:] for s in SAMPLES for i in (1, 3, 7)]
    return out


def test_number_pattern_matches_lookbehind_first_form() -> None:
    plain = re.compile(r"(?<![A-Za-z0-9_\x01])\d+(?:[.,]\d+)*(?![A-Za-z0-9_])")
    for text in _samples():
        assert normalize._NUMBER.sub("#", text) == plain.sub("#", text)


def test_clause_end_matches_alternation_form() -> None:
    plain = re.compile(r"[;,]\s*(?:and|or)\s+|[.;:!?(]\s*")
    for text in _samples():
        assert [m.end() for m in labels._CLAUSE_END.finditer(text)] == [m.end() for m in plain.finditer(text)]
        # The label scans keep exactly the ends where a dot/colon label (not a number) opens.
        ends = {m.end() for m in plain.finditer(text) if g.LABEL_PUNCT.match(text, m.end())
                and not re.match(r"\d", text[m.end():])}
        assert {m.end() for m in labels._clause_label_hits(text, 0)} == ends


def test_keyword_hint_and_panel_word_match_plain_forms() -> None:
    hint = re.compile(r"[Ff]ig|FIG|[Ii]mage|IMAGE")
    panel = re.compile(rf"(?<![\w-])[Pp](?i:anels?)\s+(?P<list>{g.LABEL_LIST})(?![\w'])")
    for text in _samples():
        assert [m.span() for m in mentions._KEYWORD_HINT.finditer(text)] == [m.span() for m in hint.finditer(text)]
        assert [m.span() for m in g.LABEL_PANEL_WORD.finditer(text)] == [m.span() for m in panel.finditer(text)]


def test_place_hits_match_regex_form() -> None:
    word = re.compile(r"(?:top|bottom|upper|lower|middle|cent(?:er|re)|left|right|far|insets?|rows?|columns?)"
                      r"(?![a-z])")
    for text in _samples():
        for start, stop in ((0, len(text)), (min(2, len(text)), len(text)), (0, max(0, len(text) - 2))):
            low = text.lower()
            expected = [m.start() for m in word.finditer(low, start, stop)
                        if m.start() == 0 or not (low[m.start() - 1].isalnum() or low[m.start() - 1] in "_-")]
            assert spatial._place_hits(text, start, stop) == expected


def test_whitespace_shortcuts_match_split_join() -> None:
    for text in _samples():
        assert normalize._collapse_spaces(text) == " ".join(text.split())
        if normalize._single_spaced(text):
            assert " ".join(text.split()) == text


def test_other_spaces_are_every_space_but_the_blank() -> None:
    every = {chr(i) for i in range(sys.maxunicode + 1) if chr(i).isspace()} - {" "}
    assert set(normalize._OTHER_SPACES) == every


def test_membership_prechecks_never_skip_a_match() -> None:
    for text in _samples():
        for sentence in (text, text[:80]):
            if subcaptions._GENERIC_ANY.search(sentence):
                assert subcaptions._may_say_all(sentence)
        for k in range(len(text)):
            if g.QUALIFIER_BEFORE.search(text, max(0, k - 40), k) and k:
                assert text[k - 1].isspace() or text[k - 1] in g.DASHES
        for m in caption_sentences._END.finditer(text):
            dot = m.start()
            if dot >= 1 and caption_sentences._LABEL_BEFORE.search(text, max(0, dot - 4), dot):
                assert caption_sentences._lone_letter(text, dot)


def test_case_insensitive_words_of_the_generic_note_have_only_ascii_look_alikes() -> None:
    letters = set("allbotheachevery")
    for i in range(0x250):  # Latin letters; the special case folds (i, s, k) are not among these letters
        ch = chr(i)
        for x in letters:
            if re.fullmatch(x, ch, re.I):
                assert x in ch.lower()
    for ch in "\u0130\u0131\u017f\u212a":  # the four non-ASCII letters re.I folds onto ASCII
        assert not any(re.fullmatch(x, ch, re.I) for x in letters)


def test_shared_only_split_matches_full_segmentation() -> None:
    from figlink.text.caption_sentences import sentence_spans
    from figlink.text.label_roles import find_label_tokens

    texts = _samples() + ["Figure 2. Overview of the site. Cells were counted.. Then. . stained!  ",
                          "Fig. 3 \u00a0 Mean values . ; , The left panel shows cells. e.g. X.Y."]
    for text in texts:
        idx = mentions.leading_figure_index(text)
        body = idx.end if idx else 0
        sents = sentence_spans(text, body)
        if find_label_tokens(text, body, sents):
            continue
        ctx = subcaptions._Ctx(text, sents, [])
        subcaptions._segment(ctx)
        plain = subcaptions._merge_pieces(text, ctx.pieces)
        assert subcaptions._shared_pieces(text, sents) == plain
        assert subcaptions._build(text, subcaptions._shared_pieces(text, sents)) == subcaptions._build(text, plain)


def test_abbreviation_shortcut_matches_full_walk() -> None:
    def plain(text: str, dot: int) -> bool:
        j = dot
        while j > 0 and dot - j < 12 and (text[j - 1].isalpha() or text[j - 1] == "."):
            j -= 1
        word = text[j:dot].lower().strip(".")
        dotted = "." in word and caption_sentences._DOTTED.fullmatch(word) is not None
        return word in caption_sentences._ABBREVIATIONS or dotted

    texts = _samples() + ["see approx. and xapprox. or supplem. e.g. a.b.c.d. x.y.z.w.v.u. et al.",
                          "\u0130\u0130\u0130\u0130\u0130fig. \u00e9tudes. Fig.A. tt.e.g."]
    for text in texts:
        for dot, ch in enumerate(text):
            if ch in ".!?":
                assert caption_sentences._is_abbreviation(text, dot) == plain(text, dot)


def test_clean_last_letter_test_is_exact() -> None:
    import sys as _sys

    ends = {c for c in map(chr, range(_sys.maxunicode + 1)) if c.lower()[-1:] in ("d", "r")}
    assert ends == set("dDrR")


def test_replace_numbers_matches_the_number_pattern() -> None:
    for text in _samples():
        assert normalize._replace_numbers(text) == normalize._NUMBER.sub("\x01", text)


def test_relational_chars_ascii_first() -> None:
    assert normalize._RELATIONAL_CHARS[:3] == "=<>" and not normalize._RELATIONAL_CHARS[3:].isascii()
    assert all(not c.isascii() for c in normalize._RELATIONAL_CHARS[3:])


def test_heading_word_needs_a_colon() -> None:
    for text in _samples() + ["Genotypes A: x", "Genotypes AB x", "Genotypes A : x"]:
        if ":" not in text:
            assert not any(labels._HEADING_WORD.match(text, i) for i in range(len(text) + 1))

"""The shared figure-mention grammar, on forms seen in PLOS, eLife, PMC and arXiv papers."""

import pytest

from figlink.text.mentions import FigureCitation as C
from figlink.text.grammar import expand_letters
from figlink.text.mentions import figure_key, find_mentions, parse_mention


@pytest.mark.parametrize("text, expected", [
    ("Figure 1d", [C("1", ("d",))]),
    ("Fig. 2A–C", [C("2", ("a", "b", "c"))]),
    ("Fig. 2A-C", [C("2", ("a", "b", "c"))]),
    ("Figures 3B and 4C", [C("3", ("b",)), C("4", ("c",))]),
    ("Figs 3–5", [C("3"), C("4"), C("5")]),
    ("Figure 3A,B,D,E,F", [C("3", ("a", "b", "d", "e", "f"))]),
    ("Figure 4F, G", [C("4", ("f", "g"))]),
    ("Fig. 2(a)", [C("2", ("a",))]),
    ("Fig. 1a and b", [C("1", ("a", "b"))]),
    ("Figure 1—figure supplement 2A", [C("1-s2", ("a",))]),
    ("Figure 2—figure supplements 1 and 2", [C("2-s1"), C("2-s2")]),
    ("Figure 2—figure supplements 1–3", [C("2-s1"), C("2-s2"), C("2-s3")]),
    ("Figure1—figure supplements 1 and 2", [C("1-s1"), C("1-s2")]),
    ("Supplementary Fig. S1", [C("S1")]),
    ("Supplementary Figure 3", [C("S3")]),
    ("Figure S3", [C("S3")]),
    ("Extended Data Fig. 4", [C("ED4")]),
    ("Appendix 1—figure 2", [C("A1-2")]),
    ("Author response image 1", [C("R1")]),
    ("FIG. 2.", [C("2")]),
    # xref texts without their keyword
    ("2", [C("2")]),
    ("4C", [C("4", ("c",))]),
    ("B", [C("", ("b",))]),
    ("C–E", [C("", ("c", "d", "e"))]),
    # words after a number are not panels
    ("Figure 1 and", [C("1")]),
    ("Figure 2 a", [C("2")]),
    # Europe PMC sentences (issue 15 #5): ranges that repeat the number, ", and", sub-panels, a keyword
    # repeated after "and"
    ("Figs. 5A–5C", [C("5", ("a",)), C("5", ("b", "c"))]),
    ("Figs. 5A–5D, 5F and 5H–5L", [C("5", ("a",)), C("5", ("b", "c", "d")), C("5", ("f",)), C("5", ("h",)),
                                   C("5", ("i", "j", "k", "l"))]),
    ("Fig. 3b, c, and d", [C("3", ("b", "c", "d"))]),
    ("Fig 5A2 and 5B2", [C("5", ("a",)), C("5", ("b",))]),
    ("Figures 5C1,C2,D1,D2", [C("5", ("c", "d"))]),
    ("Figs 2B and S1", [C("2", ("b",)), C("S1")]),        # "S1" is a figure, not sub-panel s1
    ("Figure 1A and B6 mice", [C("1", ("a",))]),          # a mouse strain, not panel b
    ("Figure 2 and Figure 3B", [C("2"), C("3", ("b",))]),
    ("Figure 1, C and E", [C("1", ("c", "e"))]),           # Science style
    ("Fig. 5, b", [C("5", ("b",))]),
    ("Figure 1, C-reactive protein", [C("1")]),
    ("Figure 2, G,B", [C("2")]),                           # genomes G and B of an idiogram, not in order
    ("Fig EV4B", [C("EV4", ("b",))]),                      # EMBO Expanded View
    ("Figure 3(S1)", [C("3")]),                            # a bracketed "S1" is no sub-panel
    ("Figure 4A2,B1) [86]", [C("4", ("a", "b"))]),
])
def test_parse_mention(text, expected):
    assert parse_mention(text) == expected


def test_figure_key_of_labels():
    assert figure_key("Figure 1.") == "1"
    assert figure_key("Figure 1—figure supplement 2.") == "1-s2"
    assert figure_key("Fig 10") == "10"
    assert figure_key(None) is None
    assert figure_key("Table 1") is None


def test_expand_letters():
    assert expand_letters("A", "D") == ["a", "b", "c", "d"]
    assert expand_letters("c", "a") == ["c", "a"]  # reversed: both ends, nothing invented


def test_find_mentions_in_plain_text():
    text = ("As shown in Fig. 2b and Figs 3-5, the effect (Supplementary Fig. S1a,b; see fig. 7) was strong "
            "in Figure 1A, B6 mice, a figure we configure.")
    found = [(m.text, m.citations) for m in find_mentions(text)]
    assert found == [
        ("Fig. 2b and Figs 3-5", [C("2", ("b",)), C("3"), C("4"), C("5")]),
        ("Supplementary Fig. S1a,b", [C("S1", ("a", "b"))]),
        ("fig. 7", [C("7")]),
        ("Figure 1A", [C("1", ("a",))]),  # "B6" is a mouse strain, not panel B
    ]

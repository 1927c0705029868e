"""The benchmarks' gold readers (figlink.eval): xref panel letters, MedICaT-strict subcaptions, eLife caption
labels, and the figure → paper key of figure-level sets. Expected values were read off the texts by hand."""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from figlink.eval.pdf_panel_gold import caption_subcaptions
from figlink.eval.splits import figure_paper_key, split_of
from figlink.eval.subcaption_gold import GoldCaption, score_strict, strict_gold
from figlink.eval.xref_gold import gold_refs, matches, padded, sentence_bounds, tail_letters, xref_letters
from figlink.model import CaptionSplit, Subcaption

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def test_figure_paper_key_groups_the_figures_of_a_paper():
    assert figure_paper_key("pone.0060277.g003.jpg") == "pone.0060277"
    assert figure_paper_key("pone.0060277.g004.jpg") == "pone.0060277"
    assert figure_paper_key("1471-2407-10-248-4.jpg") == "1471-2407-10-248"
    assert figure_paper_key("12885_2014_4796_Fig4_HTML.jpg") == "12885_2014_4796"
    assert figure_paper_key("BMRI2013-241780.002.jpg") == "BMRI2013-241780"
    assert figure_paper_key("6603615f5.jpg") == "6603615"
    assert figure_paper_key("JPI-2-19-g011.jpg") == "JPI-2-19"
    assert figure_paper_key("rru-5-159Fig1.jpg") == "rru-5-159"
    assert split_of(figure_paper_key("PC2012-452795.005.jpg")) == split_of(figure_paper_key("PC2012-452795.006.jpg"))


def test_letters_inside_an_xref():
    nums = {"f1": "1", "f2": "2", "f4": "4"}
    assert xref_letters("Fig 4B", ["f4"], nums)[0] == {"f4": ["b"]}
    assert xref_letters("4e,f", ["f4"], nums)[0] == {"f4": ["e", "f"]}
    assert xref_letters("1A–C", ["f1"], nums)[0] == {"f1": ["a", "b", "c"]}
    assert xref_letters("3a and 3b", ["f4"], nums)[0] == {"f4": ["a", "b"]}
    assert xref_letters("Figures 1A and 2B", ["f1", "f2"], nums)[0] == {"f1": ["a"], "f2": ["b"]}
    assert xref_letters("Figure 2", ["f2"], nums)[0] == {"f2": []}
    # letters in brackets, ranges that repeat the number, sub-panels (Europe PMC xref texts)
    assert xref_letters("Figure 2(c)", ["f2"], nums)[0] == {"f2": ["c"]}
    assert xref_letters("Fig. 1(b–d)", ["f1"], nums)[0] == {"f1": ["b", "c", "d"]}
    assert xref_letters("Fig 1C–1E", ["f1"], nums)[0] == {"f1": ["c", "d", "e"]}
    assert xref_letters("Figs. 4b to 4d", ["f4"], nums)[0] == {"f4": ["b", "c", "d"]}
    assert xref_letters("Figure 2 (left)", ["f2"], nums)[0] == {"f2": []}


def test_letters_after_an_xref():
    assert tail_letters("A,B). The", None)[0] == ["a", "b"]          # <xref>Figure 1</xref>A,B)
    assert tail_letters("a). Next", None)[0] == ["a"]
    assert tail_letters(", b) and", "a")[0] == ["b"]                 # <xref>3a</xref>, b)
    assert tail_letters("b, c were", None)[0] == ["b", "c"]          # later in the alphabet: a panel
    assert tail_letters(", a marked rise", "a")[0] == []             # prose, not a letter
    assert tail_letters(" shows", None)[0] == []
    assert tail_letters("a, which was corrected", None)[0] == ["a"]
    assert tail_letters("(c, d and e), there were", None)[0] == ["c", "d", "e"]  # Fig. <xref>4</xref>(c, d and e)
    assert tail_letters(", c, and d).", "b")[0] == ["c", "d"]        # Fig. <xref>3b</xref>, c, and d)
    assert tail_letters(", and a rise", "b")[0] == []
    assert tail_letters("(a new assay)", None)[0] == []
    assert tail_letters("A2,B1) [86].", None)[0] == ["a", "b"]    # sub-panels A2 and B1
    assert tail_letters("B6 mice were", None)[0] == []
    assert tail_letters("a‐f).", None)[0] == ["a", "b", "c", "d", "e", "f"]  # a hyphen (U+2010) range


def test_sentences_may_open_in_lower_case_and_skip_abbreviations():
    text = "Clones grew (Fig. 1A). cDNA synthesis followed, as in Smith et al. (2019). Done."
    spans = [text[a:b].strip() for a, b in sentence_bounds(text)]
    assert spans == ["Clones grew (Fig. 1A).", "cDNA synthesis followed, as in Smith et al. (2019).", "Done."]


def test_gold_pairs_from_markup(tmp_path):
    xml = ("<article><body><sec><p>Growth fell (Figure <xref ref-type='fig' rid='f1'>1A</xref>, "
           "<xref ref-type='fig' rid='f1'>B</xref>). Lesions formed (Figures <xref ref-type='fig' rid='f2'>2A</xref>"
           "–<xref ref-type='fig' rid='f2'>D</xref>). See <xref ref-type='fig' rid='f1 f2'>Figures 1C and 2E</xref>.</p>"
           "</sec></body><floats-group><fig id='f1'><label>Figure 1</label></fig>"
           "<fig id='f2'><label>Figure 2</label></fig></floats-group></article>")
    path = tmp_path / "a.xml"
    path.write_text(xml)
    pairs, n = gold_refs(path)
    got = sorted((p.figure_id, "".join(sorted(p.panels)), p.sentence[:12]) for p in pairs)
    assert got == [("f1", "ab", "Growth fell "), ("f1", "c", "See Figures "), ("f2", "abcd", "Lesions form"),
                   ("f2", "e", "See Figures ")]
    assert n == 6  # 2 + 2 xrefs of one figure each, and one xref citing two figures
    anchor = next(p for p in pairs if p.figure_id == "f2" and "Lesions" in p.sentence).anchors[0]
    assert matches(anchor, padded("Lesions formed (Figures 2A–D)."))


def test_gold_range_over_two_xrefs_with_to(tmp_path):
    # "(Figs. <xref>3b</xref> to <xref>3i</xref>)" (Europe PMC): panels b to i
    xml = ("<article><body><sec><p>It was detected in roots and stem bases (Figs. <xref ref-type='fig' rid='f3'>3b"
           "</xref> to <xref ref-type='fig' rid='f3'>3i</xref>).</p></sec></body><floats-group><fig id='f3'>"
           "<label>Figure 3</label></fig></floats-group></article>")
    path = tmp_path / "a.xml"
    path.write_text(xml)
    pairs, _ = gold_refs(path)
    assert [sorted(p.panels) for p in pairs] == [list("bcdefghi")]


def test_gold_pairs_on_a_sample_article():
    pairs, _ = gold_refs(SAMPLES / "jats" / "journal.pone.0005723.xml")
    fig4 = [p for p in pairs if p.figure_id == "pone-0005723-g004" and p.sentence.startswith("Next in sequence")]
    # "… of the same region (Fig. 4A), a reversed shaded CT image … (Fig. 4B), …": one sentence, panels A and B
    assert len(fig4) == 1 and fig4[0].panels == {"a", "b"}
    # "(plate A; Figs. 1–2)": a range over two figures names no panel of either
    assert all(not p.panels for p in pairs if p.sentence.startswith("The more complete part"))


def test_strict_gold_removes_the_shared_context_only():
    caption = ("Prostate biopsy - Gleason 9 (5+4) prostate cancer. (A) Hematoxylin and eosin, 200*. "
               "(B) Hematoxylin and eosin, 400*. (C) Immunostain for PSA.")
    shared = "Prostate biopsy - Gleason 9 (5+4) prostate cancer. "
    gold = [shared + "Hematoxylin and eosin, 200*.", shared + "Hematoxylin and eosin, 400*.", shared + "Immunostain for PSA."]
    assert strict_gold(caption, gold) == [["hematoxylin", "and", "eosin", "200"], ["hematoxylin", "and", "eosin", "400"],
                                          ["immunostain", "for", "psa"]]
    item = GoldCaption("x.jpg", "x", caption, list(zip("ABC", gold)))
    a, b = caption.index("Hematoxylin"), caption.index("Hematoxylin", 60)
    split = CaptionSplit(shared_text=shared.strip(), subcaptions=[
        Subcaption(labels=["a"], text="Hematoxylin and eosin, 200*.", spans=[[a, a + 28]]),
        Subcaption(labels=["b"], text="Hematoxylin and eosin, 400*.", spans=[[b, b + 28]])])
    scores = score_strict(split, item)
    assert scores[0] == 1.0 and scores[1] == 1.0 and scores[2] == 0.0  # C is not named by the split


def test_elife_caption_labels_from_bold_markup():
    cap = etree.fromstring(
        "<caption><title>Title.</title><p>(<bold>A</bold>) First panel. (<bold>C</bold>)–(<bold>E</bold>) Three "
        "panels; same as (<bold>A</bold>) but later. (<bold>F, G</bold>) Two more.</p></caption>")
    text, subs = caption_subcaptions(cap)
    assert text.startswith("Title. (A) First panel.")
    assert subs["a"] == "First panel."
    assert subs["c"] == subs["d"] == subs["e"] == "Three panels; same as (A) but later."
    assert subs["f"] == subs["g"] == "Two more."
    assert "b" not in subs

"""JATS parsing on real articles; every expectation below was read off the XML by hand."""

from __future__ import annotations

import json
import re

import pytest

import figlink
from figlink.model import Paper


def _figs_in_xml(path) -> int:
    return len(re.findall(r"<fig[ >]", path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", ["elife05031.xml", "elife06726.xml", "journal.pone.0005723.xml",
                                  "journal.pone.0153170.xml", "1471-2180-11-174.nxml", "ehp-116-1694.nxml",
                                  "journal.pgen.1000052.xml"])
def test_every_fig_element_is_a_figure_and_json_round_trips(sample, name):
    paper = figlink.parse(sample(name))
    assert len(paper.figures) == _figs_in_xml(sample(name))
    assert all(f.caption for f in paper.figures)
    assert Paper.from_json(paper.to_json()) == paper
    json.loads(paper.to_json())


def test_metadata_and_license(sample):
    p = figlink.parse(sample("elife05031.xml"))
    assert p.doi == "10.7554/eLife.05031"
    assert p.title.startswith("Specificity in endoplasmic reticulum-stress signaling in yeast")
    assert (p.license.spdx, p.license.open) == ("CC-BY-4.0", True)
    bmc = figlink.parse(sample("1471-2180-11-174.nxml"))
    assert bmc.pmcid == "PMC3166277" and bmc.paper_id == "PMC3166277"
    assert (bmc.license.spdx, bmc.license.open) == ("CC-BY-2.0", True)
    plos = figlink.parse(sample("journal.pone.0005723.xml"))  # statement text only, no URL or version
    assert plos.license.open and plos.license.spdx == "LicenseRef-CC-BY"


def test_caption_is_title_plus_paragraphs_without_doi_line(sample):
    p = figlink.parse(sample("elife05031.xml"))
    fig1 = p.figure("fig1")
    assert fig1.label == "Figure 1." and fig1.number == "1"
    assert fig1.caption.startswith("Oligomerization of Ire1's cytosolic domain is required for UPR signaling")
    assert "DOI:" not in fig1.caption and "dx.doi.org" not in fig1.caption


def _refs(paper, fid):
    return paper.figure(fid).inline_refs


def test_panels_from_xref_text(sample):
    p = figlink.parse(sample("elife05031.xml"))
    # "…fluorescently tagged Ire1–GFP (Aragón et al., 2009; Figure 1E,F)."
    ref = next(r for r in _refs(p, "fig1") if "fluorescently tagged Ire1" in r.text)
    assert ref.panels == ["e", "f"]
    assert ref.mention == "Figure 1E,F"
    assert ref.text.endswith("(Aragón et al., 2009; Figure 1E,F).")


def test_figure_range_across_two_xrefs_cites_both(sample):
    p = figlink.parse(sample("journal.pone.0005723.xml"))
    # "The more complete part (plate A; <xref>Figs. 1</xref>–<xref>2</xref>) has just come to light, …"
    for fid in ("pone-0005723-g001", "pone-0005723-g002"):
        ref = next(r for r in _refs(p, fid) if "The more complete part (plate A" in r.text)
        assert ref.mention == "Figs. 1–2"
        assert ref.panels == []
    # "Next in sequence a shaded CT image of the same region (Fig. 4A), a reversed shaded CT image …"
    ref = next(r for r in _refs(p, "pone-0005723-g004") if "shaded CT image of the same region" in r.text)
    assert "a" in ref.panels


def test_a_sentence_citing_a_figure_twice_is_one_reference(sample):
    p = figlink.parse(sample("elife05031.xml"))
    for f in p.figures:
        texts = [r.text for r in f.inline_refs]
        assert len(texts) == len(set(texts)), f.figure_id


def test_fig_group_supplements_keep_their_parent():
    xml = b"""<article><front><article-meta><title-group><article-title>T</article-title></title-group>
    </article-meta></front><body><sec><title>Results</title>
    <p>See <xref ref-type="fig" rid="fig1s1">Figure 1&#x2014;figure supplement 1B</xref> and
    Figure 1&#x2014;figure supplement 1C for controls. Also (<xref ref-type="fig" rid="fig1">Figure 1A</xref>,
    <xref ref-type="fig" rid="fig1">B</xref>) and (<xref ref-type="fig" rid="fig1 fig2">Figures 1 and 2</xref>).</p>
    </sec><fig-group><fig id="fig1"><label>Figure 1.</label><caption><title>Main.</title></caption>
    <graphic xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="f1"/></fig>
    <fig id="fig1s1" specific-use="child-fig"><label>Figure 1&#x2014;figure supplement 1.</label>
    <caption><title>Supplement.</title></caption></fig></fig-group>
    <fig id="fig2"><label>Figure 2.</label><caption><p>Second.</p></caption></fig></body></article>"""
    from figlink.ingest.jats import parse_jats_bytes
    p = parse_jats_bytes(xml)
    assert [f.figure_id for f in p.figures] == ["fig1", "fig1s1", "fig2"]
    assert p.figure("fig1s1").parent == "fig1" and p.figure("fig1").parent is None
    assert p.figure("fig1").graphic == "f1"
    supp = p.figure("fig1s1").inline_refs
    assert len(supp) == 1 and supp[0].panels == ["b", "c"]  # tagged B and untagged C, same sentence
    main = p.figure("fig1").inline_refs
    assert len(main) == 1 and main[0].panels == ["a", "b"] and main[0].section == "Results"
    assert [r.mention for r in p.figure("fig2").inline_refs] == ["Figures 1 and 2"]


def test_appendix_figures_and_letters_after_the_markup():
    xml = b"""<article><body><sec><p>Lines were checked (<xref ref-type="fig" rid="a1">Appendix Figure 1</xref>A)
    and screened (<xref ref-type="fig" rid="a1">Appendix Figure 1</xref>B,C). As shown in
    <xref ref-type="fig" rid="f2">Fig 2</xref>a, it works.</p>
    <p>Text with an inline figure <fig id="f2"><label>Figure 2</label><caption><p>Two.
    <supplementary-material id="sd"><caption><p>Source data for
    <xref ref-type="fig" rid="f2">Figure 2B</xref>.</p></caption></supplementary-material></p></caption></fig>
    and a table <table-wrap id="t1"><caption><p>Values for <xref ref-type="fig" rid="f2">Figure 2C</xref>.</p>
    </caption></table-wrap>.</p></sec>
    <fig id="a1"><label>Appendix Figure 1.</label><caption><p>Appendix.</p></caption></fig></body></article>"""
    from figlink.ingest.jats import parse_jats_bytes
    p = parse_jats_bytes(xml)
    assert p.figure("a1").number == "A1"
    assert [r.panels for r in p.figure("a1").inline_refs] == [["a", "b", "c"]]
    refs = {r.text: r.panels for r in p.figure("f2").inline_refs}
    # the source-data caption inside the figure is not a citing sentence; the table caption is
    assert refs == {"As shown in Fig 2a, it works.": ["a"], "Values for Figure 2C.": ["c"]}


# ---------------------------------------------------------------- reference lists are cut before parsing

from figlink.ingest.jats import parse_jats_bytes, parse_xml_bytes, paper_from_root, without_ref_lists  # noqa: E402

_ARTICLE = (b'<article><body><p id="p1">See Figure 1A and <xref ref-type="fig" rid="b1">1B</xref>.</p>'
            b'<fig id="f1"><label>Figure 1</label><caption><p>Cells.</p></caption></fig></body>'
            b'<back>%s<ack><p>Thanks.</p></ack></back></article>')


def test_reference_lists_are_cut_including_nested_and_empty_ones():
    nested = b'<ref-list><title>R</title><ref-list><ref id="b1"><mixed-citation>X</mixed-citation></ref></ref-list></ref-list>'
    data = _ARTICLE % (nested + b"<ref-list/>")
    lean, cut = without_ref_lists(data)
    assert b"ref-list" not in lean and b"<ack><p>Thanks.</p></ack>" in lean
    assert cut == [nested, b"<ref-list/>"]
    etree_root, _ = parse_xml_bytes(lean)  # still well-formed
    assert etree_root.find("back/ack") is not None


def test_reference_lists_are_kept_when_cutting_is_unsafe():
    for data in (_ARTICLE % b"<!-- <ref-list> --><ref-list><ref id='b1'/></ref-list>",  # a comment
                 _ARTICLE % b"<ref-list><ref id='b1'/>",  # never closed
                 _ARTICLE % b"<ref-lists/>"):  # another tag with the same prefix
        lean, cut = without_ref_lists(data)
        assert lean == data and cut == []


def test_xref_into_a_cut_reference_list_is_not_called_dangling():
    data = _ARTICLE % b'<ref-list><ref id="b1"><mixed-citation>X</mixed-citation></ref></ref-list>'
    paper = parse_jats_bytes(data)
    assert not any("do not exist" in w for w in paper.warnings)
    assert paper.figures[0].inline_refs[0].panels == ["a", "b"]  # "Figure 1A and 1B"
    broken = data.replace(b'rid="b1"', b'rid="nowhere"')
    assert any("1 figure xref(s) point to ids that do not exist" in w for w in parse_jats_bytes(broken).warnings)


@pytest.mark.parametrize("name", ["journal.pone.0005723.xml", "elife05031.xml", "1471-2180-11-174.nxml"])
def test_cutting_reference_lists_changes_nothing_in_the_paper(sample, name):
    data = sample(name).read_bytes()
    assert without_ref_lists(data)[1], "the sample has a reference list"
    root, warnings = parse_xml_bytes(data)
    assert parse_jats_bytes(data, name=name).to_dict() == paper_from_root(root, name=name, warnings=warnings).to_dict()


def test_a_list_item_ends_its_sentence_even_without_an_end_mark():
    data = (b'<article><body><p>The protocol had two steps:<list>'
            b'<list-item><p>Stain the cells (<xref ref-type="fig" rid="f1">Figure 1A</xref>)</p></list-item>'
            b'<list-item><p>Image them with <xref ref-type="fig" rid="f1">Figure 1B</xref> settings</p></list-item>'
            b'</list></p><fig id="f1"><label>Figure 1</label><caption><p>Cells.</p></caption></fig></body></article>')
    refs = parse_jats_bytes(data).figures[0].inline_refs
    assert [(r.text, r.panels) for r in refs] == [("Stain the cells (Figure 1A)", ["a"]),
                                                  ("Image them with Figure 1B settings", ["b"])]


def test_sentence_breaks_are_forced_and_protected_spans_still_hold():
    from figlink.text.sentences import SentenceFinder, sentence_spans
    text = "Intro: Stain cells (Fig. 1A) Image them. Done."
    br = [text.index("Stain"), text.index("Image")]
    spans = sentence_spans(text, protect=[(20, 27)], breaks=br)
    assert [text[s:e] for s, e in spans] == ["Intro:", "Stain cells (Fig. 1A)", "Image them.", "Done."]
    finder = SentenceFinder(text, [(20, 27)], br)
    assert text[slice(*finder.around(text.index("Fig.")))] == "Stain cells (Fig. 1A)"

"""The fast splitter on the cases scientific prose is known for."""

from figlink.text.sentences import sentence_at, sentence_spans, split_sentences


def test_abbreviations_and_numbers_do_not_split():
    text = ("Cells were imaged (Fig. 2A) as in Smith et al. (2005), e.g. with GFP. "
            "The effect was strong (p < 0.001, n = 12) at 1.5 mm. Next, we did it.")
    assert split_sentences(text) == [
        "Cells were imaged (Fig. 2A) as in Smith et al. (2005), e.g. with GFP.",
        "The effect was strong (p < 0.001, n = 12) at 1.5 mm.",
        "Next, we did it.",
    ]


def test_initials_and_species_names():
    text = "Strains of E. coli were a gift from J. R. Smith. They grew well."
    assert split_sentences(text) == ["Strains of E. coli were a gift from J. R. Smith.", "They grew well."]


def test_single_capital_before_a_capital_ends_a_sentence():
    # In body text "Lobe A." closes far more sentences than a lone initial opens a name (pysbd differs).
    text = "It should localize similarly to Lobe A. Consistent with this, it did."
    assert split_sentences(text) == ["It should localize similarly to Lobe A.", "Consistent with this, it did."]


def test_panel_enumeration_opens_sentences_only_after_an_end_mark():
    text = "(A) Wild type cells. (B) Mutant cells (see panel A) at 37 °C."
    assert split_sentences(text) == ["(A) Wild type cells.", "(B) Mutant cells (see panel A) at 37 °C."]


def test_question_and_quotes():
    assert split_sentences('Is it real? "Yes," they said. Done.') == ['Is it real?', '"Yes," they said.', 'Done.']


def test_protected_span_holds_no_boundary():
    text = "The data in Figure 7. I would need more."
    spans = sentence_spans(text, protect=[(12, 23)])
    assert [text[s:e] for s, e in spans] == [text]
    assert len(sentence_spans(text)) == 2


def test_sentence_at():
    spans = sentence_spans("One. Two. Three.")
    assert [sentence_at(spans, p) for p in (0, 5, 12)] == [0, 1, 2]


def test_finder_agrees_with_full_split_on_real_paragraphs(jats_dir):
    from figlink.ingest.jats_refs import block_text, text_blocks
    from figlink.ingest.jats_xml import parse_xml_bytes
    from figlink.text.sentences import SentenceFinder

    root, _ = parse_xml_bytes((jats_dir / "journal.pone.0005723.xml").read_bytes())
    ids = {fig.get("id"): 0 for fig in root.iter("fig")}
    checked = 0
    for block in text_blocks(root):
        text, xrefs = block_text(block, ids)
        protect = [(x.start, x.end) for x in xrefs]
        spans = sentence_spans(text, protect)
        finder = SentenceFinder(text, protect)
        for s, e in spans:
            for pos in (s, (s + e) // 2, e - 1):
                assert finder.around(pos) == (s, e)
                checked += 1
    assert checked > 300

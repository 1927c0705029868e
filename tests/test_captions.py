"""Subcaption splitting: the label grammar, roles, multi-span text, spatial references, bad input."""

from __future__ import annotations

import json

import pytest

from figlink.model import CaptionSplit, Figure, InlineRef, Paper
from figlink.enrich.captions import enrich_caption
from figlink.text.captions import MAX_CAPTION_CHARS, analyze_caption
from figlink.errors import InputError
from figlink.text.subcaptions import label_spans, label_text, panel_caption, split_caption, split_labels


def labels_of(split: CaptionSplit) -> list[str]:
    return split_labels(split)


def text(caption: str, label: str) -> str:
    return label_text(split_caption(caption), caption, label)


# --- label forms -------------------------------------------------------------------------------------

@pytest.mark.parametrize("caption, expected", [
    ("Title. (a) One. (b) Two.", ["a", "b"]),
    ("Title. a) One. b) Two.", ["a", "b"]),
    ("Title. A. One thing. B. Two things.", ["a", "b"]),
    ("Title. A: one. B: two.", ["a", "b"]),
    ("Title. A, dorsal; B, ventral; and C, lateral views.", ["a", "b", "c"]),
    ("Title. (A–C) Cells. (D) Mice.", ["a", "b", "c", "d"]),
    ("Title. (a,b) Cells. (c and d) Mice. (e, f, and g) Rats.", list("abcdefg")),
    ("Title. (i)–(iv) Cells. (v) Mice.", ["i", "ii", "iii", "iv", "v"]),
    ("Title. 1) Cells. 2) Mice.", ["1", "2"]),
    ("Title. a *10 magnification of glands. b *40 magnification of tumour.", ["a", "b"]),
    ("Title. A Representative images. B Quantification.", ["a", "b"]),
    ("Title. Panel A shows cells. Panel B shows mice.", ["a", "b"]),
])
def test_label_forms(caption: str, expected: list[str]) -> None:
    assert labels_of(split_caption(caption)) == expected


def test_ranges_expand_and_share_text() -> None:
    cap = "Stains. (A-C) H&E of liver; (D) kidney."
    split = split_caption(cap)
    assert labels_of(split) == ["a", "b", "c", "d"]
    assert text(cap, "b") == "H&E of liver"
    assert split.shared_text == "Stains."


@pytest.mark.parametrize("caption, expected", [
    ("A representative image of the lesion. B cells were stained in red.", []),  # article, cell type
    ("Methylation. (A) Tumors. (B) Normal tissue. M, methylated; U, unmethylated (M, methylated).", ["a", "b"]),
    ("Cells (in) vivo. (a) One (or two). (b) Three.", ["a", "b"]),  # two-letter words are labels only past z
    ("Arbors. Dorsal (A) and transverse (B) views; dense arbor (i) and output arbor (c).", ["a", "b"]),  # case
])
def test_words_that_look_like_labels(caption: str, expected: list[str]) -> None:
    assert labels_of(split_caption(caption)) == expected


def test_letters_of_an_abbreviation_are_not_labels() -> None:
    # eLife 15600 Figure 1 (samples/elife/elife-15600.xml): "… Error bars show +/– S.E.M. MSIn = …" once read
    # "E." after "S." as a fifth panel's opener. A period glued to the next letter after a one-letter word
    # abbreviates; after a word or a bracket it still ends a clause ("(lym).C. uPAR-positive cells").
    from figlink.ingest.jats import parse_jats
    from pathlib import Path

    xml = Path(__file__).resolve().parents[1] / "samples" / "elife" / "elife-15600.xml"
    caption = parse_jats(xml).figure("fig1").caption
    assert "S.E.M. MSIn" in caption
    assert labels_of(split_caption(caption)) == ["a", "b", "c", "d"]
    assert labels_of(split_caption("A. Little staining. B. Strong staining (lym).C. Counts per mouse.")) == ["a", "b", "c"]


def test_figure_mentions_are_not_panel_labels() -> None:
    cap = "Controls. (a) As in Figure 2b, cells. (b) Mice, see Fig. 3c."
    split = split_caption(cap)
    assert labels_of(split) == ["a", "b"]
    assert "Figure 2b" in text(cap, "a")


# --- roles: openers, trailers, references ----------------------------------------------------------------

def test_trailing_labels_claim_their_clause() -> None:
    cap = "Stain for PSA. Epithelium shows strong positivity for PSA (a). Corresponding H&E is seen in (b)."
    split = split_caption(cap)
    assert text(cap, "a") == "Epithelium shows strong positivity for PSA"
    assert text(cap, "b").startswith("Corresponding H&E is seen in")
    assert split.shared_text == "Stain for PSA."


def test_inline_list_items_open_their_text() -> None:
    # OpenStax Microbiology and Psychology captions (CC BY 4.0, figures/openstax): a list inside a
    # sentence, the next item after a conjunction, opens text; it does not close the words before it.
    cap = ("Anaerobic environments are still common on earth. They include environments like (a) a bog where "
           "undisturbed dense sediments are virtually devoid of oxygen, and (b) the rumen (the first compartment "
           "of a cow's stomach), which provides an oxygen-free incubator for methanogens.")
    assert text(cap, "a").endswith("a bog where undisturbed dense sediments are virtually devoid of oxygen")
    assert text(cap, "b").startswith("the rumen (the first compartment")
    cap = "Daily commutes, whether (a) on the road or (b) via public transportation, can be hassles."
    assert text(cap, "a").endswith("on the road")
    assert text(cap, "b").startswith("via public transportation")


def test_words_before_an_inline_list_are_about_every_item() -> None:
    # eLife 19532 Figure 8 (CC BY 4.0): the lead-in is about both items, i.e. all panels, so it is shared.
    cap = ("Eco-HAB allows remarkably reproducible assessment of approach to social odor in both (a) wild-type "
           "mice (n=9) and (b) Fmr1 knockouts (n=11). Data presented are logarithmic values.")
    split = split_caption(cap)
    assert text(cap, "a") == "wild-type mice (n=9)"
    assert text(cap, "b") == "Fmr1 knockouts (n=11)."
    assert split.shared_text.startswith("Eco-HAB allows remarkably reproducible assessment of approach to social odor in both")
    # Items with clauses of their own ("…, whereas in (b) …"): the words before (a) open a's clause.
    cap = ("Approach to social odor in (a) valproate-treated C57BL/6 mice (n=26) gradually decreases during first "
           "4 h of testing, whereas in (b) valproate-treated BALB/c mice (n=18) it is high and stable.")
    assert text(cap, "a").startswith("Approach to social odor in valproate-treated")


def test_label_continuing_a_sentence_versus_opening_one() -> None:
    cap = "Growth. (a) Controls. Hyperplasia in prostates (b and d) and normal glands (c). (e) Quantification."
    assert text(cap, "a") == "Controls."
    assert text(cap, "b") == "Hyperplasia in prostates"
    assert text(cap, "d") == "Hyperplasia in prostates"
    assert text(cap, "c") == "and normal glands"
    assert text(cap, "e") == "Quantification."


def test_inline_openers_after_a_function_word() -> None:
    cap = "The top ranked metabolites are from (A) KEGG network and (B) EHMN network."
    split = split_caption(cap)
    assert text(cap, "a") == "KEGG network"
    assert text(cap, "b") == "EHMN network."
    assert split.shared_text == "The top ranked metabolites are from"


def test_label_mid_subcaption_is_a_reference() -> None:
    cap = "Cells. (A) Wild type. (B) Same as (A) but knockout; compare with panel A."
    split = split_caption(cap)
    assert labels_of(split) == ["a", "b"]
    assert text(cap, "a") == "Wild type."
    assert "Same as (A) but knockout" in text(cap, "b")


def test_sub_labels_inside_a_group() -> None:
    cap = "Kinesin. (A)–(C) EM images of (A) MTs alone, (B) kinesin-MTs, and (C) NudC-MTs. Enlarged at right."
    split = split_caption(cap)
    assert "MTs alone" in text(cap, "a") and "MTs alone" not in text(cap, "b")
    # "EM images of" is about every panel the caption names: shared text, in no panel's own text (MedICaT).
    assert "EM images of" in split.shared_text and "EM images of" not in text(cap, "c")


def test_multi_span_text_is_gathered_per_label() -> None:
    cap = "Shells (A-D) and a modern shell (E). (A) PRI 1; (B) PRI 2; (C) PRI 3; (D) PRI 4; (E) UF 5. " \
          "(A-D) are reversed images. Scale bar is 1 cm."
    split = split_caption(cap)
    a = text(cap, "a")
    assert "Shells" in a and "PRI 1" in a and "reversed images" in a
    assert "reversed images" not in text(cap, "e")
    assert len(label_spans(split, "a")) == 3
    assert split.shared_text == "Scale bar is 1 cm."


def test_trailing_note_about_all_panels_is_shared() -> None:
    cap = "Lesions. (A) Low grade. (B) High grade. Arrows point to nuclei. Scale bars, 50 um."
    split = split_caption(cap)
    assert text(cap, "b") == "High grade."
    assert split.shared_text == "Lesions. Arrows point to nuclei. Scale bars, 50 um."


def test_image_credits_are_shared_even_when_they_name_panels() -> None:
    # OpenStax Astronomy and Microbiology captions (CC BY 4.0, figures/openstax): the credit note says where
    # each image came from, not what it shows; it is not the last panel's text.
    cap = ("(a) The winter constellation of Orion, the hunter, is surrounded by neighboring constellations. "
           "(b) A photograph shows the Orion region in the sky. The bright blue star below the belt is his foot "
           "and is called Rigel. (credit a: modification of work by Johannes Hevelius; b: modification of work "
           "by Matthew Spinelli)")
    split = split_caption(cap)
    assert text(cap, "b") == ("A photograph shows the Orion region in the sky. The bright blue star below the belt "
                              "is his foot and is called Rigel.")
    assert split.shared_text == ("(credit a: modification of work by Johannes Hevelius; b: modification of work "
                                 "by Matthew Spinelli)")
    cap = ("(a) and (b) The characteristic appearance of the pustular chickenpox rash is concentrated on the trunk "
           "region. (c) This transmission electron micrograph shows a virion of human herpesvirus 3. Credit b: "
           "John Noble/CDC. c: modification of work by Centers for Disease Control and Prevention)")
    assert text(cap, "b") == "The characteristic appearance of the pustular chickenpox rash is concentrated on the trunk region."
    assert text(cap, "c") == "This transmission electron micrograph shows a virion of human herpesvirus 3."
    assert split_caption(cap).shared_text.startswith("Credit b: John Noble/CDC.")


def test_sentence_about_named_panels_after_the_last_one() -> None:
    cap = "Scatter plots. (A) Trend. (B) Correlation. (C) More D1. Values for panels A and C are in the text."
    assert "Values for panels A and C" in text(cap, "a")
    assert "Values for panels A and C" in text(cap, "c")
    assert "Values for panels" not in text(cap, "b")


def test_panel_caption_is_shared_then_own_text() -> None:
    cap = "Tumours. (a) Benign. (b) Malignant."
    split = split_caption(cap)
    assert panel_caption(split, cap, "b") == "Tumours. Malignant."


def test_figure_label_is_not_caption_text() -> None:
    cap = "Figure 3. Knockdown. (A) Control. (B) siRNA."
    split = split_caption(cap)
    assert split.shared_text == "Knockdown."


# --- spatial references ----------------------------------------------------------------------------------

def test_positional_openers() -> None:
    cap = "Dynamics. Left: NF-kB decays. Center: Sog rises. Right: BMP is depleted."
    split = split_caption(cap)
    by_pos = {s.positions[0]: s.text for s in split.subcaptions}
    assert by_pos == {"left": "NF-kB decays.", "middle": "Sog rises.", "right": "BMP is depleted."}
    assert split.shared_text == "Dynamics."
    assert analyze_caption(cap)["expected_panels"] == 3


def test_positions_inside_a_labeled_panel_refine_it() -> None:
    cap = "Structures. (A) Lattice of the mutant (left) compared to the WT (right). (B) Overlay."
    split = split_caption(cap)
    left = [s for s in split.subcaptions if s.positions == ["left"]]
    assert left and left[0].labels == ["a"] and left[0].text == "Lattice of the mutant"
    assert text(cap, "a") == "Lattice of the mutant (left) compared to the WT (right)."


@pytest.mark.parametrize("phrase, position", [
    ("upper left panel", "top-left"), ("second row", "row 2"), ("Top row", "row 1"), ("bottom row", "row last"),
    ("right column", "column last"), ("insets", "inset"), ("lower-right corner", "bottom-right"),
])
def test_position_normalization(phrase: str, position: str) -> None:
    from figlink.text.spatial import normalize_position
    assert normalize_position(phrase) == position


def test_row_openers() -> None:
    cap = "Shells. Top row: under light. Middle row: under UV. Bottom row: reversed."
    positions = [s.positions[0] for s in split_caption(cap).subcaptions]
    assert positions == ["row 1", "row middle", "row last"]


# --- bad input: a sensible result or a clear error, never an exception escaping the batch ------------------

def test_empty_caption() -> None:
    result = analyze_caption("")
    assert result["caption_split"] == {"shared_text": "", "subcaptions": []}
    assert result["is_compound"] is False and result["figure_index"] is None


def test_caption_of_50000_characters_is_split_in_reasonable_time() -> None:
    import time
    cap = ("(A) Cells (left) and stroma, with (B) ducts. " * 1200)[:50_000]
    start = time.perf_counter()
    result = analyze_caption(cap)
    assert time.perf_counter() - start < 5
    assert result["labels"] == ["a", "b"]


def test_oversized_caption_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="limit"):
        analyze_caption("x" * (MAX_CAPTION_CHARS + 1))


def test_non_string_caption_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="string"):
        analyze_caption(42)


def test_unbalanced_brackets() -> None:
    cap = "Title (with (nested. (A) Foo ) bar. (B) baz [open"
    split = split_caption(cap)
    assert labels_of(split) == ["a", "b"]
    assert text(cap, "b") == "baz [open"
    assert analyze_caption(cap)["normalized"]["advanced"].endswith("baz [open")


def test_labels_past_z() -> None:
    cap = " ".join(f"({chr(97 + i)}) item {i}." for i in range(26)) + " (aa) extra one. (ab) extra two."
    split = split_caption(cap)
    assert labels_of(split)[-3:] == ["z", "aa", "ab"]
    assert text(cap, "ab") == "extra two."
    assert analyze_caption(cap)["expected_panels"] == 28


def test_mixed_scripts() -> None:
    cap = "图1 小鼠. (A) 小鼠 cells (left); (B) Клетки мыши. (C) خلايا"
    split = split_caption(cap)
    assert labels_of(split) == ["a", "b", "c"]
    assert text(cap, "b") == "Клетки мыши."
    assert text(cap, "c") == "خلايا"


def test_html_and_mathml_remnants() -> None:
    cap = "Figure 2. <b>(A)</b> Cells with <math><mi>x</mi><mo>=</mo><mn>2</mn></math> &amp; <i>(B)</i> more."
    result = analyze_caption(cap)
    assert result["labels"] == ["a", "b"]
    assert "<" not in result["normalized"]["basic"] and "&amp;" not in result["normalized"]["basic"]
    assert "[EQUATION]" in result["normalized"]["advanced"]


def test_control_characters_and_punctuation_soup() -> None:
    for cap in ["A\x00B (a) x\x07 (b) y", "))))(((( A) B) )( . . ; : ,,,", "(", ")", ".", "(a)", "a."]:
        result = analyze_caption(cap)
        json.dumps(result)  # JSON-ready whatever the input


def test_spans_always_index_the_caption() -> None:
    for cap in ["Title. (A) x (left), y (right); (B–D) z.", "Figure 1. A, a; and B, b.", "(i) u (ii) v"]:
        for sub in split_caption(cap).subcaptions:
            assert sub.text == " ".join(cap[a:b] for a, b in sub.spans)


# --- the enrich entry point ------------------------------------------------------------------------------

def test_enrich_caption_fills_fields_without_touching_the_input() -> None:
    fig = Figure(figure_id="fig1", caption="CT of the chest. (A) Axial. (B) Coronal.",
                 inline_refs=[InlineRef(text="As shown in Figure 1A.", mention="Figure 1A", panels=["a"])])
    out, warnings = enrich_caption(fig)
    assert warnings == ()
    assert fig.caption_split is None and fig.is_compound is None
    assert out.is_compound is True and out.expected_panels == 2
    assert out.is_medical is True and out.medical_keywords == ["CT"]
    assert out.caption_normalized is not None and out.caption_normalized.basic.startswith("ct of the chest")
    assert [s.labels for s in out.caption_split.subcaptions] == [["a"], ["b"]]


def test_enrich_caption_uses_inline_refs_for_the_medical_filter() -> None:
    fig = Figure(figure_id="f", caption="Panels of cells.", inline_refs=[InlineRef(text="The MRI scan (Fig. 2).",
                                                                                   mention="Fig. 2")])
    assert enrich_caption(fig).figure.is_medical is True


def test_enrich_caption_on_an_oversized_caption_records_a_warning() -> None:
    out, warnings = enrich_caption(Figure(figure_id="big", caption="x" * (MAX_CAPTION_CHARS + 1)))
    assert out.caption_split is None and out.is_medical is False
    assert len(warnings) == 1 and warnings[0].startswith("big: caption has")


def test_enriched_paper_round_trips_through_json() -> None:
    fig = enrich_caption(Figure(figure_id="fig1", caption="Figure 1. (A) Top panel: left. (B) X-ray scans.")).figure
    paper = Paper(paper_id="P1", source="jats", figures=[fig])
    again = Paper.from_json(paper.to_json())
    assert again == paper
    assert again.figures[0].caption_split == fig.caption_split


def test_model_reads_records_written_before_the_caption_fields() -> None:
    old = {"figure_id": "f1", "caption": "x", "caption_split": {"shared_text": "x", "subcaptions": [
        {"labels": ["a"], "text": "y", "spans": [[0, 1]]}]}}
    fig = Figure.from_dict(old)
    assert fig.caption_split.subcaptions[0].positions == []
    assert fig.expected_panels is None and fig.medical_keywords == [] and fig.caption_normalized is None
    assert Figure.from_dict(json.loads(json.dumps(fig.to_dict()))) == fig


def test_labels_inside_a_parenthesis_end_at_its_close() -> None:
    cap = "Errors. Rrmse along pathways (a. U-fiber; b. ILF; see Fig 1) across models. ETC performs better."
    split = split_caption(cap)
    assert text(cap, "a") == "U-fiber"
    assert text(cap, "b").startswith("ILF")
    assert "across models" in split.shared_text and "ETC performs better." in split.shared_text


def test_letter_closing_a_note_is_not_a_label() -> None:
    cap = "Skeleton. A, dorsal; B, ventral; and C, lateral views. Left arch (FMNH PR 2512 Vertebra B) is mirrored."
    split = split_caption(cap)
    assert text(cap, "b") == "ventral"
    assert "Vertebra B" in split.shared_text


# --- MedICaT's definition on real captions (eLife, CC-BY): text about every panel is shared --------------

def test_clause_after_an_enumeration_of_trailers_is_about_all_of_them() -> None:
    cap = ("Dorsal (A) and transverse (B) view of the adult VNS showing a MARCM clone for the T2 lineage 1. "
           "*: arbor from another lineage.")
    split = split_caption(cap)
    assert text(cap, "b") == "and transverse"
    assert "view of the adult VNS" in split.shared_text


def test_scale_bar_trailer_naming_every_panel_is_shared() -> None:
    cap = ("Bright-field STEM tomography. (a) 2D projection image. (b) 25-nm thick slices. (c) 10-nm thick slice. "
           "(d) Expanded areas. Scale bars, 1 μm (a,b), 500 nm (c), 50 nm (d).")
    split = split_caption(cap)
    assert split.shared_text.endswith("Scale bars, 1 μm (a,b), 500 nm (c), 50 nm (d).")
    assert "Scale bars" not in text(cap, "d")


def test_about_all_text_stays_where_it_alone_names_a_panel() -> None:
    # The caption never gives C text of its own: the (A)–(C) text keeps its labels (C is a panel).
    cap = ("UNC-116 acts cell autonomously in DA9 neuron. (A)–(C) Confocal micrographs of 10 wild-type (A), "
           "unc-116 (e2310) (B), and unc-116;Ex[Pmig13::unc-116] DA9 ventral axon, straightened and aligned.")
    assert labels_of(split_caption(cap)) == ["a", "b", "c"]


def test_sentence_naming_its_group_and_more_is_about_them() -> None:
    cap = ("nSyb-GAL80 suppresses GAL4 expression. (A) Larva. (B) R15D11-GAL4 drives expression. (C) Suppressed. "
           "(D) Off-target cells. (E) Same genotype as (D). (F) Adult VNC expression pattern. No off-target "
           "expression is observed. In panels D–F, myr::GFP concentrates in processes rather than in the cell bodies.")
    split = split_caption(cap)
    by_labels = {tuple(s.labels): s.text for s in split.subcaptions}
    assert by_labels[("d", "e", "f")].startswith("In panels D–F, myr::GFP concentrates")
    assert by_labels[("f",)] == "Adult VNC expression pattern. No off-target expression is observed."


def test_a_reference_to_another_panel_alone_does_not_move_text() -> None:
    # "chain B)" inside C's text is no statement about panel B.
    cap = ("Structures. (A) Superposition of CpMDH and AncMDH2. (B) Active site detail. (C) Superposition of "
           "LDHs. Superposition of AncLDH* structure (vermilion, chain A) and four LDHs (deep olive, 1oc4, chain B). "
           "Ligands are shown in gray.")
    assert "four LDHs" in text(cap, "c") and "four LDHs" not in text(cap, "b")


@pytest.mark.parametrize("caption, expected", [
    ("pMAD in wt (A, A′, F, F′), dpp-RNAi (B, B′, G, G′), sog-RNAi (C, C′, H, H′), tsg-RNAi (D, D′, I, I′) and "
     "Toll1-RNAi (E, E′, J, J′) embryos.", [x for c in "abcdefghij" for x in (c, c + "′")]),
    ("Dendrites. (i) Control. (i′) Magnified view of (i). (ii) Mutant. (ii′) Magnified view of (ii).",
     ["i", "i′", "ii", "ii′"]),
    ("Angioblasts. (A) Injection. (B–C′) Migration in embryos injected with ctr (B, B′) or ela (C, C′). (D) Count.",
     ["a", "b", "b′", "c", "c′", "d"]),
    # A letter list with a letter outside the sequence is no list: without D, E and I, J, F–H are not panels.
    ("pMAD in wt (A, A′, F, F′), dpp-RNAi (B, B′, G, G′) and sog-RNAi (C, C′, H, H′) embryos.", []),
])
def test_primed_labels_are_panels(caption: str, expected: list[str]) -> None:
    assert labels_of(split_caption(caption)) == expected


def test_label_list_with_a_letter_outside_the_sequence_is_no_label() -> None:
    # "(H & E)" is a stain, not panels H and E (prostate hand-split caption, tune part).
    cap = ("Interleukin-4 immunoreactivity. (A) Hematoxylin and eosin (H & E) and (B) anti-IL-4 staining of benign "
           "tissue; (C) is a positive control; (D) H & E and (E) anti-IL-4 staining of neoplasia.")
    assert text(cap, "b") == "anti-IL-4 staining of benign tissue"
    assert text(cap, "e") == "anti-IL-4 staining of neoplasia."


@pytest.mark.parametrize("note", ["Reproduced from Lee et al. Urology 2008;72: 878-81, with permission.",
                                  "All results in this figure are estimates based on 1000 simulations.",
                                  "Each dot represents one cell."])
def test_figure_wide_notes_after_the_last_panel_are_shared(note: str) -> None:
    cap = f"Title. (A) Neurovascular bundle. (B) Spread to the anterior side. {note}"
    assert split_caption(cap).shared_text == f"Title. {note}"
    assert text(cap, "b") == "Spread to the anterior side."


def test_all_opening_a_sentence_about_cells_is_not_figure_wide() -> None:
    cap = "Title. A: Cells in phase contrast. B: Immunophenotyping. All epithelial cells show AR immunoreactivity."
    assert text(cap, "b") == "Immunophenotyping. All epithelial cells show AR immunoreactivity."


def test_labels_after_a_note_in_parentheses() -> None:
    cap = "Survival of mice. Kaplan–Meier curves for wild-type (WT; A) and knockout (KO; B) mice. Log-rank test."
    assert labels_of(split_caption(cap)) == ["a", "b"]
    assert text(cap, "b") == "and knockout"


def test_note_closing_the_last_panel_after_a_semicolon_is_shared() -> None:
    cap = "Title. (a) Images of cells. (b) Survival curves; scale bars, 10 µm."
    assert split_caption(cap).shared_text == "Title. scale bars, 10 µm."
    assert text(cap, "b") == "Survival curves"
    # A ";" inside parentheses splits nothing (eLife: "(*p < 0.05 vs. PBS; #p < 0.05 vs. VEGF, mean ± SEM)").
    cap = "Title. (A) Tubes. (B) Counts (*p < 0.05 vs. PBS; #p < 0.05 vs. VEGF, mean ± SEM). Scale bar = 100 μm."
    assert text(cap, "b") == "Counts (*p < 0.05 vs. PBS; #p < 0.05 vs. VEGF, mean ± SEM)."

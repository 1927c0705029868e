"""Panels, labels and subcaptions on real compound figures (samples/figures, CC BY 4.0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from figlink.enrich.vision import analyze_figure
from figlink.eval.metrics import iou
from figlink.model import CaptionSplit, Subcaption

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "figures"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text())

FIG4_SPLIT = CaptionSplit(
    shared_text="Electrochemical performance of aluminum–air flow batteries.",
    subcaptions=[
        Subcaption(["a"], "Schematic of the aluminum–air flow battery (AAFB) system."),
        Subcaption(["b"], "Power density curves of flow cells."),
        Subcaption(["c"], "Discharge curves using the pristine air electrode."),
        Subcaption(["d"], "Mechanical charge and discharge tests."),
    ])


@pytest.fixture(scope="module")
def fig4():
    return analyze_figure(SAMPLES / "s41467-018-06211-3_fig4.jpg", FIG4_SPLIT)


@pytest.fixture(scope="module")
def fig2():
    return analyze_figure(SAMPLES / "s41467-018-06211-3_fig2.jpg")


def test_fig4_panels_match_silver_boxes_and_labels(fig4):
    assert fig4.is_compound and len(fig4.panels) == 4
    by_label = {p.label: p for p in fig4.panels}
    for gold in EXPECTED["s41467-018-06211-3_fig4.jpg"]["panels"]:
        assert iou(gold["bbox"], by_label[gold["label"]].bbox) >= 0.7


def test_fig4_subcaptions_follow_labels(fig4):
    by_label = {p.label: fig4.subcaption(p) for p in fig4.panels}
    assert by_label["a"].startswith("Schematic")
    assert by_label["d"].startswith("Mechanical")


def test_fig2_labels_read_without_caption(fig2):
    # a schematic of seven lettered panels, some made of several images (a: image + two maps)
    labels = sorted(p.label for p in fig2.panels if p.label)
    assert labels == list("abcdefg")
    a = next(p for p in fig2.panels if p.label == "a")
    assert a.bbox[2] > 330  # panel a includes the Ag/Mn maps right of the main image


def test_ocr_roles_on_real_chart(fig2):
    texts = {t.text: t.role for t in fig2.ocr}
    assert texts.get("Distance (nm)") == "axis_title"
    assert any(role == "tick_label" for role in texts.values())
    assert all(t.bbox[2] <= fig2.width and t.bbox[3] <= fig2.height for t in fig2.ocr)


def test_pil_input_and_expected_count_prior():
    from PIL import Image

    im = Image.open(SAMPLES / "s41467-018-06211-3_fig4.jpg")
    fv = analyze_figure(im, expected_panels=2, ocr=False, classify=False)
    assert len(fv.panels) == 2  # without labels the count prior merges neighbours


def test_labels_centred_under_touching_panels_are_read_and_split_the_drawing():
    # OpenStax Astronomy "How to Use a Cepheid": four drawings that touch (no gutter), "(a)"-"(d)"
    # centred under each. The full OCR misreads "(b)" and "(d)"; they are named by their place in the
    # row of labels. Boxes: the hand-drawn ones of benchmarks/gold/panel_gold.json.
    split = CaptionSplit(subcaptions=[
        Subcaption(["a"], "Find a cepheid variable star and measure its period."),
        Subcaption(["b"], "Use the period-luminosity relation to calculate the star's luminosity."),
        Subcaption(["c"], "Measure the star's apparent brightness."),
        Subcaption(["d"], "Compare the luminosity with the apparent brightness to calculate the distance.")])
    fv = analyze_figure(SAMPLES / "OSC_Astro_19_03_Distance.jpg", split, classify=False)
    gold = {"a": (0, 0, 95, 137), "b": (95, 0, 195, 137), "c": (195, 0, 285, 137), "d": (285, 0, 384, 137)}
    assert sorted(p.label for p in fv.panels) == ["a", "b", "c", "d"]
    for p in fv.panels:
        assert iou(p.bbox, gold[p.label]) >= 0.7, (p.label, p.bbox)
        assert fv.subcaption(p).startswith(("Find", "Use", "Measure", "Compare")["abcd".index(p.label)])


def test_touching_panels_are_parted_by_their_corner_labels():
    # eLife 01222 Figure 5 (benchmarks/gold, downscaled to 900 px): seven panels, several touching with
    # no gutter (C beside D, E over F and G); every label "A"-"G" sits at its panel's top-left corner.
    # Boxes: the hand-drawn gold of benchmarks/gold/panel_gold.json scaled by 900/2000.
    caption = ("GamGFP marks DSBs in mammalian cells and is inhibited by Ku. (A) GamGFP co-localizes with 53BP1 on "
               "laser-induced DNA breaks. (B) Ku inhibits recruitment of GamGFP to laser-induced damage, live cells. "
               "(C and D) Ku inhibits recruitment of GamGFP, fixed cells. Mean ± SEM of three experiments, n >25 "
               "cells each. (E) GamGFP forms IR-induced foci in Ku80-defective MEFs. (F) Zoomed image from E. "
               "(G) IR-induced foci containing Gam only, 53BP1 only or both Gam and 53BP1.")
    from figlink.text.subcaptions import split_caption

    fv = analyze_figure(SAMPLES / "elife-01222_fig5.jpg", split_caption(caption), classify=False)
    gold = {"a": [3, 3, 502, 584], "b": [532, 3, 1301, 534], "e": [1308, 3, 1996, 590], "c": [8, 588, 948, 1057],
            "d": [981, 595, 1325, 1071], "f": [1325, 595, 1610, 978], "g": [1610, 595, 1990, 1077]}
    assert sorted(p.label or "" for p in fv.panels) == list("abcdefg")
    for p in fv.panels:
        assert iou(p.bbox, [0.45 * v for v in gold[p.label or ""]]) >= 0.6, (p.label, p.bbox)  # bench: 0.5
    assert fv.subcaption(next(p for p in fv.panels if p.label == "f")) == "Zoomed image from E."


def assert_panels(image: str, texts: dict[str, str], gold: dict[str, tuple[int, int, int, int]], min_iou: float):
    """analyze_figure on a sample with one subcaption per label: each label's panel matches its gold
    box and carries its text."""
    split = CaptionSplit(subcaptions=[Subcaption([k], v) for k, v in texts.items()])
    fv = analyze_figure(SAMPLES / image, split, classify=False)
    assert sorted(p.label or "" for p in fv.panels) == sorted(gold)
    for p in fv.panels:
        assert iou(p.bbox, gold[p.label or ""]) >= min_iou, (p.label, p.bbox)
        assert fv.subcaption(p) == texts[p.label or ""]


def test_misread_parenthesized_labels_are_named_by_their_order():
    # OpenStax Microbiology, thymine-dimer repair: "(a)" and "(b)" under two diagrams full of single
    # letters (A, G, C, T); the OCR reads "(b)" as "(8)". Two parenthesized marks, lined up, for the
    # caption's two labels: a and b, left to right. Boxes: benchmarks/gold/panel_gold.json.
    assert_panels("OSC_Microbio_11_05_ThyDiRep.jpg",
                  {"a": "In nucleotide excision repair, an enzyme complex recognizes the distortion.",
                   "b": "In photoreactivation, the enzyme photolyase binds to the thymine dimer."},
                  {"a": (0, 105, 152, 384), "b": (169, 105, 322, 384)}, 0.5)


def test_centred_labels_lay_out_their_panels():
    # OpenStax Psychology: a photo and a pale scanned document (almost white on white, so whitespace cuts
    # find no panel there), "(a)" and "(b)" centred under them. Both labels read, the cut between them
    # through the least ink parts the figure. Boxes: benchmarks/gold/panel_gold.json.
    assert_panels("CNX_Psych_02_05_BrownBoard.jpg",
                  {"a": "Margaret Floy Washburn was the first woman to earn a doctorate degree in psychology.",
                   "b": "The outcome of Brown v. Board of Education was influenced by the research of Prosser."},
                  {"a": (11, 0, 162, 238), "b": (195, 0, 384, 239)}, 0.7)


def test_label_printed_inside_a_plot_area_is_found_by_its_look():
    # eLife 01222 Figure 2 (benchmarks/gold image, downscaled to 900 px): "C" is printed inside its bar
    # chart's axes, away from any panel corner, and the "c" of the rotated axis title "% cells with foci"
    # of panel E sits at a corner. The small rotated "c" is dropped (half the size of the other labels) and
    # the bold C is found as the one lone glyph of the labels' size that reads as C. Its place, checked by
    # eye on the image: (232, 553) px of the 1901 px original.
    caption = ("GamGFP foci at DSBs in living E. coli. (A) Strategy. (B) Representative data (arrows indicate foci). "
               "(C) Quantification from multiple experiments. (D) Strategy: a site-specific ssDNA nick. "
               "(E) TraI-dependent GamGFP foci. (F) GamGFP foci are correlated with dose of γ-radiation.")
    from figlink.text.subcaptions import split_caption

    fv = analyze_figure(SAMPLES / "elife-01222_fig2.jpg", split_caption(caption), classify=False)
    assert sorted(p.label or "" for p in fv.panels) == list("abcdef")
    c = next(p for p in fv.panels if p.label == "c")
    x, y = 0.45 * 232, 0.45 * 553
    assert c.bbox[0] <= x <= c.bbox[2] and c.bbox[1] <= y <= c.bbox[3], c.bbox
    # The C inside the plot area sits at no corner: a cut just left of it (a strip holding A's corner,
    # crossing only thin circle lines) would leave C far down its panel; the row cut under A's drawing,
    # as clean, leaves C near its panel's top. Boxes: benchmarks/gold/panel_gold.json scaled by 900/2000.
    gold = {"a": [5, 3, 798, 495], "c": [16, 495, 788, 1159]}
    for p in fv.panels:
        if p.label in gold:
            assert iou(p.bbox, [0.45 * v for v in gold[p.label]]) >= 0.5, (p.label, p.bbox)

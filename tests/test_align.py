"""Panel ↔ subcaption alignment and the MedICaT/COCO/CER metrics."""

from __future__ import annotations

from figlink.enrich.align import align, caption_labels, printed_letters
from figlink.eval.metrics import alignment_f1, cer, coco_map, iou, token_f1, wer
from figlink.model import Box, CaptionSplit, Panel, Subcaption, subcaption_text

from conftest import SAMPLES


def _p(label, box):
    return Panel(label=label, bbox=Box.pixels(box))


def _texts(panels, split):
    return [subcaption_text(split, p.subcaption_indices) for p in panels]


def test_labels_read_in_image_win_over_position():
    panels = [_p("b", (0, 0, 100, 100)), _p("a", (120, 0, 220, 100))]
    split = CaptionSplit(subcaptions=[Subcaption(["a"], "first"), Subcaption(["b"], "second")])
    out = {p.label: p.subcaption_indices for p in align(panels, split)}
    assert out == {"a": [0], "b": [1]}


def test_medicat_heuristic_rows_then_columns_extra_takes_last():
    # tops within 50 px share a row; reading order: (0,0) (200,30) | (0,300)
    panels = [_p(None, (0, 300, 100, 400)), _p(None, (200, 30, 300, 130)), _p(None, (0, 0, 100, 100))]
    split = CaptionSplit(subcaptions=[Subcaption(["a"], "one"), Subcaption(["b"], "two")])
    out = align(panels, split)
    assert [p.bbox.xyxy()[:2] for p in out] == [[0.0, 0.0], [200.0, 30.0], [0.0, 300.0]]
    assert _texts(out, split) == ["one", "two", "two"]


def test_spatial_words_pick_the_panel():
    panels = [_p(None, (0, 0, 100, 100)), _p(None, (200, 0, 300, 100))]
    split = CaptionSplit(subcaptions=[Subcaption([], "Right: the treated arm."), Subcaption([], "Left: control.")])
    out = align(panels, split)
    assert _texts(out, split) == ["Left: control.", "Right: the treated arm."]


def test_mixed_labels_then_heuristic():
    panels = [_p("a", (0, 0, 100, 100)), _p(None, (200, 0, 300, 100)), _p(None, (0, 200, 100, 300))]
    split = CaptionSplit(subcaptions=[Subcaption(["a"], "A text"), Subcaption(["b"], "B text"),
                                      Subcaption(["c"], "C text")])
    assert _texts(align(panels, split), split) == ["A text", "B text", "C text"]
    assert caption_labels(split) == ["a", "b", "c"]


def test_printed_letters_fill_the_panels_a_caption_names_in_prose():
    # PLoS ONE 0153170, Fig 2: "(A)", "The scatter plot in B summarizes …", "(C)", "(D)", "The bar graphs in E
    # …": the splitter reads A, C and D; the figure prints B between them (E, past the last one, stays unknown)
    from figlink.ingest import parse
    from figlink.text.subcaptions import split_caption

    paper = parse(SAMPLES / "journal.pone.0153170.xml")
    fig = next(f for f in paper.figures if f.figure_id == "pone.0153170.g002")
    split = split_caption(fig.caption or "")
    assert caption_labels(split) == ["a", "c", "d"]
    assert printed_letters(split) == {"a", "b", "c", "d"}
    one = CaptionSplit(subcaptions=[Subcaption(["b"], "only")])
    assert printed_letters(one) == {"b"} and printed_letters(None) == set()
    roman = CaptionSplit(subcaptions=[Subcaption(["i"], "one"), Subcaption(["v"], "five")])  # (i) … (v): no a–v run
    assert printed_letters(roman) == {"i", "v"}


def test_no_split_leaves_subcaptions_empty():
    out = align([_p(None, (0, 0, 10, 10))], None)
    assert out[0].subcaption_indices == [] and _texts(out, None) == [None]


def test_a_label_with_several_subcaptions_points_at_each_distinct_text():
    # "(c) … (left) … (right)": the label's text, then its two spatial parts; a repeated text counts once
    split = CaptionSplit(subcaptions=[Subcaption(["c"], "Raster plots."), Subcaption(["c"], "Young animal", positions=["left"]),
                                      Subcaption(["c"], "Raster plots."), Subcaption(["d"], "")])
    out = align([_p("c", (0, 0, 10, 10)), _p("d", (20, 0, 30, 10))], split)
    assert [p.subcaption_indices for p in out] == [[0, 1], [3]]
    assert _texts(out, split) == ["Raster plots. Young animal", ""]


def test_alignment_f1_definition():
    gold = [((0, 0, 100, 100), "TEM image of Ag"), ((200, 0, 300, 100), "EDS spectra")]
    pred = [((0, 0, 100, 90), "TEM image of the Ag"), ((500, 500, 600, 600), "EDS spectra")]
    # panel 1: IoU .9 -> token F1 of {tem,image,of,ag} vs {tem,image,of,the,ag} = 8/9; panel 2: IoU 0 -> 0
    assert abs(alignment_f1(gold, pred) - (8 / 9) / 2) < 1e-9
    assert token_f1("a-b c", "A b, C!") == 1.0
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == 1 / 3


def test_coco_map_perfect_and_empty():
    gold = [[(0, 0, 10, 10), (20, 20, 40, 40)]]
    assert coco_map(gold, [[((0, 0, 10, 10), 0.9), ((20, 20, 40, 40), 0.8)]])["map"] > 0.99
    assert coco_map(gold, [[]])["map"] == 0.0


def test_cer_wer():
    assert cer("Tlme (s)", "Time (s)") == 1 / 8
    assert wer("a b c", "a x c") == 1 / 3


def test_an_unlabelled_panel_gets_a_subcaption_from_the_gap_between_its_labelled_neighbours():
    # Reading order a, ?, d, ?: the caption names a-f. The second unread panel comes after d, so it is
    # e, not c (reading order alone would pair it with the second subcaption left, c).
    panels = [_p("a", (0, 0, 100, 100)), _p(None, (200, 0, 300, 100)), _p("d", (400, 0, 500, 100)),
              _p(None, (600, 0, 700, 100))]
    split = CaptionSplit(subcaptions=[Subcaption([x], f"{x} text") for x in "abcdef"])
    assert _texts(align(panels, split), split) == ["a text", "b text", "d text", "e text"]

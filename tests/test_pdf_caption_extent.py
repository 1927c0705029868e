"""Where a PDF caption ends, on small pages built with real layout: a caption runs on past a line with a
special glyph, at double spacing, across a column break and a page break, and stops at the next caption,
heading or body paragraph (issue 15, class 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pdf_build import Page, write_pdf

from figlink.ingest.pdf import Options, page_figures, parse_pdf

CAPTION = [  # an eLife-like caption, cut into lines about as wide as a 468-point column at 8 points
    "Figure 1. Inhibitory blockade broadens tuning window and enhances gain of MSI. (A) Grouped data from",
    "stage 48-9 tadpoles in control condition and in the presence of GABAA receptor blocker PTX. In a given",
    "cell, data are averaged over trials at each ISI, to determine the MSI ratio. Plotted here are the population",
    "means of these trial-averaged MSIn ratios, at each ISI tested. Error bars show +/- S.E.M. (B) Histogram",
    "bars show the ISI at which each cell exhibited maximum MSIn values in control and PTX groups. Notice",
    "that PTX shifts the preferred ISI values to shorter intervals. (C) Maximum MSIn ratios are compared",
    "across control and PTX conditions, and show increase in MSI gain with inhibitory blockade.",
]
BODY = [
    "Taken together, these data indicate that in younger tadpoles, the ratio of excitation to inhibition,",
    "in response to crossmodal stimulus, is greater than in the older group, which may in part explain the",
    "greater amount of multisensory enhancement of spike output observed in the younger tadpoles.",
]


def _words(lines: list[str]) -> str:
    return " ".join(lines).split(". ", 1)[1]  # the text after "Figure 1."


def _only(found: list) -> str:
    captions = [f for f in found if not f.continuation]
    assert len(captions) == 1
    return captions[0].caption


def test_a_line_with_a_larger_symbol_glyph_does_not_end_the_caption(tmp_path: Path) -> None:
    page = Page().figure(72, 60, 540, 300)
    y = page.lines(72, 320, CAPTION[:3], size=8, pitch=11)
    page.text(72, y, "change of", size=8)  # a Delta set in the Symbol font, larger than the text around it
    page.text(108, y, "D", size=13, font="Symbol")
    page.text(118, y, "F/F0 in cells recorded with the same protocol as in the", size=8)
    page.lines(72, y + 11, CAPTION[3:], size=8, pitch=11)
    page.lines(72, y + 11 * 6 + 20, BODY, size=9.5, pitch=12, font="Times-Roman")
    text = _only(page_figures(write_pdf(tmp_path / "glyph.pdf", [page]), 0, Options(layout=False)))
    assert "change of" in text and "F/F0 in cells recorded with the same protocol" in text
    assert text.endswith("show increase in MSI gain with inhibitory blockade.")
    assert "Taken together" not in text


def test_double_spaced_legends_are_read_whole_and_apart(tmp_path: Path) -> None:
    page = Page().text(72, 60, "FIGURE LEGENDS", size=11, font="Helvetica-Bold")
    legends = [CAPTION[:4], ["Figure 2. A schematic of the recording set-up used for every experiment of",
                             "this study. Electrodes were placed in the tectum, stimuli were given as in",
                             "Figure 1, and responses were recorded for ten minutes."]]
    y = 100.0
    for legend in legends:  # 10-point text at 25 points a line (a word processor's double spacing)
        y = page.lines(72, y, legend, size=10, pitch=25) + 25  # and a blank line between legends
    path = write_pdf(tmp_path / "legends.pdf", [page])
    paper = parse_pdf(path, options=Options(layout=False))
    got = {f.label: f.caption for f in paper.figures}
    assert got["Figure 1"] == _words(CAPTION[:4])
    assert got["Figure 2"].endswith("responses were recorded for ten minutes.")
    assert "Figure 2" not in got["Figure 1"]


def test_a_caption_goes_on_at_the_top_of_the_next_column(tmp_path: Path) -> None:
    left, right, size = 50.0, 320.0, 8.0
    cap = ["Figure 1. Crossmodal responses have faster onset latencies than single",
           "unimodal responses across groups. (A, B, C) Plot of response onset times",
           "for single responses and crossmodal responses at multiple ISIs for all",
           "experimental groups. For each paired ISI, as well as the appropriate control",
           "stimulus, the median response onset time is shown on the left axis and the",
           "interquartile range as error bars. (D) Comparison of onset times between"]
    rest = ["paired and unpaired responses shows that across all groups crossmodal",
            "responses have shorter onset latencies than unimodal responses.",
            "(E) Bars indicate median values; error bars show the interquartile range."]
    page = Page().figure(left, 60, left + 242, 640)
    page.lines(left, 660, cap, size=size, pitch=11)  # down to the foot of the left column
    page.lines(right, 72, rest, size=size, pitch=11)  # the rest opens the right column
    page.lines(right, 72 + 3 * 11 + 16, ["Multisensory integration in the tectum changes with",
                                          "development: the window narrows between stages 44 and 49."],
               size=10, pitch=12.5, font="Times-Roman")
    page.text(300, 770, "7", size=9)
    text = _only(page_figures(write_pdf(tmp_path / "columns.pdf", [page]), 0, Options(layout=False)))
    assert "(D) Comparison of onset times between paired and unpaired responses" in text
    assert text.endswith("error bars show the interquartile range.")
    assert "Multisensory integration" not in text


def test_a_caption_cut_off_at_the_foot_of_a_page_goes_on_overleaf(tmp_path: Path) -> None:
    first = Page().figure(72, 60, 540, 560)
    first.lines(72, 600, CAPTION[:6], size=9, pitch=22)  # double-spaced, to the foot of the page
    first.text(300, 770, "28", size=9)
    second = Page()
    second.lines(72, 72, ["and also across control and PTX conditions, with an increase in MSI gain with",
                          "inhibitory blockade in every cell tested."], size=9, pitch=22)
    second.lines(72, 72 + 2 * 22 + 40, BODY, size=11, pitch=14, font="Times-Roman")
    CAPTION_TAIL = "inhibitory blockade in every cell tested."
    paper = parse_pdf(write_pdf(tmp_path / "pages.pdf", [first, second]), options=Options(layout=False))
    [fig] = paper.figures
    assert "Maximum MSIn ratios are compared and also across control" in fig.caption
    assert fig.caption.endswith(CAPTION_TAIL)
    assert "Taken together" not in fig.caption


def test_a_raised_run_between_two_runs_keeps_its_row_whole() -> None:
    # the runs of one caption row of an arXiv page ("… d → s(γ" "(∗) , Z∗" ") processes."): the middle run
    # holds a raised exponent, so its box starts higher than the row's other runs
    from figlink.ingest.pdf_page import Line, _merge_segments

    runs = [Line((154.0, 362.1, 365.7, 373.5), "FIG. 3: Feynman diagrams for the d \u2192 s(\u03b3"),
            Line((366.0, 360.4, 396.5, 373.5), "(\u2217) , Z\u2217"),
            Line((397.0, 362.1, 451.4, 373.5), ") processes.")]
    [row] = _merge_segments(runs)
    assert row.text == "FIG. 3: Feynman diagrams for the d \u2192 s(\u03b3(\u2217) , Z\u2217) processes."
    assert row.box == (154.0, 360.4, 451.4, 373.5)


@pytest.mark.parametrize("kind", ["indented paragraph", "heading", "float gap", "table caption"])
def test_a_caption_stops_at_the_paragraph_or_heading_below_it(tmp_path: Path, kind: str) -> None:
    # caption and running text in one face and size (as in LaTeX), 12 points a line
    page = Page().figure(72, 60, 540, 300)
    y = page.lines(72, 320, CAPTION, size=10, pitch=12, font="Times-Roman")
    if kind == "indented paragraph":  # no gap: only the first-line indent says a paragraph starts
        page.lines(72, y, BODY, size=10, pitch=12, font="Times-Roman")
        page.items[-3] = ("text", 87.0, y, BODY[0], 10.0, "Times-Roman")
    elif kind == "heading":
        page.text(72, y + 4, "2 Results", size=12, font="Times-Bold")
        page.lines(72, y + 20, BODY, size=10, pitch=12, font="Times-Roman")
    elif kind == "table caption":  # a table set right under the figure, its caption first
        page.lines(72, y, ["Table 1. Strains and plasmids used in this study.", "Strain  Genotype  Source"],
                   size=10, pitch=12, font="Times-Roman")
    else:  # the space LaTeX leaves between a float and the text
        page.lines(72, y + 14, BODY, size=10, pitch=12, font="Times-Roman")
    text = _only(page_figures(write_pdf(tmp_path / "stop.pdf", [page]), 0, Options(layout=False)))
    assert text == _words(CAPTION)

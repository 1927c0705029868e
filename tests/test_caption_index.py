"""The figure index at the start of a caption, read with the shared mention grammar."""

from __future__ import annotations

import pytest

from figlink.text.captions import analyze_caption
from figlink.text.mentions import find_mentions, leading_figure_index, parse_mention


@pytest.mark.parametrize("caption, key, label", [
    ("Figure 1. Results.", "1", "Figure 1"),
    ("Fig. 2: Results.", "2", "Fig. 2"),
    ("FIG 12 Results.", "12", "FIG 12"),
    ("Supplementary Figure S3. Results.", "S3", "Supplementary Figure S3"),
    ("Figure S3. Results.", "S3", "Figure S3"),
    ("Figure 1—figure supplement 2. Results.", "1-s2", "Figure 1—figure supplement 2"),
    ("Extended Data Fig. 4 | Results.", "ED4", "Extended Data Fig. 4"),
    ("Appendix 1—figure 3. Results.", "A1-3", "Appendix 1—figure 3"),
])
def test_leading_figure_index(caption: str, key: str, label: str) -> None:
    idx = leading_figure_index(caption)
    assert idx is not None and idx.key == key and idx.label == label
    assert caption[idx.end:] == "Results."


@pytest.mark.parametrize("caption", ["Results in Figure 2.", "Figure 1A shows cells.", "", "Figures are shown."])
def test_no_leading_index(caption: str) -> None:
    assert leading_figure_index(caption) is None


def test_cli_shape_of_figure_index() -> None:
    assert analyze_caption("Fig. 5. Cells.")["figure_index"] == {"label": "Fig. 5", "key": "5", "span": [0, 8]}


def test_mention_grammar_keeps_its_behaviour() -> None:
    assert [(c.key, c.panels) for c in parse_mention("Figs. 2A–C and 3B")] == [("2", ("a", "b", "c")), ("3", ("b",))]
    assert [(c.key, c.panels) for c in parse_mention("Figure 1—figure supplement 2A")] == [("1-s2", ("a",))]
    assert [c.key for c in parse_mention("Extended Data Fig. 4")] == ["ED4"]
    found = find_mentions("As in Figure 3b and Supplementary Fig. S2, and in fig 4.")
    assert [[c.key for c in m.citations] for m in found] == [["3"], ["S2"], ["4"]]

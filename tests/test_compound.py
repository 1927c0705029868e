"""Compound cues: is the figure compound, and how many panels the caption implies."""

from __future__ import annotations

import random

import pytest

from figlink.text.captions import analyze_caption


@pytest.mark.parametrize("caption, compound, panels", [
    ("A bar chart of expression levels.", False, 1),
    ("Cells. (a) Control. (b) Treated.", True, 2),
    ("Cells. (a–c) Control; (e) treated.", True, 5),
    ("Shells. (i)–(iv) Views.", True, 4),
    ("Top: raw data. Bottom: fitted model.", True, 2),
    ("RIF-1 absorbance (top panel) and mass (bottom panel).", True, 2),
    ("A bug (bottom left) attacks a caterpillar.", False, 1),
    ("The diagonal (center) and the sum (bottom right) of the matrix.", False, 1),
    ("Distribution of cells in all panels.", True, None),
    ("Subfigures show the same cells.", True, None),
])
def test_compound_cues(caption: str, compound: bool, panels: int | None) -> None:
    result = analyze_caption(caption)
    assert result["is_compound"] is compound
    assert result["expected_panels"] == panels


def test_cue_words_equal_a_full_regex_scan() -> None:
    """The cue finder tries its regex only around hint words; on random strings of cue words, look-alikes
    ("arrow", "panelled") and separators it finds what a left-to-right scan of the whole text finds."""
    from figlink.text.compound import _CUE_WORDS, _cue_words

    assert _cue_words("top panels and sub-panel insets; see arrow") == {"top panels", "sub-panel", "insets"}
    rng = random.Random(9)
    pieces = ["top", "lower", "middle", "second", "left", "each", "both", "row", "rows", "panel", "panels", "column",
              "inset", "sub", "subfigure", "sub-figures", "subpanel", " ", "-", "x", "arrow", "_", "\u00e9", ".", "\n",
              "panelled", "1"]
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert _cue_words(text) == {m.group(0) for m in _CUE_WORDS.finditer(text)}, text

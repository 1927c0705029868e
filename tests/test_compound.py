"""Compound cues: is the figure compound, and how many panels the caption implies."""

from __future__ import annotations

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

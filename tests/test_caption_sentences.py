"""The fast caption sentence splitter, checked against pysbd (the slow reference)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from figlink.text.caption_sentences import sentence_spans, split_sentences


@pytest.mark.parametrize("text, expected", [
    ("One. Two.", ["One.", "Two."]),
    ("Cancer.A. Photographs here. B. Mass.", ["Cancer.", "A. Photographs here.", "B. Mass."]),
    ("Cells.(A) Stained.", ["Cells.", "(A) Stained."]),
    ("See Fig. 2 and e.g. this. Next.", ["See Fig. 2 and e.g. this.", "Next."]),
    ("P < 0.05 in 0.5 mM. Done.", ["P < 0.05 in 0.5 mM.", "Done."]),
    ("Sections. a *10 magnification. b *40 view.", ["Sections.", "a *10 magnification.", "b *40 view."]),
    ("Smith et al. reported it. Yes.", ["Smith et al. reported it.", "Yes."]),
    ("", []),
])
def test_split(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_spans_are_trimmed_offsets() -> None:
    text = "  One.   Two.  "
    assert [text[a:b] for a, b in sentence_spans(text)] == ["One.", "Two."]


def test_agrees_with_pysbd_on_real_captions() -> None:
    pysbd = pytest.importorskip("pysbd")
    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
    sample = json.loads((Path(__file__).parent / "data" / "jats_caption_splits.json").read_text(encoding="utf-8"))
    tp = fp = fn = 0
    for record in sample:
        caption = record["caption"]
        ours = {e for _, e in sentence_spans(caption)}
        ref = {len(caption[:span.end].rstrip()) for span in seg.segment(caption)}
        tp, fp, fn = tp + len(ours & ref), fp + len(ours - ref), fn + len(ref - ours)
    assert tp / (tp + fp) >= 0.9 and tp / (tp + fn) >= 0.85


def test_taxonomic_abbreviations_and_lower_case_labels() -> None:
    assert split_sentences("Conus cashi sp. nov. (A-J) and C. princeps (K).") == \
        ["Conus cashi sp. nov. (A-J) and C. princeps (K)."]
    assert split_sentences("At 18 hpf. c-d) vegfaa is lost. e) more.") == \
        ["At 18 hpf.", "c-d) vegfaa is lost.", "e) more."]

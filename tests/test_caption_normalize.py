"""SciCap normalization and caption selection."""

from __future__ import annotations

import pytest

from figlink.text.normalize import (caption_tokens, first_sentence, is_single_sentence, normalize_advanced,
                                    normalize_basic, normalized_caption, select_caption, strip_markup,
                                    within_token_limit)


def test_basic_normalization_lowercases_removes_label_and_numbers() -> None:
    cap = "Figure 3: Loss of 12.5% of 3 cells in CD34+ mice after 2,000 h (Ki-67)."
    assert normalize_basic(cap) == "loss of [NUM]% of [NUM] cells in cd34+ mice after [NUM] h (ki-[NUM])."


@pytest.mark.parametrize("label", ["Fig. 2.", "FIGURE 2 |", "Supplementary Figure S2.", "Figure 1—figure supplement 2.",
                                   "Extended Data Fig. 4 |"])
def test_figure_label_variants_are_removed(label: str) -> None:
    assert normalize_basic(f"{label} Results.") == "results."


def test_advanced_normalization_equations_and_brackets() -> None:
    cap = "Fig. 1. Fit (r2=0.72) at P < 0.01 with y = ax + b; see [12] and {x}."
    assert normalize_advanced(cap) == "fit [BRACKET] at [EQUATION] with [EQUATION]; see [BRACKET] and [BRACKET]."


def test_tex_and_mathml_become_equations() -> None:
    assert normalize_advanced("Energy $E = mc^2$ shown.") == "energy [EQUATION] shown."
    assert normalize_advanced("Value <math><mi>x</mi></math> here.") == "value [EQUATION] here."


def test_nested_and_unbalanced_brackets() -> None:
    assert normalize_advanced("a (b (c) d) e") == "a [BRACKET] e"
    assert normalize_advanced("a (b c") == "a (b c"
    assert normalize_advanced("a ) b (c)") == "a ) b [BRACKET]"


def test_markup_is_stripped() -> None:
    assert strip_markup("<b>Bold</b> &amp; <i>it</i>") == " Bold  &  it "
    assert normalize_basic("<p>Some &lt; 5</p>") == "some < [NUM]"


def test_caption_selection() -> None:
    cap = "Figure 2. Accuracy of the model. Errors are small (n = 3)."
    assert first_sentence(cap) == "Accuracy of the model."
    assert select_caption(cap, "first_sentence") == "accuracy of the model."
    assert not is_single_sentence(cap) and select_caption(cap, "single_sentence") is None
    assert is_single_sentence("Figure 2. One sentence only.")
    assert within_token_limit(cap) and not within_token_limit("word " * 101)
    assert select_caption("word " * 101, "max_tokens") is None
    with pytest.raises(ValueError):
        select_caption(cap, "nope")


def test_tokens_count_placeholders_once() -> None:
    assert caption_tokens("loss of [NUM] cells, [EQUATION].") == ["loss", "of", "[NUM]", "cells", "[EQUATION]"]


def test_normalized_caption_fields() -> None:
    norm = normalized_caption("Figure 4. A (B) c. Second 2.")
    assert norm.basic == "a (b) c. second [NUM]."
    assert norm.advanced == "a [BRACKET] c. second [NUM]."
    assert norm.first_sentence == "a (b) c."
    assert (norm.n_sentences, norm.n_tokens) == (2, 5)


def test_empty_caption() -> None:
    norm = normalized_caption("")
    assert norm.basic == norm.advanced == norm.first_sentence == "" and norm.n_tokens == 0

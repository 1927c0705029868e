"""SciCap normalization and caption selection."""

from __future__ import annotations

import random

import pytest

from figlink.text.normalize import (caption_tokens, first_sentence, is_single_sentence, normalize_advanced,
                                    normalize_basic, normalized_caption, select_caption, strip_markup,
                                    token_count, within_token_limit)


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


def test_token_count_matches_the_token_list() -> None:
    # Hand-counted: x-ray, of, it's, a, b, [NUM], fold, 5, µm, α’β ("a--b" is two tokens, "–" none).
    assert token_count("x-ray of it's a--b [NUM]-fold – 5 µm α’β") == 10
    assert token_count("") == 0 and token_count(" - ' ") == 0
    rng = random.Random(7)
    pieces = list("ab Z_09-'\u2019\u2013()[].,;:\u00b5\u03b1\u0302\u00e9?") + ["[NUM]", "[BRACKET]", "  ", "--", "\U0001d6fc"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        assert token_count(text) == len(caption_tokens(text)), text


def test_normalized_caption_equals_the_single_functions() -> None:
    """normalized_caption shares lower-casing and number replacement between its basic and advanced text
    and counts tokens without listing them: on random captions full of brackets, numbers, markup and
    relations those fields equal the functions that define them."""
    rng = random.Random(11)
    pieces = ["Figure 2. ", "(", ")", "[", "]", "{", "}", "A", "b", " ", "12", "3.5", ",", ". ", "x=1", " < ",
              "<i>", "</i>", "&amp;", "$a$", "\u00b5", "\u0130", "\u0663", "Fig. 3", "(a)", "CD34+", "  "]
    for _ in range(2000):
        cap = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        norm = normalized_caption(cap)
        assert norm.basic == normalize_basic(cap), cap
        assert norm.advanced == normalize_advanced(cap), cap
        assert norm.n_tokens == len(caption_tokens(normalize_basic(cap))), cap

"""Normalization's byte-level fast paths give what the plain str forms give.

``_replace_numbers`` finds numbers on UTF-8 bytes with every ASCII digit read as "0";
``_lower_numbers_finish`` also lower-cases the bytes and skips the whitespace collapse when it can. Both are
compared with the plain forms on random strings over an alphabet of their edge cases: non-ASCII decimal
digits, letters that lower-case to other lengths or by context, sentinels, every kind of whitespace, lone
surrogates.
"""

from __future__ import annotations

import random

from figlink.text import normalize

_PIECES = list("0123456789aZz_.,-( )[]") + [
    "  ", "\t", "\n", "\x0b", "\x1c", "\x1f", "\x00", "\x01", "\x02", "\x03", "\x7f",
    "\u00a0", "\u2009", "\u3000", "\u0085", "\u2028",  # non-ASCII whitespace
    "\u0663", "\u0966", "\U0001d7ce", "\u00b2", "\u2460",  # decimal digits (3), other digits (2)
    "\u03a3", "\u0391\u03a3", "\u0130", "\u212a", "\u00c4", "\u00e9", "\u00b5", "\u03b1", "\u2212", "\u2013",
    "\ud800", "\udc00", "\U0001f600", "\u0307", "\u2062", "[num]", "[NUM]", "1.5", "2,000", "a1", "x2.3b",
]


def _texts(n: int = 4000) -> list[str]:
    rng = random.Random(11)
    texts = ["", " ", "1", " 1 ", "a1 1a 1.2.3 ,4 5, 6_ \x017", "\u0391\u03a3 \u03a3\u03a3 1"]
    for _ in range(n):
        texts.append("".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 24))))
    return texts


def _plain_finish(text: str) -> str:
    text = " ".join(text.split())
    for k, v in normalize._SENTINELS.items():
        text = text.replace(k, v)
    return text


def test_replace_numbers_matches_the_str_pattern() -> None:
    for text in _texts():
        assert normalize._replace_numbers(text) == normalize._NUMBER.sub("\x01", text), repr(text)


def test_lower_numbers_finish_matches_the_plain_steps() -> None:
    for text in _texts():
        expected = _plain_finish(normalize._NUMBER.sub("\x01", text.lower()))
        assert normalize._lower_numbers_finish(text) == expected, repr(text)


def test_normalizers_keep_the_plain_steps() -> None:
    for text in _texts(1500):
        caption = "Figure 1. " + text
        body = normalize.remove_figure_label(caption)
        basic = _plain_finish(normalize._NUMBER.sub("\x01", normalize.strip_markup(body).lower()))
        assert normalize.normalize_basic(caption) == basic
        eq = normalize.strip_markup(normalize._replace_equations(body))
        advanced = _plain_finish(normalize._NUMBER.sub("\x01", normalize._replace_brackets(eq).lower()))
        assert normalize.normalize_advanced(caption) == advanced


def _plain_replace_equations(text: str) -> str:
    """Inline relations by the plain window scan (``finditer`` over every window, all seven operators)."""
    spans: list[tuple[int, int]] = []
    operators = sorted(k for k, ch in enumerate(text) if ch in normalize._RELATIONAL_CHARS)
    for i in operators:
        if spans and i < spans[-1][1]:
            continue
        for m in normalize._RELATION.finditer(text, max(0, i - 24), min(len(text), i + 40)):
            a, b = m.span()
            if a > i:
                break
            if i < b:
                if not spans or a >= spans[-1][1]:
                    spans.append((a, b))
                break
    for a, b in reversed(spans):
        text = text[:a] + "\x02" + text[b:]
    return text


def test_inline_relations_match_the_window_scan() -> None:
    rng = random.Random(5)
    pieces = ["x", "r2", "P", "n", "\u03b1", "12", "0.05", "3,5", "7%", " ", "  ", "=", "<", ">", "\u2264", "\u2260",
              "+", "-", "\u2212", "\u00b1", "&lt;", "(", ")", ".", ",", "_", "ab", "word ", "\n"]
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        assert normalize._replace_equations(text) == _plain_replace_equations(text), repr(text)


def test_lower_numbers_finish_on_ascii_text() -> None:
    """ASCII text takes its own path (other whitespace read from the zeroed bytes, sentinels from the text)."""
    pieces = [p for p in _PIECES if p.isascii()] + ["\r", "\x0c", "\x1d", "\x1e", "A", "Q", "_1", "1_", "0.5a"]
    rng = random.Random(12)
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        expected = _plain_finish(normalize._NUMBER.sub("\x01", text.lower()))
        assert normalize._lower_numbers_finish(text) == expected, repr(text)


def test_inline_relations_next_to_letter_runs() -> None:
    """The window scan starts after the last run of three letters: relations glued to words, "&lt;" and
    Greek operands next to such runs still come out as the plain window scan finds them."""
    rng = random.Random(6)
    pieces = ["a", "b", "Z", "ab", "abc", "word", "_", "\u03b1", "\u03b2\u03b3", "\u00e9", "1", "12", "0.5", "%",
              " ", "=", "<", ">", "\u2264", "-", "+", "/", "&lt;", "&gt;", "&", ";", ".", ",", "(", ")", "\n"]
    for _ in range(6000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        assert normalize._replace_equations(text) == _plain_replace_equations(text), repr(text)

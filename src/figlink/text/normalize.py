"""SciCap caption normalization and caption selection.

Basic normalization (SciCap): lower case, the figure label ("Figure 3:") removed, every number replaced
by ``[NUM]``. Advanced normalization adds: equations → ``[EQUATION]`` (TeX math, MathML, and inline
relations such as "r2=0.72" or "P < 0.01"), bracketed spans → ``[BRACKET]``. HTML tags left in a caption
are dropped first. Selection helpers implement SciCap's subsets: first sentence, single-sentence
captions, captions of at most 100 tokens.
"""

from __future__ import annotations

import html
import re

from figlink.model import NormalizedCaption
from figlink.text.mentions import leading_figure_index
from figlink.text.caption_sentences import sentence_spans

NUM, EQUATION, BRACKET = "[NUM]", "[EQUATION]", "[BRACKET]"
_SENTINELS = {"\x01": NUM, "\x02": EQUATION, "\x03": BRACKET}

_MATHML = re.compile(r"<(?:\w+:)?math\b.*?</(?:\w+:)?math\s*>", re.S | re.I)
_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
_TEX = re.compile(r"\$\$.+?\$\$|\$[^$\n]{1,400}\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)
_OPERAND = r"(?:[A-Za-z\u0391-\u03c9]{1,2}\d{0,2}|\d+(?:[.,]\d+)?%?)"
_OPERATOR = r"(?:[=<>\u2264\u2265\u2248\u2260\u00b1+\u2212\-*/^\u00d7\u00b7]|&lt;|&gt;)"
_RELATION = re.compile(rf"(?<![\w.]){_OPERAND}(?:\s*{_OPERATOR}+\s*{_OPERAND})+(?![\w])")
_RELATIONAL = re.compile("[=<>\u2264\u2265\u2248\u2260]")
# A number not glued to a word ("12", "0.05", "2,000"; not "r2" or "3D"), as it reads:
NUMBER_PLAIN = re.compile(r"(?<![A-Za-z0-9_\x01])\d+(?:[.,]\d+)*(?![A-Za-z0-9_])")
# The same matches with the first digit before the look-behind, so the regex engine skips ahead to digits
# (kept: 1.32x on the normalization stage; the tests compare it with NUMBER_PLAIN).
_NUMBER = re.compile(r"\d(?<![A-Za-z0-9_\x01]\d)\d*(?:[.,]\d+)*(?![A-Za-z0-9_])")
_INNERMOST = re.compile(r"\([^()\[\]{}]*\)|\[[^()\[\]{}]*\]|\{[^()\[\]{}]*\}")
_TOKEN = re.compile(r"\[(?:NUM|EQUATION|BRACKET)\]|\w+(?:[-'\u2019]\w+)*")


def strip_markup(text: str) -> str:
    """Drop HTML/XML tags and decode entities ("&lt;" → "<"); MathML keeps its text."""
    return html.unescape(_TAG.sub(" ", text))


def remove_figure_label(caption: str) -> str:
    """The caption without its leading figure label ("Figure 1:", "Fig. S2.")."""
    idx = leading_figure_index(caption)
    return caption[idx.end:] if idx else caption


def _scicap(text: str) -> str:
    """SciCap's rule: lower case, numbers → [NUM]; then whitespace collapsed and the placeholders written."""
    text = " ".join(_NUMBER.sub("\x01", text.lower()).split())
    for sentinel, placeholder in _SENTINELS.items():
        text = text.replace(sentinel, placeholder)
    return text


def _replace_equations(text: str) -> str:
    """MathML, TeX and inline relations ("r2=0.72", "P < 0.01") → the equation placeholder."""
    text = _TEX.sub("\x02", _MATHML.sub(" \x02 ", text))
    spans: list[tuple[int, int]] = []
    for op in _RELATIONAL.finditer(text):
        i = op.start()
        if spans and i < spans[-1][1]:
            continue  # inside the relation just found
        # The first relation of a window around the operator that ends after it holds the operator, unless
        # it starts after it.
        for m in _RELATION.finditer(text, max(0, i - 24), min(len(text), i + 40)):
            if m.end() > i:
                if m.start() <= i and (not spans or m.start() >= spans[-1][1]):
                    spans.append(m.span())
                break
    out, c = [], 0
    for a, b in spans:
        out.append(text[c:a])
        out.append("\x02")
        c = b
    out.append(text[c:])
    return "".join(out)


def _replace_brackets(text: str) -> str:
    """Outermost balanced (), [] and {} spans → one placeholder each; unbalanced ones are left as they are.

    Innermost spans are replaced first, pass after pass, so a span holding only placeholders is replaced
    next (captions rarely nest more than twice).
    """
    while True:
        new, n = _INNERMOST.subn("\x03", text)
        if n == 0 or not (")" in new or "]" in new or "}" in new):
            return new  # nothing replaced, or no closing bracket left for another pass to pair
        text = new


def normalize_basic(caption: str) -> str:
    """SciCap basic normalization: lower case, figure label removed, numbers → [NUM]."""
    return _scicap(strip_markup(remove_figure_label(caption)))


def normalize_advanced(caption: str) -> str:
    """Basic normalization plus equations → [EQUATION] and bracketed spans → [BRACKET]."""
    return _advanced(remove_figure_label(caption))


def _advanced(body: str) -> str:
    """``normalize_advanced`` of a caption whose figure label is removed."""
    return _scicap(_replace_brackets(strip_markup(_replace_equations(body))))


def caption_tokens(text: str) -> list[str]:
    """Word tokens of a (normalized) caption; placeholders count as one token, punctuation as none."""
    return _TOKEN.findall(text)


def token_count(text: str) -> int:
    """``len(caption_tokens(text))``."""
    return len(_TOKEN.findall(text))


def first_sentence(caption: str) -> str:
    """The first sentence of the caption, its figure label removed (not normalized)."""
    text = strip_markup(remove_figure_label(caption)).strip()
    spans = sentence_spans(text)
    return text[spans[0][0]:spans[0][1]] if spans else ""


def sentence_count(caption: str) -> int:
    """Number of sentences in the caption (figure label removed)."""
    return len(sentence_spans(strip_markup(remove_figure_label(caption))))


def is_single_sentence(caption: str) -> bool:
    """SciCap's single-sentence subset."""
    return sentence_count(caption) == 1


def within_token_limit(caption: str, limit: int = 100) -> bool:
    """SciCap's "≤ 100 tokens" subset, counted on the basic-normalized caption."""
    return token_count(normalize_basic(caption)) <= limit


def select_caption(caption: str, policy: str = "first_sentence", limit: int = 100) -> str | None:
    """The caption text a SciCap subset uses, or ``None`` when the caption is not in the subset.

    ``policy``: ``first_sentence`` (its first sentence, normalized), ``single_sentence`` (the caption
    when it is one sentence), ``max_tokens`` (the caption when it has at most ``limit`` tokens), ``all``.
    """
    if policy == "first_sentence":
        return normalize_basic(first_sentence(caption))
    if policy == "single_sentence":
        return normalize_basic(caption) if is_single_sentence(caption) else None
    if policy == "max_tokens":
        return normalize_basic(caption) if within_token_limit(caption, limit) else None
    if policy == "all":
        return normalize_basic(caption)
    raise ValueError(f"unknown caption selection policy: {policy!r}")


def normalized_caption(caption: str) -> NormalizedCaption:
    """All normalization fields of one caption, as stored on :class:`figlink.model.Figure` (the values of
    the functions above)."""
    body = remove_figure_label(caption)
    plain = strip_markup(body)
    spans = sentence_spans(plain)
    basic = _scicap(plain)
    first = plain[spans[0][0]:spans[0][1]] if spans else ""
    return NormalizedCaption(basic=basic, advanced=_advanced(body), first_sentence=_scicap(first),
                             n_sentences=len(spans), n_tokens=token_count(basic))


__all__ = ["NUM", "EQUATION", "BRACKET", "strip_markup", "remove_figure_label", "normalize_basic",
           "normalize_advanced", "caption_tokens", "first_sentence", "sentence_count", "is_single_sentence",
           "within_token_limit", "select_caption", "normalized_caption", "token_count"]

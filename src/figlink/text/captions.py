"""Caption intelligence for one caption: split, compound cues, figure index, normalization, medical filter.

:func:`analyze_caption` reads a bare caption string (the ``figlink captions split`` command); the ingest
pipeline fills the same fields on every figure with :func:`figlink.enrich.captions.enrich_caption`.
"""

from __future__ import annotations

from typing import Any

from figlink.errors import InputError
from figlink.model import CaptionSplit
from figlink.text.compound import compound_cues
from figlink.text.keywords import find_medical_keywords
from figlink.text.mentions import FigureIndex, leading_figure_index
from figlink.text.normalize import normalized_caption
from figlink.text.subcaptions import label_text, panel_caption, split_caption, split_labels

MAX_CAPTION_CHARS = 100_000


def check_caption(caption: Any) -> str:
    """The caption as a string, or :class:`InputError` for a non-string or an oversized one."""
    if caption is None:
        return ""
    if not isinstance(caption, str):
        raise InputError(f"caption must be a string, not {type(caption).__name__}", stage="captions")
    if len(caption) > MAX_CAPTION_CHARS:
        raise InputError(f"caption has {len(caption)} characters; the limit is {MAX_CAPTION_CHARS}",
                         stage="captions")
    return caption


def figure_index(caption: str) -> FigureIndex | None:
    """The figure label opening the caption ("Supplementary Figure S3."), read with the mention grammar."""
    return leading_figure_index(caption)


def analyze_caption(caption: Any) -> dict[str, Any]:
    """Everything figlink reads from one caption, as JSON-ready data.

    Keys: ``caption_split``, ``is_compound``, ``expected_panels``, ``labels``, ``positions``,
    ``normalized`` (basic, advanced, first_sentence, n_sentences, n_tokens), ``figure_index``
    (label, key, span, or null), ``medical_keywords``, ``is_medical``. Raises :class:`InputError` only for
    a non-string or oversized caption.
    """
    text = check_caption(caption)
    split = split_caption(text)
    cues = compound_cues(text, split)
    idx = figure_index(text)
    keywords = find_medical_keywords(text)
    return {
        "caption_split": split.to_dict(),
        "is_compound": cues.is_compound,
        "expected_panels": cues.expected_panels,
        "labels": cues.labels,
        "positions": cues.positions,
        "normalized": normalized_caption(text).to_dict(),
        "figure_index": None if idx is None else {"label": idx.label, "key": idx.key,
                                                  "span": [idx.start, idx.end]},
        "medical_keywords": keywords,
        "is_medical": bool(keywords),
    }


__all__ = ["MAX_CAPTION_CHARS", "check_caption", "figure_index", "analyze_caption", "split_caption",
           "label_text", "panel_caption", "split_labels", "CaptionSplit"]

"""The captions stage: what figlink reads from a figure's caption and its citing sentences.

Fills ``caption_split``, ``is_compound``, ``expected_panels``, ``caption_normalized``, ``medical_keywords``
and ``is_medical`` (MedICaT stage 1: caption + inline references). The readers live in :mod:`figlink.text`;
:func:`figlink.text.captions.analyze_caption` gives the same results for a bare caption string.
"""

from __future__ import annotations

import dataclasses

from figlink.enrich.stage import Enriched
from figlink.errors import InputError
from figlink.model import Figure
from figlink.text.captions import check_caption
from figlink.text.compound import compound_cues
from figlink.text.keywords import find_medical_keywords
from figlink.text.normalize import normalized_caption
from figlink.text.subcaptions import split_caption


def enrich_caption(figure: Figure) -> Enriched:
    """A copy of ``figure`` with its caption fields filled.

    A caption that cannot be read (oversized) leaves the caption fields ``None``, still sets the medical
    fields from the citing sentences, and gives the reason as a warning; nothing is raised.
    """
    refs = [r.text for r in figure.inline_refs]
    try:
        text = check_caption(figure.caption)
    except InputError as exc:
        keywords = find_medical_keywords(refs)
        return Enriched(dataclasses.replace(figure, caption_split=None, is_compound=None, expected_panels=None,
                                            caption_normalized=None, medical_keywords=keywords,
                                            is_medical=bool(keywords)),
                        (f"{figure.figure_id}: {exc}",))
    split = split_caption(text)
    cues = compound_cues(text, split)
    keywords = find_medical_keywords([text, *refs])
    return Enriched(dataclasses.replace(
        figure, caption_split=split, is_compound=cues.is_compound, expected_panels=cues.expected_panels,
        caption_normalized=normalized_caption(text), medical_keywords=keywords, is_medical=bool(keywords)))

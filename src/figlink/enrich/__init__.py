"""Enrich: what figlink adds to every figure of a parsed paper, one stage after another.

=========  ======================  ===========================================================
stage      module                  fills
=========  ======================  ===========================================================
captions   ``enrich/captions.py``  caption split, compound cues, expected panels, SciCap
                                   normalization, medical keywords (MedICaT stage 1)
vision     ``enrich/vision.py``    panels, panel labels, OCR, figure type, medical filter stage 2;
                                   panels ↔ subcaptions by ``enrich/align.py``
=========  ======================  ===========================================================

A stage takes a :class:`~figlink.model.Figure` and returns :class:`Enriched`: a new figure (the input is
not modified) and its warnings. :func:`enrich` runs the stages over every figure and returns a new paper
whose ``warnings`` gain those of the stages. A stage that raises on one figure leaves that figure as it
was, adds a warning, and the other figures go on.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Optional, Sequence

from figlink.enrich.stage import Enriched, FigureStage
from figlink.images import ImageFolder
from figlink.model import Paper


def figure_stages(images: Optional[ImageFolder] = None) -> list[tuple[str, FigureStage]]:
    """The stages in order: captions, then vision when the figures' images are at hand (``images``)."""
    from figlink.enrich.captions import enrich_caption

    stages: list[tuple[str, FigureStage]] = [("captions", enrich_caption)]
    if images is not None:
        from figlink.enrich.vision import enrich_vision

        stages.append(("vision", partial(enrich_vision, images=images)))
    return stages


def enrich(paper: Paper, stages: Optional[Sequence[tuple[str, FigureStage]]] = None) -> Paper:
    """A new paper: each figure through every stage (default: :func:`figure_stages` without images)."""
    figures = list(paper.figures)
    warnings = list(paper.warnings)
    for name, stage in figure_stages() if stages is None else stages:
        for i, fig in enumerate(figures):
            try:
                figures[i], notes = stage(fig)
            except Exception as e:  # one figure failing must not lose the paper or the other figures
                notes = (f"{fig.figure_id}: stage {name} failed: {type(e).__name__}: {e}",)
            warnings.extend(notes)
    return dataclasses.replace(paper, figures=figures, warnings=warnings)


__all__ = ["Enriched", "FigureStage", "enrich", "figure_stages"]

"""The per-input pipeline: parse a source, then run the enrich stages on its figures.

Each stage is a pure function ``Paper -> Paper``; engines (local processes, Ray) only decide where
:func:`process_source` runs. A stage that fails on one figure records a warning on the paper and the
paper goes on; a source that cannot be parsed raises a :class:`~figlink.errors.FiglinkError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from figlink.ingest import parse
from figlink.model import Paper

Stage = Callable[[Paper], Paper]


@dataclass(frozen=True)
class PipelineOptions:
    """What to run after parsing."""

    vision: bool = True


def caption_stage(paper: Paper) -> Paper:
    """Caption intelligence for every figure: subcaptions, compound cues, normalization, medical keywords."""
    from figlink.text.captions import enrich_caption

    paper.figures = [enrich_caption(f, paper.warnings) for f in paper.figures]
    return paper


def vision_stage(paper: Paper, image_root: Path, image_prefix: str = "") -> Paper:
    """Panels (aligned with subcaptions), OCR and figure type for every figure that has an image.

    Figure images are ``image_root / (image without image_prefix)``. A figure whose image cannot be
    analysed keeps its caption fields and gets a warning on the paper. Stage 2 of the medical filter
    (MedICaT) keeps a keyword hit only when a medical type ranks in the top 4.
    """
    from figlink.errors import FiglinkError
    from figlink.vision.analyze import analyze_figure
    from figlink.vision.figtype import is_medical

    for fig in paper.figures:
        if not fig.image:
            continue
        rel = fig.image[len(image_prefix):] if image_prefix and fig.image.startswith(image_prefix) else fig.image
        path = image_root / rel
        if not path.is_file():
            continue
        try:
            fv = analyze_figure(path, caption_split=fig.caption_split, expected_panels=fig.expected_panels)
        except FiglinkError as e:
            paper.warnings.append(f"{fig.figure_id}: vision: {e}")
            continue
        fig.panels, fig.ocr, fig.figure_type = fv.panels, fv.ocr, fv.figure_type
        fig.is_compound = bool(fig.is_compound) or fv.is_compound
        if fig.is_medical is not None and fv.type_ranking:
            fig.is_medical = is_medical(fv.type_ranking, fig.is_medical)
    return paper


def enrich_stages(options: PipelineOptions, image_root: Optional[Path] = None,
                  image_prefix: str = "") -> list[tuple[str, Stage]]:
    """The enrich stages, in order, that this build provides and the options ask for."""
    stages: list[tuple[str, Stage]] = [("captions", caption_stage)]
    if options.vision and image_root is not None:
        stages.append(("vision", lambda p: vision_stage(p, image_root, image_prefix)))
    return stages


def enrich(paper: Paper, options: PipelineOptions = PipelineOptions(), image_root: Optional[Path] = None,
           image_prefix: str = "") -> Paper:
    """Run every enrich stage; a stage error becomes a warning on the paper."""
    for name, stage in enrich_stages(options, image_root, image_prefix):
        try:
            paper = stage(paper)
        except Exception as e:  # one stage failing must not lose the parsed paper
            paper.warnings.append(f"stage {name} failed: {type(e).__name__}: {e}")
    return paper


def process_source(path: str | Path, xml: str | Path | None = None, image_root: Optional[Path] = None,
                   image_prefix: str = "", options: PipelineOptions = PipelineOptions()) -> Paper:
    """Parse one source and enrich it."""
    paper = parse(path, xml=xml, image_root=image_root, image_prefix=image_prefix)
    return enrich(paper, options, image_root, image_prefix)

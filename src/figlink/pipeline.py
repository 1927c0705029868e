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


def enrich_stages(options: PipelineOptions) -> list[tuple[str, Stage]]:
    """The enrich stages, in order, that this build provides and the options ask for."""
    return [("captions", caption_stage)]


def enrich(paper: Paper, options: PipelineOptions = PipelineOptions()) -> Paper:
    """Run every enrich stage; a stage error becomes a warning on the paper."""
    for name, stage in enrich_stages(options):
        try:
            paper = stage(paper)
        except Exception as e:  # one stage failing must not lose the parsed paper
            paper.warnings.append(f"stage {name} failed: {type(e).__name__}: {e}")
    return paper


def process_source(path: str | Path, xml: str | Path | None = None, image_root: Optional[Path] = None,
                   image_prefix: str = "", options: PipelineOptions = PipelineOptions()) -> Paper:
    """Parse one source and enrich it."""
    return enrich(parse(path, xml=xml, image_root=image_root, image_prefix=image_prefix), options)

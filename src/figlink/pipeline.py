"""One source through the pipeline: parse it (:mod:`figlink.ingest`), then enrich its figures
(:mod:`figlink.enrich`).

Engines (local processes, Ray) only decide where :func:`process_source` runs; :func:`figlink.builder.build`
runs it over many sources into a corpus. A source that cannot be parsed raises a
:class:`~figlink.errors.FiglinkError`; a figure that an enrich stage cannot handle gets a warning on the paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from figlink.enrich import enrich, figure_stages
from figlink.images import ImageFolder
from figlink.ingest import parse
from figlink.model import Paper


@dataclass(frozen=True)
class PipelineOptions:
    """What to run after parsing."""

    vision: bool = True  # the vision stage, on figures whose images were saved (``images``)


def process_source(path: str | Path, xml: str | Path | None = None, images: Optional[ImageFolder] = None,
                   options: PipelineOptions = PipelineOptions()) -> Paper:
    """Parse one source (a PDF merged with ``xml`` when given), saving its figure images to ``images``,
    and enrich it."""
    paper = parse(path, xml=xml, image_root=images.root if images else None,
                  image_prefix=images.prefix if images else "")
    return enrich(paper, figure_stages(images if options.vision else None))

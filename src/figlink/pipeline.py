"""One source through the pipeline: parse it (:mod:`figlink.ingest`), then enrich its figures
(:mod:`figlink.enrich`).

Engines (local processes, Ray) only decide where :func:`stage_source` runs: it parses a source with its
figure images saved in a folder of the task's own, and the corpus's single writer settles the paper id
and publishes the images (:meth:`figlink.corpus.Corpus.put_paper`). :func:`process_source` does both
for one source outside a corpus. A figure-pairs file holds many papers, one per line: :func:`stage_pair` is
the pipeline of one line. A source that cannot be parsed raises a
:class:`~figlink.errors.FiglinkError`; a figure that an enrich stage cannot handle gets a warning on the paper.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from figlink.enrich import enrich, figure_stages
from figlink.images import ImageFolder, discard
from figlink.ingest import parse
from figlink.model import Paper

if TYPE_CHECKING:  # PIL is imported by the pairs reader, which `figlink parse` never needs
    from figlink.ingest.pairs import PairLine


@dataclass(frozen=True)
class PipelineOptions:
    """What to run after parsing."""

    vision: bool = True  # the vision stage, on figures whose images were saved


def stage_source(path: str | Path, xml: str | Path | None = None, staging: Optional[Path] = None,
                 options: PipelineOptions = PipelineOptions()) -> Paper:
    """Parse one source (a PDF merged with ``xml`` when given), saving its figure images as files of the
    folder ``staging`` (``Figure.image`` is the file name), and enrich it."""
    paper = parse(path, xml=xml, image_dir=staging)
    images = ImageFolder(Path(staging)) if staging is not None and options.vision else None
    return enrich(paper, figure_stages(images))


def stage_pair(line: PairLine, staging: Optional[Path] = None, options: PipelineOptions = PipelineOptions()) -> Paper:
    """One line of a figure-pairs file as a paper with one figure: read it, copy its image into the folder
    ``staging`` (as parsing saves other sources' figure images), and enrich it. Without ``staging`` the
    figure keeps the absolute path of its image and the vision stage is skipped."""
    from figlink.ingest.pairs import save_pair_image

    paper = line.paper()
    if staging is None:
        return enrich(paper, figure_stages(None))
    paper = save_pair_image(paper, Path(staging))
    return enrich(paper, figure_stages(ImageFolder(Path(staging)) if options.vision else None))


def process_source(path: str | Path, xml: str | Path | None = None, images: Optional[ImageFolder] = None,
                   options: PipelineOptions = PipelineOptions(),
                   paper_id: Optional[Callable[[Paper], str]] = None) -> Paper:
    """Parse and enrich one source, saving its figure images to ``images.root/<paper_id>/`` (replacing
    what that folder held) with ``Figure.image`` = ``images.prefix + "<paper_id>/<file>"``.

    ``paper_id(paper)``, when given, gives the id to store the paper under instead of the one its parser
    proposed (the ``parse`` command uses it to keep ids unique within one call)."""
    if images is None:
        paper = stage_source(path, xml, None, options)
        return paper if paper_id is None else replace(paper, paper_id=paper_id(paper))
    staging = Path(images.root) / f".staging-{uuid.uuid4().hex}"
    try:
        paper = stage_source(path, xml, staging, options)
        if paper_id is not None:
            paper = replace(paper, paper_id=paper_id(paper))
        return images.publish(paper, staging)
    finally:
        discard(staging)

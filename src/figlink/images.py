"""Where parsing saves figure images, and how a figure refers to its image.

Parsing a source saves its figure images as plain files in one folder that the caller chooses (a parser
never builds a path from a file name or a paper id), and sets ``Figure.image`` to the file's name. Once
the paper's id is settled, :meth:`ImageFolder.publish` moves that folder to ``root/<paper_id>/`` and
sets ``Figure.image`` to ``prefix + "<paper_id>/<file>"``. A corpus hands out its own folder
(:meth:`figlink.corpus.Corpus.image_folder`): its ``images/`` folder with the prefix ``images/``, so that
``Figure.image`` is relative to the corpus.

So two sources never write into one folder, whatever their file names: each is parsed into a folder of
its own, and only the single writer that gives out paper ids moves it into place.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

from figlink.model import Paper


@dataclass(frozen=True)
class ImageFolder:
    """A folder that receives figure images, one subfolder per paper, and the prefix figures name them with."""

    root: Path
    prefix: str = ""

    def path(self, image: str) -> Path:
        """The file of a figure whose ``image`` is ``image``."""
        rel = image[len(self.prefix):] if self.prefix and image.startswith(self.prefix) else image
        return self.root / rel

    def paper_dir(self, paper_id: str) -> Path:
        """The folder of one paper's images (``paper_id`` is a file-name-safe id, see :mod:`figlink.ids`)."""
        if not paper_id or paper_id in (".", "..") or "/" in paper_id or os.sep in paper_id:
            raise ValueError(f"not a paper id usable as a folder name: {paper_id!r}")
        return self.root / paper_id

    def publish(self, paper: Paper, staged: Path) -> Paper:
        """Move ``staged`` (the folder a source's images were saved in, ``Figure.image`` being file names in
        it) to this folder's subfolder for ``paper.paper_id``, replacing what was there, and return the
        paper with ``Figure.image`` naming the published files. Figures whose image is not a file of
        ``staged`` keep their ``image``. An empty or missing ``staged`` only removes the old subfolder."""
        target = self.paper_dir(paper.paper_id)
        discard(target)
        staged = Path(staged)
        if staged.is_dir() and any(staged.iterdir()):
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, target)
        else:
            discard(staged)
        figures = [replace(f, image=f"{self.prefix}{paper.paper_id}/{f.image}")
                   if f.image and "/" not in f.image and (target / f.image).is_file() else f
                   for f in paper.figures]
        return replace(paper, figures=figures)


def discard(folder: Path) -> None:
    """Remove ``folder`` and what it holds, if it exists: first renamed out of the way (one step, so that no
    reader finds it half-deleted), then deleted."""
    folder = Path(folder)
    if not folder.exists():
        return
    trash = folder.with_name(f".trash-{uuid.uuid4().hex}")
    try:
        os.replace(folder, trash)
    except OSError:
        trash = folder
    shutil.rmtree(trash, ignore_errors=True)

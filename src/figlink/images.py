"""Where parsing saves figure images, and how a figure refers to its image.

Parsing a source writes its figure images to ``root/<paper_id>/<file>`` and sets ``Figure.image`` to
``prefix + "<paper_id>/<file>"``. A corpus hands out its own (:meth:`figlink.corpus.Corpus.image_folder`):
its ``images/`` folder with the prefix ``images/``, so that ``Figure.image`` is relative to the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ImageFolder:
    """A folder that receives figure images, and the prefix figures name them with."""

    root: Path
    prefix: str = ""

    def path(self, image: str) -> Path:
        """The file of a figure whose ``image`` is ``image``."""
        rel = image[len(self.prefix):] if self.prefix and image.startswith(self.prefix) else image
        return self.root / rel

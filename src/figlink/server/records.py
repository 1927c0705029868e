"""Figure and panel records as the REST API returns them, read from the corpus by ids only.

Image files are found through the figure's stored ``image`` field and must resolve to a regular file
inside the corpus's ``images/`` folder; nothing from a request is ever joined to a path.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote

from figlink.corpus import Corpus
from figlink.errors import InputError
from figlink.model import Figure, Paper

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}


def figure_url(paper_id: str, figure_id: str) -> str:
    """The API path of a figure; each id percent-encoded as one path segment (any stored id works)."""
    return f"/api/papers/{quote(paper_id, safe='')}/figures/{quote(figure_id, safe='')}"


def panel_record(paper: Paper, fig: Figure, label: str) -> Optional[dict[str, Any]]:
    """One panel: its box (when detected), subcaption and the citing sentences that name it."""
    from figlink.index.docs import _panel_labels, _subcaption

    if label not in _panel_labels(fig):
        return None
    box = next((p for p in fig.panels if p.label and p.label.lower() == label), None)
    sub, spans = _subcaption(fig, label)
    base = figure_url(paper.paper_id, fig.figure_id)
    return {"paper_id": paper.paper_id, "figure_id": fig.figure_id, "label": label,
            "bbox": None if box is None else box.bbox.xyxy(),
            "score": box.score if box is not None else None, "subcaption": sub, "subcaption_spans": spans,
            "inline_refs": [r.to_dict() for r in fig.inline_refs if label in (x.lower() for x in r.panels)],
            "image_url": f"{base}/panels/{label}/image" if box is not None and fig.image else None}


def figure_record(paper: Paper, fig: Figure) -> dict[str, Any]:
    """A figure with its paper's metadata and the URLs of its image and panels."""
    from figlink.index.docs import _panel_labels

    base = figure_url(paper.paper_id, fig.figure_id)
    return {"paper": {"paper_id": paper.paper_id, "title": paper.title, "doi": paper.doi, "pmcid": paper.pmcid,
                      "journal": paper.journal, "year": paper.year, "license": paper.license.to_dict()},
            "figure": fig.to_dict(), "image_url": f"{base}/image" if fig.image else None,
            "panels": [panel_record(paper, fig, lab) for lab in _panel_labels(fig)]}


class CorpusReader:
    """Thread-safe read access to one corpus for the server."""

    def __init__(self, corpus_dir: str | Path) -> None:
        self.root = Path(corpus_dir).resolve()
        self.corpus = Corpus(self.root, readonly=True)
        self.lock = threading.Lock()

    def figure(self, paper_id: str, figure_id: str) -> tuple[Optional[Paper], Optional[Figure]]:
        with self.lock:
            paper = self.corpus.paper(paper_id)
        return paper, None if paper is None else paper.figure(figure_id)

    def image_path(self, fig: Figure) -> Optional[Path]:
        """The figure's image file, only when it is a regular file under ``<corpus>/images``."""
        return self.image_file(fig.image)

    def image_file(self, rel: Optional[str]) -> Optional[Path]:
        """A stored image path (a figure's ``image`` field) as a regular file under ``<corpus>/images``."""
        if not rel:
            return None
        try:
            p = self.corpus.image_file(rel)
        except InputError:
            return None
        return p if p.suffix.lower() in IMAGE_TYPES else None

    def close(self) -> None:
        self.corpus.close()


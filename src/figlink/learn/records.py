"""Figure pairs for learning: an image, its caption and the texts that cite it, from any source.

:func:`pairs_from_paper` turns the figures of a :class:`~figlink.model.Paper` that have an image into
:class:`FigurePair` records; :func:`read_pair_file` does it for a figure-pairs JSONL file and
:func:`pairs_from_corpus` for a corpus. Training, evaluation and ``figlink embed`` all start here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Literal, Optional

from figlink.errors import FiglinkError
from figlink.ingest.pairs import SOURCE as PAIRS_SOURCE, read_pairs
from figlink.model import Paper

TextMode = Literal["caption", "caption+mentions"]
TEXT_MODES: tuple[str, ...] = ("caption", "caption+mentions")  # the text of a figure: caption, or + citing texts
CONTEXTS: tuple[str, ...] = ("none", "mentions")  # what a captioner may read besides the image and its OCR text


@dataclass(frozen=True)
class FigurePair:
    """One figure for the matcher: id, image file, caption, citing texts."""

    id: str
    image: Path
    caption: str
    mentions: tuple[str, ...] = ()
    line: Optional[int] = None  # its line in a pairs file, for error messages

    def where(self) -> str:
        return f"line {self.line} ({self.id})" if self.line is not None else self.id

    def text(self, text_mode: "TextMode") -> str:
        """Its text side as words: the caption, or the caption and its citing texts."""
        return self.caption if text_mode == "caption" else " ".join((self.caption, *self.mentions))


@dataclass(frozen=True)
class BadItem:
    """An input item that could not be used, and why (one line)."""

    where: str  # "line 12", or a figure id
    reason: str

    def line(self) -> str:
        return f"{self.where}: {self.reason}"


def pair_id(paper: Paper, figure_id: str) -> str:
    """The id of a figure: the pair id for a pairs source, else ``paper_id/figure_id``."""
    return figure_id if paper.source == PAIRS_SOURCE else f"{paper.paper_id}/{figure_id}"


def pairs_from_paper(paper: Paper, image_path: Callable[[str], Path] = Path,
                     line: Optional[int] = None) -> list[FigurePair]:
    """The figures of a paper with an image and a caption; ``image_path`` maps ``Figure.image`` to a file."""
    out = []
    for fig in paper.figures:
        if fig.image and fig.caption.strip():
            out.append(FigurePair(pair_id(paper, fig.figure_id), image_path(fig.image), fig.caption.strip(),
                                  tuple(r.text for r in fig.inline_refs if r.text.strip()), line))
    return out


def read_pair_file(path: str | Path) -> tuple[list[FigurePair], list[BadItem]]:
    """The usable figures of a pairs file, in file order, and one :class:`BadItem` per bad line."""
    pairs: list[FigurePair] = []
    bad: list[BadItem] = []
    for lineno, result in read_pairs(path):
        if isinstance(result, FiglinkError):
            bad.append(BadItem(f"line {lineno}", str(result)))
        else:
            pairs.extend(pairs_from_paper(result, line=lineno))
    return pairs, bad


def pairs_from_corpus(corpus_dir: str | Path) -> list[FigurePair]:
    """Every figure of a corpus that has an image and a caption (images resolved inside the corpus).

    A thin adapter over the Corpus API: papers and ``Corpus.image_file``.
    """
    from figlink.corpus import Corpus

    out: list[FigurePair] = []
    with Corpus(corpus_dir, readonly=True) as corpus:
        for paper in corpus.papers():
            out.extend(pairs_from_paper(paper, lambda rel: _corpus_image(corpus, rel)))
    return out


def _corpus_image(corpus, rel: str) -> Path:
    try:
        return corpus.image_file(rel)
    except FiglinkError:
        return corpus.images_dir / "__missing__" / rel  # reported as a missing image when features are read


def validation_slice(pair_ids: Iterable[str], share: int = 10) -> set[str]:
    """About 1/``share`` of the ids, picked by the MD5 of the id (stable across runs and machines)."""
    return {i for i in pair_ids if int(hashlib.md5(i.encode("utf-8")).hexdigest()[:8], 16) % share == 0}


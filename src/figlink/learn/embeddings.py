"""What every matcher backend gives: the :class:`Matcher` protocol and its :class:`Embeddings`.

Backends (:mod:`figlink.learn.embedder` for the built-in dual encoder, :mod:`figlink.learn.external` for
exported models) import this; :func:`figlink.learn.embedder.load_matcher` picks one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np

from figlink.learn.cache import FeatureCache
from figlink.learn.hubness import Hubness
from figlink.learn.lexical import LexicalWeights
from figlink.learn.records import BadItem, FigurePair, TextMode

KIND = "matcher"  # the model-directory kind of every matcher


@dataclass
class Embeddings:
    ids: list[str]
    image: np.ndarray  # (n, d) float32, unit rows
    text: np.ndarray  # (n, d) float32, unit rows
    bad: list[BadItem]
    ocr_text: list[str] = field(default_factory=list)  # the words read in each image (backends with OCR)


class Matcher(Protocol):
    dim: int
    lexical: LexicalWeights  # weights of the lexical term's halves in its score (learn.lexical); 0 for none
    hubness: Hubness  # the hubness correction of its score (learn.hubness); temperature 0 for none

    def embed(self, pairs: Sequence[FigurePair], text_mode: TextMode, cache: FeatureCache,
              device: str = "cpu", ocr: bool = True) -> Embeddings: ...

"""Figure pairs → the feature arrays the matcher trains and embeds on (all cached on disk).

:func:`featurize_pairs` reads every image once (trunk maps, and OCR lines when asked) and embeds the
captions, citing texts and OCR texts with MiniLM. A pair whose image is unusable is returned as a
:class:`~figlink.learn.records.BadItem`; the others go on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Sequence, cast

import numpy as np

from figlink.errors import FiglinkError
from figlink.learn.cache import FeatureCache
from figlink.learn.featurize import ImageFeatures, image_features
from figlink.learn.image_features import BASE_SIZE, empty_maps, pooled_from_maps
from figlink.learn.ocr_text import ocr_string
from figlink.learn.records import BadItem, FigurePair, TextMode
from figlink.learn.text_features import embed_texts, mean_of


@dataclass
class Features:
    """Row-aligned features of n figures."""

    ids: list[str]
    pooled: np.ndarray  # (n, 1280) float32 ImageNet features (frozen tail)
    maps: Optional[np.ndarray]  # (n, 192, s, s) float16 trunk maps, kept only to tune the tail
    ocr: np.ndarray  # (n, 384) MiniLM embedding of the OCR text (zeros when none)
    has_ocr: np.ndarray  # (n,) 1.0 when the image has OCR text
    caption: np.ndarray  # (n, 384)
    mentions: np.ndarray  # (n, 384) mean embedding of the citing texts (zeros when none)
    has_mentions: np.ndarray  # (n,)
    ocr_text: list[str] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)
    mention_text: list[str] = field(default_factory=list)
    image_size: int = BASE_SIZE  # the side (px) the images were letterboxed at for ``pooled`` and ``maps``

    def __len__(self) -> int:
        return len(self.ids)

    def texts(self, text_mode: TextMode) -> list[str]:
        """The text side of every figure as words: the caption, or the caption and its citing texts."""
        if text_mode == "caption":
            return list(self.captions)
        return [f"{c} {m}" for c, m in zip(self.captions, self.mention_text)]

    def subset(self, index: Sequence[int] | np.ndarray) -> "Features":
        idx = np.asarray(index, dtype=np.int64)
        pick = lambda xs: [xs[i] for i in idx]  # noqa: E731
        return replace(self, ids=pick(self.ids), pooled=self.pooled[idx],
                       maps=None if self.maps is None else self.maps[idx], ocr=self.ocr[idx],
                       has_ocr=self.has_ocr[idx], caption=self.caption[idx], mentions=self.mentions[idx],
                       has_mentions=self.has_mentions[idx], ocr_text=pick(self.ocr_text) if self.ocr_text else [],
                       captions=pick(self.captions), mention_text=pick(self.mention_text))


def featurize_pairs(pairs: Sequence[FigurePair], cache: FeatureCache, *, ocr: bool = True, keep_maps: bool = False,
                    image_size: int = BASE_SIZE, device: str = "cpu",
                    progress: Optional[Callable[[int, int], None]] = None) -> tuple[Features, list[BadItem]]:
    """Features of the usable pairs (in input order; the image feature of the figure letterboxed at
    ``image_size`` px, the matcher's setting) and one BadItem per pair whose image failed."""
    found = image_features([p.image for p in pairs], cache, maps=True, ocr=ocr, size=image_size, progress=progress)
    good: list[tuple[FigurePair, ImageFeatures]] = []
    bad: list[BadItem] = []
    for p, r in zip(pairs, found):
        if isinstance(r, FiglinkError):
            bad.append(BadItem(p.where(), str(r)))
        else:
            good.append((p, r))
    maps = np.stack([cast(np.ndarray, r.maps) for _, r in good]) if good else empty_maps(image_size)
    ocr_text = [ocr_string(r.ocr or []) for _, r in good] if ocr else ["" for _ in good]
    ocr_vec = embed_texts(ocr_text, cache, device)
    captions = [p.caption for p, _ in good]
    men_vec, has_men = mean_of([p.mentions for p, _ in good], cache, device)
    feats = Features(ids=[p.id for p, _ in good], pooled=pooled_from_maps(maps), maps=maps if keep_maps else None,
                     ocr=ocr_vec, has_ocr=np.array([1.0 if t else 0.0 for t in ocr_text], np.float32),
                     caption=embed_texts(captions, cache, device), mentions=men_vec, has_mentions=has_men,
                     ocr_text=ocr_text, captions=captions, mention_text=[" ".join(p.mentions) for p, _ in good],
                     image_size=image_size)
    return feats, bad

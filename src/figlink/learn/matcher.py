"""The image–text matcher: a dual encoder over frozen (or partly tuned) pretrained features.

Image side: the EfficientNet-Lite0 feature (1280-d; the last block and head conv are tuned when
``tune_tail``), optionally fused with the MiniLM embedding of the figure's OCR text (SciOL Table 8),
through an MLP to ``dim``. Text side: the MiniLM embedding of the caption, optionally with the mean
embedding of its citing texts (MedICaT's inline references), through an MLP to ``dim``. Both outputs
are unit vectors; the similarity is their dot product times a learned temperature, trained with the
symmetric InfoNCE loss (CLIP).

With ``ocr_channel`` the output also carries a fixed channel: the MiniLM embedding of the OCR text on
the image side and of the caption on the text side, weighted by a learned share β, so the similarity
is (1-β)·learned + β·cos(OCR text, caption) before the final normalization. Words read in a figure
then count even when the heads have never seen them (the labels of a diagram name what its caption
talks about), which is what makes BM25 over OCR text a strong baseline.

A missing OCR text or missing mentions enter as a zero vector with a 0 flag; training drops them at
random, so one model serves captions alone and captions + mentions.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Optional

import torch
from torch import nn

from figlink.learn.image_features import FEATURE_DIM, Tail
from figlink.learn.records import TextMode
from figlink.learn.text_features import TEXT_DIM



@dataclass
class MatcherConfig:
    """What a matcher is made of; saved in its model directory."""

    use_ocr: bool = True
    use_mentions: bool = True  # the text side has a mentions input (it may still be given none)
    tune_tail: bool = False
    ocr_channel: bool = False  # append the fixed OCR-text ↔ caption channel (needs use_ocr)
    dim: int = 256
    hidden: int = 1024
    dropout: float = 0.3
    image_encoder: str = "efficientnet-lite0"
    text_encoder: str = "all-MiniLM-L6-v2"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MatcherConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown matcher settings: {', '.join(sorted(unknown))}")
        return cls(**d)


class Projection(nn.Module):
    """Per-part LayerNorm, then a two-layer MLP with a linear skip, to unit vectors."""

    def __init__(self, parts: list[int], hidden: int, dim: int, dropout: float) -> None:
        super().__init__()
        self.parts = parts
        self.norms = nn.ModuleList(nn.LayerNorm(p) for p in parts)
        total = sum(parts) + len(parts) - 1  # one presence flag per optional part
        self.drop = nn.Dropout(dropout / 2)
        self.mlp = nn.Sequential(nn.Linear(total, hidden), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(hidden, dim)) if hidden else None
        self.skip = nn.Linear(total, dim, bias=False)

    def forward(self, main: torch.Tensor, optional: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
        xs = [self.norms[0](main)]
        for norm, (x, flag) in zip(self.norms[1:], optional):
            xs.append(norm(x) * flag[:, None])
            xs.append(flag[:, None])
        x = self.drop(torch.cat(xs, dim=1))
        y = self.skip(x) if self.mlp is None else self.mlp(x) + self.skip(x)
        return nn.functional.normalize(y, dim=-1)


class DualEncoder(nn.Module):
    """Image and text heads with a shared temperature; inputs are precomputed features."""

    def __init__(self, config: MatcherConfig) -> None:
        super().__init__()
        self.config = config
        self.tail: Optional[Tail] = Tail() if config.tune_tail else None
        self.image_head = Projection([FEATURE_DIM] + ([TEXT_DIM] if config.use_ocr else []),
                                     config.hidden, config.dim, config.dropout)
        self.text_head = Projection([TEXT_DIM] + ([TEXT_DIM] if config.use_mentions else []),
                                    config.hidden, config.dim, config.dropout)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
        if config.ocr_channel and not config.use_ocr:
            raise ValueError("ocr_channel needs use_ocr")
        # β = sigmoid(channel_logit): the share of the fixed OCR-text ↔ caption channel
        self.channel_logit = nn.Parameter(torch.tensor(-1.0)) if config.ocr_channel else None

    @property
    def out_dim(self) -> int:
        return self.config.dim + (TEXT_DIM if self.config.ocr_channel else 0)

    def channel_share(self) -> Optional[float]:
        """β, the learned weight of the fixed OCR-text ↔ caption channel (None without the channel)."""
        return None if self.channel_logit is None else float(torch.sigmoid(self.channel_logit.detach()))

    def _with_channel(self, learned: torch.Tensor, fixed: torch.Tensor) -> torch.Tensor:
        if self.channel_logit is None:
            return learned
        beta = torch.sigmoid(self.channel_logit)
        return nn.functional.normalize(torch.cat([(1 - beta).sqrt() * learned, beta.sqrt() * fixed], dim=1), dim=-1)

    def image_feature(self, pooled: Optional[torch.Tensor], maps: Optional[torch.Tensor]) -> torch.Tensor:
        """The 1280-d image feature: through the tuned tail from trunk maps, or the given frozen one."""
        if self.tail is not None:
            if maps is None:
                raise ValueError("this matcher tunes the EfficientNet tail: it needs trunk maps")
            return self.tail(maps.float())
        if pooled is None:
            raise ValueError("no image feature given")
        return pooled

    def encode_image(self, pooled: Optional[torch.Tensor], maps: Optional[torch.Tensor],
                     ocr: Optional[torch.Tensor] = None, has_ocr: Optional[torch.Tensor] = None) -> torch.Tensor:
        feat = self.image_feature(pooled, maps)
        n = feat.shape[0]
        ocr = ocr if ocr is not None else feat.new_zeros(n, TEXT_DIM)
        has_ocr = has_ocr if has_ocr is not None else feat.new_zeros(n)
        learned = self.image_head(feat, [(ocr, has_ocr)] if self.config.use_ocr else [])
        return self._with_channel(learned, ocr * has_ocr[:, None])

    def encode_text(self, caption: torch.Tensor, mentions: Optional[torch.Tensor] = None,
                    has_mentions: Optional[torch.Tensor] = None) -> torch.Tensor:
        optional = []
        if self.config.use_mentions:
            n = caption.shape[0]
            optional.append((mentions if mentions is not None else caption.new_zeros(n, TEXT_DIM),
                             has_mentions if has_mentions is not None else caption.new_zeros(n)))
        return self._with_channel(self.text_head(caption, optional), caption)

    def scale(self) -> torch.Tensor:
        return self.logit_scale.clamp(max=math.log(100.0)).exp()


def info_nce(image: torch.Tensor, text: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Symmetric InfoNCE: cross-entropy of each image against all texts in the batch, and back."""
    logits = scale * image @ text.T
    target = torch.arange(len(image), device=image.device)
    return (nn.functional.cross_entropy(logits, target) + nn.functional.cross_entropy(logits.T, target)) / 2

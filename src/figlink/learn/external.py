"""Bigger local image–text models behind ``--model DIR``: any pair of exported torch modules + a tokenizer.

figlink cannot download CLIP-style weights, and open_clip needs torchvision (which figlink keeps out).
A user who has such a model exports its two towers once (``torch.export`` ``.pt2`` with a dynamic batch
dimension, or TorchScript ``.pt``) and writes a model directory with :func:`write_exported_model`:

- image module: ``(n, 3, S, S)`` float pixels, letterboxed on white and normalized with the manifest's
  ``mean``/``std`` → ``(n, d)``;
- text module: ``(input_ids, attention_mask)``, int64 ``(n, max_tokens)`` → ``(n, d)``;
- ``tokenizer.json`` of the Hugging Face ``tokenizers`` library (open_clip's and most BERT tokenizers
  save one).

Vectors are L2-normalized here. With ``--text caption+mentions`` the text is the caption followed by its
mentions, cut at ``max_tokens``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from PIL import Image

from figlink.errors import FiglinkError
from figlink.learn.cache import FeatureCache
from figlink.learn.embeddings import KIND, Embeddings
from figlink.learn.hubness import Hubness
from figlink.learn.lexical import LexicalWeights
from figlink.learn.records import TextMode
from figlink.learn.model_dir import ModelError, write_model_dir
from figlink.learn.records import BadItem, FigurePair
from figlink.vision.image_io import load_image

BACKEND = "exported"


def _load_module(path: Path):
    if path.suffix == ".pt2":
        return torch.export.load(str(path)).module()
    return torch.jit.load(str(path), map_location="cpu").eval()


def pixels(im: Image.Image, size: int, mean: Sequence[float], std: Sequence[float]) -> torch.Tensor:
    """(3, size, size): letterboxed on white, resized, normalized."""
    side = max(im.size)
    canvas = Image.new("RGB", (side, side), (255, 255, 255))
    canvas.paste(im.convert("RGB"), ((side - im.width) // 2, (side - im.height) // 2))
    scaled = np.asarray(canvas.resize((size, size), Image.Resampling.BILINEAR), dtype=np.float32) / 255.0
    arr = (scaled - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    return torch.from_numpy(arr.transpose(2, 0, 1).copy())


def _unit(x: torch.Tensor) -> np.ndarray:
    return torch.nn.functional.normalize(x.float(), dim=-1).detach().cpu().numpy().astype(np.float32)


class ExportedMatcher:
    """Two exported towers and a tokenizer (see the module docstring)."""

    lexical = LexicalWeights()  # an exported model scores by its vectors alone
    hubness = Hubness(0.0)  # and without the hubness correction (not tuned for it)

    def __init__(self, folder: Path, config: dict) -> None:
        from tokenizers import Tokenizer

        try:
            self.image_module = _load_module(folder / config["image_module"])
            self.text_module = _load_module(folder / config["text_module"])
            self.tokenizer = Tokenizer.from_file(str(folder / config["tokenizer"]))
            self.size = int(config["image_size"])
            self.mean, self.std = list(config["mean"]), list(config["std"])
            self.max_tokens = int(config["max_tokens"])
            self.dim = int(config["dim"])
        except (KeyError, TypeError, ValueError, OSError, RuntimeError) as e:
            raise ModelError(f"{folder}: not a usable exported matcher ({type(e).__name__}: {e})") from e
        self.tokenizer.enable_truncation(self.max_tokens)
        self.tokenizer.enable_padding(length=self.max_tokens)
        self._check(folder)

    def _check(self, folder: Path) -> None:
        """Run both towers once on blank input, so a module that does not fit the manifest (other image size,
        other width, other inputs) fails at load with a message saying so, not in the middle of a batch."""
        white = Image.new("RGB", (self.size, self.size), (255, 255, 255))
        for tower, run in (("image", lambda: self.encode_images([white])), ("text", lambda: self.encode_texts(["a"]))):
            try:
                got = run()
            except Exception as e:  # an exported program raises many kinds on a shape it was not made for
                raise ModelError(f"{folder}: the {tower} module does not run on the manifest's input "
                                 f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from e
            if got.shape != (1, self.dim):
                raise ModelError(f"{folder}: the {tower} module gives vectors of shape {tuple(got.shape)[1:]}; "
                                 f"the manifest says dim={self.dim}")

    @torch.no_grad()
    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        enc = self.tokenizer.encode_batch(list(texts))
        ids = torch.tensor([e.ids for e in enc], dtype=torch.long)
        mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.long)
        return _unit(self.text_module(ids, mask))

    @torch.no_grad()
    def encode_images(self, images: Sequence[Image.Image], batch: int = 16) -> np.ndarray:
        out = [_unit(self.image_module(torch.stack([pixels(im, self.size, self.mean, self.std)
                                                    for im in images[i:i + batch]])))
               for i in range(0, len(images), batch)]
        return np.concatenate(out) if out else np.zeros((0, self.dim), np.float32)

    def embed(self, pairs: Sequence[FigurePair], text_mode: TextMode, cache: FeatureCache,
              device: str = "cpu", ocr: bool = True) -> Embeddings:
        if device != "cpu":
            raise ModelError("exported matchers run on the CPU only")
        good, images, bad = [], [], []
        for p in pairs:
            try:
                images.append(load_image(p.image))
                good.append(p)
            except FiglinkError as e:
                bad.append(BadItem(p.where(), str(e)))
        texts = [p.text(text_mode) for p in good]
        return Embeddings([p.id for p in good], self.encode_images(images), self.encode_texts(texts), bad)


def load_exported(folder: Path, manifest: dict) -> ExportedMatcher:
    return ExportedMatcher(folder, manifest.get("config") or {})


def write_exported_model(path: str | Path, image_module: Path, text_module: Path, tokenizer: Path, *, dim: int,
                         image_size: int = 224, mean: Sequence[float] = (0.485, 0.456, 0.406),
                         std: Sequence[float] = (0.229, 0.224, 0.225), max_tokens: int = 77) -> Path:
    """A model directory for :func:`figlink.learn.embedder.load_matcher` from exported towers and a tokenizer."""
    sources = {"image_module": ("image", Path(image_module)), "text_module": ("text", Path(text_module)),
               "tokenizer": ("tokenizer", Path(tokenizer))}
    names = {role: stem + src.suffix for role, (stem, src) in sources.items()}
    files = {names[role]: src.read_bytes() for role, (_, src) in sources.items()}
    config = {**names, "image_size": image_size, "mean": list(mean), "std": list(std), "max_tokens": max_tokens,
              "dim": dim}
    return write_model_dir(path, KIND, BACKEND, config, files)

"""Read any figure image into a bounded 8-bit RGB picture, or fail with a clear :class:`InputError`.

Handles palette, alpha (composited on white), CMYK, 16-bit and float images, TIFF, truncated files
and huge images (JPEG is reduced while decoding; other formats are reduced after decoding, within a
pixel budget). :func:`open_image` is figlink's one way to open an image file: every module that opens
one (this one, the exports) goes through it.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Union

import numpy as np
from PIL import Image, ImageFile, UnidentifiedImageError

from figlink.errors import InputError

ImageLike = Union[str, Path, Image.Image]

MAX_SIDE = 2000  # longest side kept for analysis; larger figures are downscaled
MAX_DECODE_PIXELS = 300_000_000  # refuse to fully decode more than this (non-JPEG) many pixels


def open_image(source: Union[str, Path, bytes]) -> Image.Image:
    """Open an image file or its bytes lazily (the header is read, not the pixels), whatever its size.

    ``Image.open`` refuses images of more than twice ``Image.MAX_IMAGE_PIXELS`` pixels, a setting for the
    whole process that figlink never changes (changing it for one call is not thread-safe). This opener
    does what ``Image.open`` does without that check and its warning: the first registered format that
    accepts the file's first bytes opens it. Each caller keeps its own budget: :func:`read_image` decodes
    a huge JPEG reduced and refuses to decode other formats over ``MAX_DECODE_PIXELS``. A missing file
    raises ``OSError``; a file no format accepts, ``UnidentifiedImageError``.
    """
    if isinstance(source, bytes):
        head = source[:16]
    else:
        with open(source, "rb") as f:
            head = f.read(16)
    Image.init()  # every format plugin registered (once per process)
    for fmt in Image.ID:
        factory, accept = Image.OPEN[fmt]
        ok = accept(head) if accept else True
        if not ok or isinstance(ok, str):  # a string is PIL's "looks like it, but unsupported"
            continue
        try:  # a path is opened by the plugin itself, and closed with the image
            # PIL's plugin factories take a file object or a path, and a file name (None: unnamed)
            return factory(io.BytesIO(source) if isinstance(source, bytes) else str(source), None)  # type: ignore[arg-type]
        except (SyntaxError, IndexError, TypeError, struct.error):
            continue
    name = "" if isinstance(source, bytes) else f" {str(source)!r}"
    raise UnidentifiedImageError(f"cannot identify image file{name}")


def _to_rgb(im: Image.Image) -> Image.Image:
    """Convert any PIL mode to 8-bit RGB; transparent pixels become white."""
    if im.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        arr = np.asarray(im, dtype=np.float64)
        lo, hi = float(np.nanmin(arr)), float(np.nanmax(arr))
        scaled = np.zeros_like(arr) if hi <= lo else (arr - lo) * (255.0 / (hi - lo))
        im = Image.fromarray(np.nan_to_num(scaled).astype(np.uint8), "L")
    if im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    if im.mode in ("LA", "La", "PA"):
        im = im.convert("RGBA")
    if im.mode in ("RGBA", "RGBa"):
        background = Image.new("RGB", im.size, (255, 255, 255))
        background.paste(im.convert("RGBA"), mask=im.convert("RGBA").getchannel("A"))
        return background
    if im.mode != "RGB":
        im = im.convert("RGB")
    return im


def load_image(source: ImageLike, max_side: int = MAX_SIDE) -> Image.Image:
    """Open ``source`` (path or PIL image) as RGB with its longest side at most ``max_side`` pixels.

    Raises :class:`InputError` for missing, unreadable, truncated, empty or undecodably large images.
    """
    return read_image(source, max_side)[0]


def read_image(source: ImageLike, max_side: int = MAX_SIDE) -> tuple[Image.Image, tuple[int, int]]:
    """Like :func:`load_image`, also returning the image's original (width, height)."""
    if isinstance(source, Image.Image):
        im = source
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError(f"image not found: {path}")
        try:
            im = open_image(path)
        except Exception as exc:  # PIL raises many kinds for unknown or damaged files
            raise InputError(f"not a readable image: {path.name} ({type(exc).__name__}: {exc})") from exc
    w, h = im.size
    if w < 1 or h < 1:
        raise InputError("image has no pixels")
    if im.format == "JPEG" and max(w, h) > max_side:
        im.draft(im.mode if im.mode in ("L", "RGB") else "RGB", (max_side, max_side))
    elif w * h > MAX_DECODE_PIXELS:
        raise InputError(f"image too large to decode: {w}x{h} pixels")
    try:
        ImageFile.LOAD_TRUNCATED_IMAGES = False
        im.load()
    except Exception as exc:
        raise InputError(f"damaged or truncated image ({type(exc).__name__}: {exc})") from exc
    if getattr(im, "n_frames", 1) > 1:
        im.seek(0)
    rgb = _to_rgb(im)
    if max(rgb.size) > max_side:
        scale = max_side / max(rgb.size)
        rgb = rgb.resize((max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale))), Image.Resampling.BILINEAR)
    return rgb, (w, h)


def to_gray(im: Image.Image) -> np.ndarray:
    """Grayscale float32 array in [0, 255]."""
    return np.asarray(im.convert("L"), dtype=np.float32)

"""Read any figure image into a bounded 8-bit RGB picture, or fail with a clear :class:`InputError`.

Handles palette, alpha (composited on white), CMYK, 16-bit and float images, TIFF, truncated files
and huge images. :func:`open_image` is figlink's one way to open an image file: every module that opens
one (this one, the exports, the server) goes through it, and :func:`decode_reduced` is the one way to
decode one: memory is bounded per figure, not only in pixels.

How a figure is decoded (:func:`decode_reduced`):

1. the header is read (:func:`open_image`); a JPEG larger than the working size is reduced by its decoder
   (up to 8x, ``draft``);
2. the bytes PIL will hold for the decode (pixels x bytes per pixel of the mode) are checked against
   ``max_bytes`` (``MAX_DECODE_BYTES``), and pixels against ``MAX_DECODE_PIXELS``, before any pixel is read;
3. the pixels are decoded in the file's own mode (16-bit stays 2 bytes a pixel), then reduced by an
   integer factor a strip of rows at a time (:func:`reduce_strips`): nothing is converted at full size;
4. only the reduced picture is made 8-bit RGB (16-bit and float grey stretched over their range through
   a lookup table, alpha composited on white) and resized to the requested longest side.

A 17000 x 17000 16-bit greyscale PNG thus holds its 578 MB decode and a few strips, where converting it
whole went through float64 (8.8 GB).
"""

from __future__ import annotations

import contextlib
import io
import math
import struct
from pathlib import Path
from typing import Callable, ContextManager, Optional, Union

import numpy as np
from PIL import Image, ImageFile, UnidentifiedImageError

from figlink.errors import InputError

ImageLike = Union[str, Path, Image.Image]

MAX_SIDE = 2000  # longest side kept for analysis; larger figures are downscaled
MAX_DECODE_PIXELS = 300_000_000  # refuse to decode more than this many pixels (after a JPEG's draft)
MAX_DECODE_BYTES = 1_300_000_000  # refuse a decode that PIL would hold in more bytes than this
STRIP_PIXELS = 4_000_000  # pixels converted and reduced at a time
# bytes per pixel of PIL's in-memory storage, by mode (others: 4)
_PIXEL_BYTES = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16L": 2, "I;16B": 2, "I;16N": 2}
# modes that Image.reduce cannot average as they are, and what each strip is converted to first
_REDUCE_AS = {"1": "L", "P": "RGB", "PA": "RGBA", "I;16": "I", "I;16L": "I", "I;16B": "I", "I;16N": "I"}
_WIDE_GREY = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")

Reserve = Callable[[int], ContextManager[object]]


def open_image(source: Union[str, Path, bytes]) -> Image.Image:
    """Open an image file or its bytes lazily (the header is read, not the pixels), whatever its size.

    ``Image.open`` refuses images of more than twice ``Image.MAX_IMAGE_PIXELS`` pixels, a setting for the
    whole process that figlink never changes (changing it for one call is not thread-safe). This opener
    does what ``Image.open`` does without that check and its warning: the first registered format that
    accepts the file's first bytes opens it. Decoding is bounded by :func:`decode_reduced`. A missing file
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


def decode_bytes(width: int, height: int, mode: str) -> int:
    """Bytes PIL holds for a decoded image of this size and mode."""
    return width * height * _PIXEL_BYTES.get(mode, 4)


def reduce_strips(im: Image.Image, factor: int) -> Image.Image:
    """``im`` (loaded) reduced ``factor`` times by box averaging, a strip of rows at a time, in a mode that
    keeps its values (palette → RGB, 16-bit → 32-bit integer, bilevel → grey); ``im`` itself when the
    factor is 1."""
    if factor <= 1:
        return im
    target = _REDUCE_AS.get(im.mode)
    if im.mode == "P" and "transparency" in im.info:
        target = "RGBA"
    w, h = im.size
    rows = max(factor, (STRIP_PIXELS // w) // factor * factor)
    out = Image.new(target or im.mode, (math.ceil(w / factor), math.ceil(h / factor)))
    for y in range(0, h, rows):
        part = im.crop((0, y, w, min(h, y + rows)))
        if target:
            part = part.convert(target)
        out.paste(part.reduce(factor), (0, y // factor))
    return out


def _stretch_grey(im: Image.Image) -> Image.Image:
    """A 16-bit, 32-bit or float grey image as 8-bit grey, its value range stretched over 0..255 (NaN → 0),
    through a lookup table for 16-bit (one byte per pixel out, no float copy)."""
    arr = np.asarray(im)
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        if not finite.any():
            return Image.new("L", im.size, 0)
        lo, hi = float(arr[finite].min()), float(arr[finite].max())
        scaled = np.zeros(arr.shape, np.float32) if hi <= lo else (arr.astype(np.float32) - lo) * (255.0 / (hi - lo))
        return Image.fromarray(np.where(finite, scaled, 0).astype(np.uint8), "L")
    lo, hi = int(arr.min()), int(arr.max())
    if hi <= lo:
        return Image.new("L", im.size, 0)
    if lo >= 0 and hi < 1 << 16:  # 16-bit values (also those PIL widened to 32-bit "I"): a lookup table
        lut = np.clip((np.arange(hi + 1, dtype=np.float64) - lo) * (255.0 / (hi - lo)), 0, 255).astype(np.uint8)
        return Image.fromarray(lut[arr.astype(np.uint16, copy=False)], "L")
    return Image.fromarray(((arr.astype(np.float64) - lo) * (255.0 / (hi - lo))).astype(np.uint8), "L")


def to_rgb(im: Image.Image) -> Image.Image:
    """Convert any PIL mode to 8-bit RGB; transparent pixels become white."""
    if im.mode in _WIDE_GREY:
        im = _stretch_grey(im)
    if im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    if im.mode in ("LA", "La", "PA", "RGBa"):
        im = im.convert("RGBA")
    if im.mode == "RGBA":
        background = Image.new("RGB", im.size, (255, 255, 255))
        background.paste(im, mask=im.getchannel("A"))
        return background
    if im.mode != "RGB":
        im = im.convert("RGB")
    return im


def decode_reduced(im: Image.Image, max_side: int, *, max_bytes: int = MAX_DECODE_BYTES,
                   reserve: Optional[Reserve] = None, reduce_to_fit: bool = False) -> Image.Image:
    """Decode ``im`` (opened lazily, e.g. by :func:`open_image`) as 8-bit RGB with its longest side at most
    ``max_side``, holding at most ``max_bytes`` for the decode (see the module's docstring).

    The decode is reduced by the largest integer factor that keeps the longest side at least ``max_side``
    (then resized to ``max_side``), or, with ``reduce_to_fit``, by the smallest factor that brings it to at
    most ``max_side`` (no resize). ``reserve(n)``, when given, is entered around the decode with the bytes it
    needs (the server shares a budget between requests). Raises :class:`InputError` for an image too large
    to decode and for damaged or truncated data.
    """
    w0, h0 = im.size
    if w0 < 1 or h0 < 1:
        raise InputError("image has no pixels")
    if im.format == "JPEG" and max(w0, h0) > max_side:
        im.draft(im.mode if im.mode in ("L", "RGB") else "RGB", (max_side, max_side))
    w, h = im.size
    need = decode_bytes(w, h, im.mode)
    if w * h > MAX_DECODE_PIXELS or need > max_bytes:
        raise InputError(f"image too large to decode: {w0}x{h0} pixels ({im.mode}) need {need / 1e9:.2f} GB; "
                         f"the limit is {max_bytes / 1e9:.2f} GB and {MAX_DECODE_PIXELS:,} pixels")
    longest = max(w, h)
    factor = math.ceil(longest / max_side) if reduce_to_fit else max(1, longest // max_side)
    with reserve(need) if reserve is not None else contextlib.nullcontext():
        try:
            ImageFile.LOAD_TRUNCATED_IMAGES = False
            im.load()
        except Exception as exc:  # PIL raises many kinds for damaged data
            raise InputError(f"damaged or truncated image ({type(exc).__name__}: {exc})") from exc
        small = reduce_strips(im, factor)
    rgb = to_rgb(small)
    if max(rgb.size) > max_side:
        scale = max_side / max(rgb.size)
        rgb = rgb.resize((max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale))), Image.Resampling.BILINEAR)
    return rgb


def load_image(source: ImageLike, max_side: int = MAX_SIDE) -> Image.Image:
    """Open ``source`` (path or PIL image) as RGB with its longest side at most ``max_side`` pixels.

    Raises :class:`InputError` for missing, unreadable, truncated, empty or undecodably large images.
    """
    return read_image(source, max_side)[0]


def read_image(source: ImageLike, max_side: int = MAX_SIDE,
               max_bytes: int = MAX_DECODE_BYTES) -> tuple[Image.Image, tuple[int, int]]:
    """Like :func:`load_image`, also returning the image's original (width, height)."""
    if isinstance(source, Image.Image):
        return decode_reduced(source, max_side, max_bytes=max_bytes), source.size
    path = Path(source)
    if not path.is_file():
        raise InputError(f"image not found: {path}")
    try:
        im = open_image(path)
    except Exception as exc:  # PIL raises many kinds for unknown or damaged files
        raise InputError(f"not a readable image: {path.name} ({type(exc).__name__}: {exc})") from exc
    with im:
        size = im.size
        return decode_reduced(im, max_side, max_bytes=max_bytes), size


def to_gray(im: Image.Image) -> np.ndarray:
    """Grayscale float32 array in [0, 255]."""
    return np.asarray(im.convert("L"), dtype=np.float32)

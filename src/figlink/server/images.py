"""Figure images as the server sends them: bounded working copies, decoded once and cached.

A stored image is first opened header-only (its size, format and mode). When it is small (longest side at
most ``AS_STORED_SIDE``) and no smaller size is asked for, its file is sent as stored. Everything else —
panel crops, thumbnails, huge figures — is cut from a *working image*: the figure decoded once, reduced
strip by strip in its own pixel mode (so a 16-bit or palette image is never converted at full size) to a
longest side of at most ``WORKING_SIDE``, made 8-bit RGB by :func:`figlink.vision.image_io.read_image`,
and kept in a small LRU cache. Panel boxes (pixels of the stored image) are scaled to it.

Memory is bounded three ways: an image whose decode would need more than ``MAX_DECODE_BYTES`` is refused
with :class:`ImageUnavailable` (the API answers 422); decodes in flight share ``DECODE_BUDGET`` bytes, so
concurrent requests wait instead of multiplying memory; and concurrent requests for one image wait for a
single decode.
"""

from __future__ import annotations

import io
import math
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

from PIL import Image, UnidentifiedImageError

from figlink.errors import InputError
from figlink.vision.image_io import MAX_DECODE_PIXELS, open_image, read_image

WORKING_SIDE = 2048  # longest side of a working image
AS_STORED_SIDE = 4096  # images up to this longest side are sent as stored (when no smaller size is asked)
MAX_DECODE_BYTES = 1_300_000_000  # one decode: pixels x bytes per pixel (PIL's storage), after JPEG draft
DECODE_BUDGET = MAX_DECODE_BYTES  # all decodes in flight together
WORKING_CACHE_BYTES = 160 << 20  # working images kept (about ten at 2048 x 2048 RGB)
RENDERED_CACHE_BYTES = 48 << 20  # encoded thumbnails and downscaled copies kept
STRIP_PIXELS = 4_000_000  # pixels converted and reduced at a time
WEB_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
# bytes per pixel of PIL's in-memory storage, by mode (others: 4)
_PIXEL_BYTES = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16L": 2, "I;16B": 2, "I;16N": 2}
# modes that Image.reduce cannot average as they are, and what each strip is converted to first
_REDUCE_AS = {"1": "L", "P": "RGB", "PA": "RGBA", "I;16": "I", "I;16L": "I", "I;16B": "I", "I;16N": "I"}


class ImageUnavailable(InputError):
    """A stored figure image that cannot be served: unreadable, damaged or too large to decode."""


@dataclass(frozen=True)
class ImageInfo:
    """What the header of a stored image says."""

    width: int
    height: int
    format: str
    mode: str

    @property
    def longest(self) -> int:
        return max(self.width, self.height)


@dataclass(frozen=True)
class Working:
    """A bounded RGB copy of a stored image and its scale (working pixels per stored pixel, x and y)."""

    image: Image.Image
    sx: float
    sy: float
    info: ImageInfo


def _file_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size


def _open(path: Path) -> Image.Image:
    """The image opened header-only, whatever its pixel count (this module bounds decodes itself), through
    figlink's one opener, which never changes PIL's process-wide pixel limit."""
    try:
        return open_image(path)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        raise ImageUnavailable(f"not a readable image ({type(e).__name__}: {e})") from None


def decode_bytes(width: int, height: int, mode: str) -> int:
    """Bytes PIL holds for a decoded image of this size and mode."""
    return width * height * _PIXEL_BYTES.get(mode, 4)


def _reduce_strips(im: Image.Image, factor: int) -> Image.Image:
    """``im`` (loaded) reduced ``factor`` times by box averaging, a strip of rows at a time, in a mode that
    keeps its values (palette → RGB, 16-bit → 32-bit integer, bilevel → grey)."""
    target = _REDUCE_AS.get(im.mode)
    if im.mode == "P" and "transparency" in im.info:
        target = "RGBA"
    if factor == 1:
        return im
    w, h = im.size
    rows = max(factor, (STRIP_PIXELS // w) // factor * factor)
    out = Image.new(target or im.mode, (math.ceil(w / factor), math.ceil(h / factor)))
    for y in range(0, h, rows):
        part = im.crop((0, y, w, min(h, y + rows)))
        if target:
            part = part.convert(target)
        out.paste(part.reduce(factor), (0, y // factor))
    return out


class _Budget:
    """Bytes that decodes in flight may hold together; a decode larger than the budget runs alone."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.cond = threading.Condition()

    @contextmanager
    def reserve(self, n: int) -> Iterator[None]:
        with self.cond:
            while self.used and self.used + n > self.limit:
                self.cond.wait()
            self.used += n
        try:
            yield
        finally:
            with self.cond:
                self.used -= n
                self.cond.notify_all()


class _LRU:
    """A byte-bounded least-recently-used cache, thread-safe."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self.lock:
            hit = self.items.get(key)
            if hit is None:
                return None
            self.items.move_to_end(key)
            return hit[0]

    def put(self, key: Any, value: Any, nbytes: int) -> None:
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.size -= old[1]
            self.items[key] = (value, nbytes)
            self.size += nbytes
            while self.size > self.max_bytes and len(self.items) > 1:
                _, (_, n) = self.items.popitem(last=False)
                self.size -= n


class ImageStore:
    """Header probes, working images, crops and downscaled copies of stored figure images (thread-safe)."""

    def __init__(self, working_side: int = WORKING_SIDE, max_decode_bytes: int = MAX_DECODE_BYTES,
                 decode_budget: int = DECODE_BUDGET, cache_bytes: int = WORKING_CACHE_BYTES) -> None:
        self.working_side = working_side
        self.max_decode_bytes = max_decode_bytes
        self.budget = _Budget(decode_budget)
        self.infos = _LRU(4096)  # one unit per entry
        self.workings = _LRU(cache_bytes)
        self.rendered = _LRU(RENDERED_CACHE_BYTES)
        self.pending: dict[tuple, tuple[threading.Event, list[BaseException]]] = {}
        self.pending_lock = threading.Lock()
        self.decodes = 0  # full decodes done (for tests and benchmarks)

    def info(self, path: Path) -> ImageInfo:
        """Size, format and mode of a stored image, from its header (cached)."""
        key = _file_key(path)
        got = self.infos.get(key)
        if got is None:
            with _open(path) as im:
                got = ImageInfo(im.width, im.height, (im.format or "").upper(), im.mode)
            if got.width < 1 or got.height < 1:
                raise ImageUnavailable("the image has no pixels")
            self.infos.put(key, got, 1)
        return got

    def working(self, path: Path) -> Working:
        """The working image of a stored image: decoded at most once at a time, then cached."""
        return self._once(("working", *_file_key(path)), self.workings, lambda: self._decode(path),
                          lambda w: decode_bytes(w.image.width, w.image.height, w.image.mode))

    def _once(self, key: tuple, cache: _LRU, make: Callable[[], Any], size: Callable[[Any], int]) -> Any:
        """``cache[key]``, made by one caller while the others with the same key wait for it (and get its
        error when it fails)."""
        while True:
            got = cache.get(key)
            if got is not None:
                return got
            with self.pending_lock:
                slot = self.pending.get(key)
                mine = slot is None
                if slot is None:
                    slot = self.pending[key] = (threading.Event(), [])
            event, error = slot
            if not mine:
                event.wait()
                if error:
                    raise error[0]
                continue
            try:
                value = make()
                cache.put(key, value, size(value))
                return value
            except BaseException as e:
                error.append(e)
                raise
            finally:
                with self.pending_lock:
                    del self.pending[key]
                event.set()

    def _decode(self, path: Path) -> Working:
        info = self.info(path)
        side = self.working_side
        with _open(path) as im:
            if im.format == "JPEG" and info.longest > side:
                im.draft(None, (side, side))  # JPEG is reduced (up to 8x) while decoding
            w, h = im.size
            need = decode_bytes(w, h, im.mode)
            if w * h > MAX_DECODE_PIXELS or need > self.max_decode_bytes:
                raise ImageUnavailable(
                    f"the image is too large to serve: {info.width}x{info.height} pixels ({info.mode}) need "
                    f"{need / 1e9:.2f} GB to decode; the limit is {self.max_decode_bytes / 1e9:.2f} GB and "
                    f"{MAX_DECODE_PIXELS:,} pixels")
            with self.budget.reserve(need):
                try:
                    im.load()
                except Exception as e:  # PIL raises many kinds for damaged data
                    raise ImageUnavailable(f"damaged image ({type(e).__name__}: {e})") from None
                self.decodes += 1
                small = _reduce_strips(im, max(1, math.ceil(max(w, h) / side)))
                try:
                    rgb, _ = read_image(small, side)
                except InputError as e:
                    raise ImageUnavailable(str(e)) from None
        return Working(rgb, rgb.width / info.width, rgb.height / info.height, info)

    def crop_png(self, path: Path, bbox: Sequence[float]) -> Optional[bytes]:
        """The ``bbox`` region (pixels of the stored image) as PNG bytes, cut from the working image; None
        when the box is not finite or falls outside the image."""
        if len(bbox) != 4 or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in bbox):
            return None
        wk = self.working(path)
        im = wk.image
        x0, y0 = max(0, int(bbox[0] * wk.sx)), max(0, int(bbox[1] * wk.sy))
        x1, y1 = min(im.width, round(bbox[2] * wk.sx)), min(im.height, round(bbox[3] * wk.sy))
        if x1 <= x0 or y1 <= y0:
            return None
        return _encode(im.crop((x0, y0, x1, y1)), "PNG")

    def rendered_image(self, path: Path, max_side: Optional[int] = None) -> Optional[tuple[bytes, str]]:
        """The image to send for a figure: None when its file can be sent as stored, else (bytes, media
        type) of a copy with its longest side at most ``max_side`` and ``WORKING_SIDE``."""
        info = self.info(path)
        fits = max_side is None or max_side >= info.longest
        if fits and info.longest <= AS_STORED_SIDE and info.format in WEB_FORMATS:
            return None
        side = min(max_side or self.working_side, self.working_side)
        fmt = "JPEG" if info.format in ("JPEG", "WEBP") else "PNG"

        def make() -> tuple[bytes, str]:
            im = self.working(path).image
            if im.width > side or im.height > side:
                im = im.copy()
                im.thumbnail((side, side), Image.Resampling.LANCZOS)
            return _encode(im, fmt), WEB_FORMATS[fmt]

        return self._once(("rendered", side, *_file_key(path)), self.rendered, make, lambda r: len(r[0]))


def _encode(im: Image.Image, fmt: str) -> bytes:
    buf = io.BytesIO()
    if fmt == "JPEG":
        im.convert("RGB").save(buf, format="JPEG", quality=88)
    else:
        im.save(buf, format="PNG", compress_level=6)
    return buf.getvalue()

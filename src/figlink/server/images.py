"""Figure images as the server sends them: bounded working copies, decoded once and cached.

A stored image is first opened header-only (its size, format and mode). When it is small (longest side at
most ``AS_STORED_SIDE``) and no smaller size is asked for, its file is sent as stored. Everything else —
panel crops, thumbnails, huge figures — is cut from a *working image*: the figure decoded once by
:func:`figlink.vision.image_io.decode_reduced` (the decoder figlink's vision stage uses: reduced strip by
strip in its own pixel mode, so a 16-bit or palette image is never converted at full size) to a longest
side of at most ``WORKING_SIDE``, 8-bit RGB, and kept in a small LRU cache. Panel boxes (pixels of the stored image) are scaled to it.

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
from figlink.vision.image_io import MAX_DECODE_BYTES, decode_bytes, decode_reduced, open_image

WORKING_SIDE = 2048  # longest side of a working image
AS_STORED_SIDE = 4096  # images up to this longest side are sent as stored (when no smaller size is asked)
DECODE_BUDGET = MAX_DECODE_BYTES  # all decodes in flight together
WORKING_CACHE_BYTES = 160 << 20  # working images kept (about ten at 2048 x 2048 RGB)
RENDERED_CACHE_BYTES = 48 << 20  # encoded thumbnails and downscaled copies kept
WEB_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


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
        with _open(path) as im:
            try:
                rgb = decode_reduced(im, self.working_side, max_bytes=self.max_decode_bytes,
                                     reserve=self.budget.reserve, reduce_to_fit=True)
            except InputError as e:
                raise ImageUnavailable(f"cannot serve the image: {e}") from None
        self.decodes += 1
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

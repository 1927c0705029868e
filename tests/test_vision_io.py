"""Bad and unusual images: read into bounded RGB, or fail with a clear InputError."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from figlink.enrich.vision import analyze_figure
from figlink.errors import InputError
from figlink.model import Box
from figlink.vision.image_io import load_image, open_image


def _huge_jpeg(path: Path, side: int = 40_000) -> None:
    """A valid baseline grey JPEG of side x side pixels, written in ~side²/256 bytes without encoding it.

    One Huffman code of length 1 for DC category 0 and one for end-of-block: every 8x8 block is two
    zero bits, so the entropy-coded data is all zero bytes (mid-grey image).
    """
    dqt = b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + bytes([1] * 64)
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, side, side, 1) + b"\x01\x11\x00"
    counts = bytes([1] + [0] * 15)
    dht_dc = b"\xff\xc4" + struct.pack(">H", 2 + 1 + 16 + 1) + b"\x00" + counts + b"\x00"
    dht_ac = b"\xff\xc4" + struct.pack(">H", 2 + 1 + 16 + 1) + b"\x10" + counts + b"\x00"
    sos = b"\xff\xda" + struct.pack(">HB", 8, 1) + b"\x01\x00" + b"\x00\x3f\x00"
    blocks = (side // 8) ** 2
    with open(path, "wb") as f:
        f.write(b"\xff\xd8" + dqt + sof + dht_dc + dht_ac + sos)
        chunk = bytes(1 << 20)
        left = blocks // 4
        while left > 0:
            f.write(chunk[:min(left, len(chunk))])
            left -= len(chunk)
        f.write(b"\xff\xd9")


def _png_header_only(path: Path, w: int, h: int) -> None:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))  # noqa: E731
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b""))


def test_huge_jpeg_is_downscaled(tmp_path):
    p = tmp_path / "huge.jpg"
    _huge_jpeg(p)
    fv = analyze_figure(p, ocr=False, classify=False)
    assert (fv.width, fv.height) == (40_000, 40_000)
    assert len(fv.panels) == 1  # one solid grey figure: one panel covering it
    assert fv.panels[0].bbox[2] <= 40_000


def test_huge_png_fails_clearly(tmp_path):
    p = tmp_path / "huge.png"
    _png_header_only(p, 40_000, 40_000)
    with pytest.raises(InputError, match="too large"):
        load_image(p)


def test_the_opener_takes_any_size_and_leaves_pils_limit_alone(tmp_path):
    import threading

    p = tmp_path / "huge.png"
    _png_header_only(p, 40_000, 40_000)
    limit = Image.MAX_IMAGE_PIXELS
    with open_image(p) as im:
        assert (im.format, im.size) == ("PNG", (40_000, 40_000))
    with open_image(p.read_bytes()) as im:
        assert im.size == (40_000, 40_000)
    # PIL's own check stays in force for everyone else, even while figlink opens huge images on other threads
    stop = threading.Event()

    def open_huge_images() -> None:
        while not stop.is_set():
            open_image(p).close()

    workers = [threading.Thread(target=open_huge_images) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        for _ in range(200):
            with pytest.raises(Image.DecompressionBombError):
                Image.open(p)
            assert Image.MAX_IMAGE_PIXELS == limit
    finally:
        stop.set()
        for w in workers:
            w.join()


def test_one_pixel(tmp_path):
    p = tmp_path / "one.png"
    Image.new("RGB", (1, 1), (10, 20, 30)).save(p)
    fv = analyze_figure(p)
    assert fv.width == 1 and len(fv.panels) == 1 and not fv.is_compound


@pytest.mark.parametrize("mode", ["CMYK", "I;16", "P", "RGBA", "LA", "1", "F"])
def test_modes_become_rgb(tmp_path, mode):
    rng = np.random.default_rng(0)
    base = Image.fromarray(rng.integers(0, 255, (40, 60, 3), dtype=np.uint8))
    if mode == "I;16":
        im = Image.fromarray((rng.integers(0, 65535, (40, 60))).astype(np.uint16))
    elif mode == "F":
        im = Image.fromarray(rng.random((40, 60)).astype(np.float32))
    else:
        im = base.convert(mode)
    ext = "tiff" if mode in ("CMYK", "I;16", "F") else "png"
    p = tmp_path / f"img.{ext}"
    im.save(p)
    out = load_image(p)
    assert out.mode == "RGB" and out.size == (60, 40)


def test_alpha_composited_on_white(tmp_path):
    p = tmp_path / "alpha.png"
    Image.new("RGBA", (10, 10), (0, 0, 0, 0)).save(p)
    assert load_image(p).getpixel((5, 5)) == (255, 255, 255)


def test_truncated_file(tmp_path):
    src = tmp_path / "ok.png"
    rng = np.random.default_rng(1)
    Image.fromarray(rng.integers(0, 255, (200, 200, 3), dtype=np.uint8)).save(src)
    bad = tmp_path / "bad.png"
    bad.write_bytes(src.read_bytes()[:3000])
    with pytest.raises(InputError, match="truncated|damaged"):
        load_image(bad)


def test_not_an_image_and_missing(tmp_path):
    p = tmp_path / "x.png"
    p.write_text("hello")
    with pytest.raises(InputError):
        load_image(p)
    with pytest.raises(InputError, match="not found"):
        load_image(tmp_path / "nope.png")


def test_solid_colour(tmp_path):
    p = tmp_path / "solid.png"
    Image.new("RGB", (300, 200), (200, 30, 30)).save(p)
    fv = analyze_figure(p)
    assert len(fv.panels) == 1 and fv.ocr == []
    assert fv.panels[0].bbox == Box.pixels((0, 0, 300, 200))

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
from figlink.vision.image_io import load_image, open_image, read_image


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


_PEAK_SCRIPT = """
import json, resource, sys, time
from figlink.vision.image_io import read_image
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
im, size = read_image(sys.argv[1])
seconds = time.perf_counter() - t
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
w, h = im.size
print(json.dumps({"size": list(size), "out": [w, h], "grown_mb": grown, "seconds": seconds,
                  "left": im.getpixel((w // 4, h // 2)), "right": im.getpixel((3 * w // 4, h // 2))}))
"""


def _decode_in_child(path: Path) -> dict:
    """read_image in a fresh process: its result and how much its peak memory grew while decoding."""
    import json
    import os
    import subprocess
    import sys

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, str(path)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_huge_16_bit_grey_png_is_reduced_before_it_is_converted(tmp_path):
    """8000 x 8000 16-bit grey (128 MB decoded): converting it whole through float64 grew memory by about
    1.6 GB; reduced strip by strip in its own mode first, the decode is all it holds."""
    from conftest import write_png

    p = tmp_path / "grey16.png"
    side = 8000
    dark, bright = (1000).to_bytes(2, "big"), (60000).to_bytes(2, "big")
    row = dark * (side // 2) + bright * (side // 2)
    write_png(p, side, side, "L", lambda y: row, bit_depth=16)
    got = _decode_in_child(p)
    assert got["size"] == [side, side] and got["out"] == [2000, 2000]
    assert got["left"] == [0, 0, 0] and got["right"] == [255, 255, 255]  # the 16-bit range stretched to 8 bits
    assert got["grown_mb"] < 128 + 150, got


def test_a_huge_rgba_png_is_reduced_before_it_is_composited(tmp_path):
    """6000 x 6000 RGBA (144 MB decoded): compositing it on white at full size held four copies."""
    from conftest import write_png

    p = tmp_path / "rgba.png"
    side = 6000
    row = b"\xff\x00\x00\xff" * (side // 2) + b"\x00\x00\xff\x00" * (side // 2)  # opaque red | transparent
    write_png(p, side, side, "RGBA", lambda y: row)
    got = _decode_in_child(p)
    assert got["out"] == [2000, 2000]
    assert got["left"] == [255, 0, 0] and got["right"] == [255, 255, 255]  # transparent → white
    assert got["grown_mb"] < 144 + 150, got


def test_memory_is_capped_per_figure_not_only_in_pixels(tmp_path):
    """Under the pixel cap but over the byte cap: refused before a pixel is decoded."""
    from conftest import write_png

    p = tmp_path / "wide.png"
    write_png(p, 4000, 4000, "RGBA", lambda y: b"")  # header and no rows: nothing may be decoded
    with pytest.raises(InputError, match=r"too large to decode: 4000x4000 pixels \(RGBA\) need 0.06 GB"):
        read_image(p, max_bytes=50_000_000)

"""Figure image files for the exports with images: check them without decoding, name them, place them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator, Union

from figlink.errors import InputError
from figlink.exports.base import ExportReport
from figlink.model import Figure, Paper
from figlink.vision.image_io import open_image

_FORMAT_EXT = {"JPEG": "jpg", "PNG": "png", "TIFF": "tif", "GIF": "gif", "WEBP": "webp", "BMP": "bmp"}


def _jpeg_tail_ok(src: Union[Path, bytes]) -> bool:
    """Whether a JPEG ends with its end-of-image marker (a truncated file does not)."""
    if isinstance(src, bytes):
        tail = src[-64:]
    else:
        with src.open("rb") as f:
            f.seek(max(0, src.stat().st_size - 64))
            tail = f.read()
    return tail.rstrip(b"\0\r\n\t ").endswith(b"\xff\xd9")


def probe(src: Union[Path, bytes], rel: str) -> tuple[str, int, int]:
    """(PIL format, width, height) of an image file or its bytes; checks its structure (PNG chunks and
    CRCs, headers) without decoding pixels, and decodes a JPEG (at 1/8 scale) only when it does not end
    with its end marker. A file that is not an image, or a damaged one, raises :class:`InputError`."""
    from PIL import UnidentifiedImageError

    try:
        with open_image(src) as im:
            fmt, (w, h) = im.format or "", im.size
            im.verify()
        if fmt == "JPEG" and not _jpeg_tail_ok(src):
            with open_image(src) as im:
                im.draft("RGB", (max(1, w // 8), max(1, h // 8)))
                im.load()
    except UnidentifiedImageError:
        raise InputError(f"unreadable image {rel}: not an image file (or an unknown format)") from None
    except Exception as e:  # PIL raises many kinds for damaged files
        raise InputError(f"unreadable image {rel}: damaged ({type(e).__name__}: {e})") from None
    if w < 1 or h < 1:
        raise InputError(f"image has no pixels: {rel}")
    return fmt, w, h


def image_ext(fmt: str, path: Path) -> str:
    """File extension for an image's bytes: from its real format, else from its file name."""
    return _FORMAT_EXT.get(fmt) or path.suffix.lower().lstrip(".") or fmt.lower() or "bin"


def place(src: Path, dst: Path, copy: bool) -> None:
    """Put ``src`` at ``dst`` (a hard link, or a copy across file systems or when ``copy``), atomically."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not copy and dst.exists() and os.path.samefile(src, dst):
        return
    tmp = dst.with_name(f".{dst.name}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        if copy:
            raise OSError("copy asked")
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def figures_with_image(paper: Paper, report: ExportReport) -> Iterator[tuple[Figure, str]]:
    """The figures of ``paper`` that name an image, with their item name ("paper/figure") for failure
    lines; counts every figure, and those without an image, on ``report``."""
    for fig in paper.figures:
        report.figures += 1
        if not fig.image:
            report.no_image += 1
            continue
        yield fig, f"{paper.paper_id}/{fig.figure_id}"

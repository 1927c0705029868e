"""Per-image features with the disk cache: trunk maps (EfficientNet-Lite0) and OCR lines.

:func:`image_features` takes image paths and returns, per path, an :class:`ImageFeatures` or the
:class:`~figlink.errors.FiglinkError` that makes it unusable (missing file, not an image, too large to
decode), so one bad image never stops a batch. Images are decoded only for what the cache lacks, and
new results are written every :data:`FLUSH_EVERY` images, so an interrupted run keeps its work.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from figlink.errors import FiglinkError, InputError
from figlink.learn.cache import FeatureCache, sha256_bytes
from figlink.learn.image_features import BASE_SIZE, spatial_kind, trunk_maps
from figlink.learn.ocr_text import OCR_KIND, ocr_lines
from figlink.vision.image_io import load_image

FLUSH_EVERY = 32
MAX_FILE_BYTES = 512 * 2**20  # an image file larger than this is refused before it is read


@dataclass
class ImageFeatures:
    sha: str
    maps: Optional[np.ndarray]  # (192, s, s) float16 (s = 7 at 224 px), or None when not asked for
    ocr: Optional[list[dict]]  # OCR lines, or None when not asked for


def file_sha(path: Path) -> str:
    """SHA-256 of an image file, or :class:`InputError` when it is missing or unreadable."""
    if not path.is_file():
        raise InputError(f"image not found: {path}")
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"empty image file: {path.name}")
    if size > MAX_FILE_BYTES:
        raise InputError(f"image file too large: {path.name} ({size / 2**20:.0f} MB)")
    try:
        return sha256_bytes(path.read_bytes())
    except OSError as e:
        raise InputError(f"cannot read image {path.name}: {e.strerror or e}") from e


def image_features(paths: Sequence[Path], cache: FeatureCache, *, maps: bool = True, ocr: bool = False,
                   size: int = BASE_SIZE, progress: Optional[Callable[[int, int], None]] = None,
                   ) -> list[ImageFeatures | FiglinkError]:
    """Features of each image (cached by content hash; trunk maps of the image letterboxed at ``size`` px);
    a bad image gives its error in its place."""
    results: list[ImageFeatures | FiglinkError] = []
    for p in paths:
        try:
            results.append(ImageFeatures(file_sha(Path(p)), None, None))
        except FiglinkError as e:
            results.append(e)
    shas = [r.sha for r in results if isinstance(r, ImageFeatures)]
    kind = spatial_kind(size)
    have_maps = cache.get_arrays(kind, shas) if maps else {}
    have_ocr = cache.get_json(OCR_KIND, shas) if ocr else {}
    todo = [i for i, r in enumerate(results) if isinstance(r, ImageFeatures)
            and ((maps and r.sha not in have_maps) or (ocr and r.sha not in have_ocr))]
    failed: dict[str, FiglinkError] = {}
    seen: set[str] = set()
    new_maps: dict[str, np.ndarray] = {}
    new_ocr: dict[str, list[dict]] = {}
    for start in range(0, len(todo), FLUSH_EVERY):
        chunk = todo[start:start + FLUSH_EVERY]
        decoded = []
        for i in chunk:
            r = results[i]
            assert isinstance(r, ImageFeatures)
            if r.sha in seen:
                continue  # the same image twice in the input
            seen.add(r.sha)
            try:
                decoded.append((r.sha, load_image(paths[i])))
            except FiglinkError as e:
                failed[r.sha] = e
        need = [(s, im) for s, im in decoded if s not in have_maps] if maps else []
        if need:
            arr = trunk_maps([im for _, im in need], size)
            batch_maps = {s: arr[j] for j, (s, _) in enumerate(need)}
            cache.put_arrays(kind, batch_maps)
            new_maps.update(batch_maps)
        if ocr:
            batch_ocr = {s: ocr_lines(im) for s, im in decoded if s not in have_ocr}
            cache.put_json(OCR_KIND, batch_ocr)
            new_ocr.update(batch_ocr)
        if progress is not None:
            progress(min(start + FLUSH_EVERY, len(todo)), len(todo))
    have_maps.update(new_maps)
    have_ocr.update(new_ocr)
    for i, r in enumerate(results):
        if isinstance(r, ImageFeatures):
            if r.sha in failed:
                results[i] = failed[r.sha]
                continue
            r.maps = have_maps.get(r.sha) if maps else None
            r.ocr = have_ocr.get(r.sha) if ocr else None
    return results


def print_progress(label: str) -> Callable[[int, int], None]:
    """A progress callback that writes "label: done/total" to stderr."""
    def report(done: int, total: int) -> None:
        sys.stderr.write(f"\r{label}: {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()
    return report

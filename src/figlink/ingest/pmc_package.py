"""PMC open-access packages (.tar.gz holding the .nxml and the figure images).

The archive is read member by member and never extracted as such: member paths are never used to
write files (images are saved under names figlink makes), links and special files are skipped, and
sizes are capped per member and in total, so ``../`` paths, symlinks and decompression bombs cannot
write outside the output folder or exhaust memory.
"""

from __future__ import annotations

import os
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Optional

from figlink.errors import InputError, UnsafeArchiveError
from figlink.ingest.jats import DEFAULT_MAX_BYTES, parse_jats_bytes, safe_id
from figlink.model import Paper

IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".gif", ".tif", ".tiff", ".bmp", ".webp"})
ARTICLE_SUFFIXES = (".nxml", ".xml")


@dataclass(frozen=True)
class ArchiveLimits:
    """Caps that make a hostile archive fail fast with a clear error."""

    max_article_bytes: int = DEFAULT_MAX_BYTES
    max_image_bytes: int = 64 * 1024 * 1024
    max_total_bytes: int = 2 * 1024 * 1024 * 1024
    max_members: int = 20_000


def _members(tar: tarfile.TarFile, limits: ArchiveLimits):
    total = 0
    for n, m in enumerate(tar, 1):
        if n > limits.max_members:
            raise UnsafeArchiveError(f"archive has more than {limits.max_members} members")
        total += max(m.size, 0)
        if total > limits.max_total_bytes:
            raise UnsafeArchiveError(
                f"archive expands past {limits.max_total_bytes / 1e9:.1f} GB (decompression bomb?)")
        yield m


def _open(path: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(path, mode="r|*")
    except (tarfile.TarError, OSError, EOFError) as e:
        raise InputError(f"not a readable tar archive: {e}") from None


def _read(tar: tarfile.TarFile, m: tarfile.TarInfo, cap: int, what: str) -> bytes:
    if m.size > cap:
        raise UnsafeArchiveError(f"{what} {PurePosixPath(m.name).name} is {m.size / 1e6:.0f} MB, over the "
                                 f"{cap / 1e6:.0f} MB limit")
    f = tar.extractfile(m)
    if f is None:
        return b""
    data = f.read(cap + 1)
    if len(data) > cap:
        raise UnsafeArchiveError(f"{what} {PurePosixPath(m.name).name} is larger than its header says")
    return data


def _stem(name: str) -> str:
    p = PurePosixPath(name)
    return p.stem if p.suffix.lower() in IMAGE_SUFFIXES else p.name


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (no half-written file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def parse_pmc_package(path: str | Path, image_root: Optional[Path] = None, image_prefix: str = "",
                      limits: ArchiveLimits = ArchiveLimits()) -> Paper:
    """Parse a PMC OA package; link each figure to its image and, with ``image_root``, save the images.

    Images are saved as ``image_root/<paper_id>/<figure_id>.<ext>`` and ``Figure.image`` becomes
    ``image_prefix + "<paper_id>/<figure_id>.<ext>"``; without ``image_root`` it is the member name.
    """
    p = Path(path)
    if p.stat().st_size == 0:
        raise InputError("empty file")
    article: Optional[bytes] = None
    article_name = ""
    images: dict[str, str] = {}  # stem → member name
    skipped_links = 0
    n_articles = 0
    try:
        with _open(p) as tar:
            for m in _members(tar, limits):
                if m.issym() or m.islnk() or not m.isfile():
                    skipped_links += m.issym() or m.islnk()
                    continue
                low = m.name.lower()
                if low.endswith(ARTICLE_SUFFIXES):
                    n_articles += 1
                    if article is None:
                        article = _read(tar, m, limits.max_article_bytes, "article")
                        article_name = PurePosixPath(m.name).name
                elif PurePosixPath(low).suffix in IMAGE_SUFFIXES:
                    images.setdefault(_stem(m.name).lower(), m.name)
    except (tarfile.TarError, EOFError, OSError) as e:
        raise InputError(f"truncated or corrupt archive: {e}") from None
    if article is None:
        raise InputError("archive holds no .nxml/.xml article")
    if n_articles > 1:
        raise InputError(f"archive holds {n_articles} articles: bulk archives are not supported, "
                         "unpack it and ingest the folder")
    paper = parse_jats_bytes(article, name=article_name)
    if skipped_links:
        paper.warnings.append(f"{skipped_links} link member(s) in the archive were ignored")
    wanted: dict[str, list] = {}
    for fig in paper.figures:
        if fig.graphic:
            member = images.get(_stem(fig.graphic).lower())
            if member is not None:
                wanted.setdefault(member, []).append(fig)
                fig.image = member
    if image_root is None or not wanted:
        return paper
    image_dir = image_root / paper.paper_id
    try:
        with _open(p) as tar:
            for m in _members(tar, limits):
                figs = wanted.get(m.name)
                if not figs or not m.isfile():
                    continue
                data = _read(tar, m, limits.max_image_bytes, "image")
                suffix = PurePosixPath(m.name).suffix.lower()
                for fig in figs:
                    name = safe_id(fig.figure_id) + suffix
                    write_atomic(image_dir / name, data)
                    fig.image = f"{image_prefix}{paper.paper_id}/{name}"
    except (tarfile.TarError, EOFError, OSError) as e:
        raise InputError(f"truncated or corrupt archive: {e}") from None
    return paper

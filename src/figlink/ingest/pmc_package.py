"""PMC open-access packages (.tar.gz holding the .nxml and the figure images).

The archive is read member by member and never extracted as such: member paths are never used to
write files (images are saved under names figlink makes), links and special files are skipped, and
sizes are capped per member and in total, so ``../`` paths, symlinks and decompression bombs cannot
write outside the output folder or exhaust memory.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import shutil
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Callable, Iterator, Optional

from figlink.errors import InputError, UnsafeArchiveError
from figlink.ingest.jats import DEFAULT_MAX_BYTES, parse_jats_bytes
from figlink.model import Paper
from figlink.paper_ids import safe_id

READ_BLOCK = 1 << 20  # bytes of the tar stream read (and inflated) at a time
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


_CORRUPT = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError)
_DECOMPRESSORS: tuple[tuple[bytes, Callable[[IO[bytes]], io.BufferedIOBase]], ...] = (
    (b"\x1f\x8b", lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")),
    (b"BZh", lambda raw: bz2.BZ2File(raw, mode="rb")),
    (b"\xfd7zXZ\x00", lambda raw: lzma.LZMAFile(raw, mode="rb")))


@contextlib.contextmanager
def _open(path: Path) -> Iterator[tarfile.TarFile]:
    """The archive as a stream of members, read once, ``READ_BLOCK`` bytes at a time.

    The file is decompressed by the standard library's gzip/bz2/lzma readers, which inflate at most what
    each read asks for, and tarfile reads the plain tar stream from them: tarfile's own stream decompressor
    inflates a whole input block at once and keeps the rest in a buffer it copies on every read, so a
    highly compressed member (1.9 GB of junk in 2 MB) took minutes and a gigabyte to skip."""
    raw = path.open("rb")
    try:
        head = raw.read(6)
        raw.seek(0)
        opener = next((make for magic, make in _DECOMPRESSORS if head.startswith(magic)), None)
        plain = opener(raw) if opener is not None else raw
        try:
            tar = tarfile.open(fileobj=plain, mode="r|", bufsize=READ_BLOCK)
        except (*_CORRUPT, ValueError) as e:
            raise InputError(f"not a readable tar archive: {e}") from None
        with tar:
            yield tar
    finally:
        raw.close()


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


def _save(tar: tarfile.TarFile, m: tarfile.TarInfo, cap: int, dest: Path) -> None:
    """Copy a member's bytes to ``dest`` (through a temporary file and a rename), at most ``cap`` bytes."""
    write_atomic(dest, _read(tar, m, cap, "image"))


def parse_pmc_package(path: str | Path, image_dir: Optional[Path] = None,
                      limits: ArchiveLimits = ArchiveLimits()) -> Paper:
    """Parse a PMC OA package; link each figure to its image and, with ``image_dir``, save the images.

    Images are saved as ``image_dir/<figure_id>.<ext>`` and ``Figure.image`` is that file name; without
    ``image_dir`` it is the member's name in the archive.

    The archive is read once, as a stream: the article is parsed as soon as it is read, so the images that
    follow it go straight to their figures; images met before it are kept aside in a temporary folder
    inside ``image_dir`` (only names are kept without one) until the article says which it needs. Every
    byte counts against ``limits`` as it is read.
    """
    p = Path(path)
    if p.stat().st_size == 0:
        raise InputError("empty file")
    paper: Optional[Paper] = None
    n_articles = 0
    skipped_links = 0
    early: dict[str, str] = {}  # stem → member name of images met before the article
    spool = None if image_dir is None else Path(image_dir) / f".spool-{os.getpid()}-{id(p):x}"
    wanted: dict[str, list] = {}  # stem → figures showing that image
    saved: dict[str, str] = {}  # figure id → file name

    def attach(stem: str, member: str, take) -> None:
        """Give the figures that show image ``stem`` their image; ``take(dest)`` writes it to ``dest``."""
        figs = wanted.pop(stem, [])
        if not figs:
            return
        suffix = PurePosixPath(member).suffix.lower()
        first: Optional[Path] = None
        for fig in figs:
            if image_dir is None:
                fig.image = member
                continue
            name = _unique_name(safe_id(fig.figure_id) + suffix, saved.values())
            dest = Path(image_dir) / name
            if first is None:
                take(dest)
                first = dest
            else:  # two figures showing one image: each gets its own file
                shutil.copyfile(first, dest)
            saved[fig.figure_id] = name
            fig.image = name

    try:
        with _open(p) as tar:
            for m in _members(tar, limits):
                if m.issym() or m.islnk() or not m.isfile():
                    skipped_links += m.issym() or m.islnk()
                    continue
                low = m.name.lower()
                if low.endswith(ARTICLE_SUFFIXES):
                    n_articles += 1
                    if paper is None:
                        paper = parse_jats_bytes(_read(tar, m, limits.max_article_bytes, "article"),
                                                 name=PurePosixPath(m.name).name)
                        for fig in paper.figures:
                            if fig.graphic:
                                wanted.setdefault(_stem(fig.graphic).lower(), []).append(fig)
                        for stem, member in list(early.items()):
                            attach(stem, member, lambda dest, s=stem: _move(spool, s, dest))
                elif PurePosixPath(low).suffix in IMAGE_SUFFIXES:
                    stem = _stem(m.name).lower()
                    if paper is not None:
                        attach(stem, m.name, lambda dest: _save(tar, m, limits.max_image_bytes, dest))
                    elif stem not in early:
                        early[stem] = m.name
                        if spool is not None:
                            _save(tar, m, limits.max_image_bytes, spool / stem)
    except _CORRUPT as e:
        raise InputError(f"truncated or corrupt archive: {e}") from None
    finally:
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)
    if paper is None:
        raise InputError("archive holds no .nxml/.xml article")
    if n_articles > 1:
        raise InputError(f"archive holds {n_articles} articles: bulk archives are not supported, "
                         "unpack it and ingest the folder")
    if skipped_links:
        paper.warnings.append(f"{skipped_links} link member(s) in the archive were ignored")
    return paper


def _move(spool: Optional[Path], stem: str, dest: Path) -> None:
    """Move an image kept aside in ``spool`` to ``dest``."""
    if spool is not None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(spool / stem, dest)


def _unique_name(name: str, taken) -> str:
    """``name``, or ``<stem>-2<suffix>``, … when a figure of the paper already has that file name."""
    taken = set(taken)
    stem, dot, suffix = name.rpartition(".")
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{stem}-{n}{dot}{suffix}", n + 1
    return candidate

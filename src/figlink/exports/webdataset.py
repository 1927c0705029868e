"""``--format webdataset``: WebDataset tar shards with one sample per figure image.

``out/figlink-000000.tar``, …: per figure image ``<key>.<jpg|png|…>`` (the image bytes as stored; the
extension follows the real format), ``<key>.json`` (:func:`webdataset_sample`) and ``<key>.txt`` (the
caption). Keys are ``<paper_id>__<figure_id>`` with every character other than letters, digits, ``_``
and ``-`` made ``_`` (a suffix keeps them unique). A shard closes at ``shard_size`` samples or
``shard_bytes`` bytes.

Shards are written through temporary files and renamed when complete, so a crash leaves whole shards
only; ``out/figlink-shards.json`` lists them with their sample counts (the shape of a ``wids`` shard
index). Shards of an earlier export into the same folder that this one did not rewrite are removed at
the end. Figures without an image are left out (counted); a missing or unreadable image file is a
failure of that figure and the export goes on.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import time
from pathlib import Path
from typing import Optional, Union

from figlink.errors import InputError
from figlink.exports.base import ExportReport, ExportWriter, ImageSource, temporary
from figlink.exports.images import figures_with_image, image_ext, probe
from figlink.model import Figure, Paper


def parse_size(text: Union[str, int]) -> int:
    """Bytes from ``1000000``, ``500MB``, ``1.5G``, ``64MiB`` (K/M/G/T decimal, KiB/MiB/GiB/TiB binary)."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?)B?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r} (e.g. 500MB, 1GiB, 1000000)")
    unit = 1024 if m.group(3) else 1000
    return int(float(m.group(1)) * unit ** " KMGT".index(m.group(2).upper() or " "))


SHARD_PATTERN = "figlink-%06d.tar"
SHARD_INDEX = "figlink-shards.json"
_SHARD_NAME = re.compile(r"figlink-(\d{6})\.tar")
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def sample_key(paper_id: str, figure_id: str) -> str:
    """A WebDataset-safe key: letters, digits, ``_`` and ``-`` only (WebDataset cuts a member name at its
    first dot: the part before is the key, the rest the extension)."""
    key = _KEY_UNSAFE.sub("_", f"{paper_id}__{figure_id}")
    if len(key) > 150:
        key = key[:120] + "_" + _id_hash(paper_id, figure_id)[:12]
    return key


def _unique_key(paper_id: str, figure_id: str, used: set[str]) -> str:
    """:func:`sample_key`, made unique among ``used`` (ids that differ only in unsafe characters)."""
    key = sample_key(paper_id, figure_id)
    if key in used:
        base = key = f"{key}_{_id_hash(paper_id, figure_id)[:8]}"
        n = 1
        while key in used:
            key, n = f"{base}-{n}", n + 1
    used.add(key)
    return key


def _id_hash(paper_id: str, figure_id: str) -> str:
    return hashlib.sha1(f"{paper_id}\0{figure_id}".encode()).hexdigest()


def _tar_file_size(offset: int) -> int:
    """Size of a tar file whose members end at ``offset``: two zero blocks, padded to a whole record."""
    return -(-(offset + 2 * tarfile.BLOCKSIZE) // tarfile.RECORDSIZE) * tarfile.RECORDSIZE


class _ShardWriter:
    """Tar shards of at most ``max_count`` samples and about ``max_bytes`` bytes (a sample larger than that
    gets a shard of its own). Each shard is written as ``.<name>.tmp`` and renamed when complete."""

    def __init__(self, out: Path, max_count: int, max_bytes: int, mtime: float) -> None:
        self.out, self.max_count, self.max_bytes, self.mtime = out, max_count, max_bytes, mtime
        self.shards: list[dict] = []
        self._file: Optional[io.BufferedWriter] = None
        self._tar: Optional[tarfile.TarFile] = None
        self._tmp = self._final = out
        self._count = 0

    def write(self, key: str, members: list[tuple[str, bytes]]) -> None:
        # header block(s) (a PAX header for names over 100 characters) + data padded to blocks
        size = sum((512 if len(key) + len(ext) < 100 else 1536) + -(-len(data) // 512) * 512
                   for ext, data in members)
        if self._tar is not None and (self._count >= self.max_count
                                      or _tar_file_size(self._tar.offset + size) > self.max_bytes):
            self._finish()
        if self._tar is None:
            self._final = self.out / (SHARD_PATTERN % len(self.shards))
            self._tmp = self.out / f".{self._final.name}.tmp"
            self._file = self._tmp.open("wb")
            self._tar = tarfile.open(fileobj=self._file, mode="w", format=tarfile.PAX_FORMAT)
        for ext, data in members:
            info = tarfile.TarInfo(f"{key}.{ext}")
            info.size, info.mtime, info.mode = len(data), self.mtime, 0o444
            self._tar.addfile(info, io.BytesIO(data))
        self._count += 1

    def _finish(self) -> None:
        assert self._tar is not None and self._file is not None
        self._tar.close()
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        size = self._tmp.stat().st_size
        os.replace(self._tmp, self._final)
        self.shards.append({"url": self._final.name, "nsamples": self._count, "filesize": size})
        self._tar = self._file = None
        self._count = 0

    def close(self) -> None:
        if self._tar is not None:
            self._finish()

    def abort(self) -> None:
        """Drop the shard in progress (on an error or an interrupt): no half shard is left."""
        if self._file is not None:
            self._file.close()
            self._tmp.unlink(missing_ok=True)
        self._tar = self._file = None


def webdataset_sample(paper: Paper, fig: Figure, key: str, ext: str, w: int, h: int) -> dict:
    """The ``.json`` of a sample: every figure field of the data model (caption, inline references, caption
    split, panels with subcaptions, OCR, type, flags; ``Figure.from_dict`` reads it back), the paper's
    metadata and license, and the image's format and size."""
    rec = fig.to_dict()
    rec.update({
        "key": key, "paper_id": paper.paper_id,
        "paper": {"paper_id": paper.paper_id, "source": paper.source, "doi": paper.doi, "pmcid": paper.pmcid,
                  "title": paper.title, "journal": paper.journal, "year": paper.year},
        "license": paper.license.to_dict(), "image_format": ext, "width": w, "height": h,
    })
    return rec


class WebDatasetWriter(ExportWriter):
    fmt = "webdataset"
    folder = True

    def __init__(self, out: str | Path, images: Optional[ImageSource] = None, shard_size: int = 1000,
                 shard_bytes: Union[int, str] = 1_000_000_000) -> None:
        super().__init__(out, images)
        if shard_size < 1:
            raise ValueError("shard_size must be at least 1")
        self.shard_size, self.shard_bytes = shard_size, parse_size(shard_bytes)
        self._used: set[str] = set()

    def open(self) -> None:
        if self.images is None:
            raise ValueError("the webdataset export needs the corpus's images")
        self.out.mkdir(parents=True, exist_ok=True)
        for stale in self.out.glob(".figlink-*.tar.tmp"):
            stale.unlink(missing_ok=True)
        self._shards = _ShardWriter(self.out, self.shard_size, self.shard_bytes, time.time())

    def write(self, paper: Paper) -> None:
        assert self.images is not None
        report = self.report
        for fig, item in figures_with_image(paper, report):
            assert fig.image is not None
            try:
                path = self.images.image_file(fig.image)
                data = path.read_bytes()
                fmt, w, h = probe(data, fig.image)
            except InputError as e:
                report.failures.append((item, "image", str(e)))
                continue
            except OSError as e:
                report.failures.append((item, "image", f"cannot read {fig.image}: {e.strerror or e}"))
                continue
            key = _unique_key(paper.paper_id, fig.figure_id, self._used)
            ext = image_ext(fmt, path)
            meta = webdataset_sample(paper, fig, key, ext, w, h)
            self._shards.write(key, [(ext, data), ("json", json.dumps(meta, ensure_ascii=False).encode("utf-8")),
                                     ("txt", fig.caption.encode("utf-8"))])
            report.written += 1

    def close(self) -> ExportReport:
        self._shards.close()
        self.report.shards = len(self._shards.shards)
        keep = {s["url"] for s in self._shards.shards}
        for old in self.out.iterdir():
            if _SHARD_NAME.fullmatch(old.name) and old.name not in keep:
                old.unlink()
        index = self.out / SHARD_INDEX
        tmp = temporary(index)
        tmp.write_text(json.dumps({"__kind__": "wids-shard-index-v1", "wids_version": 1, "name": "figlink",
                                   "shardlist": self._shards.shards}, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, index)
        return self.report

    def abort(self) -> None:
        self._shards.abort()

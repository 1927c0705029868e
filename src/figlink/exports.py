"""Dataset exports of a corpus: papers as JSON lines, one Parquet row per figure, MedICaT- and SciCap-style
records (one file each), a COCO subfigure-detection dataset and WebDataset tar shards (folders with images).

The file exports return the number of records written. The two exports with images return an
:class:`ExportReport`: a figure whose image file is missing or unreadable is one failure line (paper/figure,
stage, reason), the export goes on, and the CLI exits 1 when any figure failed.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import shutil
import tarfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional, Union

import pyarrow as pa
import pyarrow.parquet as pq

from figlink.corpus import Corpus
from figlink.errors import InputError
from figlink.model import Figure, Paper

_SUB = pa.struct([("labels", pa.list_(pa.string())), ("text", pa.string()), ("positions", pa.list_(pa.string()))])
_REF = pa.struct([("text", pa.string()), ("mention", pa.string()), ("panels", pa.list_(pa.string())),
                  ("section", pa.string())])
FIGURE_SCHEMA = pa.schema([
    ("paper_id", pa.string()), ("doi", pa.string()), ("pmcid", pa.string()), ("title", pa.string()),
    ("license", pa.string()), ("license_open", pa.bool_()), ("figure_id", pa.string()), ("label", pa.string()),
    ("number", pa.string()), ("parent", pa.string()), ("caption", pa.string()), ("image", pa.string()),
    ("inline_refs", pa.list_(_REF)), ("shared_text", pa.string()), ("subcaptions", pa.list_(_SUB)),
    ("caption_normalized", pa.string()), ("expected_panels", pa.int32()), ("figure_type", pa.string()),
    ("is_compound", pa.bool_()), ("is_medical", pa.bool_()), ("medical_keywords", pa.list_(pa.string())),
])


def _tmp(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    return out.with_name(f".{out.name}.tmp")


def export_jsonl(corpus: Corpus, out: Path) -> int:
    """One Paper JSON per line."""
    tmp, n = _tmp(out), 0
    with tmp.open("w", encoding="utf-8") as f:
        for paper in corpus.papers():
            f.write(paper.to_json() + "\n")
            n += 1
    os.replace(tmp, out)
    return n


def export_parquet(corpus: Corpus, out: Path, batch: int = 5000) -> int:
    """One row per figure, written in row groups so memory stays bounded."""
    tmp, n = _tmp(out), 0
    rows: list[dict] = []
    with pq.ParquetWriter(tmp, FIGURE_SCHEMA, compression="zstd") as w:
        for p in corpus.papers():
            for f in p.figures:
                rows.append({
                    "paper_id": p.paper_id, "doi": p.doi, "pmcid": p.pmcid, "title": p.title,
                    "license": p.license.spdx, "license_open": p.license.open, "figure_id": f.figure_id,
                    "label": f.label, "number": f.number, "parent": f.parent, "caption": f.caption, "image": f.image,
                    "inline_refs": [{"text": r.text, "mention": r.mention, "panels": r.panels, "section": r.section}
                                    for r in f.inline_refs],
                    "shared_text": f.caption_split.shared_text if f.caption_split else None,
                    "subcaptions": [{"labels": sc.labels, "text": sc.text, "positions": sc.positions}
                                    for sc in f.caption_split.subcaptions] if f.caption_split else [],
                    "caption_normalized": f.caption_normalized.basic if f.caption_normalized else None,
                    "expected_panels": f.expected_panels,
                    "figure_type": f.figure_type.label if f.figure_type else None,
                    "is_compound": f.is_compound, "is_medical": f.is_medical,
                    "medical_keywords": f.medical_keywords,
                })
                if len(rows) >= batch:
                    w.write_table(pa.Table.from_pylist(rows, FIGURE_SCHEMA))
                    n += len(rows)
                    rows = []
        if rows:
            w.write_table(pa.Table.from_pylist(rows, FIGURE_SCHEMA))
            n += len(rows)
    os.replace(tmp, out)
    return n


def _write_jsonl(out: Path, records: Iterator[dict]) -> int:
    tmp, n = _tmp(out), 0
    with tmp.open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
    os.replace(tmp, out)
    return n


def _label_caption(f: Figure) -> str:
    """The caption as printed: "Figure 4. Micro-CT of …" (JATS keeps the label apart)."""
    if not f.label:
        return f.caption
    return f"{f.label.rstrip(' .:')}. {f.caption}".strip()


def medicat_record(paper: Paper, f: Figure) -> dict:
    """A MedICaT-style record (its keys, plus figlink's subcaptions and panel-aware references)."""
    return {
        "pdf_hash": paper.paper_id, "fig_key": f"Figure{f.number}" if f.number else f.figure_id,
        "fig_uri": f.image, "s2_caption": _label_caption(f), "s2orc_caption": _label_caption(f),
        "s2orc_references": [r.text for r in f.inline_refs], "radiology": bool(f.is_medical),
        "oa_info": {"doi": paper.doi, "license": paper.license.spdx, "is_open": paper.license.open},
        "paper_id": paper.paper_id, "figure_id": f.figure_id,
        "inline_refs": [r.to_dict() for r in f.inline_refs],
        "caption_split": f.caption_split.to_dict() if f.caption_split else None,
        "is_compound": f.is_compound, "medical_keywords": f.medical_keywords,
    }


def scicap_record(paper: Paper, f: Figure) -> dict:
    """A SciCap-style record: the caption as extracted, lower-cased without its index, and normalized."""
    norm = f.caption_normalized
    basic = norm.basic if norm else ""
    advanced = norm.advanced if norm else ""
    return {
        "paper-ID": paper.paper_id, "figure-ID": f.image or f.figure_id, "figure_id": f.figure_id,
        "figure-type": f.figure_type.label if f.figure_type else None,
        "contains-subfigure": bool(f.is_compound),
        "0-originally-extracted": _label_caption(f),
        "1-lowercase-and-token-and-remove-figure-index": {"caption": f.caption.lower(),
                                                           "tokens": f.caption.lower().split()},
        "2-normalized": {
            "2-1-basic-num": {"caption": basic, "tokens": basic.split()},
            "2-2-advanced-euqation-bracket": {"caption": advanced, "tokens": advanced.split()},
        },
        "first-sentence": norm.first_sentence if norm else "",
        "single-sentence": bool(norm and norm.n_sentences == 1),
        "at-most-100-tokens": bool(norm and norm.n_tokens <= 100),
        "license": paper.license.spdx,
    }


def export_medicat(corpus: Corpus, out: Path) -> int:
    """MedICaT-style JSON lines, one record per figure (``radiology`` is figlink's medical flag)."""
    return _write_jsonl(out, (medicat_record(p, f) for p in corpus.papers() for f in p.figures))


def export_scicap(corpus: Corpus, out: Path) -> int:
    """SciCap-style JSON lines, one record per figure, with SciCap's caption normalizations."""
    return _write_jsonl(out, (scicap_record(p, f) for p in corpus.papers() for f in p.figures))


# ---------------------------------------------------------------------------------------- exports with images


@dataclass
class ExportReport:
    """What an export with images wrote, what it left out and which figures failed."""

    fmt: str
    out: Path
    figures: int = 0  # figures seen in the corpus
    written: int = 0  # coco: images; webdataset: samples
    annotations: int = 0  # coco: panel boxes
    shards: int = 0  # webdataset: tar files
    no_image: int = 0  # figures without an image (nothing to export; not a failure)
    no_panels: int = 0  # coco: figures with a readable image but no panel box (left out; not a failure)
    dropped_boxes: int = 0  # coco: panel boxes empty or invalid once clipped to the image
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (paper_id/figure_id, stage, reason)

    @property
    def failed(self) -> int:
        return len(self.failures)

    def summary(self) -> str:
        if self.fmt == "coco":
            what = f"{self.written} images, {self.annotations} panel boxes"
            left = (f"{self.no_image} figures without an image, {self.no_panels} without panels"
                    + (f", {self.dropped_boxes} empty boxes" if self.dropped_boxes else ""))
        else:
            what = f"{self.written} samples in {self.shards} shards"
            left = f"{self.no_image} figures without an image"
        return (f"wrote {what} to {self.out} ({self.figures} figures; left out: {left}); "
                f"{self.failed} failed")


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


def _probe(src: Union[Path, bytes], rel: str) -> tuple[str, int, int]:
    """(PIL format, width, height) of an image file or its bytes; checks its structure (PNG chunks and
    CRCs, headers) without decoding pixels, and decodes a JPEG (at 1/8 scale) only when it does not end
    with its end marker. A file that is not an image, or a damaged one, raises :class:`InputError`."""
    from PIL import Image, UnidentifiedImageError

    def opened():
        return Image.open(io.BytesIO(src) if isinstance(src, bytes) else src)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            saved, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
            try:
                with opened() as im:
                    fmt, (w, h) = im.format or "", im.size
                    im.verify()
                if fmt == "JPEG" and not _jpeg_tail_ok(src):
                    with opened() as im:
                        im.draft("RGB", (max(1, w // 8), max(1, h // 8)))
                        im.load()
            finally:
                Image.MAX_IMAGE_PIXELS = saved
    except UnidentifiedImageError:
        raise InputError(f"unreadable image {rel}: not an image file (or an unknown format)") from None
    except Exception as e:  # PIL raises many kinds for damaged files
        raise InputError(f"unreadable image {rel}: damaged ({type(e).__name__}: {e})") from None
    if w < 1 or h < 1:
        raise InputError(f"image has no pixels: {rel}")
    return fmt, w, h


def _image_ext(fmt: str, path: Path) -> str:
    """File extension for an image's bytes: from its real format, else from its file name."""
    return _FORMAT_EXT.get(fmt) or path.suffix.lower().lstrip(".") or fmt.lower() or "bin"


def parse_size(text: Union[str, int]) -> int:
    """Bytes from ``1000000``, ``500MB``, ``1.5G``, ``64MiB`` (K/M/G/T decimal, KiB/MiB/GiB/TiB binary)."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?)B?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r} (e.g. 500MB, 1GiB, 1000000)")
    unit = 1024 if m.group(3) else 1000
    return int(float(m.group(1)) * unit ** " KMGT".index(m.group(2).upper() or " "))


# ---------------------------------------------------------------------------------------------------- COCO

COCO_ANNOTATIONS = "annotations.json"
COCO_CATEGORIES = [{"id": 1, "name": "subfigure", "supercategory": "figure"}]


def _coco_box(bbox: list[float], w: int, h: int) -> Optional[list[float]]:
    """A panel's [x0, y0, x1, y1] as COCO [x, y, width, height], clipped to the image; None when the box
    is malformed or less than a pixel wide or high once clipped."""
    if len(bbox) != 4 or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in bbox):
        return None
    x0, x1 = sorted((min(max(bbox[0], 0.0), w), min(max(bbox[2], 0.0), w)))
    y0, y1 = sorted((min(max(bbox[1], 0.0), h), min(max(bbox[3], 0.0), h)))
    x0, y0, x1, y1 = (round(float(v), 2) for v in (x0, y0, x1, y1))
    if x1 - x0 < 1 or y1 - y0 < 1:
        return None
    return [x0, y0, round(x1 - x0, 2), round(y1 - y0, 2)]


def _place(src: Path, dst: Path, copy: bool) -> None:
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


def _figures_with_image(corpus: Corpus, report: ExportReport) -> Iterator[tuple[Paper, Figure, str]]:
    """Every figure of the corpus that has an image file, with its item name ("paper/figure") for
    failure lines; counts all figures and those without an image on ``report``."""
    for paper in corpus.papers():
        for fig in paper.figures:
            report.figures += 1
            if not fig.image:
                report.no_image += 1
                continue
            yield paper, fig, f"{paper.paper_id}/{fig.figure_id}"


def export_coco(corpus: Corpus, out: Path, *, copy_images: bool = False) -> ExportReport:
    """A COCO detection dataset of subfigures in the folder ``out``.

    - ``out/annotations.json``: ``images`` (one per figure image that has panels: ``file_name`` relative to
      ``out``, ``width``, ``height``, ``license`` (an id into ``licenses``, the papers' licenses), and
      figlink's ``paper_id``, ``figure_id``, ``doi``, ``label``, ``caption``, ``figure_type``,
      ``is_compound``); ``annotations`` (one per panel box: ``bbox`` [x, y, w, h] in image pixels clipped to
      the image, ``area``, ``iscrowd`` 0, ``segmentation`` (the box as a polygon), ``category_id`` 1, and
      figlink's panel ``label``, ``subcaption``, detection ``score``, ``panel_index``).
    - ``out/images/<paper folder>/<file>``: the figure images, hard-linked from the corpus (copied across
      file systems or with ``copy_images``), bytes unchanged.

    One category, ``subfigure``: the data model types whole figures (``figure_type``, kept on the image
    record), not panels. A figure the vision stage saw as a single panel has one box covering it (the
    image's ``is_compound`` is the corpus's flag, or more than one box when the corpus has none). Images
    an earlier export left under ``out/images`` stay; ``annotations.json`` lists this export's. Left out
    and counted in the report, not failures: figures without an image, and figures whose image has no
    panel box (vision stage off or failed: the image would otherwise read
    as "no subfigures"). A missing or unreadable image file is a failure of that figure. The annotation
    file is written last, through a temporary file and a rename.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report = ExportReport("coco", out)
    images_root = (corpus.root / "images").resolve()
    licenses: dict[tuple[Optional[str], Optional[str]], int] = {}
    parts = {k: out / f".{k}.part" for k in ("images", "annotations")}
    image_id = ann_id = 0
    try:
        with parts["images"].open("w", encoding="utf-8") as fi, parts["annotations"].open("w", encoding="utf-8") as fa:
            for paper, fig, item in _figures_with_image(corpus, report):
                lic = (paper.license.spdx, paper.license.url)
                try:
                    src = corpus.image_file(fig.image)
                    _, w, h = _probe(src, fig.image)
                except InputError as e:
                    report.failures.append((item, "image", str(e)))
                    continue
                boxes = []
                for i, p in enumerate(fig.panels):
                    b = _coco_box(p.bbox, w, h)
                    if b is None:
                        report.dropped_boxes += 1
                    else:
                        boxes.append((i, p, b))
                if not boxes:
                    report.no_panels += 1
                    continue
                file_name = "images/" + src.relative_to(images_root).as_posix()
                try:
                    _place(src, out / file_name, copy_images)
                except OSError as e:
                    report.failures.append((item, "write", f"{file_name}: {e.strerror or e}"))
                    continue
                image_id += 1
                fi.write(("" if image_id == 1 else ",\n") + json.dumps({
                    "id": image_id, "file_name": file_name, "width": w, "height": h,
                    "license": licenses.setdefault(lic, len(licenses) + 1),
                    "paper_id": paper.paper_id, "figure_id": fig.figure_id, "doi": paper.doi,
                    "label": fig.label, "caption": fig.caption,
                    "figure_type": fig.figure_type.label if fig.figure_type else None,
                    "is_compound": len(boxes) > 1 if fig.is_compound is None else fig.is_compound,
                }, ensure_ascii=False))
                for i, p, (x, y, bw, bh) in boxes:
                    ann_id += 1
                    fa.write(("" if ann_id == 1 else ",\n") + json.dumps({
                        "id": ann_id, "image_id": image_id, "category_id": 1, "bbox": [x, y, bw, bh],
                        "area": round(bw * bh, 2), "iscrowd": 0,
                        "segmentation": [[x, y, round(x + bw, 2), y, round(x + bw, 2), round(y + bh, 2),
                                          x, round(y + bh, 2)]],
                        "label": p.label, "subcaption": p.subcaption, "score": p.score, "panel_index": i,
                    }, ensure_ascii=False))
        report.written, report.annotations = image_id, ann_id
        from figlink import __version__

        head = {
            "info": {"description": "figlink subfigure (panel) boxes", "version": __version__,
                     "year": time.gmtime().tm_year, "contributor": "figlink",
                     "date_created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            "licenses": [{"id": i, "name": spdx or "unknown", "url": url or ""}
                         for (spdx, url), i in licenses.items()],
            "categories": COCO_CATEGORIES,
        }
        dest = out / COCO_ANNOTATIONS
        tmp = _tmp(dest)
        with tmp.open("w", encoding="utf-8") as f:
            f.write(json.dumps(head, ensure_ascii=False)[:-1] + ',\n"images": [\n')
            with parts["images"].open(encoding="utf-8") as src_f:
                shutil.copyfileobj(src_f, f)
            f.write('\n],\n"annotations": [\n')
            with parts["annotations"].open(encoding="utf-8") as src_f:
                shutil.copyfileobj(src_f, f)
            f.write("\n]}\n")
        os.replace(tmp, dest)
    finally:
        for part in parts.values():
            part.unlink(missing_ok=True)
    return report


# ---------------------------------------------------------------------------------------------- WebDataset

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


def export_webdataset(corpus: Corpus, out: Path, *, shard_size: int = 1000,
                      shard_bytes: Union[int, str] = 1_000_000_000) -> ExportReport:
    """WebDataset tar shards ``out/figlink-000000.tar``, … with one sample per figure image:
    ``<key>.<jpg|png|…>`` (the image bytes as stored; the extension follows the real format),
    ``<key>.json`` (:func:`webdataset_sample`) and ``<key>.txt`` (the caption). Keys are
    ``<paper_id>__<figure_id>`` with every character other than letters, digits, ``_`` and ``-`` made ``_``
    (a suffix keeps them unique). A shard closes at ``shard_size`` samples or ``shard_bytes`` bytes.

    Shards are written through temporary files and renamed when complete, so a crash leaves whole shards
    only; ``out/figlink-shards.json`` lists them with their sample counts (the shape of a ``wids`` shard
    index). Shards of an earlier export into the same folder that this one did not rewrite are removed
    at the end. Figures without an image are left out (counted); a missing or unreadable image file is a
    failure of that figure and the export goes on.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if shard_size < 1:
        raise ValueError("shard_size must be at least 1")
    max_bytes = parse_size(shard_bytes)
    for stale in out.glob(".figlink-*.tar.tmp"):
        stale.unlink(missing_ok=True)
    report = ExportReport("webdataset", out)
    writer = _ShardWriter(out, shard_size, max_bytes, time.time())
    used: set[str] = set()
    try:
        for paper, fig, item in _figures_with_image(corpus, report):
            try:
                path = corpus.image_file(fig.image)
                data = path.read_bytes()
                fmt, w, h = _probe(data, fig.image)
            except InputError as e:
                report.failures.append((item, "image", str(e)))
                continue
            except OSError as e:
                report.failures.append((item, "image", f"cannot read {fig.image}: {e.strerror or e}"))
                continue
            key = _unique_key(paper.paper_id, fig.figure_id, used)
            ext = _image_ext(fmt, path)
            meta = webdataset_sample(paper, fig, key, ext, w, h)
            writer.write(key, [(ext, data), ("json", json.dumps(meta, ensure_ascii=False).encode("utf-8")),
                               ("txt", fig.caption.encode("utf-8"))])
            report.written += 1
        writer.close()
    except BaseException:
        writer.abort()
        raise
    report.shards = len(writer.shards)
    keep = {s["url"] for s in writer.shards}
    for old in out.iterdir():
        if _SHARD_NAME.fullmatch(old.name) and old.name not in keep:
            old.unlink()
    index = out / SHARD_INDEX
    tmp = _tmp(index)
    tmp.write_text(json.dumps({"__kind__": "wids-shard-index-v1", "wids_version": 1, "name": "figlink",
                               "shardlist": writer.shards}, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, index)
    return report


EXPORTERS: dict[str, Callable[..., Union[int, ExportReport]]] = {
    "jsonl": export_jsonl, "parquet": export_parquet, "medicat": export_medicat, "scicap": export_scicap,
    "coco": export_coco, "webdataset": export_webdataset}
FOLDER_FORMATS = {"coco", "webdataset"}  # --out is a folder; the others write one file

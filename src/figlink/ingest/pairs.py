"""Figure-pairs JSONL → :class:`~figlink.model.Paper`, one paper per line.

The format (as in ``shared/data/figures/openstax``): one figure per line,
``{"id", "image", "caption", "mentions": [citing text], "title", "alt", "source", "license"}`` with
``image`` relative to the file. Users with MedICaT-, SciCap- or ROCO-style data convert it to this.

:func:`read_pairs` yields ``(line number, Paper | FiglinkError)`` for every non-blank line, so a bad
line (not JSON, no id or image, empty caption, missing or unreadable image, not an image, an image
over PIL's decompression-bomb limit, a repeated id) is one clear error for that line and the others go
on. Only image headers are read here; decoding happens where pixels are needed.

``figlink ingest`` reads a pairs file line by line too (:func:`pair_lines`, one engine task per line:
:func:`figlink.pipeline.stage_pair`), copying each image into the task's staging folder (:func:`save_pair_image`).

Each paper holds one figure:

- ``paper_id``: the pair id made safe for file names (``[A-Za-z0-9._-]``); when that changed it, the
  first 8 hex digits of the id's MD5 are appended, so different ids never share a paper id.
- ``figure_id``: the pair id as written (what ``figlink embed`` writes to ``ids.txt``).
- ``image``: the absolute path of the image file; ``graphic``: the path as written in the line.
- ``inline_refs``: one per mention, ``mention=""`` and ``tagged=False`` (the citing text is given
  without markup, and the pairs format does not say how the figure was named in it).
- ``license``: the line's ``license`` read by :func:`figlink.ingest.licenses.normalize_license`
  (SPDX id and SciOL's open flag); ``journal``: the line's ``source``; ``title``: its ``title``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

from PIL import Image

from figlink.errors import FiglinkError, InputError, ParseError
from figlink.ingest.licenses import normalize_license
from figlink.model import Figure, InlineRef, License, Paper, Source

SOURCE: Source = "pairs"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def paper_id_of(pair_id: str) -> str:
    """A stable, file-name-safe paper id for a pair id (unique: a changed id gets its MD5 appended)."""
    safe = _UNSAFE.sub("_", pair_id).strip("._") or "pair"
    if safe == pair_id:
        return safe
    return f"{safe}-{hashlib.md5(pair_id.encode('utf-8')).hexdigest()[:8]}"


def probe_image(path: Path) -> tuple[int, int]:
    """(width, height) from an image file's header, or :class:`InputError` saying why it is unusable."""
    if not path.is_file():
        raise InputError(f"image not found: {path}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                w, h = im.size
    except Image.DecompressionBombError as e:
        raise InputError(f"image too large: {path.name}: {e}") from e
    except OSError as e:  # PIL's UnidentifiedImageError is an OSError
        raise InputError(f"not a readable image: {path.name} ({type(e).__name__}: {e})") from e
    if w < 1 or h < 1:
        raise InputError(f"image has no pixels: {path.name}")
    return w, h


def _text(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ParseError(f"{what} is not a string")
    return value.strip()


def pair_to_paper(record: Any, base: Path) -> Paper:
    """One decoded pairs line as a Paper; ``base`` is the folder its image path is relative to."""
    if not isinstance(record, dict):
        raise ParseError("line is not a JSON object")
    _text(record.get("id"), "id")
    pair_id = pair_id_of(record)
    if not pair_id:
        raise ParseError("line has neither an id nor an image")
    caption = _text(record.get("caption"), "caption")
    if not caption:
        raise ParseError(f"{pair_id}: empty caption")
    image_ref = _text(record.get("image"), "image")
    if not image_ref:
        raise ParseError(f"{pair_id}: no image")
    mentions = record.get("mentions") or []
    if isinstance(mentions, str):
        mentions = [mentions]
    if not isinstance(mentions, list) or not all(isinstance(m, str) for m in mentions):
        raise ParseError(f"{pair_id}: mentions is not a list of strings")
    image_path = (base / image_ref).resolve()
    try:
        probe_image(image_path)
    except InputError as e:
        raise InputError(f"{pair_id}: {e}") from e
    lic = record.get("license")
    license_ = normalize_license(None, lic) if isinstance(lic, str) and lic.strip() else License()
    figure = Figure(figure_id=pair_id, caption=caption, image=str(image_path), graphic=image_ref,
                    inline_refs=[InlineRef(text=m.strip(), mention="", tagged=False) for m in mentions if m.strip()])
    return Paper(paper_id=paper_id_of(pair_id), source=SOURCE, title=_text(record.get("title"), "title") or None,
                 journal=_text(record.get("source"), "source") or None, license=license_, figures=[figure])


@dataclass(frozen=True)
class PairLine:
    """One non-blank line of a pairs file, as read: the file, its 1-based line number and its bytes."""

    file: str
    lineno: int
    raw: bytes

    @property
    def name(self) -> str:
        """``FILE:LINE``, the name the line is reported and recorded under."""
        return f"{self.file}:{self.lineno}"

    def decode(self) -> Any:
        """The line's JSON value, or :class:`ParseError` saying why it has none."""
        try:
            return json.loads(self.raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise ParseError(f"line is not UTF-8 ({e.reason} at byte {e.start})") from e
        except json.JSONDecodeError as e:
            raise ParseError(f"not JSON: {e.msg} at column {e.colno}") from e

    def paper(self) -> Paper:
        """The line as a Paper (:func:`pair_to_paper`), its image path read relative to the file."""
        return pair_to_paper(self.decode(), Path(self.file).resolve().parent)


def pair_lines(path: str | Path) -> Iterator[PairLine]:
    """Every non-blank line of a pairs file. A file that cannot be opened raises :class:`InputError`."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"no such pairs file: {p}")
    try:
        f = p.open("rb")
    except OSError as e:
        raise InputError(f"cannot open {p}: {e.strerror or e}") from e
    with f:
        for lineno, raw in enumerate(f, 1):
            if raw.strip():
                yield PairLine(str(p), lineno, raw.rstrip(b"\r\n"))


def pair_id_of(record: Any) -> str:
    """The id a decoded line names its figure by (its ``id``, else its ``image``); "" when it has none."""
    if not isinstance(record, dict):
        return ""
    for key in ("id", "image"):
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def save_pair_image(paper: Paper, image_dir: Path) -> Paper:
    """Copy the figure image of a pairs paper (``Figure.image`` absolute, as :func:`pair_to_paper` leaves
    it) into the folder ``image_dir`` and name it by its file name there, as the other readers save figure
    images (the corpus's writer publishes the folder under the paper id). The copy is written under a
    temporary name and renamed into place."""
    figure = paper.figures[0]
    src = Path(figure.image or "")
    name = _UNSAFE.sub("_", src.name).strip("._") or f"figure{src.suffix}"
    folder = Path(image_dir)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.tmp"
    try:
        shutil.copyfile(src, tmp)
        os.replace(tmp, folder / name)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{figure.figure_id}: cannot copy image {src.name}: {e.strerror or e}") from e
    saved = replace(figure, image=name)
    return replace(paper, figures=[saved])


def read_pairs(path: str | Path) -> Iterator[tuple[int, Paper | FiglinkError]]:
    """``(line number, Paper or the error of that line)`` for every non-blank line of a pairs file; a
    figure id that repeats an earlier line's is an error of the later line.

    A file that cannot be opened raises :class:`InputError` (there is no line to blame).
    """
    seen: set[str] = set()
    for line in pair_lines(path):
        try:
            paper = line.paper()
        except FiglinkError as e:
            yield line.lineno, e
            continue
        fid = paper.figures[0].figure_id
        if fid in seen:
            yield line.lineno, ParseError(f"{fid}: id repeats an earlier line")
            continue
        seen.add(fid)
        yield line.lineno, paper

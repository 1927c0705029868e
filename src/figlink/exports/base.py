"""What every export writer shares: the report, the writer interface, and writing a file atomically."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Optional, Protocol

from figlink.model import Paper


class ImageSource(Protocol):
    """Where a writer finds figure images (a :class:`~figlink.corpus.Corpus`)."""

    @property
    def images_dir(self) -> Path: ...

    def image_file(self, rel: str) -> Path: ...


@dataclass
class ExportReport:
    """What an export wrote, what it left out and which figures failed."""

    fmt: str
    out: Path
    figures: int = 0  # figures seen in the corpus (coco, webdataset)
    written: int = 0  # records (jsonl: papers; parquet, medicat, scicap: figures); coco: images; webdataset: samples
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
        """One line for people: what was written where, and for the exports with images what was left out."""
        if self.fmt == "coco":
            what = f"{self.written} images, {self.annotations} panel boxes"
            left = (f"{self.no_image} figures without an image, {self.no_panels} without panels"
                    + (f", {self.dropped_boxes} empty boxes" if self.dropped_boxes else ""))
        elif self.fmt == "webdataset":
            what = f"{self.written} samples in {self.shards} shards"
            left = f"{self.no_image} figures without an image"
        else:
            return f"wrote {self.written} records to {self.out}"
        return (f"wrote {what} to {self.out} ({self.figures} figures; left out: {left}); "
                f"{self.failed} failed")


class ExportWriter:
    """One export format. ``open()``, then ``write(paper)`` for every paper, then ``close()`` → the report;
    ``abort()`` instead of ``close()`` when the export stops early (nothing half-written is left).

    ``out`` is a file, or a folder for the formats with ``folder = True``; ``images`` is where figure
    images are read (the formats with images need it).
    """

    fmt: ClassVar[str]
    folder: ClassVar[bool] = False

    def __init__(self, out: str | Path, images: Optional[ImageSource] = None) -> None:
        self.out = Path(out)
        self.images = images
        self.report = ExportReport(self.fmt, self.out)

    def open(self) -> None:
        raise NotImplementedError

    def write(self, paper: Paper) -> None:
        raise NotImplementedError

    def close(self) -> ExportReport:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError


def temporary(out: Path) -> Path:
    """The hidden temporary file that becomes ``out`` by a rename (its folder is created)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return out.with_name(f".{out.name}.tmp")


class FileWriter(ExportWriter):
    """An export to one file, written as a temporary file and renamed into place by :meth:`close`."""

    def open(self) -> None:
        self.tmp = temporary(self.out)

    def close(self) -> ExportReport:
        os.replace(self.tmp, self.out)
        return self.report

    def abort(self) -> None:
        self.tmp.unlink(missing_ok=True)

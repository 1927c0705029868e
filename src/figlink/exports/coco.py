"""``--format coco``: a COCO detection dataset of subfigures (panel boxes) in a folder.

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
panel box (vision stage off or failed: the image would otherwise read as "no subfigures"). A missing
or unreadable image file is a failure of that figure. Image and annotation entries go to part files as
they come; ``annotations.json`` is written last, through a temporary file and a rename.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from pathlib import Path
from typing import Optional, TextIO

from figlink.errors import InputError
from figlink.exports.base import ExportReport, ExportWriter, ImageSource, temporary
from figlink.exports.images import figures_with_image, place, probe
from figlink.model import Paper

COCO_ANNOTATIONS = "annotations.json"
COCO_CATEGORIES = [{"id": 1, "name": "subfigure", "supercategory": "figure"}]


def coco_box(bbox: list[float], w: int, h: int) -> Optional[list[float]]:
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


class CocoWriter(ExportWriter):
    fmt = "coco"
    folder = True

    def __init__(self, out: str | Path, images: Optional[ImageSource] = None, copy_images: bool = False) -> None:
        super().__init__(out, images)
        self.copy_images = copy_images
        self._parts = {k: self.out / f".{k}.part" for k in ("images", "annotations")}
        self._files: dict[str, TextIO] = {}
        self._licenses: dict[tuple[Optional[str], Optional[str]], int] = {}

    def open(self) -> None:
        if self.images is None:
            raise ValueError("the coco export needs the corpus's images")
        self.out.mkdir(parents=True, exist_ok=True)
        self._images_root = self.images.images_dir.resolve()
        for k, part in self._parts.items():
            self._files[k] = part.open("w", encoding="utf-8")

    def write(self, paper: Paper) -> None:
        assert self.images is not None
        report = self.report
        lic = (paper.license.spdx, paper.license.url)
        for fig, item in figures_with_image(paper, report):
            assert fig.image is not None
            try:
                src = self.images.image_file(fig.image)
                _, w, h = probe(src, fig.image)
            except InputError as e:
                report.failures.append((item, "image", str(e)))
                continue
            boxes = []
            for i, p in enumerate(fig.panels):
                b = coco_box(p.bbox.xyxy(), w, h)
                if b is None:
                    report.dropped_boxes += 1
                else:
                    boxes.append((i, p, b))
            if not boxes:
                report.no_panels += 1
                continue
            file_name = "images/" + src.relative_to(self._images_root).as_posix()
            try:
                place(src, self.out / file_name, self.copy_images)
            except OSError as e:
                report.failures.append((item, "write", f"{file_name}: {e.strerror or e}"))
                continue
            report.written += 1
            self._files["images"].write(("" if report.written == 1 else ",\n") + json.dumps({
                "id": report.written, "file_name": file_name, "width": w, "height": h,
                "license": self._licenses.setdefault(lic, len(self._licenses) + 1),
                "paper_id": paper.paper_id, "figure_id": fig.figure_id, "doi": paper.doi,
                "label": fig.label, "caption": fig.caption,
                "figure_type": fig.figure_type.label if fig.figure_type else None,
                "is_compound": len(boxes) > 1 if fig.is_compound is None else fig.is_compound,
            }, ensure_ascii=False))
            for i, p, (x, y, bw, bh) in boxes:
                report.annotations += 1
                self._files["annotations"].write(("" if report.annotations == 1 else ",\n") + json.dumps({
                    "id": report.annotations, "image_id": report.written, "category_id": 1, "bbox": [x, y, bw, bh],
                    "area": round(bw * bh, 2), "iscrowd": 0,
                    "segmentation": [[x, y, round(x + bw, 2), y, round(x + bw, 2), round(y + bh, 2),
                                      x, round(y + bh, 2)]],
                    "label": p.label, "subcaption": fig.panel_subcaption(p), "score": p.score, "panel_index": i,
                }, ensure_ascii=False))

    def close(self) -> ExportReport:
        from figlink import __version__

        try:
            for f in self._files.values():
                f.close()
            head = {
                "info": {"description": "figlink subfigure (panel) boxes", "version": __version__,
                         "year": time.gmtime().tm_year, "contributor": "figlink",
                         "date_created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                "licenses": [{"id": i, "name": spdx or "unknown", "url": url or ""}
                             for (spdx, url), i in self._licenses.items()],
                "categories": COCO_CATEGORIES,
            }
            dest = self.out / COCO_ANNOTATIONS
            tmp = temporary(dest)
            with tmp.open("w", encoding="utf-8") as f:
                f.write(json.dumps(head, ensure_ascii=False)[:-1] + ',\n"images": [\n')
                with self._parts["images"].open(encoding="utf-8") as part:
                    shutil.copyfileobj(part, f)
                f.write('\n],\n"annotations": [\n')
                with self._parts["annotations"].open(encoding="utf-8") as part:
                    shutil.copyfileobj(part, f)
                f.write("\n]}\n")
            os.replace(tmp, dest)
        finally:
            self._remove_parts()
        return self.report

    def abort(self) -> None:
        for f in self._files.values():
            f.close()
        self._remove_parts()

    def _remove_parts(self) -> None:
        for part in self._parts.values():
            part.unlink(missing_ok=True)

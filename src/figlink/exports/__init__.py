"""Dataset exports of a corpus, one writer per format.

=============  ==========================  ==================================================
format         writer                      writes
=============  ==========================  ==================================================
jsonl          ``records.JsonlWriter``     one Paper JSON per line
parquet        ``parquet.ParquetWriter``   one row per figure, columns derived from the model
medicat        ``records.MedicatWriter``   a MedICaT-style JSON record per figure
scicap         ``records.ScicapWriter``    a SciCap-style JSON record per figure
coco           ``coco.CocoWriter``         subfigure boxes + images (a folder)
webdataset     ``webdataset.WebDatasetWriter``  tar shards of image + JSON + caption (a folder)
=============  ==========================  ==================================================

Every writer has the same interface (:class:`~figlink.exports.base.ExportWriter`: ``open()``,
``write(paper)``, ``close()`` → :class:`ExportReport`, ``abort()``); :func:`export` streams a corpus
through one. Files appear whole or not at all (temporary file + rename). In the exports with images, a
figure whose image is missing or unreadable is one failure line (paper/figure, stage, reason) on the
report and the export goes on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from figlink.corpus import Corpus
from figlink.exports.base import ExportReport, ExportWriter
from figlink.exports.coco import CocoWriter
from figlink.exports.parquet import ParquetWriter
from figlink.exports.records import JsonlWriter, MedicatWriter, ScicapWriter
from figlink.exports.webdataset import WebDatasetWriter, parse_size

WRITERS: dict[str, type[ExportWriter]] = {w.fmt: w for w in (JsonlWriter, ParquetWriter, MedicatWriter, ScicapWriter,
                                                            CocoWriter, WebDatasetWriter)}
FOLDER_FORMATS = {fmt for fmt, w in WRITERS.items() if w.folder}  # --out is a folder; the others write one file


def export(corpus: Corpus, fmt: str, out: str | Path, **options: Any) -> ExportReport:
    """Export every paper of ``corpus`` in format ``fmt`` to ``out`` (options: ``copy_images`` for coco;
    ``shard_size``, ``shard_bytes`` for webdataset). Raises ``ValueError`` for an unknown format or a bad
    option, ``OSError`` when ``out`` cannot be written."""
    if fmt not in WRITERS:
        raise ValueError(f"unknown format {fmt!r}; available: {', '.join(sorted(WRITERS))}")
    writer = WRITERS[fmt](out, corpus, **options)
    writer.open()
    try:
        for paper in corpus.papers():
            writer.write(paper)
        return writer.close()
    except BaseException:
        writer.abort()
        raise


__all__ = ["export", "ExportReport", "ExportWriter", "WRITERS", "FOLDER_FORMATS", "parse_size"]

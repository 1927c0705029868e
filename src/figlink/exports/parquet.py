"""``--format parquet``: one row per figure, its columns derived from the data model.

A row holds the keys of the paper's JSON (all but ``figures`` and ``warnings``) and then every key of the
:class:`~figlink.model.Figure`'s JSON, as :mod:`figlink.model_json` writes them: nested records become
structs, lists become lists, boxes their ``[x0, y0, x1, y1]`` list and its ``_space``, and every column
is nullable. A field added to the model is a column here without any change to this module.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Optional, Union

import pyarrow as pa
import pyarrow.parquet as pq

from figlink.exports.base import ExportReport, FileWriter, ImageSource
from figlink.model import Figure, Paper
from figlink.model_json import json_fields

PAPER_LEFT_OUT = ("figures", "warnings")  # the rows are the figures; warnings are about parsing the paper
_SCALARS = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}


def arrow_type(tp: Any) -> pa.DataType:
    """The Arrow type of a model annotation: ``str``/``int``/``float``/``bool``, ``Optional[X]``, ``list[X]``,
    ``Literal[...]`` (the type of its values) and dataclasses (structs of their fields)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        (inner,) = [a for a in args if a is not type(None)]
        return arrow_type(inner)
    if origin is list:
        return pa.list_(arrow_type(args[0]))
    if origin is Literal:
        return arrow_type(type(args[0]))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return pa.struct(_fields(tp))
    if tp in _SCALARS:
        return _SCALARS[tp]
    raise TypeError(f"no Arrow type for {tp!r}")


def _fields(cls: type, leave_out: tuple[str, ...] = ()) -> list[tuple[str, pa.DataType]]:
    out = []
    for key, tp in json_fields(cls, leave_out):
        try:
            out.append((key, arrow_type(tp)))
        except TypeError as e:
            raise TypeError(f"{cls.__name__}.{key}: {e}") from None
    return out


@lru_cache(maxsize=1)
def figure_schema() -> pa.Schema:
    """The schema of a row: paper fields, then figure fields."""
    return pa.schema(_fields(Paper, PAPER_LEFT_OUT) + _fields(Figure))


def figure_rows(paper: Paper) -> list[dict[str, Any]]:
    """The rows of one paper, one per figure: its JSON keys, then the figure's."""
    head = dataclasses.replace(paper, figures=[], warnings=[]).to_dict()
    meta = {k: v for k, v in head.items() if k not in PAPER_LEFT_OUT}
    return [{**meta, **fig.to_dict(paper)} for fig in paper.figures]


class ParquetWriter(FileWriter):
    """Rows go out in row groups of ``batch`` figures, so memory stays bounded (zstd-compressed)."""

    fmt = "parquet"

    def __init__(self, out: str | Path, images: Optional[ImageSource] = None, batch: int = 5000) -> None:
        super().__init__(out, images)
        self.batch = batch
        self._rows: list[dict[str, Any]] = []
        self._writer: Optional[pq.ParquetWriter] = None

    def open(self) -> None:
        super().open()
        self._writer = pq.ParquetWriter(self.tmp, figure_schema(), compression="zstd")

    def write(self, paper: Paper) -> None:
        for row in figure_rows(paper):
            self._rows.append(row)
            if len(self._rows) >= self.batch:
                self._flush()

    def _flush(self) -> None:
        assert self._writer is not None
        self._writer.write_table(pa.Table.from_pylist(self._rows, figure_schema()))
        self.report.written += len(self._rows)
        self._rows = []

    def close(self) -> ExportReport:
        assert self._writer is not None
        if self._rows:
            self._flush()
        self._writer.close()
        return super().close()

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()
        super().abort()

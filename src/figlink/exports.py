"""Dataset exports of a corpus: JSON lines of papers, and a Parquet table with one row per figure."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from figlink.corpus import Corpus

_REF = pa.struct([("text", pa.string()), ("mention", pa.string()), ("panels", pa.list_(pa.string())),
                  ("section", pa.string())])
FIGURE_SCHEMA = pa.schema([
    ("paper_id", pa.string()), ("doi", pa.string()), ("pmcid", pa.string()), ("title", pa.string()),
    ("license", pa.string()), ("license_open", pa.bool_()), ("figure_id", pa.string()), ("label", pa.string()),
    ("number", pa.string()), ("parent", pa.string()), ("caption", pa.string()), ("image", pa.string()),
    ("inline_refs", pa.list_(_REF)), ("figure_type", pa.string()), ("is_compound", pa.bool_()),
    ("is_medical", pa.bool_()),
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
                    "figure_type": f.figure_type.label if f.figure_type else None,
                    "is_compound": f.is_compound, "is_medical": f.is_medical,
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


EXPORTERS: dict[str, Callable[[Corpus, Path], int]] = {"jsonl": export_jsonl, "parquet": export_parquet}

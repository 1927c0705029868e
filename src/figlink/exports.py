"""Dataset exports of a corpus: papers as JSON lines, one Parquet row per figure, MedICaT- and SciCap-style records."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from figlink.corpus import Corpus
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


EXPORTERS: dict[str, Callable[[Corpus, Path], int]] = {
    "jsonl": export_jsonl, "parquet": export_parquet, "medicat": export_medicat, "scicap": export_scicap}

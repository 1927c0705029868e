"""The JSON-lines exports: papers as figlink records, and one MedICaT- or SciCap-style record per figure."""

from __future__ import annotations

import json
from typing import Any, Iterator, Optional, TextIO

from figlink.exports.base import ExportReport, FileWriter
from figlink.model import Figure, Paper


class JsonLinesWriter(FileWriter):
    """One JSON object per line (UTF-8, not escaped to ASCII): :meth:`records` of each paper."""

    _file: Optional[TextIO] = None

    def records(self, paper: Paper) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def open(self) -> None:
        super().open()
        self._file = self.tmp.open("w", encoding="utf-8")

    def write(self, paper: Paper) -> None:
        assert self._file is not None
        for rec in self.records(paper):
            self._file.write(json.dumps(rec, ensure_ascii=False) + "\n")
            self.report.written += 1

    def close(self) -> ExportReport:
        assert self._file is not None
        self._file.close()
        return super().close()

    def abort(self) -> None:
        if self._file is not None:
            self._file.close()
        super().abort()


class JsonlWriter(JsonLinesWriter):
    """``--format jsonl``: one Paper JSON per line (:meth:`Paper.from_json` reads it back)."""

    fmt = "jsonl"

    def records(self, paper: Paper) -> Iterator[dict[str, Any]]:
        yield paper.to_dict()


def label_caption(f: Figure) -> str:
    """The caption as printed: "Figure 4. Micro-CT of …" (JATS keeps the label apart)."""
    if not f.label:
        return f.caption
    return f"{f.label.rstrip(' .:')}. {f.caption}".strip()


def medicat_record(paper: Paper, f: Figure) -> dict[str, Any]:
    """A MedICaT-style record (its keys, plus figlink's subcaptions and panel-aware references)."""
    return {
        "pdf_hash": paper.paper_id, "fig_key": f"Figure{f.number}" if f.number else f.figure_id,
        "fig_uri": f.image, "s2_caption": label_caption(f), "s2orc_caption": label_caption(f),
        "s2orc_references": [r.text for r in f.inline_refs], "radiology": bool(f.is_medical),
        "oa_info": {"doi": paper.doi, "license": paper.license.spdx, "is_open": paper.license.open},
        "paper_id": paper.paper_id, "figure_id": f.figure_id,
        "inline_refs": [r.to_dict() for r in f.inline_refs],
        "caption_split": f.caption_split.to_dict() if f.caption_split else None,
        "is_compound": f.is_compound, "medical_keywords": f.medical_keywords,
    }


def scicap_record(paper: Paper, f: Figure) -> dict[str, Any]:
    """A SciCap-style record: the caption as extracted, lower-cased without its index, and normalized."""
    norm = f.caption_normalized
    basic = norm.basic if norm else ""
    advanced = norm.advanced if norm else ""
    return {
        "paper-ID": paper.paper_id, "figure-ID": f.image or f.figure_id, "figure_id": f.figure_id,
        "figure-type": f.figure_type.label if f.figure_type else None,
        "contains-subfigure": bool(f.is_compound),
        "0-originally-extracted": label_caption(f),
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


class MedicatWriter(JsonLinesWriter):
    """``--format medicat``: MedICaT-style records, one per figure (``radiology`` is figlink's medical flag)."""

    fmt = "medicat"

    def records(self, paper: Paper) -> Iterator[dict[str, Any]]:
        return (medicat_record(paper, f) for f in paper.figures)


class ScicapWriter(JsonLinesWriter):
    """``--format scicap``: SciCap-style records, one per figure, with SciCap's caption normalizations."""

    fmt = "scicap"

    def records(self, paper: Paper) -> Iterator[dict[str, Any]]:
        return (scicap_record(paper, f) for f in paper.figures)

"""What a searcher holds in memory per index version besides the vectors: each level's document ids and
filter fields as small numpy arrays (figure types and paper ids as integer codes into a vocabulary),
and which panel documents belong to each figure document.

A build computes them once from the ``docs`` table and stores them in the version folder
(``columns.npz`` + ``columns.json``), so loading a version of a million documents takes a fraction of a
second instead of a scan of the table in Python; a version without them is read from the table.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

LEVELS = ("figure", "panel")
_NPZ, _JSON = "columns.npz", "columns.json"


@dataclass
class Columns:
    """One level's documents: ``doc`` ids ascending and their filter fields, aligned."""

    doc: np.ndarray  # int64
    year: np.ndarray  # int32, 0 = unknown
    open: np.ndarray  # int8
    medical: np.ndarray  # int8, -1 = unknown
    figure_type: np.ndarray  # int32 code into figure_types, -1 = none
    paper: np.ndarray  # int32 code into papers
    figure_types: list[str]
    papers: np.ndarray  # object array of paper ids, sorted (codes are positions)

    def __len__(self) -> int:
        return len(self.doc)

    def type_codes(self, labels: tuple[str, ...]) -> np.ndarray:
        return np.asarray([i for i, t in enumerate(self.figure_types) if t in labels], dtype=np.int32)

    def paper_code(self, paper_id: str) -> int:
        """The code of a paper id, or -1 when no document of this level belongs to it."""
        i = int(np.searchsorted(self.papers, paper_id))
        return i if i < len(self.papers) and self.papers[i] == paper_id else -1


@dataclass
class FigurePanels:
    """Figure document id → its panel document ids (compressed rows, figures ascending)."""

    figures: np.ndarray  # int64, ascending
    offsets: np.ndarray  # int64 [len(figures) + 1]
    panels: np.ndarray  # int64
    _by_panel: Optional[tuple[np.ndarray, np.ndarray]] = field(default=None, init=False, repr=False, compare=False)

    def get(self, figure_doc: int, default=()) -> np.ndarray:
        i = int(np.searchsorted(self.figures, figure_doc))
        if i == len(self.figures) or self.figures[i] != figure_doc:
            return np.asarray(default, dtype=np.int64)
        return self.panels[self.offsets[i]:self.offsets[i + 1]]

    def figures_of(self, panel_docs: np.ndarray) -> np.ndarray:
        """The figure document of each panel document (-1 for an id that is no panel of the map)."""
        if self._by_panel is None:  # computed once: panel ids ascending, with their figures
            owner = np.repeat(self.figures, np.diff(self.offsets))
            order = np.argsort(self.panels, kind="stable")  # already ascending when built in order: linear
            self._by_panel = (self.panels[order], owner[order])
        panels, owner = self._by_panel
        docs = np.asarray(panel_docs, dtype=np.int64)
        if not len(panels):
            return np.full(len(docs), -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(panels, docs), len(panels) - 1)
        return np.where(panels[pos] == docs, owner[pos], -1)


_CHUNK = 20_000  # rows fetched at a time when reading the columns


def _integers(db: sqlite3.Connection, sql: str, args: Sequence[Any], width: int) -> np.ndarray:
    """The rows of a query of ``width`` integers as an int64 array, fetched a chunk at a time (no Python
    object per row outlives its chunk, so reading a million documents needs no more than a few MB)."""
    cur = db.execute(sql, args)
    parts = [np.zeros((0, width), dtype=np.int64)]
    while rows := cur.fetchmany(_CHUNK):
        parts.append(np.asarray(rows, dtype=np.int64).reshape(-1, width))
    return np.concatenate(parts)


def _vocab(db: sqlite3.Connection, column: str, level: str, table: str) -> list[str]:
    """The sorted distinct non-null values of a ``docs`` column of one level, also written to the temporary
    table ``table`` (value → code, its position) for the query that codes the rows."""
    values = [v for (v,) in db.execute(f"SELECT DISTINCT {column} FROM docs WHERE level=? AND {column} IS NOT NULL "
                                       f"ORDER BY {column}", (level,))]
    db.execute(f"DROP TABLE IF EXISTS temp.{table}")
    db.execute(f"CREATE TEMP TABLE {table} (value TEXT PRIMARY KEY, code INTEGER NOT NULL)")
    db.executemany(f"INSERT INTO temp.{table} VALUES (?, ?)", ((v, i) for i, v in enumerate(values)))
    return values


def from_db(db: sqlite3.Connection) -> tuple[dict[str, Columns], FigurePanels]:
    """Read the columns of both levels and the figure → panels map from a lexical index file (the codes and
    the map are computed in SQL, the rows read in chunks: memory is the arrays and the vocabularies)."""
    cols: dict[str, Columns] = {}
    for lv in LEVELS:
        type_vocab = _vocab(db, "figure_type", lv, "figlink_types")
        paper_vocab = _vocab(db, "paper_id", lv, "figlink_papers")
        a = _integers(db, "SELECT d.doc, d.year, d.open, d.medical, COALESCE(t.code, -1), p.code FROM docs d "
                          "JOIN temp.figlink_papers p ON p.value = d.paper_id "
                          "LEFT JOIN temp.figlink_types t ON t.value = d.figure_type WHERE d.level=? ORDER BY d.doc",
                      (lv,), 6)
        cols[lv] = Columns(a[:, 0].copy(), a[:, 1].astype(np.int32), a[:, 2].astype(np.int8), a[:, 3].astype(np.int8),
                           a[:, 4].astype(np.int32), a[:, 5].astype(np.int32), type_vocab,
                           np.asarray(paper_vocab, dtype=object))
    db.execute("DROP TABLE temp.figlink_types")
    db.execute("DROP TABLE temp.figlink_papers")
    # each panel with the figure document of its paper and figure id (the last one, were there two)
    pairs = _integers(db, "SELECT p.doc, f.doc FROM docs p JOIN docs f ON f.level='figure' AND f.paper_id=p.paper_id "
                          "AND f.figure_id=p.figure_id WHERE p.level='panel' ORDER BY p.doc, f.doc", (), 2)
    last = np.append(pairs[1:, 0] != pairs[:-1, 0], True) if len(pairs) else np.zeros(0, dtype=bool)
    panel, figure = pairs[last, 0], pairs[last, 1]
    order = np.lexsort((panel, figure))
    figures, first = np.unique(figure[order], return_index=True)
    offsets = np.append(first, len(order)).astype(np.int64)
    return cols, FigurePanels(figures, offsets, panel[order])


def save(folder: Path, cols: dict[str, Columns], panels: FigurePanels) -> None:
    arrays = {f"{lv}.{name}": getattr(c, name) for lv, c in cols.items()
              for name in ("doc", "year", "open", "medical", "figure_type", "paper")}
    arrays.update({"panels.figures": panels.figures, "panels.offsets": panels.offsets, "panels.panels": panels.panels})
    with open(folder / _NPZ, "wb") as f:
        np.savez(f, **arrays)
    (folder / _JSON).write_text(json.dumps({lv: {"figure_types": c.figure_types, "papers": list(c.papers)}
                                            for lv, c in cols.items()}, ensure_ascii=False))


def load(folder: Path, db: Optional[sqlite3.Connection] = None) -> tuple[dict[str, Columns], FigurePanels]:
    """The stored columns of a version, or (an older version without them) read from ``db``."""
    if not (folder / _NPZ).exists() and db is not None:
        return from_db(db)
    vocab = json.loads((folder / _JSON).read_text())
    with np.load(folder / _NPZ) as z:
        cols = {lv: Columns(doc=z[f"{lv}.doc"], year=z[f"{lv}.year"], open=z[f"{lv}.open"], medical=z[f"{lv}.medical"],
                            figure_type=z[f"{lv}.figure_type"], paper=z[f"{lv}.paper"],
                            figure_types=vocab[lv]["figure_types"],
                            papers=np.asarray(vocab[lv]["papers"], dtype=object))
                for lv in LEVELS}
        panels = FigurePanels(z["panels.figures"], z["panels.offsets"], z["panels.panels"])
    return cols, panels

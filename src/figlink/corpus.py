"""The corpus: an embedded SQLite store of papers and figures, plus their extracted images.

This module is the only one that knows the layout of a corpus folder and speaks SQL to it; everything
else (engines, the index builder, exports, the server, the CLI) goes through :class:`Corpus`.

Layout of a corpus folder::

    corpus.sqlite      papers (JSON + columns to query), figures (one row each), inputs done, errors
    images/<paper_id>/ figure images of one paper, moved there whole from .staging/ when it is written
    .staging/<sha256>/ images of the inputs being parsed now (workers write here; emptied at each run's start)
    errors.jsonl       one line per failed input of every run (path, stage, reason), for people and tools

SQLite in WAL mode makes each batch of papers one transaction: a crash or kill mid-run loses at most
the batch in flight and never leaves a half-written record, and readers (search, the server) keep
seeing the last committed state while an ingest writes. Inputs are keyed by the SHA-256 of their
bytes, so a rerun skips what is done and a changed file is ingested again.

Paper ids are unique whatever the file names are (:mod:`figlink.paper_ids`): :meth:`Corpus.claim_id`
gives each natural id to one input path, reports a second copy of the same article as a duplicate, and
numbers a different paper that proposes a taken id (``paper-2``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

from figlink.errors import InputError
from figlink.images import ImageFolder, discard
from figlink.model import Paper
from figlink.paper_ids import is_variant, same_article, variants

SCHEMA_VERSION = 1  # of the tables; each paper's JSON carries its own (figlink.model.SCHEMA_VERSION)
DB_NAME = "corpus.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS papers (
  paper_id TEXT PRIMARY KEY, source TEXT, doi TEXT, pmcid TEXT, title TEXT, journal TEXT, year INTEGER,
  license_spdx TEXT, license_open INTEGER, n_figures INTEGER, input_sha256 TEXT, input_path TEXT,
  added_at REAL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS figures (
  paper_id TEXT NOT NULL, figure_id TEXT NOT NULL, label TEXT, number TEXT, parent TEXT, caption TEXT,
  image TEXT, n_inline_refs INTEGER, n_panels INTEGER, figure_type TEXT, is_compound INTEGER,
  is_medical INTEGER, PRIMARY KEY (paper_id, figure_id));
CREATE TABLE IF NOT EXISTS inputs (
  sha256 TEXT PRIMARY KEY, path TEXT, paper_id TEXT, status TEXT NOT NULL, stage TEXT, reason TEXT, at REAL);
CREATE TABLE IF NOT EXISTS errors (
  id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT, sha256 TEXT, stage TEXT, reason TEXT, at REAL);
CREATE INDEX IF NOT EXISTS figures_by_type ON figures(figure_type);
CREATE INDEX IF NOT EXISTS papers_by_doi ON papers(doi);
CREATE INDEX IF NOT EXISTS papers_by_path ON papers(input_path);
"""


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, streamed."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while True:
            b = f.read(chunk)
            if not b:
                return h.hexdigest()
            h.update(b)


@dataclass(frozen=True)
class Claim:
    """Which id a parsed paper is stored under (see :meth:`Corpus.claim_id`)."""

    paper_id: Optional[str]  # None: the paper is a duplicate and is not stored
    holder: Optional[str] = None  # the input path holding the natural id, when another input holds it

    @property
    def duplicate(self) -> bool:
        return self.paper_id is None


@dataclass
class CorpusStats:
    papers: int
    figures: int
    inline_refs: int
    inputs_done: int
    inputs_failed: int


class Corpus:
    """A corpus folder. Open with ``Corpus(path)``; the writer is the one process that ingests."""

    def __init__(self, root: str | Path, *, readonly: bool = False) -> None:
        self.root = Path(root)
        self.readonly = readonly
        if readonly:
            if not self.db_path.exists():
                raise FileNotFoundError(f"no corpus at {self.root} (expected {self.db_path.name})")
            self.db = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, check_same_thread=False)
        else:
            self.root.mkdir(parents=True, exist_ok=True)
            self.images_dir.mkdir(exist_ok=True)
            self.db = sqlite3.connect(self.db_path, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.db.commit()

    @staticmethod
    def exists(root: str | Path) -> bool:
        """Whether ``root`` holds a corpus."""
        return (Path(root) / DB_NAME).is_file()

    # ------------------------------------------------------------------ paths
    @property
    def db_path(self) -> Path:
        return self.root / DB_NAME

    @property
    def images_dir(self) -> Path:
        return self.root / "images"

    @property
    def errors_log(self) -> Path:
        return self.root / "errors.jsonl"

    def image_dir_for(self, paper_id: str) -> Path:
        return self.images_dir / paper_id

    def image_folder(self) -> ImageFolder:
        """Where the figure images of this corpus are published: ``Figure.image`` is relative to the corpus."""
        return ImageFolder(self.images_dir, f"{self.images_dir.name}/")

    @property
    def staging_root(self) -> Path:
        return self.root / ".staging"

    def staging_dir(self, key: str) -> Path:
        """The folder a worker saves one input's images in (``key``: the input's hash) until the writer
        publishes them under the paper's id."""
        return self.staging_root / key

    def clear_staging(self) -> None:
        """Remove what interrupted runs left in the staging folder (the writer calls this before a run)."""
        discard(self.staging_root)

    def image_file(self, rel: str) -> Path:
        """A figure's image (``rel``, relative to the corpus) as a regular file inside ``<corpus>/images``;
        :class:`~figlink.errors.InputError` saying why otherwise (missing, outside that folder, not a file)."""
        images = self.images_dir.resolve()
        try:
            path = (self.root / rel).resolve(strict=True)
        except (OSError, RuntimeError):
            raise InputError(f"image file missing: {rel}") from None
        if not path.is_relative_to(images):
            raise InputError(f"image path leaves the corpus images folder: {rel}")
        if not path.is_file():
            raise InputError(f"image is not a regular file: {rel}")
        return path

    # ------------------------------------------------------------------ writing
    def is_done(self, sha256: str) -> bool:
        """Whether the input with these bytes (its SHA-256) was ingested without error."""
        return self.db.execute("SELECT 1 FROM inputs WHERE sha256=? AND status='ok'", (sha256,)).fetchone() is not None

    def holder(self, paper_id: str) -> Optional[tuple[str, Optional[str], Optional[str]]]:
        """(input path, PMCID, DOI) of the paper stored under ``paper_id``, or None when the id is free."""
        row = self.db.execute("SELECT input_path, pmcid, doi FROM papers WHERE paper_id=?", (paper_id,)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def paper_id_of(self, path: str) -> Optional[str]:
        """The id of the paper that the input ``path`` gave, if any."""
        row = self.db.execute("SELECT paper_id FROM papers WHERE input_path=?", (path,)).fetchone()
        return None if row is None else row[0]

    def claim_id(self, paper: Paper, path: str) -> Claim:
        """The id to store ``paper`` (parsed from the input ``path``) under, by the rules of
        :mod:`figlink.paper_ids`: its natural id ``paper.paper_id`` when free or held by ``path`` itself (an
        update); the id ``path`` already holds among its numbered variants; else, past ids held by other
        inputs, a duplicate when one of them is the same article (same PMCID or DOI), or the first free
        variant."""
        natural = paper.paper_id
        mine = self.paper_id_of(path)
        first = self.holder(natural)
        if first is None or first[0] == path:
            return Claim(natural)
        if mine is not None and is_variant(mine, natural):
            return Claim(mine, first[0])
        for candidate in variants(natural):
            held = first if candidate == natural else self.holder(candidate)
            if held is None:
                return Claim(candidate, first[0])
            if same_article(paper.pmcid, paper.doi, held[1], held[2]):
                return Claim(None, held[0])
        raise AssertionError("unreachable")  # variants() never ends

    def put_paper(self, paper: Paper, sha256: str, path: str, staged: Optional[Path] = None) -> Paper:
        """Insert or replace a paper and its figures (call inside :meth:`batch`); returns the paper as stored.

        ``staged``: the folder its figure images were saved in; it is moved to ``images/<paper_id>/`` and
        ``Figure.image`` made relative to the corpus. The paper that ``path`` gave before, under another
        id, is removed, and so are the records of older versions of ``path``."""
        now = time.time()
        previous = self.paper_id_of(path)
        if previous is not None and previous != paper.paper_id:
            self.remove_paper(previous)
        if staged is not None:
            paper = self.image_folder().publish(paper, staged)
        self.db.execute("DELETE FROM inputs WHERE path=? AND sha256<>?", (path, sha256))
        self.db.execute("DELETE FROM figures WHERE paper_id=?", (paper.paper_id,))
        self.db.execute(
            "INSERT OR REPLACE INTO papers VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (paper.paper_id, paper.source, paper.doi, paper.pmcid, paper.title, paper.journal, paper.year,
             paper.license.spdx, int(paper.license.open), len(paper.figures), sha256, path, now,
             paper.to_json()))
        self.db.executemany(
            "INSERT OR REPLACE INTO figures VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [(paper.paper_id, f.figure_id, f.label, f.number, f.parent, f.caption, f.image, len(f.inline_refs),
              len(f.panels), f.figure_type.label if f.figure_type else None,
              None if f.is_compound is None else int(f.is_compound),
              None if f.is_medical is None else int(f.is_medical)) for f in paper.figures])
        self.db.execute("INSERT OR REPLACE INTO inputs VALUES (?,?,?,?,?,?,?)",
                        (sha256, path, paper.paper_id, "ok", None, None, now))
        return paper

    def remove_paper(self, paper_id: str) -> None:
        """Delete a paper, its figures and its images folder (call inside :meth:`batch`)."""
        self.db.execute("DELETE FROM figures WHERE paper_id=?", (paper_id,))
        self.db.execute("DELETE FROM papers WHERE paper_id=?", (paper_id,))
        discard(self.image_folder().paper_dir(paper_id))

    def put_error(self, path: str, sha256: Optional[str], stage: str, reason: str) -> None:
        """Record a failed input (call inside :meth:`batch`); also appended to errors.jsonl."""
        now = time.time()
        self.db.execute("INSERT INTO errors (path, sha256, stage, reason, at) VALUES (?,?,?,?,?)",
                        (path, sha256, stage, reason, now))
        if sha256:
            self.db.execute("INSERT OR REPLACE INTO inputs VALUES (?,?,?,?,?,?,?)",
                            (sha256, path, None, "error", stage, reason, now))
        with self.errors_log.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"path": path, "stage": stage, "reason": reason, "at": now}) + "\n")

    def commit(self) -> None:
        self.db.commit()

    def rollback(self) -> None:
        self.db.rollback()

    # ------------------------------------------------------------------ reading
    def paper(self, paper_id: str) -> Optional[Paper]:
        row = self.db.execute("SELECT json FROM papers WHERE paper_id=?", (paper_id,)).fetchone()
        return None if row is None else Paper.from_json(row[0])

    def papers(self) -> Iterator[Paper]:
        """Every paper, in paper_id order, streamed."""
        for (js,) in self.db.execute("SELECT json FROM papers ORDER BY paper_id"):
            yield Paper.from_json(js)

    def papers_with_ids(self, ids: Iterable[str], chunk: int = 500) -> Iterator[Paper]:
        """The papers of ``ids`` that the corpus holds, streamed, in paper_id order within each ``chunk`` ids."""
        ids = list(ids)
        for i in range(0, len(ids), chunk):
            part = ids[i:i + chunk]
            q = f"SELECT json FROM papers WHERE paper_id IN ({','.join('?' * len(part))}) ORDER BY paper_id"
            for (js,) in self.db.execute(q, part):
                yield Paper.from_json(js)

    def fingerprints(self) -> dict[str, str]:
        """paper_id → a fingerprint of its stored record (input hash and time written): it changes whenever
        the paper is written again."""
        cur = self.db.execute("SELECT paper_id, input_sha256, added_at FROM papers")
        return {pid: f"{sha}:{at!r}" for pid, sha, at in cur}

    def paper_ids(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT paper_id FROM papers ORDER BY paper_id")]

    def errors(self) -> list[dict]:
        cur = self.db.execute("SELECT path, stage, reason, at FROM errors ORDER BY id")
        return [{"path": p, "stage": s, "reason": r, "at": a} for p, s, r, a in cur]

    def stats(self) -> CorpusStats:
        q = self.db.execute
        papers = q("SELECT COUNT(*) FROM papers").fetchone()[0]
        figures = q("SELECT COUNT(*) FROM figures").fetchone()[0]
        refs = q("SELECT COALESCE(SUM(n_inline_refs), 0) FROM figures").fetchone()[0]
        done = q("SELECT COUNT(*) FROM inputs WHERE status='ok'").fetchone()[0]
        failed = q("SELECT COUNT(*) FROM inputs WHERE status='error'").fetchone()[0]
        return CorpusStats(papers, figures, refs, done, failed)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Corpus":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

"""A disk cache of expensive per-item features (image features, OCR text, text embeddings).

One SQLite file, ``<dir>/features.sqlite``, maps (kind, key) → bytes. Keys are content hashes (the
SHA-256 of an image file's bytes, or of a text), so a renamed or copied image hits the cache and an
edited one misses it. ``kind`` names the extractor and its version ("effnet-lite0/b15-in/224/v1"); a
changed extractor gets a new kind. Writes are batched transactions (WAL), so an interrupted run keeps
what it finished and two processes can share one cache.

The folder is ``$FIGLINK_CACHE_DIR``, else ``$XDG_CACHE_HOME/figlink``, else ``~/.cache/figlink``; every
command that uses it also takes ``--cache DIR``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

import numpy as np


def default_cache_dir() -> Path:
    """Where features are cached when no folder is given."""
    env = os.environ.get("FIGLINK_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "figlink"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def array_to_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def array_from_bytes(b: bytes) -> np.ndarray:
    return np.load(io.BytesIO(b), allow_pickle=False)


class FeatureCache:
    """(kind, key) → bytes in one SQLite file; ``None`` as the folder disables caching (a no-op cache)."""

    def __init__(self, root: Optional[str | Path] = None, *, enabled: bool = True) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.enabled = enabled
        self._lock = threading.Lock()
        self._db: Optional[sqlite3.Connection] = None
        if enabled:
            self.root.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.root / "features.sqlite", timeout=60, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS items (kind TEXT NOT NULL, key TEXT NOT NULL, "
                             "value BLOB NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID")
            self._db.commit()

    @classmethod
    def disabled(cls) -> "FeatureCache":
        return cls(enabled=False)

    def get_many(self, kind: str, keys: Iterable[str]) -> dict[str, bytes]:
        """The cached values of those keys that are present."""
        if self._db is None:
            return {}
        wanted = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        with self._lock:
            for i in range(0, len(wanted), 500):
                part = wanted[i:i + 500]
                q = f"SELECT key, value FROM items WHERE kind = ? AND key IN ({','.join('?' * len(part))})"
                found.update(self._db.execute(q, [kind, *part]).fetchall())
        return found

    def put_many(self, kind: str, items: Mapping[str, bytes]) -> None:
        """Store values in one transaction (existing keys are replaced)."""
        if self._db is None or not items:
            return
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO items (kind, key, value) VALUES (?, ?, ?)",
                                 [(kind, k, v) for k, v in items.items()])

    def get_arrays(self, kind: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        return {k: array_from_bytes(v) for k, v in self.get_many(kind, keys).items()}

    def put_arrays(self, kind: str, items: Mapping[str, np.ndarray]) -> None:
        self.put_many(kind, {k: array_to_bytes(v) for k, v in items.items()})

    def get_json(self, kind: str, keys: Iterable[str]) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.get_many(kind, keys).items()}

    def put_json(self, kind: str, items: Mapping[str, Any]) -> None:
        self.put_many(kind, {k: json.dumps(v, ensure_ascii=False).encode("utf-8") for k, v in items.items()})

    def count(self, kind: str) -> int:
        if self._db is None:
            return 0
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM items WHERE kind = ?", (kind,)).fetchone()[0])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> "FeatureCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

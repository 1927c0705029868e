"""Index versions on disk: readers never see a half-written index.

``<corpus>/index/`` holds immutable version folders ``v000001``, ``v000002``, … and a ``CURRENT`` file
naming the published one. A build writes a new folder under a temporary name, renames it into place,
then replaces ``CURRENT`` atomically (``os.replace``); readers read ``CURRENT`` and open that folder.
One builder at a time holds ``.lock``. The previous version is kept so that readers still on it
finish their queries; older ones are removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
from pathlib import Path
from typing import Iterator, Optional

FORMAT = 1
KEEP_VERSIONS = 2
_VERSION = re.compile(r"^v(\d{6})$")


def index_dir(corpus_dir: str | Path) -> Path:
    return Path(corpus_dir) / "index"


def current(root: Path) -> Optional[str]:
    """The published version's folder name, or None when no index is published."""
    try:
        name = (root / "CURRENT").read_text().strip()
    except FileNotFoundError:
        return None
    return name if _VERSION.match(name) and (root / name).is_dir() else None


def read_manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def next_version(root: Path) -> str:
    nums = [int(m.group(1)) for p in root.iterdir() if (m := _VERSION.match(p.name))] if root.is_dir() else []
    return f"v{max(nums, default=0) + 1:06d}"


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[None]:
    """Exclusive lock for one builder (blocks while another build runs)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(root: Path, tmp: Path, name: str) -> None:
    """Move a finished temporary folder into place as ``name`` and point CURRENT at it."""
    for p in tmp.iterdir():
        with open(p, "rb") as f:
            os.fsync(f.fileno())
    os.rename(tmp, root / name)
    pointer = root / f".CURRENT.{os.getpid()}"
    pointer.write_text(name + "\n")
    with open(pointer, "rb") as f:
        os.fsync(f.fileno())
    os.replace(pointer, root / "CURRENT")
    _fsync_dir(root)
    collect(root, keep=KEEP_VERSIONS)


def collect(root: Path, keep: int = KEEP_VERSIONS) -> None:
    """Remove all but the newest ``keep`` versions and any leftover temporary folders."""
    cur = current(root)
    versions = sorted(p.name for p in root.iterdir() if _VERSION.match(p.name))
    for name in versions[:-keep]:
        if name != cur:
            shutil.rmtree(root / name, ignore_errors=True)
    for p in root.glob(".tmp-*"):
        shutil.rmtree(p, ignore_errors=True)

"""Model directories: a manifest with a format version and a kind, next to the weights.

``<dir>/figlink-model.json``::

    {"format": "figlink-model", "format_version": 1, "kind": "matcher", "backend": "dual-encoder",
     "config": {...}, "metrics": {...}, "training": {...}}

and the weights (``weights.safetensors`` for the built-in dual encoder). :func:`read_manifest` refuses a
folder that is not a figlink model, one written by another format version, or one of another kind,
each with a message that says which; :func:`load_matcher` then builds the model and refuses weights that
do not fit its config.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Optional

from figlink.errors import FiglinkError

MANIFEST = "figlink-model.json"
FORMAT = "figlink-model"
FORMAT_VERSION = 1
WEIGHTS = "weights.safetensors"


class ModelError(FiglinkError):
    """A model directory that cannot be used with this figlink."""

    stage = "model"


def read_manifest(path: str | Path, kind: str) -> dict[str, Any]:
    """The manifest of a model directory of ``kind`` in this format version, or :class:`ModelError`."""
    folder = Path(path)
    if not folder.is_dir():
        raise ModelError(f"no model directory at {folder}")
    mpath = folder / MANIFEST
    if not mpath.is_file():
        raise ModelError(f"{folder} is not a figlink model directory (no {MANIFEST})")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelError(f"{mpath} is unreadable: {e}") from e
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelError(f"{mpath} is not a figlink model manifest")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise ModelError(f"{folder} is a figlink model of format version {version}; this figlink reads version "
                         f"{FORMAT_VERSION} (retrain it, or use the figlink release that wrote it)")
    if manifest.get("kind") != kind:
        raise ModelError(f"{folder} is a {manifest.get('kind')!r} model, not a {kind!r} model")
    return manifest


def write_model_dir(path: str | Path, kind: str, backend: str, config: dict[str, Any],
                    files: dict[str, bytes], extra: Optional[dict[str, Any]] = None) -> Path:
    """Write a model directory whole: into a temporary sibling, then renamed into place (replacing it)."""
    folder = Path(path)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    tmp.chmod(0o755)
    try:
        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "kind": kind, "backend": backend,
                    "config": config, **(extra or {})}
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        if folder.exists():
            old = folder.with_name(f".{folder.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(folder, old)
            os.replace(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder

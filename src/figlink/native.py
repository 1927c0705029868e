"""Compiled builds of figlink's hot pure-Python modules, used only while they match the sources.

``python -m figlink.native_build`` (run by ``make setup``) compiles :data:`MODULES` with mypyc into
:data:`FOLDER` (``src/figlink/_native/``, ignored by git), not beside the ``.py`` files: an extension module
next to its source would be imported in its place, and run the old code after every later edit. The build
writes a manifest: the compiled modules and their files, the interpreter's cache tag, and a SHA-256 of the
source files the build read (the compiled modules and every figlink module they import, directly or not).

:func:`install` (run when ``figlink`` is imported) puts a :class:`NativeFinder` first on ``sys.meta_path``
when a manifest exists. On the first import of a compiled module the finder decides once for the process:
the same interpreter and the same digest → every compiled module; anything else (a source edited since the
build, another Python, ``FIGLINK_NATIVE=0``) → none, the ``.py`` files as without a build. All or none,
because the compiled modules of one build call each other directly: a new ``.py`` among old compiled
modules would still run the old code.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ExtensionFileLoader, ModuleSpec
from pathlib import Path
from typing import Any, Optional, Sequence

# what the profile of `figlink parse` names (inline references, sentences, mentions, the caption stage)
MODULES = ("figlink.ingest.jats_refs", "figlink.text.caption_clauses", "figlink.text.caption_sentences",
           "figlink.text.compound", "figlink.text.grammar", "figlink.text.keywords", "figlink.text.label_roles",
           "figlink.text.labels", "figlink.text.mentions", "figlink.text.normalize", "figlink.text.sentences",
           "figlink.text.spatial", "figlink.text.subcaptions")
PACKAGE = Path(__file__).resolve().parent  # src/figlink
FOLDER = PACKAGE / "_native"
MANIFEST = "manifest.json"


def sources_digest(package: Path, files: Sequence[str]) -> str:
    """SHA-256 over ``files`` (paths relative to the folder holding the ``figlink`` package), names and
    bytes; a missing file counts as empty, under its name."""
    import hashlib

    h = hashlib.sha256()
    for rel in files:
        h.update(rel.encode() + b"\0")
        try:
            h.update(hashlib.sha256((package.parent / rel).read_bytes()).digest())
        except OSError:
            h.update(b"missing")
    return h.hexdigest()


def read_manifest(folder: Path) -> Optional[dict[str, Any]]:
    """The manifest of the build in ``folder``; None when there is none or it cannot be read."""
    import json

    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def matches_sources(manifest: dict[str, Any], package: Path = PACKAGE) -> bool:
    """Whether a build's ``manifest`` was made by this interpreter from the sources as they are now."""
    return (manifest.get("cache_tag") == sys.implementation.cache_tag
            and manifest.get("digest") == sources_digest(package, manifest.get("sources", [])))


class NativeFinder:
    """A ``sys.meta_path`` finder for the modules a build compiled (``manifest["files"]``: module name → file
    in ``folder``), used only while ``manifest`` matches the sources under ``package``."""

    def __init__(self, folder: Path, manifest: dict[str, Any], package: Path = PACKAGE) -> None:
        self.folder = folder
        self.manifest = manifest
        self.package = package
        self._current: Optional[bool] = None

    def current(self) -> bool:
        """Whether the build matches this interpreter and the sources now (decided once)."""
        if self._current is None:
            self._current = os.environ.get("FIGLINK_NATIVE", "1") != "0" and matches_sources(self.manifest, self.package)
        return self._current

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Optional[ModuleSpec]:
        file = self.manifest.get("files", {}).get(name)
        if file is None or not self.current():
            return None
        location = str(self.folder / file)
        return ModuleSpec(name, ExtensionFileLoader(name, location), origin=location)


def install(folder: Path = FOLDER) -> Optional[NativeFinder]:
    """Put the finder of the build in ``folder`` first on ``sys.meta_path`` (once); None without a build."""
    for finder in sys.meta_path:
        if isinstance(finder, NativeFinder):
            return finder
    if not (folder / MANIFEST).is_file():  # no build: nothing more to import or read
        return None
    manifest = read_manifest(folder)
    if manifest is None:
        return None
    finder = NativeFinder(folder, manifest)
    sys.meta_path.insert(0, finder)
    return finder


def compiled() -> list[str]:
    """The figlink modules imported from a compiled build in this process."""
    return sorted(name for name in MODULES
                  if isinstance(getattr(getattr(sys.modules.get(name), "__spec__", None), "loader", None),
                                ExtensionFileLoader))


__all__ = ["FOLDER", "MODULES", "NativeFinder", "compiled", "install", "matches_sources", "read_manifest",
           "sources_digest"]

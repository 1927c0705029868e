"""``python -m figlink.native_build``: compile :data:`figlink.native.MODULES` with mypyc (optional).

The build runs mypy with the project's settings (``pyproject.toml``) over the modules, compiles them with
the C compiler into a temporary folder, then replaces :data:`figlink.native.FOLDER` with the extension
files and a manifest (:mod:`figlink.native` says how the manifest keeps an old build from running after an
edit). A build whose manifest already matches the sources and the compiler settings (:func:`settings`) is
kept as it is (:func:`is_current`; ``--force`` rebuilds it). Without mypyc or a C compiler it says so on one
line and exits 1; figlink then runs the ``.py`` files, with the same output. ``--clean`` removes the build.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from figlink.native import FOLDER, MANIFEST, MODULES, PACKAGE, matches_sources, read_manifest, sources_digest

GROUP = "figlink_native"  # the shared library of the compiled modules: figlink_native__mypyc


def module_file(name: str, package: Path = PACKAGE) -> str:
    """The source of figlink module ``name``, relative to the folder that holds the package."""
    rel = Path(*name.split("."))
    return str(rel / "__init__.py") if (package.parent / rel).is_dir() else str(rel.with_suffix(".py"))


def _imports(source: str, name: str) -> set[str]:
    """The figlink modules (or packages) that ``source`` (module ``name``) imports anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package
                base = ".".join(name.split(".")[:-node.level] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # the names that are modules
    return {m for m in found if m == "figlink" or m.startswith("figlink.")}


def dependencies(modules: tuple[str, ...], package: Path = PACKAGE) -> list[str]:
    """Source files of ``modules``, of every figlink module they import (directly or not) and of the
    packages that hold them (sorted): what a compiled build depends on. A package reached only as the
    parent of a module is read but not followed: its own imports are not the module's."""
    seen: set[str] = set()
    files: set[str] = set()
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = package.parent / module_file(name, package)
        if not path.is_file():  # a name imported from a module, not a module
            continue
        files.add(module_file(name, package))
        parts = name.split(".")
        files.update(module_file(".".join(parts[:i]), package) for i in range(1, len(parts)))
        todo.extend(_imports(path.read_text(encoding="utf-8"), name) - seen)
    return sorted(files)


# Run in a fresh interpreter, from the checkout (mypy reads pyproject.toml there and names the modules from
# their paths: src/figlink/text/labels.py is figlink.text.labels), without figlink's folder on sys.path or
# PYTHONPATH (an editable install puts it there): mypy takes those folders for installed packages and, with
# the files it compiles among them, misreads their types ("Cannot determine type").
_COMPILE = """
import os, sys
from pathlib import Path
src, work, group, opt, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(src)]
from mypyc.build import mypycify
from setuptools import Distribution
ext = mypycify(["--cache-dir", os.path.join(work, "mypy"), *files], opt_level=opt, group_name=group,
               target_dir=os.path.join(work, "c"))
dist = Distribution({"name": "figlink-native", "ext_modules": ext})
cmd = dist.get_command_obj("build_ext")
cmd.build_lib, cmd.build_temp = os.path.join(work, "lib"), os.path.join(work, "tmp")
dist.run_command("build_ext")
"""


def _root() -> Path:
    """The checkout (where pyproject.toml is), else the folder holding the package."""
    return PACKAGE.parent.parent if (PACKAGE.parent.parent / "pyproject.toml").is_file() else PACKAGE.parent


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return ""


def settings(opt_level: str = "3") -> dict[str, Any]:
    """What a build depends on besides its sources: the modules compiled, the interpreter, the mypy (mypyc)
    and setuptools versions, the optimization level, the C compiler's variables and mypy's settings (a
    SHA-256 of pyproject.toml)."""
    project = _root() / "pyproject.toml"
    return {"modules": list(MODULES), "group": GROUP, "python": sys.version, "executable": sys.executable,
            "mypy": _version("mypy"), "setuptools": _version("setuptools"), "opt_level": opt_level,
            "env": {k: os.environ.get(k, "") for k in ("CC", "CFLAGS", "LDSHARED", "LDFLAGS")},
            "pyproject": hashlib.sha256(project.read_bytes()).hexdigest() if project.is_file() else ""}


def is_current(folder: Path, want: dict[str, Any], package: Path = PACKAGE) -> bool:
    """Whether the build in ``folder`` was made with the settings ``want`` from the sources as they are now
    (the same files, the same bytes), and all its extension files are there: then building again would make
    the same files."""
    manifest = read_manifest(folder)
    if manifest is None:
        return False
    sources = manifest.get("sources")
    files = manifest.get("files")
    return (isinstance(sources, list) and isinstance(files, dict) and manifest.get("settings") == want
            and all(m in files for m in want["modules"])  # (files also names the group's shared library)
            and sources == dependencies(tuple(want["modules"]), package)
            and matches_sources(manifest, package)
            and all((folder / f).is_file() for f in files.values()))


def build(folder: Path = FOLDER, opt_level: str = "3") -> dict:
    """Compile :data:`MODULES` into ``folder`` (replacing what it held); the manifest written."""
    root = _root()
    want = settings(opt_level)
    files = [str((PACKAGE.parent / module_file(m)).relative_to(root)) for m in MODULES]
    sources = dependencies(MODULES)
    digest = sources_digest(PACKAGE, sources)  # before the build: an edit during it makes the build stale
    with tempfile.TemporaryDirectory(prefix="figlink-native-") as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run([sys.executable, "-c", _COMPILE, str(PACKAGE.parent), str(work), GROUP, opt_level,
                               *files], cwd=root, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            errors = [line for line in (done.stdout + done.stderr).splitlines() if "error" in line.lower()]
            raise RuntimeError("; ".join(errors[:3]) or f"the compiler exited with {done.returncode}")
        built: dict[str, str] = {}  # module name → its file, relative to the build's folder
        for so in (work / "lib").rglob("*.so"):
            parts = so.relative_to(work / "lib").parts
            built[".".join(parts[:-1] + (parts[-1].split(".")[0],))] = "/".join(parts)
        missing = [m for m in MODULES if m not in built]
        if missing:
            raise RuntimeError(f"the build made no extension for {', '.join(missing)}")
        staged = Path(tempfile.mkdtemp(prefix="_native-", dir=folder.parent))
        for file in built.values():
            (staged / file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(work / "lib" / file, staged / file)
    manifest = {"cache_tag": sys.implementation.cache_tag, "files": built, "sources": sources, "digest": digest,
                "settings": want}
    (staged / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    staged.rename(folder)
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m figlink.native_build", description=__doc__.splitlines()[0])
    ap.add_argument("--clean", action="store_true", help="remove the compiled build")
    ap.add_argument("--force", action="store_true", help="build even when the build matches the sources")
    args = ap.parse_args(argv)
    if args.clean:
        shutil.rmtree(FOLDER, ignore_errors=True)
        return 0
    if not args.force and is_current(FOLDER, settings()):
        print(f"the compiled build in {FOLDER} matches the sources and settings: nothing to do (--force rebuilds)")
        return 0
    try:
        manifest = build()
    except Exception as e:  # no mypyc, no C compiler, a type error: the .py files run
        print(f"note: no compiled build ({type(e).__name__}: {' '.join(str(e).split())[:300]}); "
              "figlink runs its .py files", file=sys.stderr)
        return 1
    print(f"compiled {len(MODULES)} modules into {FOLDER} (sources: {len(manifest['sources'])} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

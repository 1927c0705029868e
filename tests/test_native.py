"""Compiled builds (mypyc) of the hot text modules: used only while they match the sources, all or none."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import ExtensionFileLoader
from pathlib import Path

import pytest

from figlink import native
from figlink.native import NativeFinder, sources_digest
from figlink import native_build
from figlink.native_build import dependencies, is_current, settings

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"


def test_the_sources_of_a_build_are_its_modules_and_the_figlink_modules_they_import():
    # mentions.py imports figlink.text.grammar (read by hand); grammar imports no figlink module
    assert dependencies(("figlink.text.grammar",)) == ["figlink/__init__.py", "figlink/text/__init__.py",
                                                      "figlink/text/grammar.py"]
    deps = dependencies(("figlink.text.mentions",))
    assert "figlink/text/mentions.py" in deps and "figlink/text/grammar.py" in deps
    every = dependencies(native.MODULES)
    assert "figlink/ingest/jats_refs.py" in every and "figlink/model.py" in every  # jats_refs builds Figure records
    assert all((SRC / f).is_file() for f in every)


def _copy(tmp_path: Path, files: list[str]) -> Path:
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SRC / f, tmp_path / f)
    return tmp_path / "figlink"


def test_a_build_is_used_only_while_it_matches_the_sources_and_this_interpreter(tmp_path, monkeypatch):
    monkeypatch.delenv("FIGLINK_NATIVE", raising=False)
    sources = dependencies(("figlink.text.mentions",))
    package = _copy(tmp_path, sources)
    folder = tmp_path / "_native"
    manifest = {"cache_tag": sys.implementation.cache_tag, "digest": sources_digest(package, sources),
                "sources": sources, "files": {"figlink.text.mentions": "figlink/text/mentions.so"}}

    spec = NativeFinder(folder, manifest, package).find_spec("figlink.text.mentions")
    assert spec is not None and isinstance(spec.loader, ExtensionFileLoader)
    assert spec.origin == str(folder / "figlink/text/mentions.so")
    assert NativeFinder(folder, manifest, package).find_spec("figlink.text.labels") is None  # not in the build
    other_python = {**manifest, "cache_tag": "cpython-0"}
    assert NativeFinder(folder, other_python, package).find_spec("figlink.text.mentions") is None
    monkeypatch.setenv("FIGLINK_NATIVE", "0")
    assert NativeFinder(folder, manifest, package).find_spec("figlink.text.mentions") is None
    monkeypatch.delenv("FIGLINK_NATIVE")
    # an edit of a source the build read, even one not compiled (grammar), leaves every compiled module out
    grammar = package / "text" / "grammar.py"
    grammar.write_text(grammar.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert NativeFinder(folder, manifest, package).find_spec("figlink.text.mentions") is None


@pytest.mark.skipif(not (native.FOLDER / native.MANIFEST).is_file(), reason="no compiled build (make setup makes one)")
def test_the_compiled_build_gives_the_same_papers_as_the_py_files():
    code = ("import json, sys; from figlink import native; from figlink.pipeline import process_source; "
            "out = [process_source(p).to_json() for p in sys.argv[1:]]; print(json.dumps([native.compiled(), out]))")
    papers = [str(p) for p in sorted((REPO / "samples" / "jats").glob("*.*xml"))]
    runs = {}
    for flag in ("1", "0"):
        env = {**os.environ, "PYTHONPATH": str(SRC), "FIGLINK_NATIVE": flag}
        runs[flag] = json.loads(subprocess.run([sys.executable, "-c", code, *papers], env=env, check=True,
                                               capture_output=True, text=True).stdout)
    manifest = json.loads((native.FOLDER / native.MANIFEST).read_text(encoding="utf-8"))
    if manifest["digest"] != sources_digest(native.PACKAGE, manifest["sources"]):
        assert runs["1"][0] == []  # an old build: not used
    else:
        assert runs["1"][0] == sorted(native.MODULES)
    assert runs["0"][0] == [] and runs["1"][1] == runs["0"][1] and len(runs["0"][1]) == 7


def _fake_build(folder: Path, package: Path, want: dict) -> dict:
    """A build folder as ``native_build.build`` leaves it (empty files for the extensions), for ``want``."""
    modules = tuple(want["modules"])
    sources = dependencies(modules, package)
    files = {m: m.replace(".", "/") + ".so" for m in modules}
    files[native_build.GROUP + "__mypyc"] = native_build.GROUP + "__mypyc.so"  # the modules' shared library
    for f in files.values():
        (folder / f).parent.mkdir(parents=True, exist_ok=True)
        (folder / f).write_bytes(b"")
    manifest = {"cache_tag": sys.implementation.cache_tag, "files": files, "sources": sources,
                "digest": sources_digest(package, sources), "settings": want}
    (folder / native.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return manifest


def test_a_build_is_current_only_for_the_same_sources_settings_and_extension_files(tmp_path):
    want = {**settings(), "modules": ["figlink.text.mentions"]}
    package = _copy(tmp_path, dependencies(("figlink.text.mentions",)))
    folder = tmp_path / "_native"
    _fake_build(folder, package, want)
    assert is_current(folder, want, package)
    assert not is_current(folder, {**want, "opt_level": "2"}, package)  # another compiler setting
    assert not is_current(folder, {**want, "mypy": "0.0"}, package)  # another mypyc
    assert not is_current(tmp_path / "elsewhere", want, package)  # no build
    so = folder / "figlink/text/mentions.so"
    so.unlink()
    assert not is_current(folder, want, package)  # an extension file gone
    so.write_bytes(b"")
    grammar = package / "text" / "grammar.py"  # a source the build read, not compiled itself
    grammar.write_text(grammar.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert not is_current(folder, want, package)


def test_make_native_skips_a_build_that_matches_and_rebuilds_on_force(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "_native"
    _fake_build(folder, native.PACKAGE, settings())  # as if built from the sources of this checkout
    calls = []
    monkeypatch.setattr(native_build, "FOLDER", folder)
    monkeypatch.setattr(native_build, "build", lambda: calls.append(1) or json.loads(
        (folder / native.MANIFEST).read_text(encoding="utf-8")))
    assert native_build.main([]) == 0 and calls == []
    assert "nothing to do" in capsys.readouterr().out
    assert native_build.main(["--force"]) == 0 and calls == [1]
    manifest = json.loads((folder / native.MANIFEST).read_text(encoding="utf-8"))
    (folder / native.MANIFEST).write_text(json.dumps({**manifest, "digest": "0" * 64}), encoding="utf-8")
    assert native_build.main([]) == 0 and calls == [1, 1]  # a stale build is built again

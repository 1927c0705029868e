"""The shape of the code: no import cycles, between modules or between the parts of figlink."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules() -> dict[str, Path]:
    out = {}
    for path in (SRC / "figlink").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """figlink module → the figlink modules it imports, anywhere in its body (imports inside functions too)."""
    mods = _modules()

    def known(name: str) -> str:
        while name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            graph[mod].update(known(n) for n in names if n == "figlink" or n.startswith("figlink."))
        graph[mod].discard(mod)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    assert "figlink.enrich.vision" in graph["figlink.enrich"]  # imported inside figure_stages()
    assert "figlink.ingest.jats" in graph["figlink.ingest"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_between_modules() -> None:
    assert cycles(import_graph()) == []


def test_no_import_cycle_between_the_parts_of_figlink() -> None:
    """Parts are the subpackages and top-level modules (``figlink.vision``, ``figlink.corpus``…): the layers
    of the pipeline. The package's own ``__init__`` (the public API, which reaches every part) is left out."""
    def part(mod: str) -> str:
        return ".".join(mod.split(".")[:2])

    parts: dict[str, set[str]] = {}
    for mod, deps in import_graph().items():
        if mod != "figlink":
            parts.setdefault(part(mod), set()).update(part(d) for d in deps if d != "figlink" and part(d) != part(mod))
    assert cycles(parts) == []


def _trees() -> dict[str, ast.AST]:
    return {mod: ast.parse(path.read_text(encoding="utf-8")) for mod, path in _modules().items()}


def test_only_the_corpus_knows_its_database_file() -> None:
    naming = []
    for mod, tree in _trees().items():
        strings = (n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))
        if mod != "figlink.corpus" and any("corpus.sqlite" in s for s in strings):
            naming.append(mod)
    assert naming == []


def test_no_module_changes_pils_pixel_limit() -> None:
    """``Image.MAX_IMAGE_PIXELS`` is one setting for the whole process: changing it is not thread-safe
    (:func:`figlink.vision.image_io.open_image` opens large images without it)."""
    setters = []
    for mod, tree in _trees().items():
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                if any(isinstance(t, ast.Attribute) and t.attr == "MAX_IMAGE_PIXELS" for t in names):
                    setters.append(mod)
    assert setters == []

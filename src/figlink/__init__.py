"""figlink: figures in context from scientific papers.

>>> import figlink
>>> paper = figlink.parse("article.nxml")
>>> paper.figures[0].inline_refs[0].panels
>>> report = figlink.build(["papers/"], "corpus/", engine="local", workers=4)
>>> figlink.search("lung cyst CT", "corpus/", level="panel")[0].panel
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from figlink.builder import BuildReport, build
    from figlink.errors import FiglinkError, InputError, ParseError
    from figlink.ingest import parse
    from figlink.model import (CaptionSplit, Figure, FigureType, InlineRef, License, OcrText, Panel, Paper,
                               Subcaption)

# public name -> module that defines it; imported on first use, so that a command (``figlink parse``) or a
# worker pays only for the modules it runs
_LAZY = {"BuildReport": "figlink.builder", "build": "figlink.builder",
         "FiglinkError": "figlink.errors", "InputError": "figlink.errors", "ParseError": "figlink.errors",
         "parse": "figlink.ingest",
         **{name: "figlink.model" for name in ("CaptionSplit", "Figure", "FigureType", "InlineRef", "License",
                                               "OcrText", "Panel", "Paper", "Subcaption")}}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"


def _install_native() -> None:
    """Compiled builds of the hot text modules, where `make setup` made one and it matches the sources."""
    from figlink.native import install

    install()


_install_native()


def search(query: str, corpus: str, k: int = 10, level: str = "figure", filters: dict | None = None) -> list:
    """Search a corpus's index: ``figlink.search("lung cyst CT", "corpus/", level="panel")`` → hits."""
    from figlink.index import search as _search

    return _search(query, corpus, k=k, level=level, filters=filters)

__all__ = ["parse", "build", "search", "BuildReport", "Paper", "Figure", "InlineRef", "CaptionSplit", "Subcaption",
           "Panel", "OcrText", "FigureType", "License", "FiglinkError", "InputError", "ParseError", "__version__"]

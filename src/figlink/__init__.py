"""figlink: figures in context from scientific papers.

>>> import figlink
>>> paper = figlink.parse("article.nxml")
>>> paper.figures[0].inline_refs[0].panels
>>> report = figlink.build(["papers/"], "corpus/", engine="local", workers=4)
>>> figlink.search("lung cyst CT", "corpus/", level="panel")[0].panel
"""

from figlink.builder import BuildReport, build
from figlink.errors import FiglinkError, InputError, ParseError
from figlink.ingest import parse
from figlink.model import (CaptionSplit, Figure, FigureType, InlineRef, License, OcrText, Panel, Paper,
                           Subcaption)

__version__ = "0.1.0"


def search(query: str, corpus: str, k: int = 10, level: str = "figure", filters: dict | None = None) -> list:
    """Search a corpus's index: ``figlink.search("lung cyst CT", "corpus/", level="panel")`` → hits."""
    from figlink.index import search as _search

    return _search(query, corpus, k=k, level=level, filters=filters)

__all__ = ["parse", "build", "search", "BuildReport", "Paper", "Figure", "InlineRef", "CaptionSplit", "Subcaption",
           "Panel", "OcrText", "FigureType", "License", "FiglinkError", "InputError", "ParseError", "__version__"]

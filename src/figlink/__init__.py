"""figlink: figures in context from scientific papers.

>>> import figlink
>>> paper = figlink.parse("article.nxml")
>>> paper.figures[0].inline_refs[0].panels
"""

from figlink.errors import FiglinkError, InputError, ParseError
from figlink.ingest import parse
from figlink.model import (CaptionSplit, Figure, FigureType, InlineRef, License, OcrText, Panel, Paper,
                           Subcaption)

__version__ = "0.1.0"

__all__ = ["parse", "Paper", "Figure", "InlineRef", "CaptionSplit", "Subcaption", "Panel", "OcrText",
           "FigureType", "License", "FiglinkError", "InputError", "ParseError", "__version__"]

"""Figure- and panel-level search: documents, lexical (FTS5 BM25) and dense (MiniLM) signals, fusion,
versioned on-disk indexes, and the :class:`Searcher`.

>>> from figlink.index import build_index, search
>>> build_index("corpus/")
>>> search("lung cyst CT", "corpus/", level="panel")[0].panel
"""

from figlink.index.build import IndexReport, build_index
from figlink.index.filters import Filters
from figlink.index.searcher import Hit, IndexMissing, Searcher, search

__all__ = ["build_index", "IndexReport", "Filters", "Hit", "IndexMissing", "Searcher", "search"]

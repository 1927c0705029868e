"""Filters resolved once per index version: the :class:`~figlink.index.selection.Selection` a filter
gives on one level (its mask over the level's documents, its count, and what the signals derive from
it: a vector set's row bitmap, the allowed ids for the lexical SQL), kept in a small LRU.

A UI keeps a facet while the query changes, so the same filter comes again and again; resolving it
costs a few milliseconds a level at a million documents. One cache belongs to one loaded index version
(it is created with the version and dropped with it), so a new version never sees an old one's masks.
Memory: about 1 byte per document of the level for the mask, 1 bit per vector row for a bitmap (or 8
bytes per allowed row when the filter is searched exactly), plus about 8 bytes per allowed document
(their ids as JSON) when the lexical signal puts the allowed ids into its SQL. At 1M panels / 400k figures
the benchmark's 12 filters held 37 MB on both levels (1.5 MB per filter and level; measured while the ids
were also kept as an array), so ``FILTER_CACHE`` = 64 entries (32 filters at both levels) hold about
100 MB.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Optional

from figlink.index.filters import Filters
from figlink.index.selection import Selection

FILTER_CACHE = 64  # (level, filter) entries remembered per index version


class FilterCache:
    """An LRU of resolved filters, keyed by level and normalized filter. Safe to share between threads."""

    def __init__(self, size: int = FILTER_CACHE) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, Filters], Optional[Selection]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, level: str, f: Filters, build: Callable[[], Optional[Selection]]) -> Optional[Selection]:
        """The selection of ``f`` on ``level``: remembered, or ``build()`` (then remembered)."""
        key = (level, f.normalized())
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
            self.misses += 1
        sel = build()  # outside the lock: two threads may build the same one, and both are right
        with self._lock:
            self._items[key] = sel
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return sel

    def __len__(self) -> int:
        return len(self._items)

    def nbytes(self) -> int:
        """Memory the remembered selections hold (an upper bound: a mask shared by two parts counts twice)."""
        with self._lock:
            items = list(self._items.values())
        return sum(s.nbytes() for s in items if s is not None)

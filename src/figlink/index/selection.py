"""A filter resolved against one level's documents: which document ids it lets through, as a boolean
mask aligned with the level's ascending document ids (:class:`figlink.index.columns.Columns`), with
how many pass. Both signals read it: the lexical one checks its candidates against it, the dense one
turns it into a row bitmap for the IVF scan or searches the allowed rows exactly.

What the signals derive from it (the count, the allowed ids as JSON, a vector set's row bitmap) is computed on
first use and kept on the selection, so a selection cached per index version
(:mod:`figlink.index.filter_cache`) costs nothing the next time its filter comes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, TypeVar

import numpy as np

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Selection:
    """The documents of one level a filter allows."""

    docs: np.ndarray  # int64 [n], ascending: every document id of the level
    mask: np.ndarray  # bool [n], aligned with ``docs``
    _derived: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @cached_property
    def count(self) -> int:
        return int(np.count_nonzero(self.mask))

    @property
    def share(self) -> float:
        """The fraction of the level's documents allowed (1.0 for an empty level)."""
        return self.count / len(self.docs) if len(self.docs) else 1.0

    @property
    def ids(self) -> np.ndarray:
        """The allowed document ids, ascending (not kept: what a signal keeps of them, it derives)."""
        return self.docs[self.mask]

    def derived(self, name: str, build: Callable[[], T]) -> T:
        """``build()``, computed once per selection and ``name`` (e.g. a vector set's row bitmap)."""
        with self._lock:
            if name not in self._derived:
                self._derived[name] = build()
            return self._derived[name]

    def nbytes(self) -> int:
        """Memory held by the mask and what was derived from it (not ``docs``, the level's own array)."""
        return int(self.mask.nbytes + sum(_nbytes(v) for v in list(self._derived.values())))

    def allows(self, ids: np.ndarray) -> np.ndarray:
        """Whether each document id in ``ids`` is allowed (ids not of this level are not)."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(self.docs):
            return np.zeros(len(ids), dtype=bool)
        pos = np.minimum(np.searchsorted(self.docs, ids), len(self.docs) - 1)
        return (self.docs[pos] == ids) & self.mask[pos]


def _nbytes(v: Any) -> int:
    if isinstance(v, np.ndarray):
        return int(v.nbytes)
    if isinstance(v, (str, bytes)):
        return len(v)
    sizes = getattr(v, "nbytes", None)
    return int(sizes()) if callable(sizes) else 0

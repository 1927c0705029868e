"""A filter resolved against one level's documents: which document ids it lets through, as a boolean
mask aligned with the level's ascending document ids (:class:`figlink.index.columns.Columns`), with
how many pass. Both signals read it: the lexical one checks its candidates against it, the dense one
turns it into a row bitmap for the IVF scan or searches the allowed rows exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Selection:
    """The documents of one level a filter allows."""

    docs: np.ndarray  # int64 [n], ascending: every document id of the level
    mask: np.ndarray  # bool [n], aligned with ``docs``

    @property
    def count(self) -> int:
        return int(np.count_nonzero(self.mask))

    @property
    def share(self) -> float:
        """The fraction of the level's documents allowed (1.0 for an empty level)."""
        return self.count / len(self.docs) if len(self.docs) else 1.0

    def allows(self, ids: np.ndarray) -> np.ndarray:
        """Whether each document id in ``ids`` is allowed (ids not of this level are not)."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(self.docs):
            return np.zeros(len(ids), dtype=bool)
        pos = np.minimum(np.searchsorted(self.docs, ids), len(self.docs) - 1)
        return (self.docs[pos] == ids) & self.mask[pos]

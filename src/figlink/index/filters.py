"""Search filters: figure type, medical, open license, year range, paper; as a numpy mask over one level's
documents (:class:`figlink.index.columns.Columns`)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Mapping, Optional

import numpy as np

from figlink.errors import InputError

if TYPE_CHECKING:
    from figlink.index.columns import Columns

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _bool(name: str, v: Any) -> Optional[bool]:
    if v is None or isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise InputError(f"filter {name!r} must be true or false, not {v!r}")


def _year(name: str, v: Any) -> Optional[int]:
    if v is None:
        return None
    try:
        y = int(v)
    except (TypeError, ValueError):
        raise InputError(f"filter {name!r} must be a year, not {v!r}") from None
    if not 0 < y < 10000:
        raise InputError(f"filter {name!r} must be a year between 1 and 9999, not {y}")
    return y


@dataclass(frozen=True)
class Filters:
    """Which documents may be returned; ``None`` means no constraint."""

    figure_type: Optional[tuple[str, ...]] = None
    is_medical: Optional[bool] = None
    open: Optional[bool] = None
    year_min: Optional[int] = None
    year_max: Optional[int] = None
    paper_id: Optional[str] = None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_mapping(cls, d: Optional[Mapping[str, Any]]) -> "Filters":
        """Filters from a dict of names to values (strings accepted); unknown names are an error."""
        d = {k: v for k, v in (d or {}).items() if v is not None}
        unknown = sorted(set(d) - set(cls.names()))
        if unknown:
            raise InputError(f"unknown filter(s) {', '.join(unknown)}; known: {', '.join(cls.names())}")
        ft = d.get("figure_type")
        if isinstance(ft, str):
            ft = [t for t in ft.split(",") if t.strip()]
        if ft is not None:
            if not isinstance(ft, (list, tuple)) or not all(isinstance(t, str) for t in ft):
                raise InputError("filter 'figure_type' must be a label or a list of labels")
            ft = tuple(t.strip() for t in ft)[:50]
        pid = d.get("paper_id")
        if pid is not None and (not isinstance(pid, str) or len(pid) > 200):
            raise InputError("filter 'paper_id' must be a paper id")
        f = cls(figure_type=ft or None, is_medical=_bool("is_medical", d.get("is_medical")),
                open=_bool("open", d.get("open")), year_min=_year("year_min", d.get("year_min")),
                year_max=_year("year_max", d.get("year_max")), paper_id=pid)
        if f.year_min and f.year_max and f.year_min > f.year_max:
            raise InputError(f"year_min {f.year_min} is after year_max {f.year_max}")
        return f

    def normalized(self) -> "Filters":
        """The same filter with its figure types sorted and deduplicated (a cache key: the order of the
        types does not change what passes)."""
        if not self.figure_type:
            return self
        return replace(self, figure_type=tuple(sorted(set(self.figure_type))))

    def empty(self) -> bool:
        return all(getattr(self, n) is None for n in self.names())

    def mask(self, cols: "Columns") -> Optional[np.ndarray]:
        """A boolean mask over one level's documents (None: everything passes)."""
        if self.empty():
            return None
        m = np.ones(len(cols.year), dtype=bool)
        if self.figure_type:
            m &= np.isin(cols.figure_type, cols.type_codes(self.figure_type))
        if self.is_medical is not None:
            m &= cols.medical == int(self.is_medical)
        if self.open is not None:
            m &= cols.open == int(self.open)
        if self.year_min is not None:
            m &= cols.year >= self.year_min
        if self.year_max is not None:
            m &= (cols.year <= self.year_max) & (cols.year > 0)
        if self.paper_id is not None:
            m &= cols.paper == cols.paper_code(self.paper_id)
        return m

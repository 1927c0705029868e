"""What an enrich stage is: a pure function from one figure to a new figure and its warnings."""

from __future__ import annotations

from typing import Callable, NamedTuple

from figlink.model import Figure


class Enriched(NamedTuple):
    """A stage's result for one figure: the new record, and what could not be done, as data."""

    figure: Figure
    warnings: tuple[str, ...] = ()


FigureStage = Callable[[Figure], Enriched]

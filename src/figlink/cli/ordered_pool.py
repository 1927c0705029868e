"""An ordered parallel map for commands that stream one output per input (``figlink parse --workers N``).

Items go to worker processes in batches; results come back in input order, each as soon as it and every
result before it are done, with at most ``window`` batches per worker in flight (handed out and not yet
yielded), so a slow reader of the output holds the workers back instead of filling the memory. Workers are
forked where the platform can (they start with the parent's modules already imported), spawned elsewhere.
"""

from __future__ import annotations

import multiprocessing as mp
from collections import deque
from itertools import islice
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def ordered_map(fn: Callable[[list[T]], list[R]], items: Iterable[T], workers: int, batch: int = 4,
                window: int = 4) -> Iterator[R]:
    """``fn`` over ``items`` in batches of ``batch`` (``fn`` maps a batch to its results, one per item, and
    must be a module-level function), on ``workers`` processes (in this process when ``workers`` is 1);
    the results one by one, in input order, with at most ``window * workers`` batches in flight."""
    if workers <= 1:
        for chunk in _batches(items, batch):
            yield from fn(chunk)
        return
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    with mp.get_context(method).Pool(processes=workers) as pool:
        chunks = _batches(items, batch)
        pending = deque(pool.apply_async(fn, (chunk,)) for chunk in islice(chunks, window * workers))
        while pending:
            done = pending.popleft().get()
            nxt = next(chunks, None)
            if nxt is not None:
                pending.append(pool.apply_async(fn, (nxt,)))
            yield from done


__all__ = ["ordered_map"]

"""Tune/check splits of a development set, by document.

Every quality number is reported twice: on the *tune* part (the only part whose failures may be read
while developing) and on the *check* part (run when a change is finished). A document goes to one
part by the md5 of its name: even last hex digit → tune, odd → check. Figures of one paper, or
captions of one article, share the paper's document key, so nothing leaks between the parts.

Figure pairs (OpenStax) are split by whole book instead: :data:`OPENSTAX_CHECK_BOOK` is held back.
"""

from __future__ import annotations

import hashlib
import re
from typing import Iterable, Literal, TypeVar

Part = Literal["tune", "check"]
T = TypeVar("T")

OPENSTAX_CHECK_BOOK = "chemistry-bundle"
"""The OpenStax book never tuned on (its figures are the check part of every pairs-based task)."""


def split_of(doc_key: str) -> Part:
    """The part a document belongs to: md5 of its key, last hex digit even → tune, odd → check."""
    digit = int(hashlib.md5(doc_key.encode("utf-8")).hexdigest()[-1], 16)
    return "tune" if digit % 2 == 0 else "check"


_FIG_SUFFIX = re.compile(r"(?i)[_-](?:fig|figure|f)\d+[a-z]?$")
_EXTENSIONS = re.compile(r"(?i)(?:\.(?:xml|nxml|pdf|jpg|jpeg|png|gz|tar|json))+$")


def doc_key(name: str) -> str:
    """The document a file or figure name belongs to: the name without folders, extensions and a
    trailing figure suffix ("s41467-018-06211-3_fig2.jpg" → "s41467-018-06211-3",
    "rru-5-159Fig1.jpg" → "rru-5-159")."""
    stem = _EXTENSIONS.sub("", name.replace("\\", "/").rsplit("/", 1)[-1])
    stem = _FIG_SUFFIX.sub("", stem)
    return re.sub(r"(?i)fig(?:ure)?\d+[a-z]?$", "", stem) or stem


def book_of(pair_id: str) -> str:
    """The book of an OpenStax pair id ("chemistry-bundle/CNX_Chem_01_…" → "chemistry-bundle")."""
    return pair_id.split("/", 1)[0]


def pair_split(pair_id: str) -> Part:
    """The part of a figure pair: its whole book is held back or not."""
    return "check" if book_of(pair_id) == OPENSTAX_CHECK_BOOK else "tune"


def partition(items: Iterable[T], key) -> dict[Part, list[T]]:
    """Items grouped into {"tune": [...], "check": [...]} by ``split_of(key(item))``."""
    out: dict[Part, list[T]] = {"tune": [], "check": []}
    for it in items:
        out[split_of(key(it))].append(it)
    return out

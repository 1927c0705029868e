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


_PAPER_FIGURE_SUFFIX = [
    re.compile(r"(?i)_Fig\d+[a-z]?_HTML$"),                 # Springer: 12885_2014_4796_Fig1_HTML
    re.compile(r"(?i)[._-]g\d{1,3}$"),                       # PLOS / PMC: pone.0021625.g001, JPI-2-19-g001
    re.compile(r"(?i)(?<=\d)[-_]?[fg]\d{1,3}$"),             # 6603615f5, jcav01p0197g09, ncomms8354-f5
    re.compile(r"(?<=\d)\.\d{3}$"),                          # Hindawi: BMRI2013-241780.002
    re.compile(r"^(\d{4}-\d{3}[\dX]-\d+-\d+)-\d+$"),        # BMC: 1471-2407-10-248-4
    re.compile(r"^([a-z]+\d+)-\d+$"),                        # scrt343-4
]


def figure_paper_key(name: str) -> str:
    """The paper a figure image belongs to, for figure-level sets whose names carry the publisher's own
    figure suffix ("pone.0060277.g003.jpg" → "pone.0060277", "1471-2407-10-248-4.jpg" → "1471-2407-10-248",
    "12885_2014_4796_Fig4_HTML.jpg" → "12885_2014_4796"), so that all figures of a paper share a part.
    Falls back on :func:`doc_key`."""
    stem = _EXTENSIONS.sub("", name.replace("\\", "/").rsplit("/", 1)[-1])
    for pat in _PAPER_FIGURE_SUFFIX:
        m = pat.search(stem)
        if m:
            stem = m.group(1) if pat.groups else stem[: m.start()]
            break
    return doc_key(stem)

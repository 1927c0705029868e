"""Paper ids: what a parser proposes, and how a corpus keeps them unique whatever the file names are.

A parser proposes the paper's *natural id*: for JATS the PMCID, else the DOI (``/`` → ``_``), else
``PMID<n>``, else the publisher's id, else the file name's stem; for a PDF alone its file name's stem;
for a PDF merged with its JATS the JATS paper's id. :func:`safe_id` makes it usable as a file name and
a URL segment (letters, digits, ``.``, ``_``, ``-``; never ``.`` or ``..``).

A corpus gives each natural id to one input path (:meth:`figlink.corpus.Corpus.claim_id`):

- the same path ingested again (its bytes changed: an updated version of the article) replaces its paper
  under the same id;
- another input whose natural id is taken by **the same article** (the same PMCID or DOI) is a duplicate:
  reported (stage ``duplicate``) and not stored, so one article is never in the corpus twice and never
  replaced by another file behind the user's back; to update an article, replace its file and ingest again;
- another input whose natural id is taken by **a different paper** (two PDFs called ``paper.pdf``) is stored
  under the first free :func:`variants` id, ``paper-2``, ``paper-3`` …, with a warning on the paper and a
  line in the ingest report.

The engines hand results to the writer in input order, so which input keeps the plain id does not depend
on which worker finished first, a resumed run gives the ids an uninterrupted run gives, and an id, once
given, never changes.
"""

from __future__ import annotations

import re
from itertools import count
from typing import Iterator, Optional

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_id(s: str) -> str:
    """A string usable as a file name and URL segment (``paper`` when nothing usable is left)."""
    return _UNSAFE.sub("_", s).strip("._") or "paper"


def variants(natural: str) -> Iterator[str]:
    """The ids a paper may be stored under, in order of preference: ``natural``, ``natural-2``, …"""
    yield natural
    for n in count(2):
        yield f"{natural}-{n}"


def is_variant(paper_id: str, natural: str) -> bool:
    """Whether ``paper_id`` is ``natural`` or one of its numbered variants."""
    if paper_id == natural:
        return True
    head, _, n = paper_id.rpartition("-")
    return head == natural and n.isdigit() and int(n) >= 2 and str(int(n)) == n


def same_article(pmcid_a: Optional[str], doi_a: Optional[str], pmcid_b: Optional[str], doi_b: Optional[str]) -> bool:
    """Whether two papers are the same article: they share a PMCID or a DOI (DOIs compare ignoring case)."""
    if pmcid_a and pmcid_b and pmcid_a.upper() == pmcid_b.upper():
        return True
    return bool(doi_a and doi_b and doi_a.strip().lower() == doi_b.strip().lower())


__all__ = ["safe_id", "variants", "is_variant", "same_article"]

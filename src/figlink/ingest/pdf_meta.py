"""Metadata a PDF shows on its first page: the DOI and the title (the largest type near the top)."""

from __future__ import annotations

import re
from collections import Counter

from figlink.ingest.pdf_page import Line

_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.I)


def find_doi(lines: list[Line]) -> str | None:
    """The DOI printed most often on the page (running footers repeat the article's own), or the
    article DOI that it extends."""
    found = Counter(m.group(1).rstrip(".,;)]") for ln in lines for m in _DOI.finditer(ln.text))
    if not found:
        return None
    best = found.most_common(1)[0][0]
    # "10.7554/eLife.15600.001" (a part of the article) → "10.7554/eLife.15600" when both are printed
    return min((d for d in found if best.startswith(d + ".")), key=len, default=best)


def find_title(lines: list[Line], page_height: float) -> str | None:
    """The lines set in the largest type in the top half of the first page, joined."""
    candidates = [ln for ln in lines if not ln.vertical and ln.box[1] < 0.5 * page_height
                  and len(ln.text) >= 3 and any(c.isalpha() for c in ln.text)]
    if not candidates:
        return None
    size = max(ln.height for ln in candidates)
    body = sorted(ln.height for ln in lines)[len(lines) // 2]
    if size < 1.3 * body:
        return None  # nothing set larger than the running text
    title = sorted((ln for ln in candidates if ln.height >= 0.9 * size), key=lambda ln: (ln.box[1], ln.box[0]))
    text = " ".join(ln.text for ln in title)
    return text if len(text) <= 400 else None


__all__ = ["find_doi", "find_title"]

"""Which files a list of paths names: files as given, and the supported files inside folders (recursively,
sorted), with each PDF paired with the JATS XML of the same article. ``figlink parse`` and ``figlink ingest``
read their arguments through :func:`iter_sources`, so a folder means the same inputs to both."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

from figlink.ingest import SUPPORTED_SUFFIXES, is_pairs_name


@dataclass(frozen=True)
class Source:
    """One input: a file, or a PDF with the JATS XML of the same article (merged, MedICaT Appendix A)."""

    path: Path
    xml: Optional[Path] = None


def _pair_pdfs(files: list[Path]) -> list[Source]:
    """Pair ``X.pdf`` (or ``X-figures.pdf`` when there is no ``X.pdf``) with ``X.xml``/``X.nxml`` of the
    same folder; every other file is a source of its own."""
    by_key = {(f.parent, f.name.lower()): f for f in files}
    used: set[Path] = set()
    pairs: dict[Path, Path] = {}
    for f in files:
        if f.suffix.lower() != ".pdf":
            continue
        stem = f.stem[: -len("-figures")] if f.stem.lower().endswith("-figures") else f.stem
        if stem != f.stem and (f.parent, f"{stem}.pdf".lower()) in by_key:
            continue  # the article PDF takes the XML
        xml = by_key.get((f.parent, f"{stem}.xml".lower())) or by_key.get((f.parent, f"{stem}.nxml".lower()))
        if xml is not None and xml not in used:
            used.add(xml)
            pairs[f] = xml
    return [Source(f, pairs.get(f)) for f in files if f not in used]


def iter_sources(sources: Iterable[str | Path], pairs: bool = True) -> Iterator[Source]:
    """Files named, and supported files inside folders named (recursively, sorted), with PDFs paired
    with their XML; missing paths are yielded too, so that the run reports them. In folders, figure-pairs
    files are those named ``pairs.jsonl`` or ``*.pairs.jsonl`` (left out with ``pairs=False``); a ``.jsonl``
    named on its own is one too."""
    for s in sources:
        p = Path(s)
        if p.is_dir():
            files = [f for f in sorted(p.rglob("*"))
                     if f.is_file() and not f.name.startswith(".")
                     and (f.name.lower().endswith(SUPPORTED_SUFFIXES) or (pairs and is_pairs_name(f.name)))]
            yield from _pair_pdfs(files)
        else:
            yield Source(p)

"""Which files a list of paths names: files as given, and the supported files inside folders (recursively,
sorted), with each PDF paired with the JATS XML of the same article. ``figlink parse`` and ``figlink ingest``
read their arguments through :func:`iter_sources`, so a folder means the same inputs to both."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

from figlink.ingest import SUPPORTED_SUFFIXES, is_pairs_name


@dataclass(frozen=True)
class Source:
    """One input: a file, or a PDF with the JATS XML of the same article (merged, MedICaT Appendix A)."""

    path: Path
    xml: Optional[Path] = None


_PAIRABLE = (".pdf", ".xml", ".nxml")  # the files _pair_pdfs pairs (a PDF with its JATS)


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
            yield from _walk(p, pairs)
        else:
            yield Source(p)


def _walk(folder: Path, pairs: bool) -> Iterator[Source]:
    """The sources under ``folder`` in sorted path order (as ``sorted(folder.rglob("*"))``), one folder at a
    time and holding only its sorted names, so memory grows with the largest folder's names, not with the
    whole tree. Folders behind symbolic links are not entered; unreadable folders are passed over."""
    try:
        with os.scandir(folder) as it:
            names: list[str] = []
            dirs: set[str] = set()
            for e in it:
                names.append(e.name)
                if e.is_dir() and not e.is_symlink():
                    dirs.add(e.name)
    except OSError:
        return
    names.sort()
    xml_of = _pdf_partners(folder, names, dirs)
    taken = {xml.name for xml in xml_of.values()}
    for n in names:
        if n in dirs:
            yield from _walk(folder / n, pairs)
        elif (not n.startswith(".") and n not in taken
              and (n.lower().endswith(SUPPORTED_SUFFIXES) or (pairs and is_pairs_name(n)))):
            path = folder / n
            if path.is_file():
                yield Source(path, xml_of.get(n))


def _pdf_partners(folder: Path, names: list[str], dirs: set[str]) -> dict[str, Path]:
    """PDF name → the JATS XML it is merged with, among the files of one folder (:func:`_pair_pdfs` on its
    PDF and XML files, so a folder without PDFs costs nothing)."""
    if not any(n.lower().endswith(".pdf") for n in names):
        return {}
    files = [folder / n for n in names if n.lower().endswith(_PAIRABLE) and n not in dirs
             and not n.startswith(".") and (folder / n).is_file()]
    return {src.path.name: src.xml for src in _pair_pdfs(files) if src.xml is not None}

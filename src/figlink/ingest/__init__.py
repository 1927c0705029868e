"""Sources → :class:`~figlink.model.Paper`: JATS/.nxml, PMC OA packages (.tar.gz) and PDFs.

Figure-pairs files (``.jsonl``, one figure per line) hold many papers: :func:`source_kind` names them
``"pairs"`` and :func:`figlink.ingest.pairs.read_pairs` reads them line by line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from figlink.errors import InputError
from figlink.model import Paper

XML_SUFFIXES = (".xml", ".nxml")
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")
PDF_SUFFIXES = (".pdf",)
PAIRS_SUFFIXES = (".jsonl",)
SUPPORTED_SUFFIXES = XML_SUFFIXES + ARCHIVE_SUFFIXES + PDF_SUFFIXES


def is_pairs_name(name: str) -> bool:
    """Whether a file found in a folder is a figure-pairs file: ``pairs.jsonl`` or ``*.pairs.jsonl`` (other
    ``.jsonl`` files in a folder, such as a corpus's ``errors.jsonl``, are not)."""
    low = name.lower()
    return low == "pairs.jsonl" or low.endswith(".pairs.jsonl")


def source_kind(path: Path) -> Optional[str]:
    """``"jats"``, ``"package"``, ``"pdf"`` or ``"pairs"`` by name, then by the first bytes; None when unknown."""
    name = path.name.lower()
    if name.endswith(PAIRS_SUFFIXES):
        return "pairs"
    if name.endswith(XML_SUFFIXES):
        return "jats"
    if name.endswith(ARCHIVE_SUFFIXES):
        return "package"
    if name.endswith(PDF_SUFFIXES):
        return "pdf"
    try:
        with path.open("rb") as f:
            head = f.read(512)
    except OSError:
        return None
    if head.startswith(b"%PDF"):
        return "pdf"
    if head[:2] == b"\x1f\x8b":
        return "package"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
        return "jats"
    return None


def parse(path: str | Path, xml: str | Path | None = None, image_dir: Optional[Path] = None) -> Paper:
    """Parse one source into a Paper.

    ``xml`` merges a PDF with its JATS. With ``image_dir``, the figure images found in the source are saved
    as files of that folder and ``Figure.image`` is the file's name (:meth:`figlink.images.ImageFolder.publish`
    moves them under the paper's id once it is settled).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file: {p}")
    if p.is_dir():
        raise InputError(f"{p} is a folder; use `figlink ingest` for folders")
    kind = source_kind(p)
    if kind == "jats":
        from figlink.ingest.jats import parse_jats
        if xml is not None:
            raise InputError("--xml merges a PDF with its JATS; this input is already JATS")
        return parse_jats(p)
    if kind == "package":
        from figlink.ingest.pmc_package import parse_pmc_package
        return parse_pmc_package(p, image_dir=image_dir)
    if kind == "pdf":
        try:
            from figlink.ingest.pdf import parse_pdf  # type: ignore[import-not-found]
        except ImportError:
            raise InputError("PDF ingestion is not available in this build") from None
        return parse_pdf(p, xml=xml, image_dir=image_dir)
    if kind == "pairs":
        raise InputError(f"{p.name} is a figure-pairs file (one paper per line): ingest it with "
                         "`figlink ingest`, or read it with figlink.ingest.pairs.read_pairs")
    raise InputError(f"unsupported input type: {p.name} (expected .xml/.nxml, .tar.gz or .pdf)")

"""Reading JATS bytes safely: size limits, a parser that expands no entities, encoding repair, and the
reference lists cut out before parsing (nothing is read there, and they are most of a long article)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Iterator, Optional

from lxml import etree

from figlink.errors import InputError, ParseError

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
MATHML = "{http://www.w3.org/1998/Math/MathML}"
DEFAULT_MAX_BYTES = 100 * 1024 * 1024

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                          remove_pis=True, huge_tree=False)


def collapse_ws(s: Optional[str]) -> str:
    """White space collapsed and stripped (``str.split`` splits on exactly what ``\\s`` matches)."""
    return " ".join(s.split()) if s else ""


def element_text(el: Optional[etree._Element]) -> str:
    """All text inside ``el``, white space collapsed ("" for None)."""
    return "" if el is None else collapse_ws("".join(el.itertext()))



def read_bytes(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The file's bytes, with clear errors for missing, empty and oversized files."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    if size == 0:
        raise InputError("empty file")
    if size > max_bytes:
        raise InputError(f"file is {size / 2**20:.1f} MB, over the {max_bytes / 2**20:.0f} MB limit for one article")
    return path.read_bytes()


def parse_xml_bytes(data: bytes) -> tuple[etree._Element, list[str]]:
    """Parse JATS bytes; bytes that are not valid in the declared encoding are replaced, with a warning."""
    if not data.strip():
        raise InputError("empty file")
    warnings: list[str] = []
    try:
        root = etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as e:
        msg = str(e)
        if any(k in msg for k in ("not proper UTF-8", "Input is not proper", "Invalid bytes in character encoding",
                                  "invalid character", "Char 0x")):
            text = data.decode("utf-8", errors="replace")
            text = re.sub(r"^<\?xml[^>]*\?>", "", text.lstrip("\ufeff"))
            try:
                root = etree.fromstring(text.encode("utf-8"), _PARSER)
            except etree.XMLSyntaxError as e2:
                raise ParseError(f"malformed XML: {e2}") from None
            warnings.append("bytes that are not valid UTF-8 were replaced with U+FFFD")
        else:
            raise ParseError(f"malformed XML: {msg}") from None
    if root is None:
        raise ParseError("malformed XML: no root element")
    if isinstance(root.tag, str) and root.tag.startswith("{"):
        for el in root.iter():
            if isinstance(el.tag, str) and el.tag.startswith("{") and not el.tag.startswith(MATHML):
                el.tag = etree.QName(el).localname
    if root.tag not in {"article", "pmc-articleset"}:
        raise ParseError(f"not a JATS article: the root element is <{root.tag}>")
    if root.tag == "pmc-articleset":
        art = root.find("article")
        if art is None:
            raise ParseError("not a JATS article: <pmc-articleset> holds no <article>")
        root = art
    return root, warnings


_REF_LIST_OPEN = b"<ref-list"
_REF_LIST_CLOSE = b"</ref-list>"
_AFTER_TAG_NAME = frozenset(b" \t\r\n>/")
_ID_ATTR = re.compile(rb"\sid\s*=\s*[\"']([^\"']*)[\"']")


def _ref_list_end(data: bytes, start: int) -> tuple[int, int]:
    """End offset of the ``<ref-list>`` opening at ``start`` (nested lists included), or -1 when it does not
    close or another tag shares the name's prefix; and how many ref-list tags were passed."""
    depth, pos, tags = 0, start, 0
    while True:
        close = data.find(_REF_LIST_CLOSE, pos)
        opening = data.find(_REF_LIST_OPEN, pos, len(data) if close < 0 else close)
        if opening < 0:
            if close < 0:
                return -1, tags
            tags += 1
            depth -= 1
            pos = close + len(_REF_LIST_CLOSE)
            if depth <= 0:
                return pos, tags
            continue
        tags += 1
        gt = data.find(b">", opening)
        if gt < 0 or data[opening + len(_REF_LIST_OPEN)] not in _AFTER_TAG_NAME:
            return -1, tags
        if data[gt - 1] == 0x2F:  # "/": an empty <ref-list/>
            if depth == 0:
                return gt + 1, tags
        else:
            depth += 1
        pos = gt + 1


def without_ref_lists(data: bytes) -> tuple[bytes, list[bytes]]:
    """``data`` with its bibliographies (``<ref-list>`` elements) cut out, and the cut pieces.

    figlink reads nothing from a reference list, and it is about a third of a typical article's bytes and
    half of lxml's parse time. The cut is plain byte search. It is made only when every occurrence of
    ``ref-list`` in the bytes is one of the tags cut, so a name inside a comment, CDATA or text leaves the
    data whole, as does a list that does not close; a cut that the parser rejects is undone by the caller.
    """
    first = data.find(b"ref-list")
    if first < 1 or data[first - 1] != 0x3C:  # none, or the first one is not a tag: "<ref-list"
        return data, []
    start = first - 1
    view = memoryview(data)
    keep: list[memoryview] = []
    cut: list[bytes] = []
    pos = tags = 0
    while start >= 0:
        end, passed = _ref_list_end(data, start)
        if end < 0:
            return data, []
        tags += passed
        keep.append(view[pos:start])
        cut.append(data[start:end])
        pos = end
        start = data.find(_REF_LIST_OPEN, pos)
    if tags != data.count(b"ref-list", first):
        return data, []
    keep.append(view[pos:])
    return b"".join(keep), cut


def ids_in(pieces: Iterable[bytes]) -> Iterator[str]:
    """The ``id`` attributes written in pieces of XML cut out before parsing (read lazily)."""
    return (m.decode("utf-8", "replace") for piece in pieces for m in _ID_ATTR.findall(piece))

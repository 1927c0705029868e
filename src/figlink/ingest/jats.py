"""JATS / PMC .nxml articles → :class:`~figlink.model.Paper` with figures and inline references.

One lxml parse per article. Figures are every ``<fig>`` element (eLife figure supplements inside a
``<fig-group>`` keep their parent). Inline references (MedICaT) are the sentences of text blocks that
cite a figure, through ``<xref>`` markup or through plain-text mentions read with the shared mention
grammar; the sentence is found with the fast splitter only in blocks that cite something.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

from lxml import etree

from figlink.errors import InputError, ParseError
from figlink.ingest.licenses import normalize_license
from figlink.model import Figure, InlineRef, Paper
from figlink.text import grammar as g
from figlink.text.mentions import figure_key, figure_number, find_mentions, parse_mention
from figlink.text.sentences import SentenceFinder

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
MATHML = "{http://www.w3.org/1998/Math/MathML}"
DEFAULT_MAX_BYTES = 100 * 1024 * 1024

_WS = re.compile(r"\s+")
_SAFE_ID = re.compile(r"[^A-Za-z0-9._-]+")
# Elements whose text is not prose of the block around them.
_SKIP_IN_BLOCK = frozenset({"fig", "fig-group", "table-wrap", "table", "disp-formula", "tex-math", "graphic",
                            "supplementary-material", "media", "object-id", "ref-list", "inline-graphic", "label",
                            MATHML + "annotation", MATHML + "annotation-xml"})
_BLOCK_TAGS = frozenset({"p", "title", "td", "th", "def", "attrib"})
_NOT_CONTEXT = frozenset({"fig", "fig-group", "ref-list", "journal-meta", "contrib-group", "aff",
                          "author-notes", "kwd-group", "permissions", "history", "funding-group", "counts",
                          "custom-meta-group", "article-categories", "title-group", "pub-date"})
# Not read for untagged mentions (their figure xrefs are still read): tables are data, not prose.
_NOT_PROSE = frozenset({"table", "thead", "tbody", "tfoot"})
# Between two xrefs of one citation: "Figs <xref>2</xref>, <xref>3</xref>", "<xref>1</xref>–<xref>4</xref>".
_JOINER = re.compile(rf"^[\s,;&{g.DASH_CHARS}]*(?:and|or|to)?[\s,;&{g.DASH_CHARS}]*$")
# Panel letters after an xref: "Fig 2</xref>A", "<xref>Fig 2A</xref>, B".
_ATTACHED_LETTERS = re.compile(rf"{g.PANEL_LETTER}(?:{g.MORE_LETTERS})?")
_TRAILING_LETTERS = re.compile(g.MORE_LETTERS)
_NON_WORD = re.compile(r"\W*")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                          remove_pis=True, huge_tree=False)


def _norm(s: Optional[str]) -> str:
    """White space collapsed and stripped (``str.split`` splits on exactly what ``\\s`` matches)."""
    return " ".join(s.split()) if s else ""


def _text(el: Optional[etree._Element]) -> str:
    return "" if el is None else _norm("".join(el.itertext()))


def safe_id(s: str) -> str:
    """A string usable as a file name and URL segment."""
    return _SAFE_ID.sub("_", s).strip("._") or "paper"


# --------------------------------------------------------------------------------------------- reading

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


# --------------------------------------------------------------------------------------------- metadata

def _article_id(meta: Optional[etree._Element], kind: str) -> Optional[str]:
    if meta is None:
        return None
    for el in meta.iterfind("article-id"):
        if el.get("pub-id-type") == kind and el.text and el.text.strip():
            return el.text.strip()
    return None


def _year(meta: Optional[etree._Element]) -> Optional[int]:
    if meta is None:
        return None
    best: Optional[int] = None
    for d in meta.iterfind("pub-date"):
        y = d.findtext("year")
        if y and y.strip().isdigit():
            year = int(y.strip())
            kind = d.get("pub-type") or d.get("date-type") or ""
            if kind in {"epub", "pub", "ppub"}:
                return year
            best = best or year
    return best


def _license(meta: Optional[etree._Element]):
    lic = None if meta is None else meta.find("permissions/license")
    if lic is None:
        stmt = None if meta is None else meta.find("permissions/copyright-statement")
        return normalize_license(None, _text(stmt) or None)
    url = lic.get(XLINK_HREF)
    if not url:
        for ext in lic.iter("ext-link", "{http://www.niso.org/schemas/ali/1.0/}license_ref", "license_ref"):
            url = ext.get(XLINK_HREF) or (ext.text or "").strip() or None
            if url:
                break
    return normalize_license(url, _text(lic) or None, lic.get("license-type"))


# --------------------------------------------------------------------------------------------- figures

_NOT_CAPTION_PROSE = frozenset({"supplementary-material", "media", "object-id", "fig", "table-wrap",
                                "tex-math", MATHML + "annotation", MATHML + "annotation-xml"})
_DOI_LINE = re.compile(r"^DOI:\s*\S+$")


def _prose(el: etree._Element) -> str:
    """Text of an element without the attachments nested in it (source data files, media, DOIs)."""
    parts: list[str] = []

    def walk(e: etree._Element) -> None:
        if e.text:
            parts.append(e.text)
        for child in e:
            if isinstance(child.tag, str) and child.tag not in _NOT_CAPTION_PROSE:
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(el)
    return _norm("".join(parts))


def _caption_text(fig: etree._Element) -> str:
    cap = fig.find("caption")
    if cap is None:
        return ""
    parts: list[str] = []
    for child in cap:
        if not isinstance(child.tag, str) or child.tag in _NOT_CAPTION_PROSE:
            continue
        if next(child.iter(*_NOT_CAPTION_PROSE), None) is None:  # no attachments: serialize in C
            t = _norm(etree.tostring(child, method="text", encoding=str, with_tail=False))
        else:
            t = _prose(child)
        if t and not _DOI_LINE.match(t):  # eLife's "DOI: http://dx.doi.org/…" line is not caption prose
            parts.append(t)
    return " ".join(parts)


def _figures(root: etree._Element) -> list[Figure]:
    figures: list[Figure] = []
    seen: set[str] = set()
    for n, fig in enumerate(root.iter("fig"), 1):
        fid = fig.get("id") or f"fig-{n}"
        base, k = fid, 2
        while fid in seen:
            fid, k = f"{base}-{k}", k + 1
        seen.add(fid)
        fig.set("_fid", fid)
        label = _text(fig.find("label")) or None
        parent = None
        anc = fig.getparent()
        while anc is not None:
            if anc.tag == "fig":
                parent = anc.get("_fid")
                break
            if anc.tag == "fig-group":
                first = next((f for f in anc.iterfind("fig") if f.get("specific-use") != "child-fig"), None)
                if first is not None and first is not fig:
                    parent = first.get("_fid") or first.get("id")
                break
            anc = anc.getparent()
        graphic = next(fig.iter("graphic"), None)
        key = figure_key(label)
        figures.append(Figure(
            figure_id=fid, label=label, number=figure_number(key), caption=_caption_text(fig),
            parent=parent, graphic=None if graphic is None else graphic.get(XLINK_HREF),
        ))
    return figures


# --------------------------------------------------------------------------------------------- blocks

@dataclass
class _Xref:
    start: int
    end: int
    rids: list[str]
    text: str


def _block_text(block: etree._Element, fig_ids: dict[str, int],
                breaks: Optional[list[int]] = None) -> tuple[str, list[_Xref]]:
    """The block's prose with white space collapsed, and the figure xrefs in it with their offsets.

    When ``breaks`` is given, the offset where each list item starts (unless the block starts with it) is
    appended to it: an item ends the sentence before it even when that has no end mark."""
    buf: list[str] = []
    length = 0
    xrefs: list[_Xref] = []
    last_space = True

    def add(s: Optional[str]) -> None:
        nonlocal length, last_space
        if not s:
            return
        if "\n" in s or "  " in s or "\t" in s or "\r" in s or "\u00a0" in s:
            s = _WS.sub(" ", s)
        if last_space and s[0] == " ":
            s = s[1:]
            if not s:
                return
        buf.append(s)
        length += len(s)
        last_space = s[-1] == " "

    def walk(el: etree._Element) -> None:
        add(el.text)
        for child in el:
            tag = child.tag
            if isinstance(tag, str):
                if tag in _SKIP_IN_BLOCK:
                    if tag == "label" and child.getparent() is not None and child.getparent().tag == "list-item":
                        walk(child)
                        add(" ")
                else:
                    if tag == "xref":
                        rids = [r for r in (child.get("rid") or "").split() if r in fig_ids]
                        if rids:
                            start = length
                            walk(child)
                            xrefs.append(_Xref(start, length, rids, ""))
                        else:
                            walk(child)
                    else:
                        if tag == "list-item":
                            add(" ")  # items are words apart even when the markup has nothing between
                            if breaks is not None and length:
                                breaks.append(length)
                        walk(child)
            add(child.tail)

    walk(block)
    text = "".join(buf)
    stripped = text.rstrip()
    for x in xrefs:
        x.end = min(x.end, len(stripped))
        x.text = stripped[x.start:x.end].strip()
    return stripped, xrefs


def _section_title(block: etree._Element, cache: dict) -> Optional[str]:
    """Title of the nearest titled section (or "Abstract") above ``block``; ``cache`` is keyed by its parent,
    which blocks of one section share."""
    parent = block.getparent()
    if parent not in cache:
        cache[parent] = _title_above(parent)
    return cache[parent]


def _title_above(anc: Optional[etree._Element]) -> Optional[str]:
    while anc is not None:
        if anc.tag in {"sec", "app", "boxed-text", "sub-article", "abstract", "ack"}:
            title = anc.find("title")
            if title is None and anc.tag == "sub-article":
                title = anc.find("front-stub/title-group/article-title")
            if title is not None:
                return _text(title) or None
            if anc.tag == "abstract":
                return "Abstract"
        anc = anc.getparent()
    return None


def _outer_block(el: etree._Element) -> Optional[etree._Element]:
    """The text block whose prose holds ``el``: the outermost block element above it, where a block
    does not absorb what sits inside a container it skips (a table or media caption inside a
    paragraph is a block of its own). None inside figures, reference lists and journal metadata."""
    block: Optional[etree._Element] = None
    detached = False
    node: Optional[etree._Element] = el
    while node is not None:
        tag = node.tag
        if tag in _NOT_CONTEXT:
            return None
        if tag in _BLOCK_TAGS and not detached:
            block = node
        elif tag in _SKIP_IN_BLOCK:
            detached = True
        node = node.getparent()
    return block


_FIG_XREFS = etree.XPath("//xref[@ref-type='fig']")
_FIG_XREF_RIDS = etree.XPath("//xref[@ref-type='fig']/@rid")
_KEYWORD_FORMS_UTF8 = tuple(w.encode() for w in g.KEYWORD_FORMS)


def _has_fig_word(text: bytes) -> bool:
    """Cheap test (substring search in C) for a word that may start a figure mention."""
    return any(w in text for w in _KEYWORD_FORMS_UTF8)


# Containers inside a block whose text the block skips, but which hold blocks of their own.
_BLOCK_HOLDERS = ("table-wrap", "supplementary-material", "media")


def _in_excluded(el: etree._Element, stop: etree._Element) -> bool:
    """True when ``el`` or an ancestor below ``stop`` is a figure, reference list or metadata."""
    node: Optional[etree._Element] = el
    while node is not None and node is not stop:
        if node.tag in _NOT_CONTEXT:
            return True
        node = node.getparent()
    return False


def _prose_blocks(root: etree._Element) -> list[etree._Element]:
    """Outermost text blocks of running prose, top-down in document order: table cells are left out,
    and captions of tables or media inside a paragraph are blocks of their own."""
    out: list[etree._Element] = []
    seen: set[etree._Element] = set()

    def visit(el: etree._Element) -> None:
        for child in el:
            tag = child.tag
            if tag.__class__ is not str or tag in _NOT_CONTEXT or tag in _NOT_PROSE:
                continue
            if tag in _BLOCK_TAGS:
                if child not in seen:
                    seen.add(child)
                    out.append(child)
                for holder in child.iter(*_BLOCK_HOLDERS):
                    if not _in_excluded(holder, child):  # not inside a figure held by the block
                        visit(holder)
            else:
                visit(child)

    visit(root)
    return out


def _blocks(root: etree._Element) -> list[etree._Element]:
    """Outermost text blocks that may cite a figure: prose blocks with a figure xref or a figure word,
    in document order, then table cells that hold a figure xref."""
    by_parent: dict[etree._Element, Optional[etree._Element]] = {}
    for x in _FIG_XREFS(root):  # xrefs of one paragraph share the walk up
        parent = x.getparent()
        if parent not in by_parent:
            by_parent[parent] = _outer_block(x)
    with_xref = [b for b in dict.fromkeys(by_parent.values()) if b is not None]
    pending = set(with_xref)
    out: list[etree._Element] = []
    for block in _prose_blocks(root):
        if block in pending:
            pending.discard(block)
            out.append(block)
        elif _has_fig_word(etree.tostring(block, method="text", encoding="utf-8", with_tail=False)):
            out.append(block)
    out.extend(b for b in with_xref if b in pending)
    return out


# --------------------------------------------------------------------------------------------- citations

def _group_xrefs(text: str, xrefs: list[_Xref]) -> list[list[_Xref]]:
    groups: list[list[_Xref]] = []
    for x in xrefs:
        if groups and _JOINER.match(text[groups[-1][-1].end:x.start]):
            groups[-1].append(x)
        else:
            groups.append([x])
    return groups


def _resolve_group(text: str, group: list[_Xref], key_to_id: dict[str, str], id_to_key: dict[str, Optional[str]]
                   ) -> tuple[tuple[int, int], dict[str, list[str]]]:
    """Where the mention of a run of adjacent xrefs stands in ``text`` (widened to its figure word and
    trailing panel letters) and the panels it names for each figure id."""
    start, end = group[0].start, group[-1].end
    head = group[0].text
    if head[:1].isdigit() or len(head) <= 3 or not _starts_with_keyword(head):
        m = g.KEYWORD_BEFORE.search(text, max(0, start - 30), start)
        if m:
            start = m.start()
    last = group[-1].text
    if last[-1:].isdigit():  # "Fig 2</xref>A" : the panel letters follow the markup
        attached = _ATTACHED_LETTERS.match(text, end)
        if attached:
            end = attached.end()
    elif last[-1:].isalpha() or last.endswith(")"):
        tail = _TRAILING_LETTERS.match(text, end)
        if tail:
            letters = [m.group("l") for m in g.NEXT_LETTER.finditer(text, end, tail.end())]
            last_letter = next((c for c in reversed(last) if c.isalpha()), "")
            if letters and all(c.isupper() == last_letter.isupper() for c in letters):
                end = tail.end()
    mention = text[start:end]
    rids: list[str] = []
    for x in group:
        for r in x.rids:
            if r not in rids:
                rids.append(r)
    result: dict[str, list[str]] = {}
    cites = parse_mention(mention)
    by_key: dict[str, list[str]] = {}
    for c in cites:
        if c.key and c.key in key_to_id:
            by_key.setdefault(key_to_id[c.key], []).extend(c.panels)
    if by_key and all(r in by_key for r in rids):
        result = by_key  # the grammar explains every xref: trust it (it also fills ranges "Figs 1–3")
    else:
        for x in group:
            own = parse_mention(x.text)
            for r in x.rids:
                panels = result.setdefault(r, [])
                k = id_to_key.get(r)
                for c in own:
                    if len(x.rids) == 1 or c.key == k or c.key == "":
                        panels.extend(c.panels)
        if len(group) == 1 and end > group[-1].end and len(rids) == 1:
            for c in cites:
                if c.key == id_to_key.get(rids[0]) or c.key == "":
                    result[rids[0]].extend(c.panels)
    return (start, end), {fid: list(dict.fromkeys(p)) for fid, p in result.items()}


def _starts_with_keyword(text: str) -> bool:
    """Whether an xref's text opens with its figure keyword ("Fig. 2", "(Supplementary Figure S1")."""
    lead = _NON_WORD.match(text)  # matches every string (it may be empty)
    assert lead is not None
    return g.KEYWORD.match(text, lead.end()) is not None


def _fig_words(s: str) -> int:
    return sum(s.count(w) for w in g.KEYWORD_FORMS)


def _may_hold_plain_mentions(text: str, xrefs: list[_Xref]) -> bool:
    """False when every figure word of the block sits inside its xrefs (no mention without markup)."""
    n = _fig_words(text)
    return n > 0 and n > sum(_fig_words(x.text) for x in xrefs)


def _inline_refs(root: etree._Element, figures: list[Figure], warnings: list[str],
                 cut_ids: Iterable[str] = ()) -> None:
    fig_index = {f.figure_id: i for i, f in enumerate(figures)}
    id_to_key = {f.figure_id: figure_key(f.label) for f in figures}
    key_to_id: dict[str, str] = {}
    for f in figures:
        k = id_to_key[f.figure_id]
        if k and k not in key_to_id:
            key_to_id[k] = f.figure_id
    # original ids (before de-duplication) also resolve
    alias = {fig.get("id"): fig.get("_fid") for fig in root.iter("fig") if fig.get("id")}
    lookup = dict(fig_index)
    for orig, fid in alias.items():
        lookup.setdefault(orig, fig_index[fid])
    unknown = [r for rids in _FIG_XREF_RIDS(root) for r in rids.split() if r not in lookup]
    dangling = 0
    if unknown:
        all_ids = set(root.xpath("//@id")).union(cut_ids)
        dangling = sum(r not in all_ids for r in unknown)
    if dangling:
        warnings.append(f"{dangling} figure xref(s) point to ids that do not exist")

    # refs[(figure_id, sentence)] = InlineRef: the same sentence written twice (abstract and body, say)
    # is one reference
    refs: dict[tuple[str, str], InlineRef] = {}
    order: list[tuple[str, str]] = []

    def add(fid: str, sentences: SentenceFinder, text: str, pos: int, where: tuple[int, int],
            panels: list[str], section: Optional[str], tagged: bool) -> None:
        """Cite ``fid`` from the sentence around ``pos`` with the mention at ``where`` in ``text``."""
        s, e = sentences.around(pos)
        mention = text[where[0]:where[1]]
        span = [max(where[0], s) - s, min(where[1], e) - s]
        key = (fid, text[s:e])
        ref = refs.get(key)
        if ref is None:
            refs[key] = InlineRef(text=text[s:e], mention=mention, panels=list(panels), section=section,
                                  tagged=tagged, mention_spans=[span])
            order.append(key)
            return
        if span not in ref.mention_spans:
            ref.mention_spans.append(span)
        if mention not in ref.mention.split("; "):
            ref.mention = f"{ref.mention}; {mention}"
        for p in panels:
            if p not in ref.panels:
                ref.panels.append(p)
        ref.tagged = ref.tagged or tagged

    titles: dict = {}
    for block in _blocks(root):
        breaks: list[int] = []
        text, xrefs = _block_text(block, lookup, breaks)
        if not text:
            continue
        plain = find_mentions(text) if _may_hold_plain_mentions(text, xrefs) else []
        if xrefs:
            plain = [m for m in plain if not any(m.start < x.end and x.start < m.end for x in xrefs)]
        plain = [m for m in plain if any(c.key in key_to_id for c in m.citations)]
        if not xrefs and not plain:
            continue
        sentences = SentenceFinder(text, [(x.start, x.end) for x in xrefs], breaks)
        section = _section_title(block, titles)
        for group in _group_xrefs(text, xrefs):
            where, cited = _resolve_group(text, group, key_to_id, id_to_key)
            for fid, panels in cited.items():
                fid = figures[lookup[fid]].figure_id if fid in lookup else fid
                add(fid, sentences, text, group[0].start, where, panels, section, True)
        for m in plain:
            for c in m.citations:
                fid = key_to_id.get(c.key)
                if fid is not None:
                    add(fid, sentences, text, m.start, (m.start, m.end), list(c.panels), section, False)

    by_id = {f.figure_id: f for f in figures}
    for key in order:
        by_id[key[0]].inline_refs.append(refs[key])


# --------------------------------------------------------------------------------------------- entry points

def paper_from_root(root: etree._Element, *, name: str = "", warnings: Optional[list[str]] = None,
                    cut_ids: Iterable[str] = ()) -> Paper:
    """Build the Paper of a parsed JATS ``<article>`` element; ``cut_ids`` are ids of elements cut out
    before parsing (they still count as existing xref targets)."""
    warnings = list(warnings or [])
    meta = root.find("front/article-meta")
    pmcid = _article_id(meta, "pmc") or _article_id(meta, "pmcid")
    if pmcid and not pmcid.upper().startswith("PMC"):
        pmcid = "PMC" + pmcid
    doi = _article_id(meta, "doi")
    pmid = _article_id(meta, "pmid")
    paper_id = safe_id(pmcid or (doi and doi.replace("/", "_")) or (pmid and f"PMID{pmid}")
                       or _article_id(meta, "publisher-id") or Path(name).stem or "paper")
    title = _text(None if meta is None else meta.find("title-group/article-title")) or None
    journal = _text(root.find("front/journal-meta//journal-title")) or None
    figures = _figures(root)
    for f in figures:
        if not f.caption:
            warnings.append(f"figure {f.figure_id} has no caption")
        if not f.label:
            warnings.append(f"figure {f.figure_id} has no label")
    _inline_refs(root, figures, warnings, cut_ids)
    return Paper(paper_id=paper_id, source="jats", doi=doi, pmcid=pmcid, title=title, journal=journal,
                 year=_year(meta), license=_license(meta), figures=figures, warnings=warnings)


def parse_jats_bytes(data: bytes, name: str = "") -> Paper:
    """Parse the bytes of a JATS/.nxml article (its reference lists are not parsed: nothing is read there)."""
    lean, cut = without_ref_lists(data)
    if cut:
        try:
            root, warnings = parse_xml_bytes(lean)
        except ParseError:  # report the error on the article as written
            root, warnings = parse_xml_bytes(data)
            cut = []
    else:
        root, warnings = parse_xml_bytes(data)
    cut_ids = (m.decode("utf-8", "replace") for piece in cut for m in _ID_ATTR.findall(piece))  # lazy
    return paper_from_root(root, name=name, warnings=warnings, cut_ids=cut_ids)


def parse_jats(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Paper:
    """Parse a JATS/.nxml article file."""
    p = Path(path)
    return parse_jats_bytes(read_bytes(p, max_bytes), name=p.name)

"""Inline references of a JATS article (MedICaT): the sentences of text blocks that cite a figure, through
``<xref>`` markup or through plain-text mentions read with the shared grammar; the sentence is found only in
blocks that cite something."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

from lxml import etree

from figlink.ingest.jats_xml import MATHML, element_text
from figlink.model import Figure, InlineRef
from figlink.text import grammar as g
from figlink.text.mentions import Mention, figure_key, find_mentions, parse_mention
from figlink.text.sentences import SentenceFinder

_WS = re.compile(r"\s+")
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
# Panel letters after an xref: "Fig 2</xref>A", "Figure 4</xref>A2,B1", "Figure 1</xref>, C and E)",
# "<xref>Fig 2A</xref>, B".
_ATTACHED_LETTERS = re.compile(rf"{g.SUB_PANEL_LETTERS}|{g.PANEL_LETTER}(?:{g.MORE_LETTERS})?|{g.COMMA_LETTERS}")
TRAILING_LETTERS = re.compile(g.MORE_LETTERS)
_NON_WORD = re.compile(r"\W*")


# --------------------------------------------------------------------------------------------- blocks

@dataclass
class _Xref:
    start: int
    end: int
    rids: list[str]
    text: str


def block_text(block: etree._Element, fig_ids: dict[str, int],
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
                return element_text(title) or None
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


_KEYWORD_FORMS_UTF8 = tuple(w.encode() for w in g.KEYWORD_FORMS)


def _has_fig_word(text: bytes) -> bool:
    """Cheap test (substring search in C) for a word that may start a figure mention."""
    return any(w in text for w in _KEYWORD_FORMS_UTF8)


# Containers inside a block whose text the block skips, but which hold blocks of their own.
_BLOCK_HOLDERS = ("table-wrap", "supplementary-material", "media")


@dataclass
class Landmarks:
    """The elements of an article that parsing looks up, in document order, collected in one walk of its
    tree: the figures, the figure xrefs, and the containers that may hold blocks of their own inside a
    block. A walk costs about the same whatever it looks for (0.05 s per 400 Europe PMC articles, a fifth of
    lxml's parse; an XPath ``//`` search costs more), so the article is walked once for all three."""

    figs: list[etree._Element]
    xrefs: list[etree._Element]
    holders: list[etree._Element]


def landmarks(root: etree._Element) -> Landmarks:
    """The :class:`Landmarks` of ``root`` (``<fig>``, ``<xref ref-type="fig">``, table-wrap, supplementary
    material and media elements)."""
    marks = Landmarks([], [], [])
    for el in root.iter("fig", "xref", *_BLOCK_HOLDERS):
        tag = el.tag
        if tag == "xref":
            if el.get("ref-type") == "fig":
                marks.xrefs.append(el)
        elif tag == "fig":
            marks.figs.append(el)
        else:
            marks.holders.append(el)
    return marks


def _in_excluded(el: etree._Element, stop: etree._Element) -> bool:
    """True when ``el`` or an ancestor below ``stop`` is a figure, reference list or metadata."""
    node: Optional[etree._Element] = el
    while node is not None and node is not stop:
        if node.tag in _NOT_CONTEXT:
            return True
        node = node.getparent()
    return False


def _holding_blocks(holders: list[etree._Element]) -> set[etree._Element]:
    """Block elements with one of ``holders`` (a table or media caption) somewhere inside them: found from
    the few holders up, instead of by a search inside every block."""
    out: set[etree._Element] = set()
    for holder in holders:
        node = holder.getparent()
        while node is not None:
            if node.tag in _BLOCK_TAGS:
                out.add(node)
            node = node.getparent()
    return out


def _prose_blocks(root: etree._Element, holders: list[etree._Element]) -> list[etree._Element]:
    """Outermost text blocks of running prose, top-down in document order: table cells are left out,
    and captions of tables or media inside a paragraph (``holders``: the article's) are blocks of their own."""
    out: list[etree._Element] = []
    seen: set[etree._Element] = set()
    holding = _holding_blocks(holders)

    def visit(el: etree._Element) -> None:
        for child in el:
            tag = child.tag
            if tag.__class__ is not str or tag in _NOT_CONTEXT or tag in _NOT_PROSE:
                continue
            if tag in _BLOCK_TAGS:
                if child not in seen:
                    seen.add(child)
                    out.append(child)
                if child in holding:
                    for holder in child.iter(*_BLOCK_HOLDERS):
                        if not _in_excluded(holder, child):  # not inside a figure held by the block
                            visit(holder)
            else:
                visit(child)

    visit(root)
    return out


def text_blocks(root: etree._Element, marks: Optional[Landmarks] = None) -> list[etree._Element]:
    """Outermost text blocks that may cite a figure: prose blocks with a figure xref or a figure word,
    in document order, then table cells that hold a figure xref. ``marks``: the article's
    :func:`landmarks`, when the caller has them."""
    marks = landmarks(root) if marks is None else marks
    by_parent: dict[etree._Element, Optional[etree._Element]] = {}
    for x in marks.xrefs:  # xrefs of one paragraph share the walk up
        parent = x.getparent()
        if parent not in by_parent:
            by_parent[parent] = _outer_block(x)
    with_xref = [b for b in dict.fromkeys(by_parent.values()) if b is not None]
    pending = set(with_xref)
    out: list[etree._Element] = []
    for block in _prose_blocks(root, marks.holders):
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
        tail = TRAILING_LETTERS.match(text, end)
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


def _clear_of_xrefs(text: str, plain: list[Mention], xrefs: list[_Xref]) -> list[Mention]:
    """The plain-text mentions that no xref overlaps; one that runs on before or past its xrefs
    ("Figure 5G–K and <xref>Figure 6</xref>E–H", "<xref>Figure 2</xref> and Figure 3B") is read again
    in the text before and after them."""
    out: list[Mention] = []
    for m in plain:
        over = [x for x in xrefs if m.start < x.end and x.start < m.end]
        if not over:
            out.append(m)
            continue
        for a, b in ((m.start, min(x.start for x in over)), (max(x.end for x in over), m.end)):
            if a < b:
                again = [Mention(a + r.start, a + r.end, r.text, r.citations) for r in find_mentions(text[a:b])]
                out.extend(_clear_of_xrefs(text, again, xrefs))
    return out


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


def add_inline_refs(root: etree._Element, figures: list[Figure], warnings: list[str],
                    cut_ids: Iterable[str] = (), marks: Optional[Landmarks] = None) -> None:
    """Append to each figure's ``inline_refs`` the sentences citing it, in reading order; dangling xrefs
    add a warning. ``marks``: the article's :func:`landmarks`, when the caller has them."""
    marks = landmarks(root) if marks is None else marks
    fig_index = {f.figure_id: i for i, f in enumerate(figures)}
    id_to_key = {f.figure_id: figure_key(f.label) for f in figures}
    key_to_id: dict[str, str] = {}
    for f in figures:
        k = id_to_key[f.figure_id]
        if k and k not in key_to_id:
            key_to_id[k] = f.figure_id
    # original ids (before de-duplication) also resolve
    alias = {fig.get("id"): fig.get("_fid") for fig in marks.figs if fig.get("id")}
    lookup = dict(fig_index)
    for orig, fid in alias.items():
        lookup.setdefault(orig, fig_index[fid])
    unknown = [r for x in marks.xrefs for r in (x.get("rid") or "").split() if r not in lookup]
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
    for block in text_blocks(root, marks):
        breaks: list[int] = []
        text, xrefs = block_text(block, lookup, breaks)
        if not text:
            continue
        plain = find_mentions(text) if _may_hold_plain_mentions(text, xrefs) else []
        if xrefs:
            plain = _clear_of_xrefs(text, plain, xrefs)
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

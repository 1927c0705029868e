"""Clause-level decisions of caption splitting: figure-wide notes, enumerations of trailers, text tied to
other panels, notes about every panel, and trimming the pieces (``figlink.text.subcaptions`` cuts the
caption; these read its pieces as character spans ``(start, end, labels)``)."""

from __future__ import annotations

import re

from figlink.text import grammar as g
from figlink.text.label_roles import Tok
from figlink.text.labels import label_order

_CLAUSE_BREAK = re.compile(r"[,;]\s+|\b(?:whereas|while)\s+")
_LEAD_CHARS = frozenset(g.DASHES + " \t\n\r\u00a0,;:.)]")
_TAIL_CHARS = frozenset(" \t\n\r\u00a0,;:([")

# A sentence that reads like a note about the whole figure.
_GENERIC_START = re.compile(
    r"""^\W*(?:(?:all|each|both)\s+)?(?:the\s+)?(?:scale\s*bars?|bars?\s*(?:[,:=]|represents?|indicates?|are|is)|(?:original\s+)?magnifications?\b|
        data\s+(?:are|were|is|represent|shown|presented)|values\s+(?:are|were|represent)|
        results\s+(?:are|were|represent)|error\s+bars|each\b|abbreviations?|n\s*=|
        p\s*[<=>\u2264]|arrows?\b|arrowheads?\b|asterisks?\b|sections\s+shown|photographs?\b|pictures\b|
        details?\b|see\b|doi\b|statistical|(?:reproduced|adapted|reprinted|modified|redrawn)\s+(?:with\s+permission\s+)?from\b|courtesy\b|h\s*&\s*e\s+stain|ha?ematoxylin|the\s+(?:images|panels|photographs|pictures|
        micrographs|graphs|data|results|experiments?)\b|images\s+(?:are|were)|experiments\s+were)""",
    re.I | re.X,
)
_GENERIC_ANY = re.compile(
    r"\b(?:all|both|each|every)\s+(?:the\s+)?(?:panels?|images?|pictures?|photographs?|micrographs?|figures?|"
    r"sections?|graphs?|plots?|experiments?)\b|\bin\s+all\s+(?:panels|images|cases)\b|\bin\s+this\s+figure\b",
    re.I,
)
WORD_CHAR = re.compile(r"\w")
_ITEM_CHARS = 60  # the longest item of an enumeration of trailers ("…, and unc-116 (rh24 sb79) animals (C)")
_ITEM_SEPARATORS = r"(?:[,/]|\band|\bor|\bvs|\bversus|\bas\s+well\s+as)"
_ITEM_SEPARATOR = re.compile(rf"\s*{_ITEM_SEPARATORS}\b", re.I)  # one opening an item
_ITEM_SEPARATOR_END = re.compile(rf"{_ITEM_SEPARATORS}\s*$", re.I)  # one closing it
_LEGEND_ITEM = re.compile(r"(?:^|[;.]\s*)[A-Z][\w+\-/()]{0,12}\s*[,:=]\s+[a-z]")
# Where the image came from: "(credit a: modification of work by …; b: …)", "Image credit: NASA".
_SOURCE_NOTE = re.compile(rf"(?P<paren>\(\s*)?(?<![\w-])(?:(?:image|photo|photograph)\s+)?credits?"
                          rf"(?:\s+{g.LABEL_LIST})?\s*:", re.I)


# A piece of the caption is a plain tuple ``(start, end, labels)`` (labels ``()`` = shared): a caption cuts a
# dozen of them and each is read once. Positional pieces carry more and stay objects (few captions have any).
Span = tuple[int, int, tuple[str, ...]]


def is_generic(sentence: str) -> bool:
    """A note about the whole figure: "Scale bars, 50 µm.", "Data are mean ± SD.", an abbreviation legend."""
    return bool(_GENERIC_START.match(sentence) or _GENERIC_ANY.search(sentence)
                or len(_LEGEND_ITEM.findall(sentence)) >= 2)


def source_notes(text: str, body: int) -> list[tuple[int, int]]:
    """Spans of image-credit notes after ``body``: a parenthesized note to its closing parenthesis, an open
    one to the end of the caption. They tell where each image came from, not what it shows, so they are
    shared text even when they name panels ("(credit a: …; b: …)")."""
    if "cred" not in text.lower():  # the note's word, in every case the pattern reads ("credİt": "cred" stays)
        return []  # most captions: no note (kept: 1.33x on the compiled caption split, 1.15x as .py; 13x on source_notes)
    return source_notes_plain(text, body)


def source_notes_plain(text: str, body: int) -> list[tuple[int, int]]:
    """:func:`source_notes` without its pre-test."""
    out: list[tuple[int, int]] = []
    for m in _SOURCE_NOTE.finditer(text, body):
        if out and m.start() < out[-1][1]:
            continue
        end = closing_paren(text, m.start(), m.end(), len(text)) if m.group("paren") else -1
        out.append((m.start(), end if end > 0 else len(text)))
    return out


def outside(start: int, end: int, cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[start, end)`` that none of the sorted ``cuts`` covers."""
    out: list[tuple[int, int]] = []
    c = start
    for a, b in cuts:
        if b <= c or a >= end:
            continue
        if a > c:
            out.append((c, a))
        c = min(b, end)
    if c < end:
        out.append((c, end))
    return out


def carve_shared(pieces: list[Span], spans: list[tuple[int, int]]) -> list[Span]:
    """The pieces with ``spans`` cut out of labeled pieces and given to the shared text."""
    if not spans:
        return pieces
    kept = [(a, b, labels) for s, e, labels in pieces for a, b in (outside(s, e, spans) if labels else [(s, e)])]
    return kept + [(a, b, ()) for a, b in spans]


def ties_to(named: "tuple[str, ...] | set[str]", group: tuple[str, ...]) -> bool:
    """Whether text inside ``group``'s text that names these panels is about them: it names one of the
    group's panels and one outside it ("In (A) and (B), …" after B's text). Naming only others is a
    pointer ("same as (A)", a stray "chain B)"), and the text stays the group's."""
    return bool(set(named) & set(group)) and bool(set(named) - set(group))


def named_beyond(refs: list[Tok], a: int, b: int, group: tuple[str, ...]) -> tuple[str, ...]:
    """The panels that references in ``[a, b)`` name when they tie the group to others (``ties_to``:
    "In (a) and (c), nuclei …; (b) and (d) show …" after c's text is about a and c), else ``()``."""
    named = {lab for t in refs if a <= t.start < b for lab in t.labels}
    return tuple(sorted(named, key=label_order)) if ties_to(named, group) else ()


def list_lead_in(text: str, anchors: list[Tok]) -> tuple[str, ...]:
    """The panels that the words before an inline list are about ("… in both (a) wild-type mice and (b)
    knockouts."): every opener of the list, when the sentence's openers are short items of one clause (no
    ";", "whereas" or "while" between two, at most ``_ITEM_CHARS`` apart); else ``()``."""
    openers = [t for t in anchors if t.role == "open"]
    if len(openers) < 2 or openers[0].at_start or len(openers) != len(anchors):
        return ()
    for a, b in zip(openers, openers[1:]):
        between = text[a.end:b.start]
        if len(between) > _ITEM_CHARS or ";" in between or re.search(r"\b(?:whereas|while)\b", between):
            return ()
    return tuple(sorted({lab for t in openers for lab in t.labels}, key=label_order))


def one_clause(text: str, trailers: list[Tok]) -> bool:
    """Whether the trailers enumerate short items of one clause ("wt (A–C), dpp-RNAi (D–F) and sog-RNAi
    (G–I) embryos"): no ";" between them, at most ``_ITEM_CHARS`` between two, and no item that ends
    in a list separator without one after the label before it ("(a) crossing tissue and (b) severe
    disease": openers read as trailers)."""
    if text.find(";", trailers[0].end, trailers[-1].start) >= 0:
        return False
    for a, b in zip(trailers, trailers[1:]):
        between = text[a.end:b.start]
        if len(between) > _ITEM_CHARS:
            return False
        if _ITEM_SEPARATOR.match(between) is None and _ITEM_SEPARATOR_END.search(between) is not None:
            return False
    return True


def closing_paren(text: str, s: int, i: int, e: int) -> int:
    """Where the parenthesis open at ``i`` closes ("(a. U-fiber; b. ILF; see Fig 1) across …"), or -1."""
    depth = text.count("(", s, i) - text.count(")", s, i)
    if depth <= 0:
        return -1
    for j in range(i, e):
        ch = text[j]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def clause_start(text: str, a: int, b: int) -> int:
    """Start of the last clause of ``text[a:b]`` (after a comma, semicolon, "whereas" or "while")."""
    best = a
    for m in _CLAUSE_BREAK.finditer(text, a, b):
        best = m.end()
    return best


def last_clause_note(text: str, pieces: list[Span]) -> list[Span]:
    """A figure-wide note closing the last panel's sentence after a ";" is shared ("(b) Survival curves;
    scale bars, 10 µm."; not a ";" inside parentheses), as the same note standing as a sentence of its own is
    (``_tail``)."""
    labeled = [i for i, p in enumerate(pieces) if p[2]]
    if not labeled:
        return pieces
    last = max(labeled, key=lambda i: pieces[i][0])  # by position: compiled code (mypyc) keeps no tuple's identity
    s, e, labels = pieces[last]
    k = text.find("; ", s, e)
    while k >= 0:
        if text.count("(", s, k) == text.count(")", s, k) and text.count("(", k, e) == text.count(")", k, e) \
                and _GENERIC_START.match(text[k + 2:e]):
            return pieces[:last] + pieces[last + 1:] + [(s, k, labels), (k + 1, e, ())]
        k = text.find("; ", k + 2, e)
    return pieces


def about_all_is_shared(text: str, pieces: list[Span], tokens: list[Tok]) -> list[Span]:
    """Pieces about every panel the caption names become shared ("Expression of X (A–D).", "Arrows mark
    the same cells in (a) and (b)."), with the label tokens that name them all: MedICaT's subcaption
    leaves out what describes all panels. Kept as they are when a panel would lose the only text that
    names it (the labels then only list the panels)."""
    every = {lab for _, _, labels in pieces for lab in labels}
    if len(every) < 2 or {lab for _, _, labels in pieces if set(labels) != every for lab in labels} != every:
        return pieces  # (some panel would lose the only text that names it)
    out: list[Span] = [(s, e, () if set(labels) == every else labels) for s, e, labels in pieces]
    about_all = [(s, e) for s, e, labels in pieces if set(labels) == every and WORD_CHAR.search(text, s, e)]
    for t in tokens:
        if t.role != "ref" and set(t.labels) == every and any(
                not text[e:t.start].strip() or not text[t.end:s].strip(" ,;:") for s, e in about_all):
            out.append((t.start, t.end, ()))  # "Expression of X (A–D).": the labels go with their text
    return out


def trim(text: str, a: int, b: int) -> tuple[int, int]:
    """Trim a span: spaces and leading punctuation; trailing separators and a dangling "and"/"or"."""
    while a < b and text[a] in _LEAD_CHARS:
        a += 1
    while b > a:
        if text[b - 1] in _TAIL_CHARS:
            b -= 1
        elif text[b - 4:b].lower() == " and" or (b - a == 3 and text[a:b].lower() == "and"):
            b -= 3
        elif text[b - 3:b].lower() == " or" or (b - a == 2 and text[a:b].lower() == "or"):
            b -= 2
        else:
            break
    # Keep a closing bracket that balances an opening one inside the span.
    while b < len(text) and text[b] == ")" and text.count("(", a, b) > text.count(")", a, b):
        b += 1
    return a, b


def merge_pieces(text: str, pieces: list[Span]) -> list[Span]:
    """Join neighbouring pieces about the same labels (only spaces between them), in order of start."""
    out: list[Span] = []
    for s, e, labels in sorted(pieces, key=lambda p: p[0]):
        if out and out[-1][2] == labels and (s <= out[-1][1] or not text[out[-1][1]:s].strip()):
            out[-1] = (out[-1][0], max(out[-1][1], e), labels)
        else:
            out.append((s, e, labels))
    return out

"""Gold inline references and panel letters read from JATS figure-xref markup, independently of
``figlink.ingest.jats`` (lxml directly, its own sentence splitter and letter reader).

Every ``<xref ref-type="fig">`` of the article ``<body>`` (outside figure and table captions) whose
``rid`` names ``<fig>`` elements gives one gold item per cited figure: the sentence that holds the xref
(a plain splitter: ``. ! ?`` and white space, not after an abbreviation such as "Fig." or "et al." or a
one-letter initial; a sentence may open in lower case, as "cDNA …" or "miR156f …" do) and the panel letters the markup writes for that figure:

- inside the xref text after the figure number: "Fig 4B" → b, "4e,f" → e f, "3a and 3b" → a b,
  "1A–C" and "1A–1C" → a b c, "Figures 1A and 2B" with ``rid="f1 f2"`` → f1: a, f2: b (numbers matched to the
  figures' labels);
- inside the xref text in brackets: "Figure 2(c)" → c, "Fig. 1(b–d)" → b c d;
- right after the xref: "<xref>Figure 1</xref>A,B)" → a b, "<xref>3</xref>a" → a, "<xref>4</xref>(c, d)" → c d, "<xref>4</xref>A2,B1)" → a b (sub-panels),
  "<xref>3a</xref>, b)" → a b, "Fig. <xref>7</xref>b, c were" → b c (a continuation letter of the same
  case, closed by a bracket or comma, or later in the alphabet than the letter before it);
- a second xref that says only a letter: "(Figure 1A, <xref>B</xref>)" → b;
- a range spread over two xrefs of one figure: "<xref>6A</xref>–<xref>C</xref>" → a b c,
  "<xref>3b</xref> to <xref>3e</xref>" → b c d e.

Items of one (sentence, figure) pair are merged (one inline reference per sentence and figure, its
panels the union). :func:`matches` tells whether a predicted citing sentence holds a gold xref: the xref's
tokens with up to three tokens on each side, inside the gold sentence, appear contiguously in it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from lxml import etree

_SKIP_ANCESTORS = {"fig", "fig-group", "table-wrap", "table-wrap-group", "supplementary-material", "caption"}
_CONTAINERS = {"p", "title", "td", "th", "list-item", "def", "disp-quote", "boxed-text"}
_NO_TEXT = {"fig", "fig-group", "table-wrap", "table-wrap-group", "supplementary-material", "disp-formula"}

_ABBREV = {"fig", "figs", "al", "e.g", "i.e", "eg", "ie", "vs", "ca", "cf", "approx", "no", "nos", "eq", "eqs",
           "ref", "refs", "resp", "dr", "st", "sp", "spp", "var", "subsp", "cv", "ssp", "mr", "mrs", "prof", "suppl",
           "tab", "vol", "p", "pp", "ed", "eds", "inc", "ltd", "co", "corp", "jr", "sr", "est", "min", "max", "etc.al"}
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*\s+(?=\S)")
_TOKEN = re.compile(r"\w+")
_KEYWORD = re.compile(r"(?i)^\s*(?:(?:supplementa(?:ry|l)|suppl\.?|additional|extended\s+data)\s+)?"
                      r"(?:fig(?:ure)?s?\.?|figures?)\s*")
_ITEM = re.compile(r"[Ss]?\d+|[A-Za-z]+|[–—−‐‑-]|&|,|;|\S")
_SEP_WORDS = {"and", "or", "&", ","}
_RANGE = {"–", "—", "−", "‐", "‑", "-", "to"}
_SUB = r"(?:\d(?=[,;)\]–—−‐‑-]|\s*$))?"  # a sub-panel number: "</xref>A2,B1)" → a b
_TAIL_FIRST = re.compile(rf"(\(?)([A-Za-z]){_SUB}(?![A-Za-z])")
_TAIL_MORE = re.compile(rf"\s*(,?\s*and|,?\s*&|,|[–—−‐‑-]|to)\s*([A-Za-z]){_SUB}(?![A-Za-z])")
_TAIL_CLOSED = re.compile(r"\s*[)\];,.]|\s*[–—−‐‑-]|\s+and\s|\s*$")


@dataclass
class GoldRef:
    """One cited figure of one sentence: the pair the benchmark scores."""
    article: str
    figure_id: str
    sentence: str
    panels: frozenset[str]
    anchors: list[str] = field(default_factory=list)  # one token string per xref of the pair
    xrefs: list[str] = field(default_factory=list)    # the xrefs' text as written (for reading)
    context: str = ""                                  # the xrefs with their raw neighbourhood


def norm_tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(unicodedata.normalize("NFKC", text))]


def matches(anchor: str, sentence_tokens: str) -> bool:
    """True when ``anchor`` (space-joined tokens) occurs in ``sentence_tokens`` (space-joined, padded)."""
    return f" {anchor} " in sentence_tokens


def padded(text: str) -> str:
    return " " + " ".join(norm_tokens(text)) + " "


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _flatten(el, out: list[str], xrefs: list[tuple[int, int, Any]]) -> None:
    """The container's text, skipping embedded figures and tables (their tails kept), with xref offsets."""
    if el.text:
        out.append(el.text)
    for ch in el:
        tag = _local(ch.tag)
        if tag in _NO_TEXT:
            pass
        elif tag == "xref":
            start = sum(map(len, out))
            out.append("".join(ch.itertext()))
            xrefs.append((start, sum(map(len, out)), ch))
        elif isinstance(ch.tag, str):
            _flatten(ch, out, xrefs)
        if ch.tail:
            out.append(ch.tail)


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """Sentence spans of a paragraph (see the module doc)."""
    cuts = [0]
    for m in _BOUNDARY.finditer(text):
        before = text[:m.start()].rsplit(None, 1)
        word = before[-1].lower().lstrip("([") if before else ""
        if word in _ABBREV or word.rstrip(".") in _ABBREV or re.fullmatch(r"[a-z]", word):
            continue
        cuts.append(m.end())
    cuts.append(len(text))
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]


def _fig_numbers(root) -> dict[str, str]:
    out = {}
    for fig in root.iter("{*}fig", "fig"):
        fid = fig.get("id")
        lab = fig.find("{*}label") if fig.find("{*}label") is not None else fig.find("label")
        m = re.search(r"[Ss]?\d+", "".join(lab.itertext())) if lab is not None else None
        if fid:
            out[fid] = m.group(0).upper().lstrip("S") if m else ""
    return out


def _expand(a: str, b: str) -> list[str]:
    a, b = a.lower(), b.lower()
    if a <= b and ord(b) - ord(a) <= 25:
        return [chr(c) for c in range(ord(a), ord(b) + 1)]
    return [a, b]


def xref_letters(text: str, rids: list[str], numbers: dict[str, str]) -> tuple[dict[str, list[str]], Optional[str]]:
    """Panel letters per cited figure written inside one xref's text, and the last letter's case-bearing
    form (for a continuation after the xref)."""
    rest = _KEYWORD.sub("", text, count=1)
    by_num = {numbers.get(r, ""): r for r in rids}
    current: Optional[str] = rids[0] if len(rids) == 1 else None
    letters: dict[str, list[str]] = {r: [] for r in rids}
    pending_range = False
    last: Optional[str] = None
    for tok in _ITEM.findall(rest):
        if re.fullmatch(r"[Ss]?\d+", tok):
            num = tok.upper().lstrip("S")
            before, current = current, rids[0] if len(rids) == 1 else by_num.get(num)
            if not (pending_range and current == before):  # "1C–1E": a range that repeats the number
                pending_range = False
                last = None
        elif len(tok) == 1 and tok.isalpha():
            if current is None:
                continue
            if pending_range and last is not None:
                letters[current] += _expand(last, tok)[1:]
            else:
                letters[current].append(tok.lower())
            last, pending_range = tok, False
        elif tok in _RANGE or tok.lower() == "to":
            pending_range = True
        elif tok.lower() in _SEP_WORDS or tok in (";",):
            pending_range = False
        elif tok in ("(", ")"):
            continue  # "2(c)", "1(b–d)": the letters in brackets after the number
        else:
            break  # a word ("left", "insets") or other text: no more letters
    return letters, last


def tail_letters(tail: str, last: Optional[str]) -> tuple[list[str], Optional[str]]:
    """Letters written right after an xref: attached ("</xref>A,B"), or continuing a letter the xref
    ended with ("3a</xref>, b)")."""
    out: list[str] = []
    pos = 0
    m = _TAIL_FIRST.match(tail)
    if m and (m.end() == len(tail) or not tail[m.end()].isalnum()) and (
            not m.group(1) or _TAIL_CLOSED.match(tail, m.end())):  # "</xref>(c, d)" but not "(a new …"
        out.append(m.group(2).lower())
        last, pos = m.group(2), m.end()
    elif last is None:
        return [], None
    while True:
        m = _TAIL_MORE.match(tail, pos)
        if not m or (last is not None and m.group(2).isupper() != last.isupper()):
            break
        # a letter that closes the list ("b)", "b,") or comes later in the alphabet ("7b, c were"),
        # not an article starting prose ("3a, a marked rise")
        if not _TAIL_CLOSED.match(tail, m.end()) and (last is None or m.group(2).lower() <= last.lower()):
            break
        if m.group(1) in _RANGE and last is not None:
            out += _expand(last, m.group(2))[1:]
        else:
            out.append(m.group(2).lower())
        last, pos = m.group(2), m.end()
    return out, last


def _skipped(x) -> bool:
    anc = x.getparent()
    while anc is not None:
        if _local(anc.tag) in _SKIP_ANCESTORS:
            return True
        anc = anc.getparent()
    return False


def _container(x):
    anc = x.getparent()
    while anc is not None and _local(anc.tag) not in _CONTAINERS:
        anc = anc.getparent()
    return anc


def gold_refs(path: Path) -> tuple[list[GoldRef], int]:
    """The gold (sentence, figure) pairs of one article and its number of body figure xref citations
    (one per cited figure of each xref)."""
    parser = etree.XMLParser(huge_tree=True, resolve_entities=False, no_network=True)
    root = etree.parse(str(path), parser).getroot()
    numbers = _fig_numbers(root)
    body = root.find(".//{*}body")
    if body is None:
        body = root.find(".//body")
    if body is None:
        return [], 0
    containers = []
    seen = set()
    for x in body.iter("{*}xref", "xref"):
        if x.get("ref-type") != "fig" or _skipped(x):
            continue
        if not [r for r in (x.get("rid") or "").split() if r in numbers]:
            continue
        c = _container(x)
        if c is not None and id(c) not in seen:
            seen.add(id(c))
            containers.append(c)
    pairs: dict[tuple[int, int, str], GoldRef] = {}
    n_cites = 0
    name = path.name
    for ci, c in enumerate(containers):
        parts: list[str] = []
        xrefs: list[tuple[int, int, Any]] = []  # (start, end, the <xref> element)
        _flatten(c, parts, xrefs)
        text = "".join(parts)
        sents = sentence_bounds(text)
        for k, (s, e, x) in enumerate(xrefs):
            if x.get("ref-type") != "fig":
                continue
            rids = [r for r in (x.get("rid") or "").split() if r in numbers]
            if not rids:
                continue
            si = next((i for i, (a, b) in enumerate(sents) if a <= s < b), len(sents) - 1)
            a, b = sents[si]
            letters, last = xref_letters(text[s:e], rids, numbers)
            nxt = xrefs[k + 1][0] if k + 1 < len(xrefs) else len(text)
            tail = text[e:nxt]
            more, _ = tail_letters(tail, last)
            if len(rids) == 1:
                letters[rids[0]] += more
                # a range over two xrefs of one figure: "6A</xref>–<xref>C", "3b</xref> to <xref>3i"
                if k + 1 < len(xrefs) and re.fullmatch(r"\s*(?:[–—−‐‑-]|to)\s*", tail) and last is not None:
                    nx = xrefs[k + 1]
                    if (nx[2].get("rid") or "").split() == rids:
                        nl, _ = xref_letters(text[nx[0]:nx[1]], rids, numbers)
                        if nl[rids[0]]:
                            letters[rids[0]] += _expand(last, nl[rids[0]][0])[1:-1]
            toks = _TOKEN.finditer(unicodedata.normalize("NFKC", text[a:b]))
            spans = [(m.start() + a, m.end() + a, m.group(0).lower()) for m in toks]
            inside = [i for i, (ts, te, _) in enumerate(spans) if te > s and ts < e]
            if inside:
                lo, hi = max(0, inside[0] - 3), min(len(spans), inside[-1] + 4)
            else:
                j = next((i for i, (ts, _, _) in enumerate(spans) if ts >= e), len(spans))
                lo, hi = max(0, j - 3), min(len(spans), j + 3)
            anchor = " ".join(t for _, _, t in spans[lo:hi])
            for r in rids:
                n_cites += 1
                g = pairs.setdefault((ci, si, r), GoldRef(name, r, " ".join(text[a:b].split()), frozenset()))
                g.panels = g.panels | frozenset(letters.get(r, []))
                g.anchors.append(anchor)
                g.xrefs.append(text[s:e])
                g.context += ("" if not g.context else " … ") + " ".join(
                    (text[max(a, s - 40):s] + "«" + text[s:e] + "»" + text[e:min(b, e + 25)]).split())
    return list(pairs.values()), n_cites


def paragraph_baseline(path: Path) -> dict[str, list[str]]:
    """The naive baseline: every paragraph that holds a figure xref cites that figure (no panels).
    Returns figure id → the paragraphs' padded token strings."""
    parser = etree.XMLParser(huge_tree=True, resolve_entities=False, no_network=True)
    root = etree.parse(str(path), parser).getroot()
    body = root.find(".//{*}body")
    out: dict[str, list[str]] = {}
    if body is None:
        return out
    for p in body.iter("{*}p", "p"):
        if _skipped(p):
            continue
        parts: list[str] = []
        xrefs: list[tuple[int, int, Any]] = []  # (start, end, the <xref> element)
        _flatten(p, parts, xrefs)
        text = None
        for _, _, x in xrefs:
            if x.get("ref-type") == "fig":
                text = text or padded("".join(parts))
                for r in (x.get("rid") or "").split():
                    out.setdefault(r, []).append(text)
    return out


def europepmc_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.xml"))


__all__ = ["GoldRef", "gold_refs", "paragraph_baseline", "matches", "padded", "norm_tokens", "sentence_bounds",
           "xref_letters", "tail_letters", "europepmc_files"]


def _iter_pairs(paths: Iterable[Path]):  # pragma: no cover - a helper for reading by hand
    for p in paths:
        yield from gold_refs(p)[0]

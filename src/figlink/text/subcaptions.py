"""Split a caption into shared text and subcaptions, following MedICaT's definition.

A *subcaption* is the text that describes some panels but not all of them; text about every panel is
``shared_text``. The splitter works in four steps, each on character spans of the original caption:

1. find label tokens (``figlink.text.labels``) outside figure mentions, keep the ones forming a sequence,
   and merge neighbours joined only by separators ("(A) and (B)", "(i)–(iv)");
2. give every token a role: an *opener* starts text about its panels ("(A) Weight of…", "A and C: 100X",
   "…from (A) KEGG network and (B) EHMN network"); a *trailer* closes a clause about them ("…positivity for
   PSA (a)."); anything else is a *reference* ("same as (A)", "panels A and C"), which never splits;
3. cut the caption into pieces: text before the first opener is shared unless a trailer or reference
   claims its sentence; the text after an opener belongs to it up to the next opener; sentences after the
   last group's first sentence return to shared once one reads like a note about the whole figure
   ("Scale bars, 50 µm.", "Data are mean ± SD.", an abbreviation legend);
4. group pieces by label set (multi-span: all text about panel b, wherever it stands, is b's), and add
   positional subcaptions for spatial references ("(upper left panel)", "Bottom: …").
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from figlink.model import CaptionSplit, Subcaption
from figlink.text.labels import LabelToken, accepted_labels, label_order, raw_label_tokens, sort_labels
from figlink.text.mentions import expand_letters, find_mentions, leading_figure_index
from figlink.text.sentences import sentence_spans
from figlink.text.spatial import PositionToken, find_positions

_DASH = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_JOIN = re.compile(rf"\s*(?:,\s*)?(?P<sep>and|&|or|to|through|[{_DASH}]|,)?\s*$", re.I)
_FUNCTION_WORDS = frozenset(
    "of in from for with and or the a an to on at by between into onto over under than that which where whereas "
    "while but".split())
_CLAUSE_WORDS = frozenset("and or in with to vs versus at on from for of but whereas while compared".split())
_CLAUSE_BREAK = re.compile(r"[,;]\s+|\b(?:whereas|while)\s+")
_NEXT_WORD = re.compile(r"\s*([A-Za-z]+)")
_LEAD_CHARS = frozenset(_DASH + " \t\n\r\u00a0,;:.)]")
_TAIL_CHARS = frozenset(" \t\n\r\u00a0,;:([")
_HEADING = re.compile(r"(?:(?<=[;,])\s*(?:and|or)|\b[A-Z][a-z]+)\s+$")
_PREV_WORD = re.compile(r"([A-Za-z]+)\W*$")
_SENTENCE_BREAK = re.compile(r"[.!?;]\s")
_IMAGE_NUMBER = re.compile(r"images?\s*\d")
_MERGEABLE = frozenset({"paren", "half", "panel", "panelparen"})
_ROMANS = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii")

# A sentence that reads like a note about the whole figure.
_GENERIC_START = re.compile(
    r"""^\W*(?:the\s+)?(?:scale\s*bars?|bars?\s*(?:[,:=]|represents?|indicates?|are|is)|(?:original\s+)?magnifications?\b|
        data\s+(?:are|were|is|represent|shown|presented)|values\s+(?:are|were|represent)|
        results\s+(?:are|were|represent)|error\s+bars|all\b|each\b|both\b|abbreviations?|n\s*=|
        p\s*[<=>\u2264]|arrows?\b|arrowheads?\b|asterisks?\b|sections\s+shown|photographs?\b|pictures\b|
        details?\b|see\b|doi\b|statistical|h\s*&\s*e\s+stain|ha?ematoxylin|the\s+(?:images|panels|photographs|pictures|
        micrographs|graphs|data|results|experiments?)\b|images\s+(?:are|were)|experiments\s+were)""",
    re.I | re.X,
)
_GENERIC_ANY = re.compile(
    r"\b(?:all|both|each|every)\s+(?:the\s+)?(?:panels?|images?|pictures?|photographs?|micrographs?|figures?|"
    r"sections?|graphs?|plots?|experiments?)\b|\bin\s+all\s+(?:panels|images|cases)\b",
    re.I,
)
_LEGEND_ITEM = re.compile(r"(?:^|[;.]\s*)[A-Z][\w+\-/()]{0,12}\s*[,:=]\s+[a-z]")


@dataclass
class _Tok:
    """A merged label token with its role."""

    start: int
    end: int
    labels: list[str]
    forms: set[str]
    note: bool = False
    role: str = "ref"
    at_start: bool = False


@dataclass
class _Piece:
    start: int
    end: int
    labels: tuple[str, ...]  # () = shared
    positions: tuple[str, ...] = ()
    hole_start: int | None = None  # where a positional piece's cue starts ("Left:"), cut from shared text
    hole_end: int | None = None  # where a closing cue ends ("… (top panel)"), cut from shared text


@dataclass
class _Ctx:
    text: str
    sents: list[tuple[int, int]]
    tokens: list[_Tok]
    pieces: list[_Piece] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)

    sent_starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.starts = [t.start for t in self.tokens]
        self.sent_starts = [s for s, _ in self.sents]

    def sentence_at(self, i: int) -> tuple[int, int] | None:
        """The sentence containing offset ``i``."""
        k = bisect.bisect_right(self.sent_starts, i) - 1
        if k >= 0 and self.sents[k][0] <= i < self.sents[k][1]:
            return self.sents[k]
        return None

    def tokens_in(self, a: int, b: int) -> list[_Tok]:
        """Tokens starting in ``[a, b)``."""
        return self.tokens[bisect.bisect_left(self.starts, a):bisect.bisect_left(self.starts, b)]


def _range(a: str, b: str) -> list[str]:
    if a in _ROMANS and b in _ROMANS and _ROMANS.index(a) < _ROMANS.index(b):
        return list(_ROMANS[_ROMANS.index(a):_ROMANS.index(b) + 1])
    if a.isdigit() and b.isdigit() and 0 < int(b) - int(a) <= 30:
        return [str(n) for n in range(int(a), int(b) + 1)]
    if len(a) == 1 and len(b) == 1:
        return expand_letters(a, b)
    return [a, b]


def _merge(text: str, tokens: list[LabelToken]) -> list[_Tok]:
    """Merge neighbours joined only by separators: "(A) and (B)", "(i)–(iv)", "(B) and C)"."""
    out: list[_Tok] = []
    for t in tokens:
        if out:
            prev = out[-1]
            gap = text[prev.end:t.start]
            m = _JOIN.fullmatch(gap) if len(gap) <= 8 else None
            if m is not None and prev.forms <= _MERGEABLE and t.form in _MERGEABLE and not prev.note:
                sep = (m.group("sep") or "").lower()
                if sep and (sep in _DASH or sep in ("to", "through")):
                    prev.labels = prev.labels[:-1] + _range(prev.labels[-1], t.labels[0]) + t.labels[1:]
                else:
                    prev.labels = prev.labels + t.labels
                prev.end = t.end
                prev.forms.add(t.form)
                prev.note = t.note
                continue
        out.append(_Tok(t.start, t.end, list(t.labels), {t.form}, t.note))
    for t in out:
        seen: dict[str, None] = {}
        for lab in t.labels:
            seen.setdefault(lab, None)
        t.labels = list(seen)
    return out


def _prev_char(text: str, i: int, floor: int) -> tuple[str, int]:
    j = i - 1
    while j >= floor and text[j] in " \t\n\u00a0":
        j -= 1
    return (text[j], j) if j >= floor else ("", j)


def _prev_word(text: str, i: int) -> str:
    m = _PREV_WORD.search(text[max(0, i - 20):i])
    return m.group(1).lower() if m else ""


def _next_char(text: str, i: int) -> str:
    j = i
    while j < len(text) and text[j] in " \t\n\u00a0":
        j += 1
    return text[j] if j < len(text) else ""


def _same_sentence(text: str, a: int, b: int) -> bool:
    return _SENTENCE_BREAK.search(text, a, b) is None


def _assign_roles(text: str, body: int, tokens: list[_Tok], sent_starts: set[int]) -> None:
    """Opener, trailer or reference for every token, reading the caption left to right.

    Mid-sentence labels take the style of their sentence: when its last label is followed by
    punctuation ("…specimen (b).") they are trailers, otherwise openers ("…from (A) KEGG and (B) EHMN").
    In a caption with openers, a label already described elsewhere and not part of the current group is
    a reference ("same as (A)").
    """
    opened: set[str] = set()
    order_all = sorted({lab for t in tokens for lab in t.labels}, key=label_order)
    current: set[str] = set()
    parent: set[str] = set()  # the last opener that was not a sub-label of the one before
    last: _Tok | None = None
    for k, t in enumerate(tokens):
        prev, pj = _prev_char(text, t.start, body)
        glued = bool(prev) and pj == t.start - 1 and prev.isalpha() and "paren" in t.forms
        t.at_start = (not prev) or t.start in sent_starts or prev in ".!?;:" or glued
        nxt = _next_char(text, t.end)
        content = bool(nxt) and nxt not in ".,;:)]"
        forms = t.forms
        labels = set(t.labels)
        pending = [lab for lab in order_all if lab not in opened]
        fresh = t.labels[0] not in opened and not labels & current
        sub = (bool(current) and labels < current) or (bool(parent) and labels < parent)
        may_trail = fresh or sub or not current
        if forms & {"dot", "colon", "bare"}:
            role = "open"  # kept only where a clause opens (see _label_tokens)
            t.at_start = True
        elif "panel" in forms and forms <= {"panel"}:
            role = "open" if t.at_start and (content or nxt == ":") else "ref"
        elif forms == {"panelparen"} and current:
            role = "ref"  # "(panel B)" inside a group's text points at a panel; it does not split
        elif t.at_start:
            role = "open" if content else "ref"
        elif not content:
            before = last if last is not None and _same_sentence(text, last.end, t.start) else None
            if before is not None and before.role == "open" and not before.at_start and not fresh \
                    and not labels < set(before.labels):
                role = "ref"  # "note that (I) is a magnified view of … (H)."
            else:
                role = "trail" if may_trail else "ref"
        else:
            role = _inline_role(text, t, last, fresh, sub, may_trail, prev)
        t.role = role
        last = t
        if role == "open":
            opened.update(t.labels)
            if not (parent and labels < parent) or t.at_start:
                parent = set(labels)
            current = set(t.labels)
        elif role == "trail":
            opened.update(t.labels)


def _inline_role(text: str, t: _Tok, last: _Tok | None, fresh: bool, sub: bool, may_trail: bool,
                 prev: str) -> str:
    """Role of a label inside a sentence and followed by words.

    Followed by a conjunction or preposition it closes the clause before it ("…wild-type (A) and unc-116
    (B) adults…", "…GOLPH2 (D) in comparison…"); after a function word it opens ("…from (A) KEGG
    network", "…images of (A) MTs alone"); before a capitalized word it opens, as in a run of openers
    ("(A) Bone marrow (B) Liver (C) Lung").
    """
    before = last if last is not None and _same_sentence(text, last.end, t.start) else None
    if before is not None and before.role == "trail":
        return "trail" if may_trail else "ref"
    after = _NEXT_WORD.match(text, t.end)
    nxt_word = after.group(1).lower() if after else ""
    if nxt_word in _CLAUSE_WORDS:
        return "trail" if may_trail else "ref"
    if not (fresh or sub):
        return "ref"
    if _prev_word(text, t.start) in _FUNCTION_WORDS:
        return "open"
    nxt = _next_char(text, t.end)
    if nxt.isupper() or nxt.isdigit():
        return "open"
    if prev == "," and (fresh or sub) and (before is None or before.role == "open"):
        return "open"
    return "trail" if may_trail else "ref"


def _is_generic(sentence: str) -> bool:
    if _GENERIC_START.match(sentence) or _GENERIC_ANY.search(sentence):
        return True
    return len(_LEGEND_ITEM.findall(sentence)) >= 2


def _segment(ctx: _Ctx, body: int) -> None:
    """Cut the caption into pieces, sentence by sentence (see the module docstring, step 3)."""
    group: tuple[str, ...] = ()  # labels that unlabeled text continues to describe
    opener_group: tuple[str, ...] = ()  # the last opener that was not a sub-label of the one before
    free: list[tuple[int, int, tuple[str, ...]]] = []  # sentences without anchors, after the last anchor
    last_anchor_sentence: list[_Tok] = []
    for s, e in ctx.sents:
        if e <= body:
            continue
        s = max(s, body)
        toks = ctx.tokens_in(s, e)
        anchors = [t for t in toks if t.role in ("open", "trail")]
        if not anchors:
            refs = tuple(sorted({lab for t in toks for lab in t.labels}, key=label_order))
            if refs and not group:
                ctx.pieces.append(_Piece(s, e, refs))
                continue
            free.append((s, e, group))
            continue
        for fs, fe, fg in free:
            ctx.pieces.append(_Piece(fs, fe, fg))
        free = []
        c = s
        last_labels = group
        sub_only = True  # every anchor of the sentence refines the enclosing group
        sub_openers = False
        trailer_sets: set[tuple[str, ...]] = set()
        prev_anchor: _Tok | None = None
        for t in anchors:
            labels = tuple(t.labels)
            is_sub = bool(opener_group) and set(labels) < set(opener_group) and t.start >= s
            if t.role == "open":
                if t.start > c:
                    head = group
                    if t is anchors[0] and not t.at_start and not is_sub and _next_char(ctx.text, t.end).islower():
                        head = labels  # "The case depicted in (E) and (F) has …": the sentence is theirs
                    ctx.pieces.append(_Piece(c, t.start, head))
                if not is_sub or t.at_start:
                    opener_group = labels
                    sub_only = False
                else:
                    sub_openers = True
                group = labels
            else:
                if prev_anchor is not None and prev_anchor.role == "open" and not is_sub:
                    # "(C) X, whereas Y (D) …": D claims Y only, and never all of C's text.
                    cut = _clause_start(ctx.text, c, t.start)
                    ctx.pieces.append(_Piece(c, cut if cut > c else t.start, group))
                    c = cut if cut > c else t.start
                if t.start > c:
                    ctx.pieces.append(_Piece(c, t.start, labels))
                if not is_sub:
                    group = labels
                    sub_only = False
                    trailer_sets.add(labels)
            last_labels = labels
            prev_anchor = t
            c = t.end
        if c < e:
            tail_labels = last_labels if anchors[-1].role == "trail" else group
            if anchors[-1].role == "trail" and set(last_labels) < set(opener_group):
                tail_labels = opener_group  # "…wild-type (A), unc-116 (B), and … dendrite." → the group
            ctx.pieces.append(_Piece(c, e, tail_labels))
        if (sub_only or sub_openers) and opener_group:
            group = opener_group  # sub-labels describe their sentence only
        elif len(trailer_sets) >= 2 and not opener_group:
            group = ()  # "X (A–D) and Y (E). Common text." enumerates; what follows is shared
        last_anchor_sentence = anchors
    _tail(ctx, free, group, _list_style(ctx, last_anchor_sentence))


def _clause_start(text: str, a: int, b: int) -> int:
    """Start of the last clause of ``text[a:b]`` (after a comma, semicolon, "whereas" or "while")."""
    best = a
    for m in _CLAUSE_BREAK.finditer(text, a, b):
        best = m.end()
    return best


def _list_style(ctx: _Ctx, anchors: list[_Tok]) -> bool:
    """The last labeled sentence enumerates short items ("(a) negative, (b) weak, (c) strong.")."""
    openers = [t for t in anchors if t.role == "open"]
    if len(openers) < 2:
        return False
    gaps = [openers[i + 1].start - openers[i].end for i in range(len(openers) - 1)]
    return not openers[-1].at_start or max(gaps) < 80


def _tail(ctx: _Ctx, free: list[tuple[int, int, tuple[str, ...]]], labels: tuple[str, ...],
          list_style: bool) -> None:
    """Sentences after the last labeled one: the last group's, a referenced panel's, or shared."""
    shared = list_style or not labels
    for s, e, _ in free:
        refs = ctx.tokens_in(s, e)
        named = {lab for t in refs for lab in t.labels}
        ref_labels = tuple(sorted(named, key=label_order)) if named - set(labels) else ()
        if ref_labels:
            ctx.pieces.append(_Piece(s, e, ref_labels))
            continue
        if not shared and _is_generic(ctx.text[s:e]):
            shared = True
        ctx.pieces.append(_Piece(s, e, () if shared else labels))


def _clean(text: str, a: int, b: int) -> tuple[int, int]:
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


def _positional(ctx: _Ctx, positions: list[PositionToken]) -> list[_Piece]:
    """Positional pieces for spatial references that open or close text inside a piece."""
    out: list[_Piece] = []
    cues = [t for t in positions if t.role in ("open", "trail")]
    cue_starts = [t.start for t in cues]
    for p in ctx.pieces:
        inside = cues[bisect.bisect_left(cue_starts, p.start):bisect.bisect_left(cue_starts, p.end)]
        for k, t in enumerate(inside):
            nxt = inside[k + 1].start if k + 1 < len(inside) else p.end
            sent = ctx.sentence_at(t.start)
            if t.role == "open":
                a, b = t.end, nxt
                colon = ctx.text[t.end - 1:t.end] in ":,)"
                if not colon:
                    a = t.start
                    b = min(b, sent[1] if sent else p.end)
                elif k + 1 == len(inside):
                    b = _before_generic(ctx, a, b)
            else:
                floor = inside[k - 1].end if k else p.start
                semi = ctx.text.rfind(";", floor, t.start)
                a, b = max(floor, sent[0] if sent else p.start, semi + 1), t.start
            if b > a and ctx.text[a:b].strip(" ,;:."):
                out.append(_Piece(a, b, p.labels, (t.position,), min(a, t.start), max(b, t.end)))
    return out


def _merge_pieces(text: str, pieces: list[_Piece]) -> list[_Piece]:
    """Join neighbouring pieces about the same labels (only spaces between them)."""
    out: list[_Piece] = []
    for p in sorted(pieces, key=lambda x: x.start):
        if out and out[-1].labels == p.labels and not text[out[-1].end:p.start].strip():
            out[-1] = _Piece(out[-1].start, max(out[-1].end, p.end), p.labels)
        else:
            out.append(p)
    return out


def _before_generic(ctx: _Ctx, a: int, b: int) -> int:
    """End of the text from ``a`` to ``b`` before its first figure-wide note (after its first sentence)."""
    lo = bisect.bisect_left(ctx.sent_starts, a)
    hi = bisect.bisect_left(ctx.sent_starts, b)
    for s, e in ctx.sents[lo:hi]:
        if s > a and _is_generic(ctx.text[s:e]):
            return s
    return b


def _carve(pieces: list[_Piece], holes: list[_Piece]) -> list[_Piece]:
    """Remove positional spans from shared pieces (text about one place is not about all panels)."""
    out: list[_Piece] = []
    for p in pieces:
        if p.labels:
            out.append(p)
            continue
        cuts = sorted((h.start if h.hole_start is None else h.hole_start, h.end if h.hole_end is None else h.hole_end)
                      for h in holes if not h.labels and h.start < p.end and p.start < h.end)
        c = p.start
        for a, b in cuts:
            if a > c:
                out.append(_Piece(c, a, ()))
            c = max(c, b)
        if c < p.end:
            out.append(_Piece(c, p.end, ()))
    return out


def _build(text: str, pieces: list[_Piece]) -> CaptionSplit:
    shared: list[str] = []
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[tuple[int, int]]] = {}
    for p in sorted(pieces, key=lambda x: x.start):
        a, b = _clean(text, p.start, p.end)
        if b <= a or not re.search(r"\w", text[a:b]):
            continue
        if not p.labels and not p.positions:
            shared.append(text[a:b])
            continue
        labels = tuple(sort_labels(p.labels))
        spans = groups.setdefault((labels, p.positions), [])
        if spans and spans[-1][1] >= a:
            spans[-1] = (spans[-1][0], max(spans[-1][1], b))
        else:
            spans.append((a, b))
    subs = [Subcaption(labels=list(k[0]), text=" ".join(text[a:b] for a, b in spans),
                       spans=[[a, b] for a, b in spans], positions=list(k[1]))
            for k, spans in groups.items()]
    subs.sort(key=lambda s: (s.spans[0][0], len(s.positions)))
    return CaptionSplit(shared_text=" ".join(shared), subcaptions=subs)


def _opens_clause(text: str, i: int, body: int, sent_starts: set[int]) -> bool:
    """Where a dot/colon label may stand: a sentence or clause start, after "; and", or after a one-word
    heading opening the sentence ("Genotypes A: …")."""
    prev, j = _prev_char(text, i, body)
    if not prev or i in sent_starts or prev in ".!?;:":
        return True
    m = _HEADING.search(text, max(body, i - 30), i)
    return m is not None and (m.start() == body or m.start() in sent_starts
                              or _prev_char(text, m.start(), body)[0] in ".!?;:,")


def _case_of(t: LabelToken) -> str:
    letters = [a for a in t.raw if a[:1].isalpha() and len(a.rstrip("'\u2032\u2019")) == 1]
    if not letters:
        return ""
    if all(a.isupper() for a in letters):
        return "upper"
    return "lower" if all(a.islower() for a in letters) else ""


def _is_comma_label(t: LabelToken) -> bool:
    return t.form == "colon" and t.comma


def _one_case(tokens: list[LabelToken]) -> list[LabelToken]:
    """Keep the letter labels of one case: a caption labels its panels in one case, so with "(A)", "(B)"
    the "(i)" and "(c)" of "dense arbor (i) … output arbor (c)" name something else.

    Both cases stay when they complete each other ("(A, B) … c-d) …"). Otherwise the case with more votes
    wins (a comma label such as "a, B0213.7;" counts half: legends look the same), then the one whose
    labels form the longer panel sequence, then the case of the first label.
    """
    by_case: dict[str, list[LabelToken]] = {"upper": [], "lower": []}
    for t in tokens:
        case = _case_of(t)
        if case:
            by_case[case].append(t)
    if not by_case["upper"] or not by_case["lower"]:
        return tokens
    letters = {c: {lab for t in ts for lab in t.labels} for c, ts in by_case.items()}
    if not letters["upper"] & letters["lower"]:
        if letters["upper"] | letters["lower"] <= accepted_labels(by_case["upper"] + by_case["lower"]):
            return tokens
    first = next(_case_of(t) for t in tokens if _case_of(t))

    def score(case: str) -> tuple[float, int, int]:
        votes = sum(0.5 if _is_comma_label(t) else 1.0 for t in by_case[case])
        return votes, len(accepted_labels(by_case[case])), int(first == case)

    keep = max(("upper", "lower"), key=score)
    return [t for t in tokens if _case_of(t) in ("", keep)]


def _label_tokens(text: str, body: int, sents: list[tuple[int, int]]) -> list[_Tok]:
    low = text.lower()
    maybe = "fig" in low or ("image" in low and _IMAGE_NUMBER.search(low) is not None)
    masked = [(m.start, m.end) for m in find_mentions(text) if m.end > body] if maybe else []
    starts = [s for s, _ in sents]
    raw = raw_label_tokens(text, body, None, masked, starts)
    start_set = set(starts)
    raw = [t for t in raw if not (t.form in ("dot", "colon") or any(a.isdigit() for a in t.raw))
           or _opens_clause(text, t.start, body, start_set)]
    raw = _one_case(raw)
    bare = [t for t in raw if t.form == "bare"]
    bare_letters = {t.labels[0] for t in bare}
    if not {"a", "b"} <= bare_letters:
        raw = [t for t in raw if t.form != "bare"]
    merged = _merge(text, raw)
    keep = accepted_labels([LabelToken(t.start, t.end, t.labels, "merged") for t in merged])
    kept: list[_Tok] = []
    for t in merged:
        labels = [lab for lab in t.labels if lab in keep]
        if labels:
            t.labels = labels
            kept.append(t)
    return kept


def split_caption(caption: str) -> CaptionSplit:
    """Shared text and per-panel subcaptions of ``caption``; spans are offsets into ``caption``.

    Subcaptions are grouped by label set, in order of first appearance; a subcaption with ``positions``
    refines a spatial part ("top-left", "row 2", "inset") of its labels' text (or of the shared text when
    it has no labels). A caption without panel labels gives all its text as ``shared_text``.
    """
    text = caption
    idx = leading_figure_index(text)
    body = idx.end if idx else 0
    sents = sentence_spans(text, body)
    tokens = _label_tokens(text, body, sents)
    _assign_roles(text, body, tokens, {s for s, _ in sents})
    ctx = _Ctx(text, sents, tokens)
    _segment(ctx, body)
    ctx.pieces = _merge_pieces(text, ctx.pieces)
    positions = find_positions(text, body)
    extra = _positional(ctx, positions)
    pieces = _carve(ctx.pieces, extra) + extra
    return _build(text, pieces)


def label_spans(split: CaptionSplit, label: str) -> list[list[int]]:
    """All caption spans about ``label`` (its subcaptions and positional refinements), merged, in order."""
    spans = sorted((list(s) for sub in split.subcaptions if label in sub.labels for s in sub.spans))
    merged: list[list[int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def label_text(split: CaptionSplit, caption: str, label: str) -> str:
    """Everything the caption says about panel ``label`` only (multi-span, in caption order)."""
    return " ".join(caption[a:b] for a, b in label_spans(split, label))


def panel_caption(split: CaptionSplit, caption: str, label: str) -> str:
    """The caption of one panel: the shared text followed by the panel's own text."""
    own = label_text(split, caption, label)
    return f"{split.shared_text} {own}".strip()


def split_labels(split: CaptionSplit) -> list[str]:
    """The distinct panel labels of a split, in label order."""
    return sort_labels({lab for s in split.subcaptions for lab in s.labels})


__all__ = ["split_caption", "label_spans", "label_text", "panel_caption", "split_labels"]

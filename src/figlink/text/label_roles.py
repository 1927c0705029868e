"""Panel-label tokens of a caption and the role each one plays.

``find_label_tokens`` reads the label grammar of ``figlink.text.labels`` outside figure mentions, keeps one
letter case and the labels that form a sequence, and merges neighbours joined only by separators ("(A) and
(B)", "(i)–(iv)"). ``assign_roles`` then reads the caption left to right and marks every token as an
*opener* (it starts text about its panels: "(A) Weight of…", "A and C: 100X", "…from (A) KEGG network"),
a *trailer* (it closes a clause about them: "…positivity for PSA (a).") or a *reference* ("same as (A)",
"panels A and C"), which never splits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from figlink.text.labels import LabelToken, accepted_labels, raw_label_tokens
from figlink.text import grammar as g
from figlink.text.mentions import find_mentions

# What may stand between two label tokens that merge: "(A) and (B)", "(i)–(iv)", "(A), (B)".
_JOIN = re.compile(rf"\s*(?:,\s*)?(?P<sep>{g.words_pattern(g.LABEL_JOIN_WORDS)}|{g.DASH}|,)?\s*$", re.I)
_FUNCTION_WORDS = frozenset(
    "of in from for with and or the a an to on at by between into onto over under than that which where whereas "
    "while but".split())
_ENUMERATION_JOINS = frozenset(("and", "or"))  # what stands before the next item of an inline list
_CLAUSE_WORDS = frozenset("and or in with to vs versus at on from for of but whereas while compared".split())
_NEXT_WORD = re.compile(r"\s*([A-Za-z]+)")
_HEADING = re.compile(r"(?:(?<=[;,])\s*(?:and|or)|\b[A-Z][a-z]+)\s+$")
_PREV_WORD = re.compile(r"([A-Za-z]+)\W*$")
_SENTENCE_BREAK = re.compile(r"[.!?;]\s")
_SPACES = " \t\n\u00a0"  # what _prev_char and next_char skip
_MERGEABLE = frozenset({"paren", "half", "panel", "panelparen"})
_CLAUSE_FORMS = frozenset({"dot", "colon"})
_OPENING_FORMS = frozenset({"dot", "colon", "bare"})


@dataclass(slots=True)
class Tok:
    """A label token after merging, with its role (open, trail, ref)."""

    start: int
    end: int
    labels: list[str]
    forms: set[g.LabelForm]
    note: bool = False
    role: g.LabelRole = "ref"
    at_start: bool = False


def _merge(text: str, tokens: list[LabelToken]) -> list[Tok]:
    """Merge neighbours joined only by separators: "(A) and (B)", "(i)–(iv)", "(B) and C)"."""
    out: list[Tok] = []
    open_ = False  # the last token may take in the next: written in mergeable forms only, with no note
    for t in tokens:
        # (Neighbours merge across at most 8 characters.)
        if open_ and t.start - out[-1].end <= 8 and t.form in _MERGEABLE:
            prev = out[-1]
            m = _JOIN.fullmatch(text[prev.end:t.start])
            if m is not None:
                sep = (m.group("sep") or "").lower()
                expanded = g.expand_range(prev.labels[-1], t.labels[0]) if sep and g.is_range(sep) else None
                if expanded is not None:
                    prev.labels = prev.labels[:-1] + expanded + list(t.labels[1:])
                else:
                    prev.labels = prev.labels + list(t.labels)
                prev.end = t.end
                prev.forms.add(t.form)
                prev.note = t.note
                open_ = not t.note
                continue
        out.append(Tok(t.start, t.end, list(t.labels), {t.form}, t.note))
        open_ = t.form in _MERGEABLE and not t.note
    for tok in out:
        if len(tok.labels) > 1:
            tok.labels = list(dict.fromkeys(tok.labels))  # first occurrences, in order
    return out


def _prev_char(text: str, i: int, floor: int) -> tuple[str, int]:
    j = i - 1
    while j >= floor and text[j] in _SPACES:
        j -= 1
    return (text[j], j) if j >= floor else ("", j)


def _prev_word(text: str, i: int) -> str:
    m = _PREV_WORD.search(text[max(0, i - 20):i])
    return m.group(1).lower() if m else ""


def next_char(text: str, i: int) -> str:
    j = i
    while j < len(text) and text[j] in _SPACES:
        j += 1
    return text[j] if j < len(text) else ""


def _same_sentence(text: str, a: int, b: int) -> bool:
    return _SENTENCE_BREAK.search(text, a, b) is None


def assign_roles(text: str, body: int, tokens: list[Tok], sent_starts: set[int]) -> None:
    """Opener, trailer or reference for every token, reading the caption left to right.

    Mid-sentence labels take the style of their sentence: when its last label is followed by
    punctuation ("…specimen (b).") they are trailers, otherwise openers ("…from (A) KEGG and (B) EHMN").
    In a caption with openers, a label already described elsewhere and not part of the current group is
    a reference ("same as (A)").
    """
    opened: set[str] = set()
    current: set[str] = set()
    parent: set[str] = set()  # the last opener that was not a sub-label of the one before
    last: Tok | None = None
    for n, t in enumerate(tokens):
        prev, pj = _prev_char(text, t.start, body)
        glued = bool(prev) and pj == t.start - 1 and prev.isalpha() and "paren" in t.forms
        # After a period only where the sentence splitter starts a sentence ("sp. nov. (A-J)" does not).
        t.at_start = (not prev) or t.start in sent_starts or prev in "!?;:" or glued
        nxt = next_char(text, t.end)
        content = bool(nxt) and nxt not in ".,;:)]"
        forms = t.forms
        labels = set(t.labels)
        fresh = t.labels[0] not in opened and labels.isdisjoint(current)
        sub = (bool(current) and labels < current) or (bool(parent) and labels < parent)
        may_trail = fresh or sub or not current
        role: g.LabelRole
        if not forms.isdisjoint(_OPENING_FORMS):
            role = "open"  # kept only where a clause opens (see _label_tokens)
            t.at_start = True
        elif forms == {"panel"}:
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
        elif fresh and _enumerates(text, t, tokens[n + 1] if n + 1 < len(tokens) else None):
            role = "open"
        else:
            role = _inline_role(text, t, last, fresh, sub, may_trail, prev)
        t.role = role
        last = t
        if role == "open":
            opened.update(t.labels)
            # (``labels`` is a new set per token and these sets are only read, so they may share it.)
            if not (parent and labels < parent) or t.at_start:
                parent = labels
            current = labels
        elif role == "trail":
            opened.update(t.labels)


def _enumerates(text: str, t: Tok, nxt: Tok | None) -> bool:
    """Does ``t`` open the first item of an inline list, its next label in the same sentence coming
    after words and a conjunction ("whether (a) on the road or (b) via …", "like (a) a bog …, and (b) the
    rumen")? Trailing labels close their words instead ("wild-type (A) and unc-116 (B) adults")."""
    if nxt is None or not _same_sentence(text, t.end, nxt.start):
        return False
    between = text[t.end:nxt.start]
    return len(between.split()) >= 2 and _prev_word(text, nxt.start) in _ENUMERATION_JOINS


def _inline_role(text: str, t: Tok, last: Tok | None, fresh: bool, sub: bool, may_trail: bool,
                 prev: str) -> g.LabelRole:
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
    nxt = next_char(text, t.end)
    if nxt.isupper() or nxt.isdigit():
        return "open"
    if prev == "," and (fresh or sub) and (before is None or before.role == "open"):
        return "open"
    return "trail" if may_trail else "ref"


def _opens_clause(text: str, i: int, body: int, sent_starts: "set[int] | list[int]") -> bool:
    """Where a dot/colon label may stand: a sentence or clause start, after "; and", or after a one-word
    heading opening the sentence ("Genotypes A: …")."""
    prev, j = _prev_char(text, i, body)
    if not prev or i in sent_starts or prev in ".!?;:(":
        return True
    m = _HEADING.search(text, max(body, i - 30), i)
    return m is not None and (m.start() == body or m.start() in sent_starts
                              or _prev_char(text, m.start(), body)[0] in ".!?;:,")


def _atom_traits(raw: tuple[str, ...]) -> tuple[str, bool]:
    """Of a token's atoms (``raw``): "upper" or "lower" when its single letters are all of that case, else
    ""; and whether one of them is a number."""
    digits = any(map(str.isdigit, raw))
    letters = [a for a in raw if a[:1].isalpha() and len(g.label_core(a)) == 1]
    if not letters:
        return "", digits
    if all(a.isupper() for a in letters):
        return "upper", digits
    return ("lower" if all(a.islower() for a in letters) else ""), digits


def _is_comma_label(t: LabelToken) -> bool:
    return t.form == "colon" and t.comma


def _one_case(tokens: list[LabelToken], cases: list[str]) -> list[LabelToken]:
    """Keep the letter labels of one case: a caption labels its panels in one case, so with "(A)", "(B)"
    the "(i)" and "(c)" of "dense arbor (i) … output arbor (c)" name something else.

    Both cases stay when they complete each other ("(A, B) … c-d) …"). Otherwise the case with more votes
    wins (a comma label such as "a, B0213.7;" counts half: legends look the same), then the one whose
    labels form the longer panel sequence, then the case of the first label. ``cases`` are the tokens'
    letter cases (``_atom_traits``).
    """
    if "upper" not in cases or "lower" not in cases:
        return tokens
    by_case: dict[str, list[LabelToken]] = {"upper": [], "lower": []}
    for t, case in zip(tokens, cases):
        if case:
            by_case[case].append(t)
    letters = {c: {lab for t in ts for lab in t.labels} for c, ts in by_case.items()}
    if not letters["upper"] & letters["lower"]:
        if letters["upper"] | letters["lower"] <= accepted_labels(letters["upper"] | letters["lower"]):
            return tokens
    first = next(case for case in cases if case)

    def score(case: str) -> tuple[float, int, int]:
        votes = sum(0.5 if _is_comma_label(t) else 1.0 for t in by_case[case])
        return votes, len(accepted_labels(letters[case])), int(first == case)

    keep = max(("upper", "lower"), key=score)
    return [t for t, case in zip(tokens, cases) if case in ("", keep)]


def find_label_tokens(text: str, body: int, sents: list[tuple[int, int]]) -> list[Tok]:
    """Panel-label tokens of ``text`` after its figure index ends at ``body``, merged and filtered (see the
    module docstring); ``sents`` are its sentence spans."""
    starts = [s for s, _ in sents]
    mentions = [(m.start, m.end) for m in find_mentions(text) if m.end > body]
    raw = raw_label_tokens(text, body, mentions, starts)
    # Dot/colon labels and numbers only where a clause opens.
    tokens: list[LabelToken] = []
    cases: list[str] = []
    for t in raw:
        case, digits = _atom_traits(t.raw)
        if (digits or t.form in _CLAUSE_FORMS) and not _opens_clause(text, t.start, body, starts):
            continue
        tokens.append(t)
        cases.append(case)
    tokens = _one_case(tokens, cases)
    # Bare letters count only as a style of the caption: "a …", "b …" both there.
    if not {"a", "b"} <= {t.labels[0] for t in tokens if t.form == "bare"}:
        tokens = [t for t in tokens if t.form != "bare"]
    # A list that names a letter outside the panel sequence is no list of panels ("(H & E)"): it goes whole.
    keep = accepted_labels(lab for t in tokens for lab in t.labels)
    tokens = [t for t in tokens if len(t.labels) == 1 or all(lab in keep for lab in t.labels)]
    merged = _merge(text, tokens)
    keep = accepted_labels(lab for t in merged for lab in t.labels)
    kept: list[Tok] = []
    for tok in merged:
        tok.labels = [lab for lab in tok.labels if lab in keep]
        if tok.labels:
            kept.append(tok)
    return kept


__all__ = ["Tok", "find_label_tokens", "assign_roles", "next_char"]

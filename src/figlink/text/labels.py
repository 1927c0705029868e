"""The panel-label grammar of captions: where a caption names panels, and which panels it names.

Recognized forms (upper or lower case): ``(a)`` ``a)`` ``a.`` ``A:`` ``(A–C)`` ``(a,b)`` ``(a and b)``
``(a, c, and e)`` ``(i)–(iv)`` ``1)`` ``(A-left)`` ``(A, top)`` ``A'`` ``panels A and B``, and a bare
letter opening a sentence ("a *10 magnification…") when the caption uses that style consistently.
Ranges expand (``A–C`` → a, b, c). Letters that figure mentions already claim ("Figure 1a") are masked
by the caller. A final pass keeps only labels that form a plausible sequence (a, b, c … with small gaps),
so abbreviation legends such as "(M, methylated; U, unmethylated)" are not taken for panels.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Collection, Iterable

from figlink.text import grammar as g

_POSITION_IN_ITEM = re.compile(g.LABEL_POSITION, re.I)
_SPLIT = re.compile(f"({g.LABEL_SEPARATOR})")
_ATOM = re.compile(g.LABEL_ATOM)
_BY_START = operator.attrgetter("start")


@dataclass(slots=True)
class LabelToken:
    """A place where the caption names panels: its span, the panels, and how it is written."""

    start: int
    end: int
    labels: tuple[str, ...]
    form: g.LabelForm
    positions: tuple[str, ...] = ()
    raw: tuple[str, ...] = ()  # atoms as written, before the sequence check
    note: bool = False  # "(C, in red, 200*)": the parenthesis carries more than labels
    comma: bool = False  # written "A, text" (weaker evidence than "(A)": legends look the same)


def _position_of(text: str) -> str:
    words = [p for w in re.findall(r"[a-z]+", text.lower()) if (p := g.place_of(w)) is not None]
    seen: list[str] = []
    for w in words:
        if w not in seen:
            seen.append(w)
    return "-".join(seen)


def _atoms(listing: str) -> tuple[list[str], list[str], list[str]] | None:
    """Atoms, separators and positions of a label list; ``None`` when it is not one."""
    parts = _SPLIT.split(listing)
    atoms: list[str] = []
    seps: list[str] = []
    positions: list[str] = []
    for k, part in enumerate(parts):
        if k % 2:
            seps.append(part.strip().lower())
            continue
        m = _POSITION_IN_ITEM.search(part)
        if m is not None and m.start() > 0:
            positions.append(_position_of(m.group(0)))
            part = part[: m.start()]
        atom = part.strip()
        if _ATOM.fullmatch(atom) is None:
            return None
        atoms.append(atom)
    return atoms, seps, positions


def _expand(atoms: list[str], seps: list[str]) -> list[str]:
    """Lower-case labels with ranges expanded: A–C → a, b, c; (i)–(iv) → i, ii, iii, iv."""
    out: list[str] = [atoms[0]]
    for sep, atom in zip(seps, atoms[1:]):
        expanded = g.expand_range(out[-1], atom) if g.is_range(sep) else None
        if expanded is None:
            out.append(atom)
        else:
            out[-1:] = expanded
    return [a.lower() for a in out]


def _valid_atoms(atoms: list[str]) -> bool:
    """Atoms longer than one character must be roman numerals, primes, doubled letters or numbers."""
    for a in atoms:
        core = a.rstrip(g.PRIMES)
        if len(core) == 1 or core.isdigit():
            continue
        low = core.lower()
        if low in g.ROMAN_VALUE and (core.islower() or core.isupper()):
            continue
        if len(core) == 2 and core.isalpha() and core.islower():
            continue  # "aa", "ab": labels past z (kept only when the sequence reaches z)
        return False
    return True


def _token(m: re.Match[str], form: g.LabelForm) -> LabelToken | None:
    """The token of a match of one of the grammar's label forms (with its "note" and "p" groups, if any)."""
    groups = m.groupdict()
    listing, has_note, punct = groups["list"], groups.get("note") is not None, groups.get("p")
    parsed = _atoms(listing)
    if parsed is None:
        return None
    atoms, seps, positions = parsed
    note = has_note
    if not _valid_atoms(atoms) and form in ("paren", "panelparen"):
        # "(E, red, 200*)": labels first, then a note after a comma.
        k = next(i for i in range(len(atoms)) if not _valid_atoms([atoms[i]]))
        if k == 0 or seps[k - 1] not in (",", ";"):
            return None
        atoms, seps, note = atoms[:k], seps[:k - 1], True
    if not _valid_atoms(atoms):
        return None
    if form == "dot" and any(a.isdigit() for a in atoms):
        return None  # "5." and "10:" are numbers, not labels
    comma = form == "dot" and punct == ","
    if form == "dot" and punct != ".":
        form = "colon"
    return LabelToken(m.start(), m.end(), tuple(_expand(atoms, seps)), form, tuple(positions), tuple(atoms),
                      note, comma)


def _free(m: re.Match[str], taken: list[tuple[int, int]]) -> bool:
    """Whether a match overlaps none of the ``taken`` spans."""
    start, end = m.span()
    return not any(a < end and start < b for a, b in taken)


def _scan(pattern: re.Pattern[str], form: g.LabelForm, text: str, start: int,
          taken: list[tuple[int, int]]) -> list[LabelToken]:
    """Tokens written ``form`` where ``pattern`` matches in ``text[start:]`` clear of ``taken``."""
    out: list[LabelToken] = []
    for m in pattern.finditer(text, start):
        tok = _token(m, form) if _free(m, taken) else None
        if tok is not None:
            out.append(tok)
    return out


def _scan_half(text: str, start: int, taken: list[tuple[int, int]]) -> list[LabelToken]:
    """"a)", "A and B)": a closing parenthesis after a short word, unless it closes a note ("(… B)")."""
    out: list[LabelToken] = []
    i = text.find(")", start)
    while i != -1:
        j = _word_before(text, start, i)
        if j >= 0 and not _closes_note(text, start, j):
            m = g.LABEL_HALF.search(text, max(start, i - 40), i + 1)
            if m is not None and _free(m, taken):
                tok = _token(m, "half")
                if tok is not None:
                    out.append(tok)
        i = text.find(")", i + 1)
    return out


def _word_before(text: str, start: int, i: int) -> int:
    """Where the word of one to four letters, digits or primes before ``i`` starts (at ``start`` or after
    a character that is none of these); -1 when there is none (the walk stops after six characters)."""
    j = i
    lo = max(start, i - 6)
    while j > lo and (text[j - 1].isalnum() or text[j - 1] in g.PRIMES):
        j -= 1
    return j if 0 < i - j <= 4 and (j == start or not text[j - 1].isalnum()) else -1


def _closes_note(text: str, start: int, j: int) -> bool:
    """"(FMNH PR 2512 Vertebra B)": a ")" that closes an earlier "(" ends a note, not a label."""
    return text.rfind("(", max(start, j - 200), j) > text.rfind(")", max(start, j - 200), j)


def _dot_label_tokens(text: str, starts: set[int], taken: list[tuple[int, int]]) -> list[LabelToken]:
    """LABEL_PUNCT tokens ("A.", "b:", "A and C:") matched at each of ``starts`` (clause starts)."""
    out: list[LabelToken] = []
    for s in starts:
        m = g.LABEL_PUNCT.match(text, s)
        if m is not None and _free(m, taken):
            tok = _token(m, "dot")
            if tok is not None:
                out.append(tok)
    return out


# Where a clause opens: after "; and", ", or", or after ".", ";", ":", "!", "?", "(" and spaces. A period
# after a one-letter word and before a letter ("S.E.M.", "e.g.") abbreviates: it opens nothing.
CLAUSE_END_PLAIN = re.compile(r"[;,]\s*(?:and|or)\s+|[;:!?(]\s*|\.\s+|(?<![^A-Za-z][A-Za-z])(?<!^[A-Za-z])\.")
# The same ends, written with one leading character class so the regex engine can skip ahead to a mark
# (kept: 1.23x on the label finder; the tests compare it with CLAUSE_END_PLAIN).
_CLAUSE_END = re.compile(r"[.;:!?(,](?:(?<=[;,])\s*(?:and|or)\s+|(?<=[;:!?(])\s*|(?<=\.)\s+"
                         r"|(?<=\.)(?<![^A-Za-z][A-Za-z]\.)(?<!^[A-Za-z]\.))")
# A heading word before a label: "Genotypes A: …".
_HEADING_WORD = re.compile(r"[A-Z][a-z]+\s+(?=[A-Za-z]{1,4}\s*:)")


def _bare_tokens(text: str, starts: list[int], masked: list[tuple[int, int]]) -> list[LabelToken]:
    """Single letters opening a sentence; an upper-case one must be followed by a capitalized word
    ("A Representative…", not "A representative…" nor "B cells…")."""
    out: list[LabelToken] = []
    for s in starts:
        m = g.LABEL_BARE.match(text, s)
        if m is None or not _free(m, masked):
            continue
        letter = m.group("list")
        nxt = text[m.end():m.end() + 1]
        if letter.isupper() and not (nxt.isupper() or nxt.isdigit()):
            continue
        out.append(LabelToken(m.start(), m.end(), (letter.lower(),), "bare", (), (letter,)))
    return out


def raw_label_tokens(text: str, start: int = 0, masked: list[tuple[int, int]] | None = None,
                     sentence_starts: list[int] | None = None) -> list[LabelToken]:
    """Every candidate label token in ``text[start:]`` outside ``masked`` spans, before the sequence check,
    in order.

    The forms are read one after another, each only clear of the tokens of the forms before it. Dot and
    colon labels are looked for where a clause opens (after a clause end, at a sentence start, at
    ``start``, after a heading word: "Genotypes A: …"), bare letters at ``sentence_starts``."""
    taken = list(masked or [])
    tokens: list[LabelToken] = []

    def keep(found: list[LabelToken]) -> None:
        tokens.extend(found)
        taken.extend((t.start, t.end) for t in found)

    keep(_scan(g.LABEL_PANEL_PAREN, "panelparen", text, start, taken))
    keep(_scan(g.LABEL_PAREN, "paren", text, start, taken))
    keep(_scan(g.LABEL_PANEL_WORD, "panel", text, start, taken))
    keep(_scan_half(text, start, taken))
    opening = (sentence_starts or []) + [start]
    clause_starts = {m.end() for m in _CLAUSE_END.finditer(text, start)}
    clause_starts.update(opening)
    clause_starts.update(m.end() for i in opening if (m := _HEADING_WORD.match(text, i)) is not None)
    keep(_dot_label_tokens(text, clause_starts, taken))
    keep(_bare_tokens(text, sentence_starts or [], taken))
    # No two tokens start at the same place (dot labels start at distinct places), so this order is the
    # only one.
    tokens.sort(key=_BY_START)
    return tokens


def _letter_index(label: str) -> int | None:
    core = label.rstrip(g.PRIMES)
    if len(core) == 1 and core.isalpha():
        return ord(core) - ord("a")
    if len(core) == 2 and core.isalpha():
        return 26 + (ord(core[0]) - ord("a")) * 26 + (ord(core[1]) - ord("a"))
    return None


def accepted_labels(labels: Iterable[str], max_gap: int = 2) -> set[str]:
    """Of ``labels``, those that form a plausible panel sequence.

    Letters are kept from the smallest one (which must be among a–c) while consecutive letters differ by
    at most ``max_gap``; multi-letter romans (ii, iv) switch i, v and x to roman numerals unless the
    letters already run past h; numbers count only when no letters are found and 1 and 2 are there.
    """
    labels = list(labels)
    letters: set[int] = set()
    romans: set[str] = set()
    numbers: set[int] = set()
    for lab in labels:
        core = lab.rstrip(g.PRIMES)
        if core.isdigit():
            numbers.add(int(core))
        elif core in g.ROMAN_VALUE and len(core) > 1:
            romans.add(core)
        else:
            idx = _letter_index(core)
            if idx is not None:
                letters.add(idx)
    roman_mode = bool(romans) and not ({7, 6} <= letters)  # no g, h before i
    if roman_mode:
        for r in ("i", "v", "x"):
            idx = ord(r) - ord("a")
            if idx in letters and not {idx - 1, idx - 2} & letters:
                letters.discard(idx)
                romans.add(r)
    keep: set[str] = set()
    chain: list[int] = []
    for idx in sorted(letters):
        if not chain:
            if idx > 2:
                break
            chain.append(idx)
        elif idx - chain[-1] <= max_gap:
            chain.append(idx)
        else:
            break
    for idx in chain:
        keep.add(chr(ord("a") + idx) if idx < 26 else
                 chr(ord("a") + (idx - 26) // 26) + chr(ord("a") + (idx - 26) % 26))
    if 25 not in chain:
        keep = {k for k in keep if len(k) == 1}
    if romans:
        ordered = sorted(g.ROMAN_VALUE[r] for r in romans)
        if ordered[0] <= 2:
            prev = ordered[0]
            for n in ordered:
                if n - prev > max_gap:
                    break
                keep.add(g.ROMANS[n - 1])
                prev = n
    if not chain and {1, 2} <= numbers:
        ordered_n = sorted(numbers)
        if ordered_n[0] <= 2:
            prev = ordered_n[0]
            for n in ordered_n:
                if n - prev > max_gap:
                    break
                keep.add(str(n))
                prev = n
    # A primed label ("B′", "ii′") is a panel of its own wherever its unprimed label is.
    keep.update(lab for lab in labels if lab.rstrip(g.PRIMES) != lab and lab.rstrip(g.PRIMES) in keep)
    return keep


def label_order(label: str) -> tuple[int, int]:
    """Sort key of a label: letters a…z, aa…, then romans, then numbers."""
    core = label.rstrip(g.PRIMES)
    idx = None if (len(core) > 1 and core in g.ROMAN_VALUE) else _letter_index(core)
    if idx is not None:
        return (0, idx * 4 + (len(label) - len(core)))
    if core in g.ROMAN_VALUE:
        return (1, g.ROMAN_VALUE[core] * 4 + (len(label) - len(core)))
    return (2, int(core) if core.isdigit() else 0)


def sort_labels(labels: "Collection[str]") -> list[str]:
    """Labels in panel order; with multi-letter romans present, i, v and x sort as romans."""
    roman = any(len(lab) > 1 and lab in g.ROMAN_VALUE for lab in labels)

    def key(lab: str) -> tuple[int, int]:
        core = lab.rstrip(g.PRIMES)
        if roman and core in g.ROMAN_VALUE:
            return (1, g.ROMAN_VALUE[core] * 4 + (len(lab) - len(core)))
        return label_order(lab)

    return sorted(set(labels), key=key)


__all__ = ["LabelToken", "raw_label_tokens", "accepted_labels", "label_order", "sort_labels"]

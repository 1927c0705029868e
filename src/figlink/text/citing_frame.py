"""A citing sentence without its figure reference: what is left reads like a caption.

"Figure 4 shows that the cell divides." → "the cell divides."; "As shown in Fig. 2, momentum is a vector."
→ "momentum is a vector."; "The ring is bright (see Figs. 2A and 3)." → "The ring is bright.".

References are the mentions of :func:`figlink.text.mentions.find_mentions`, and the places a reference's
text was dropped while the sentence around it was kept (citing texts taken from HTML or XML whose link
text is lost): a parenthesis holding only pointer words and separators ("()", "( and )", "(see )"), a
frame preposition right before punctuation ("as shown in ."), a reporting verb that opens a clause
("… wind. shows a cutaway view …"). The frame words are ``figlink.text.grammar``'s (``REPORTING_VERBS``,
``FRAME_PARTICIPLES``, ``FRAME_PREPOSITIONS``, ``DROPPED_REFERENCE_AFTER``, ``POINTER_WORDS``).
"""

from __future__ import annotations

import re

from figlink.text import grammar as g
from figlink.text.mentions import find_mentions

REF = "\u0000"  # stands for one reference while the frame is read

_VERB = g.words_pattern([re.escape(w) for w in g.REPORTING_VERBS])
_PARTICIPLE = g.words_pattern([re.escape(w) for w in g.FRAME_PARTICIPLES])
_PREP = g.words_pattern([re.escape(w) for w in g.FRAME_PREPOSITIONS])
_DROPPED_AFTER = g.words_pattern([re.escape(w) for w in g.DROPPED_REFERENCE_AFTER])
_POINTER = g.words_pattern([re.escape(w) for w in g.POINTER_WORDS])
_SEP = rf"(?:[\s,;&]|{g.DASH})"
# parenthesis of pointers, separators and references only ("( and )", "(see R, R)")
_PAREN_EMPTY = re.compile(rf"\((?:{_SEP}|{_POINTER}(?![\w]))*\)", re.I)
_PAREN_REFS = re.compile(rf"\s*\((?:{_SEP}|{_POINTER}(?![\w])|{REF})*{REF}(?:{_SEP}|{_POINTER}(?![\w])|{REF})*\)", re.I)
# a dropped reference: a frame preposition right before punctuation, a reporting verb opening a clause
_PREP_BEFORE_PUNCT = re.compile(rf"(?<![\w-])(?P<p>{_DROPPED_AFTER})[ \t\u00a0]*(?=[,.;:!?)]|$)", re.I)
# (lower case: "Are there other worlds?" opens with a verb, but not with a lost reference)
_VERB_OPENS = re.compile(rf"(?:^|(?<=[.;:!?])[ \t\u00a0]+|(?<=\b[Aa]s)[ \t\u00a0]+(?={_VERB}\s*,))(?={_VERB}\b)")
# the frame of a reference (REF)
_REFS = rf"{REF}(?:{_SEP}*(?:and|or)?{_SEP}*{REF})*"
_LEADING_PLACE = re.compile(rf"^\s*(?:as\s+)?(?:(?:is|are)\s+)?(?:{_PARTICIPLE}\s+)?{_PREP}\s+{_REFS}\s*(?:,\s*|$)",
                            re.I)
_LEADING_AS = re.compile(rf"^\s*as\s+{_REFS}\s+{_VERB}\s*,\s*", re.I)
_LEADING_SUBJECT = re.compile(rf"^\s*{_REFS}\s+(?:(?:also|clearly|then)\s+)?{_VERB}\s+(?:that\s+)?", re.I)
_TRAILING = re.compile(rf",?\s*(?:as\s+)?(?:(?:is|are|was|were)\s+)?{_PARTICIPLE}\s+(?:in|on|by)\s+{_REFS}"
                       rf"|,?\s*(?<![\w-]){_PREP}\s+(?:also\s+)?{_REFS}", re.I)
_CLAUSE_BREAK = re.compile(rf"(?<=[.!?])\s+(?={REF})")


def mark_references(sentence: str) -> str:
    """The sentence with each figure reference, written or dropped, replaced by :data:`REF`."""
    text = sentence.replace(REF, " ")
    for m in reversed(find_mentions(text)):
        end = m.end - (m.text.count(")") > m.text.count("("))  # "(Fig 1A–C)": the ")" closes the parenthesis
        text = text[:m.start] + REF + text[end:]
    text = _PAREN_EMPTY.sub(f"({REF})", text)
    text = _PREP_BEFORE_PUNCT.sub(lambda m: f"{m.group('p')} {REF}", text)
    return _VERB_OPENS.sub(lambda m: f"{m.group(0)}{REF} " if m.group(0) else f"{REF} ", text)


def _strip_clause(clause: str) -> str:
    text = _PAREN_REFS.sub("", clause)
    for frame in (_LEADING_PLACE, _LEADING_AS, _LEADING_SUBJECT):
        text = frame.sub("", text, count=1)
    text = _TRAILING.sub("", text).replace(REF, " ")
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+(?=[,.;:!?)])", "", text)
    text = re.sub(r"([,;:])(?=[,.;:!?])", "", text)
    text = re.sub(r"\s*[,;:]\s*(?=\))|(?<=\()\s*[,;:]\s*", "", text)  # "(HB; Figure 1A)" → "(HB)"
    return text.strip(" ,;:")


def strip_references(sentence: str) -> list[str]:
    """The clauses of ``sentence`` that cite a figure, each without its references and their frame ([]
    when nothing in it cites a figure; a clause with nothing left is left out)."""
    marked = mark_references(sentence)
    if REF not in marked:
        return []
    out = []
    for clause in _CLAUSE_BREAK.split(marked):
        if REF in clause and (stripped := _strip_clause(clause)) and any(c.isalnum() for c in stripped):
            out.append(stripped)
    return out

"""Split a caption into shared text and subcaptions, following MedICaT's definition.

A *subcaption* is the text that describes some panels but not all of them; text about every panel is
``shared_text``. The splitter works on character spans of the original caption:

1. label tokens and their roles (opener, trailer, reference) come from ``figlink.text.label_roles``;
2. the caption is cut into pieces, sentence by sentence: text before the first anchor is shared unless a
   trailer or reference claims its sentence; the text after an opener belongs to it up to the next
   opener; a trailer claims the clause before it; sentences after the last group's first sentence return
   to shared once one reads like a note about the whole figure ("Scale bars, 50 µm.", "Data are
   mean ± SD.", an abbreviation legend);
3. pieces are grouped by label set (multi-span: all text about panel b, wherever it stands, is b's), and
   positional subcaptions are added for spatial references ("(upper left panel)", "Bottom: …").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from figlink.model import CaptionSplit, Subcaption
from figlink.text.caption_clauses import WORD_CHAR, Span, about_all_is_shared, carve_shared, clause_start, closing_paren, \
    is_generic, last_clause_note, list_lead_in, merge_pieces, named_beyond, one_clause, outside, source_notes, ties_to, trim
from figlink.text.caption_sentences import sentence_spans
from figlink.text.label_roles import Tok, assign_roles, find_label_tokens, next_char
from figlink.text.labels import label_order, sort_labels
from figlink.text.mentions import leading_figure_index
from figlink.text.spatial import PositionToken, find_positions


@dataclass(slots=True)
class _Piece:
    start: int
    end: int
    labels: tuple[str, ...]  # () = shared
    positions: tuple[str, ...] = ()
    hole_start: int | None = None  # where a positional piece's cue starts ("Left:"), cut from shared text
    hole_end: int | None = None  # where a closing cue ends ("… (top panel)"), cut from shared text


@dataclass
class _Ctx:
    """One caption being split: its sentences, label tokens, and the pieces cut so far."""

    text: str
    sents: list[tuple[int, int]]
    tokens: list[Tok]
    pieces: list[Span] = field(default_factory=list)

    def sentence_at(self, i: int) -> tuple[int, int] | None:
        """The sentence containing offset ``i``."""
        return next(((s, e) for s, e in self.sents if s <= i < e), None)


def _segment(ctx: _Ctx) -> None:
    """Cut the caption into pieces, sentence by sentence (see the module docstring, step 3)."""
    text, add = ctx.text, ctx.pieces.append
    group: tuple[str, ...] = ()  # labels that unlabeled text continues to describe
    opener_group: tuple[str, ...] = ()  # the last opener that was not a sub-label of the one before
    free: list[tuple[int, int, list[Tok]]] = []  # sentences without anchors since the last anchored one
    last_anchors: list[Tok] = []
    for s, e in ctx.sents:
        toks = [t for t in ctx.tokens if s <= t.start < e]
        anchors = [t for t in toks if t.role in ("open", "trail")]
        if not anchors:
            refs = tuple(sorted({lab for t in toks for lab in t.labels}, key=label_order))
            if not group or ties_to(refs, group):
                add((s, e, refs))  # "In (A) and (B), arrows mark nuclei." after B's text is about A and B
            else:
                free.append((s, e, toks))
            continue
        for fs, fe, _ in free:
            add((fs, fe, group))  # they continue the group (it changes only at a sentence with anchors)
        free = []
        ref_toks = [t for t in toks if t.role == "ref"]
        group, opener_group = _anchored(text, s, e, anchors, ref_toks, group, opener_group, add)
        last_anchors = anchors
    _tail(ctx, free, group, _list_style(ctx, last_anchors))


def _anchored(text: str, s: int, e: int, anchors: list[Tok], refs: list[Tok], group: tuple[str, ...],
              opener_group: tuple[str, ...], add: Callable[[Span], None]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Cut a sentence that holds anchors (openers, trailers) and references (``refs``); gives the group and
    opener group after it."""
    c = s
    last_labels = group
    sub_only = True  # every anchor of the sentence refines the enclosing group
    sub_openers = False
    trailer_sets: set[tuple[str, ...]] = set()
    prev_anchor: Tok | None = None
    close_at, close_group = -1, group  # an opener inside "( … )" ends at its ")"
    for t in anchors:
        if 0 <= close_at <= t.start:
            if close_at > c:
                add((c, close_at, group))
                c = close_at
            group = last_labels = close_group
            close_at = -1
        labels = tuple(t.labels)
        # (t.start >= s always holds: the sentence's tokens start in it.)
        is_sub = bool(opener_group) and set(labels) < set(opener_group)
        if t.role == "open":
            if t.start > c:
                head = group
                lead_in = list_lead_in(text, anchors) if t is anchors[0] and not is_sub else ()
                if lead_in:
                    head = lead_in  # "… in both (a) X and (b) Y.": the list's words
                elif t is anchors[0] and not t.at_start and not is_sub and next_char(text, t.end).islower():
                    head = labels  # "The case depicted in (E) and (F) has …": the sentence is theirs
                elif t is anchors[0]:
                    head = named_beyond(refs, c, t.start, group) or head
                add((c, t.start, head))
            if not is_sub or t.at_start:
                opener_group = labels
                sub_only = False
            else:
                sub_openers = True
            if close_at < 0:
                # (no "(" before the opener in its sentence: _closing_paren's depth is not positive)
                close_at = closing_paren(text, s, t.start, e) if text.find("(", s, t.start) >= 0 else -1
                close_group = group
            group = labels
        else:
            if prev_anchor is not None and prev_anchor.role == "open" and not is_sub:
                # "(C) X, whereas Y (D) …": D claims Y only, and never all of C's text.
                cut = clause_start(text, c, t.start)
                add((c, cut if cut > c else t.start, group))
                c = cut if cut > c else t.start
            if t.start > c:
                add((c, t.start, labels))
            if not is_sub:
                group = labels
                sub_only = False
                trailer_sets.add(labels)
        last_labels = labels
        prev_anchor = t
        c = t.end
    if 0 <= close_at < e:
        if close_at > c:
            add((c, close_at, group))
            c = close_at
        group = last_labels = close_group
    if c < e:
        tail_labels = last_labels if anchors[-1].role == "trail" else group
        if anchors[-1].role == "trail" and set(last_labels) < set(opener_group):
            tail_labels = opener_group  # "…wild-type (A), unc-116 (B), and … dendrite." → the group
        elif anchors[-1].role == "trail" and len(trailer_sets) >= 2 and WORD_CHAR.match(text[c:e].lstrip()) \
                and one_clause(text, [t for t in anchors if t.role == "trail"]):
            # "Images of tumour (a) and stroma (b) stained for X.": the clause goes on about every panel
            # its trailers enumerate.
            tail_labels = tuple(sorted({lab for t in trailer_sets for lab in t}, key=label_order))
        add((c, e, tail_labels))
    if (sub_only or sub_openers) and opener_group:
        group = opener_group  # sub-labels describe their sentence only
    elif len(trailer_sets) >= 2 and not opener_group:
        group = ()  # "X (A–D) and Y (E). Common text." enumerates; what follows is shared
    return group, opener_group


def _list_style(ctx: _Ctx, anchors: list[Tok]) -> bool:
    """The last labeled sentence enumerates short items ("(a) negative, (b) weak, (c) strong.")."""
    if len(anchors) < 2:
        return False  # fewer than two openers
    openers = [t for t in anchors if t.role == "open"]
    if len(openers) < 2:
        return False
    gaps = [openers[i + 1].start - openers[i].end for i in range(len(openers) - 1)]
    return not openers[-1].at_start or max(gaps) < 80


def _tail(ctx: _Ctx, free: list[tuple[int, int, list[Tok]]], labels: tuple[str, ...], list_style: bool) -> None:
    """Sentences after the last labeled one (with their reference tokens): the last group's, a referenced
    panel's, or shared."""
    shared = list_style or not labels
    for s, e, toks in free:
        named = {lab for t in toks for lab in t.labels}
        if named - set(labels):
            ctx.pieces.append((s, e, tuple(sorted(named, key=label_order))))
            continue
        if not shared and is_generic(ctx.text[s:e]):
            shared = True
        ctx.pieces.append((s, e, () if shared else labels))


def _positional(ctx: _Ctx, positions: list[PositionToken]) -> list[_Piece]:
    """Positional pieces for spatial references that open or close text inside a piece."""
    out: list[_Piece] = []
    cues = [t for t in positions if t.role in ("open", "trail")]
    for ps, pe, plabels in ctx.pieces:
        inside = [t for t in cues if ps <= t.start < pe]
        for k, t in enumerate(inside):
            nxt = inside[k + 1].start if k + 1 < len(inside) else pe
            sent = ctx.sentence_at(t.start)
            if t.role == "open":
                a, b = t.end, nxt
                colon = ctx.text[t.end - 1:t.end] in ":,)"
                if not colon:
                    a = t.start
                    b = min(b, sent[1] if sent else pe)
                elif k + 1 == len(inside):
                    b = _before_generic(ctx, a, b)
            else:
                floor = inside[k - 1].end if k else ps
                semi = ctx.text.rfind(";", floor, t.start)
                a, b = max(floor, sent[0] if sent else ps, semi + 1), t.start
            if b > a and ctx.text[a:b].strip(" ,;:."):
                out.append(_Piece(a, b, plabels, (t.position,), min(a, t.start), max(b, t.end)))
    return out


def _before_generic(ctx: _Ctx, a: int, b: int) -> int:
    """End of the text from ``a`` to ``b`` before its first figure-wide note (after its first sentence)."""
    for s, e in ctx.sents:
        if a < s < b and is_generic(ctx.text[s:e]):
            return s
    return b


def _carve(pieces: list[Span], holes: list[_Piece]) -> list[Span]:
    """Remove positional spans from shared pieces (text about one place is not about all panels)."""
    out: list[Span] = []
    for p in pieces:
        if p[2]:
            out.append(p)
            continue
        cuts = sorted((h.start if h.hole_start is None else h.hole_start, h.end if h.hole_end is None else h.hole_end)
                      for h in holes if not h.labels and h.start < p[1] and p[0] < h.end)
        out += [(a, b, ()) for a, b in outside(p[0], p[1], cuts)]
    return out


def _build(text: str, pieces: list[tuple]) -> CaptionSplit:
    """The split made of ``pieces`` in order of start: ``(start, end, labels)``, or for a positional
    piece ``(start, end, labels, positions)``. Each is trimmed (``_trim``); one without a word character
    is dropped. Pieces with the same labels and positions make one subcaption; subcaptions go in order of
    their first span, then fewer positions first."""
    shared: list[str] = []
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[list[int]]] = {}
    for p in pieces:
        a, b = trim(text, p[0], p[1])
        if WORD_CHAR.search(text, a, b) is None:
            continue
        positions = p[3] if len(p) > 3 else ()
        if not p[2] and not positions:
            shared.append(text[a:b])
            continue
        spans = groups.setdefault((tuple(sort_labels(p[2])), positions), [])
        if spans and spans[-1][1] >= a:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    subs = [Subcaption(list(labels), " ".join(text[a:b] for a, b in spans), spans, list(positions))
            for (labels, positions), spans in groups.items()]
    subs.sort(key=lambda sub: (sub.spans[0][0], len(sub.positions)))
    return CaptionSplit(" ".join(shared), subs)


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
    notes = source_notes(text, body)
    tokens = [t for t in find_label_tokens(text, body, sents) if not any(a <= t.start < b for a, b in notes)]
    positions = find_positions(text, body)
    assign_roles(text, body, tokens, {s for s, _ in sents})
    ctx = _Ctx(text, sents, tokens)
    _segment(ctx)
    ctx.pieces = carve_shared(ctx.pieces, notes)
    ctx.pieces = merge_pieces(text, about_all_is_shared(text, last_clause_note(text, ctx.pieces), tokens))
    extra = _positional(ctx, positions)
    pieces: list[tuple] = _carve(ctx.pieces, extra) + [(p.start, p.end, p.labels, p.positions) for p in extra]
    pieces.sort(key=lambda p: p[0])  # (stable: carved pieces before positional ones at the same start)
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

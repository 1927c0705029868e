"""Hand-split subcaptions (``captions/prostate_gold_splits_dev.json``) and MedICaT's definition of them.

The gold file gives, per figure, the caption and one text per panel label. Each panel's gold text
*repeats the shared context*: the sentences about all panels (the title, a trailing "Scale bar …" or
staining note) are copied into every panel's text, around the panel's own words ("Prostate biopsy -
Gleason 9 … cancer. Hematoxylin and eosin, 200* …" for (A)). Text about a group ("(B) and C)
prostatic adenocarcinoma …") is copied into each panel of the group.

MedICaT (§3) defines a panel's subcaption as every token that describes that panel, including text
about a group it belongs to, and nothing that describes all panels. :func:`strict_gold` recovers that
from the gold as written: it aligns each panel's gold text to the caption token by token
(:class:`difflib.SequenceMatcher`), marks the caption tokens that *every* panel's gold covers as shared,
and keeps the rest of the panel's tokens. A split is then scored by :func:`score_strict` on its own and
group text only (``label_text``), and by :func:`score_as_written` — the gold as written against the
split's shared text + the panel's text, the scoring of ``figlink.eval.caption_eval`` — for comparison.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Optional

from figlink.eval.metrics import token_f1, tokens
from figlink.eval.splits import figure_paper_key
from figlink.model import CaptionSplit


@dataclass
class GoldCaption:
    key: str                               # the figure image name
    paper: str                             # its paper (the split's document key)
    caption: str
    panels: list[tuple[str, str]]          # (label as written, gold text with the shared context)

    def strict(self) -> list[list[str]]:
        """Per gold panel, its MedICaT subcaption tokens (shared context removed)."""
        return strict_gold(self.caption, [t for _, t in self.panels])


def load_prostate(path: Path) -> list[GoldCaption]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [GoldCaption(k, figure_paper_key(k), v["caption"],
                        [(g["label"]["text"].strip(), g["caption"]) for g in v["gt_subfigures"]])
            for k, v in data.items()]


def _covered(caption_toks: list[str], gold_toks: list[str]) -> set[int]:
    """Caption token positions that a gold text's tokens align to (longest matching blocks)."""
    sm = SequenceMatcher(None, caption_toks, gold_toks, autojunk=False)
    out: set[int] = set()
    for a, _, size in sm.get_matching_blocks():
        out.update(range(a, a + size))
    return out


def strict_gold(caption: str, texts: list[str]) -> list[list[str]]:
    """Each gold text's tokens without the shared context (caption tokens every panel's text covers)."""
    cap = tokens(caption)
    golds = [tokens(t) for t in texts]
    if len(golds) < 2:
        return golds
    cover = [_covered(cap, g) for g in golds]
    shared = set.intersection(*cover)
    out = []
    for g in golds:
        sm = SequenceMatcher(None, cap, g, autojunk=False)
        drop: set[int] = set()
        for a, b, size in sm.get_matching_blocks():
            drop.update(b + k for k in range(size) if a + k in shared)
        out.append([t for j, t in enumerate(g) if j not in drop])
    return out


def _f1_tokens(pred: list[str], gold: list[str]) -> float:
    return token_f1(" ".join(pred), " ".join(gold))


def _named(split: CaptionSplit) -> set[str]:
    return {lab.lower() for s in split.subcaptions for lab in s.labels}


def own_text(split: CaptionSplit, caption: str, label: str) -> str:
    """The panel's own and group text of a split (no shared text): MedICaT's subcaption."""
    from figlink.text.subcaptions import label_text

    return label_text(split, caption, label)


def score_strict(split: CaptionSplit, item: GoldCaption) -> list[float]:
    """Token F1 per gold panel under MedICaT's definition; a label the split does not name scores 0."""
    named = _named(split)
    out = []
    for (label, _), gold in zip(item.panels, item.strict()):
        lab = label.lower()
        out.append(_f1_tokens(tokens(own_text(split, item.caption, lab)), gold) if lab in named else 0.0)
    return out


def score_as_written(split: CaptionSplit, item: GoldCaption) -> list[float]:
    """Token F1 per gold panel: the gold as written against shared text + the panel's own text."""
    from figlink.eval.caption_eval import score_split

    return score_split(split, item.caption, item.panels)


def failure_record(split: CaptionSplit, item: GoldCaption, strict: list[float],
                   written: list[float], threshold: float = 0.9) -> Optional[dict]:
    """A tune failure to debug from: the caption, each panel's gold (strict) and predicted text."""
    if min(strict, default=1.0) >= threshold:
        return None
    panels = []
    for (label, _), gold, s, w in zip(item.panels, item.strict(), strict, written):
        panels.append({"label": label, "f1_strict": round(s, 3), "f1_as_written": round(w, 3),
                       "gold_strict": " ".join(gold),
                       "predicted_own": own_text(split, item.caption, label.lower())})
    return {"key": item.key, "caption": item.caption, "shared_text": split.shared_text, "panels": panels}

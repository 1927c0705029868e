"""Scoring generated captions as SciCap does, and the two baselines every captioner is measured against.

References are SciCap-normalized (advanced normalization: lower case, numbers → ``[NUM]``, equations →
``[EQUATION]``, bracketed spans → ``[BRACKET]``) in two ways:

- ``first_sentence``: the caption's first sentence, for every figure (SciCap's "first sentence" subset);
- ``whole``: the whole caption, for the figures whose caption has at most 100 tokens (SciCap's ≤ 100
  subset).

BLEU-4 is sacrebleu's corpus BLEU (13a tokenization, on a 0–1 scale as in the SciCap paper); ROUGE-L is
the mean F1 of rouge-score's ``rougeL``. Baselines: the first sentence of a figure's first mention, and
the training caption nearest to the figure's image under a matcher (its first sentence against first
sentences, the whole caption against whole captions).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from figlink.text.normalize import first_sentence, normalize_advanced, within_token_limit

VIEWS: tuple[str, ...] = ("first_sentence", "whole")


def reference(caption: str, view: str) -> Optional[str]:
    """The normalized reference of a caption in a view (None when the figure is not in that subset)."""
    if view == "first_sentence":
        return normalize_advanced(first_sentence(caption))
    if view == "whole":
        return normalize_advanced(caption) if within_token_limit(caption) else None
    raise ValueError(f"unknown view {view!r}")


def bleu4(hyps: Sequence[str], refs: Sequence[str]) -> float:
    import sacrebleu

    # force: the texts are SciCap-normalized on both sides, so a detached final period is expected
    return float(sacrebleu.corpus_bleu(list(hyps), [list(refs)], force=True).score) / 100.0


def rouge_l(hyps: Sequence[str], refs: Sequence[str]) -> float:
    from rouge_score import rouge_scorer  # type: ignore[import-untyped]

    scorer = rouge_scorer.RougeScorer(["rougeL"])
    if not hyps:
        return 0.0
    return float(np.mean([scorer.score(r, h)["rougeL"].fmeasure for h, r in zip(hyps, refs)]))


def score_captions(hyps: Mapping[str, Sequence[str]] | Sequence[str], captions: Sequence[str]) -> dict[str, dict]:
    """BLEU-4 and ROUGE-L per view. ``hyps`` is one normalized hypothesis per caption, or a view → list
    mapping (a baseline may offer a different hypothesis per view)."""
    out: dict[str, dict] = {}
    for view in VIEWS:
        hv = hyps[view] if isinstance(hyps, Mapping) else hyps
        pairs = [(h, r) for h, c in zip(hv, captions) if (r := reference(c, view)) is not None]
        hyp_texts = [p[0] for p in pairs]
        ref_texts = [p[1] for p in pairs]
        out[view] = {"BLEU-4": bleu4(hyp_texts, ref_texts) if pairs else 0.0, "ROUGE-L": rouge_l(hyp_texts, ref_texts),
                     "n": len(pairs)}
    return out


def first_mention_baseline(mentions: Sequence[Sequence[str]]) -> list[str]:
    """Baseline 1: the normalized first sentence of each figure's first mention ("" when it has none)."""
    return [normalize_advanced(first_sentence(m[0])) if m and m[0].strip() else "" for m in mentions]


def nearest_caption_baseline(image_vecs: np.ndarray, train_text_vecs: np.ndarray,
                             train_captions: Sequence[str]) -> dict[str, list[str]]:
    """Baseline 2: for each image, the training caption whose matcher text vector is nearest (cosine),
    normalized per view (its first sentence for ``first_sentence``, the whole caption for ``whole``)."""
    if len(image_vecs) == 0 or len(train_captions) == 0:
        return {v: ["" for _ in range(len(image_vecs))] for v in VIEWS}
    nearest = (image_vecs @ train_text_vecs.T).argmax(axis=1)
    picked = [train_captions[int(i)] for i in nearest]
    return {"first_sentence": [normalize_advanced(first_sentence(c)) for c in picked],
            "whole": [normalize_advanced(c) for c in picked]}

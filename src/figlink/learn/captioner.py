"""The caption generator: retrieve candidate sentences, then pick one with a learned scorer.

For a figure, the candidates are

- the first sentences of the ``k`` training captions nearest to its image under the matcher (image tower
  against caption-only text vectors);
- with ``context="mentions"``, also the sentences of the texts that cite it, each as written and, where it
  cites a figure, its citing clauses without the reference and its frame (``figlink.text.citing_frame``:
  "As shown in Figure 2, momentum is a vector." → "momentum is a vector.").

Each candidate gets a few features: its kind, retrieval similarity and rank, its place in the citing
text, whether its sentence cites a figure and whether it is such a stripped clause, its *consensus* with the other retrieved captions (n-gram overlap, weighted by similarity: the
nearest-neighbour consensus of Devlin et al. 2015, "Exploring Nearest Neighbor Approaches for Image
Captioning"), its overlap with the words read in the image (OCR), and its length. A linear scorer (torch),
trained listwise on the corpus's own captions, chooses the candidate expected to agree most with the
figure's real first sentence. Output is SciCap-normalized (lower case, ``[NUM]``, ``[EQUATION]``,
``[BRACKET]``), as SciCap's models write.

During training, each figure's candidates are retrieved from the captions of the *other* groups (books,
papers: the part of the id before the first ``/``), as a new book meets the shipped model.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import torch
from torch import nn

from figlink.learn.records import CONTEXTS
from figlink.text.caption_sentences import split_sentences
from figlink.text.citing_frame import strip_references
from figlink.text.normalize import caption_tokens, first_sentence, normalize_advanced

FEATURES: tuple[str, ...] = ("mention", "similarity", "rank", "mention_index", "sentence_index", "cites",
                             "stripped", "consensus_1", "consensus_2", "ocr_precision", "ocr_recall", "log_length",
                             "log_length_sq")
MAX_MENTIONS = 3
MAX_SENTENCES = 6


@dataclass(frozen=True)
class CaptionerSettings:
    k: int = 10  # retrieved training captions per figure
    epochs: int = 300
    lr: float = 0.05
    weight_decay: float = 1e-3
    temperature: float = 0.05  # of the soft target over a figure's candidates
    seed: int = 0


@dataclass
class FigureInput:
    """What the captioner sees of one figure (besides its matcher image vector)."""

    ocr_text: str = ""
    mentions: Sequence[str] = ()
    caption: str = ""  # the reference; needed only to train
    group: str = ""


@dataclass
class Candidates:
    texts: list[str]  # normalized
    features: np.ndarray  # (m, len(FEATURES)) float32


def group_of(pair_id: str) -> str:
    return pair_id.split("/", 1)[0] if "/" in pair_id else ""


def ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def ngram_f1(a: Counter, b: Counter) -> float:
    common = sum((a & b).values())
    if not common:
        return 0.0
    p, r = common / sum(a.values()), common / sum(b.values())
    return 2 * p * r / (p + r)


def agreement(hyp: Sequence[str], ref: Sequence[str]) -> float:
    """Mean 1–4-gram F1 of two token lists (what the scorer learns to predict)."""
    scores = [ngram_f1(ngrams(hyp, n), ngrams(ref, n)) for n in (1, 2, 3, 4)]
    return float(np.mean(scores))


def mention_candidates(mentions: Sequence[str]) -> list[tuple[int, int, str, bool, bool]]:
    """(mention index, sentence index, normalized text, stripped, cites) of the first citing texts: each
    sentence as written (``stripped`` False), then each of its clauses that cites a figure without the
    reference and its frame (``stripped`` True; :func:`figlink.text.citing_frame.strip_references`);
    ``cites``: the sentence names (or held) a figure reference."""
    out: list[tuple[int, int, str, bool, bool]] = []
    for mi, m in enumerate(list(mentions)[:MAX_MENTIONS]):
        for si, s in enumerate(split_sentences(m)[:MAX_SENTENCES]):
            clauses = strip_references(s)
            written = normalize_advanced(s)
            texts = [(written, False)] + [(t, True) for c in clauses if (t := normalize_advanced(c)) != written]
            out.extend((mi, si, text, stripped, bool(clauses)) for text, stripped in texts if caption_tokens(text))
    return out


def build_candidates(fig: FigureInput, retrieved: Sequence[tuple[str, float]], context: str) -> Candidates:
    """Candidates of one figure: ``retrieved`` is [(normalized first sentence, similarity)], nearest first."""
    texts: list[str] = []
    meta: list[tuple[float, ...]] = []  # mention, similarity, rank, mention i, sentence i, cites, stripped
    for rank, (text, sim) in enumerate(retrieved):
        texts.append(text)
        meta.append((0.0, sim, rank / max(1, len(retrieved)), 0.0, 0.0, 0.0, 0.0))
    if context == "mentions":
        for mi, si, text, stripped, cites in mention_candidates(fig.mentions):
            texts.append(text)
            meta.append((1.0, 0.0, 0.0, float(mi), float(np.log1p(si)), float(cites), float(stripped)))
    toks = [caption_tokens(t) for t in texts]
    grams = [(ngrams(t, 1), ngrams(t, 2)) for t in toks]
    n_ret = len(retrieved)
    weights = np.array([max(s, 0.0) for _, s in retrieved], np.float64) + 1e-6
    ocr_words = {w for w in caption_tokens(normalize_advanced(fig.ocr_text)) if len(w) > 1}
    rows = []
    for i, t in enumerate(toks):
        cons = []
        for n in (0, 1):
            vals = [(ngram_f1(grams[i][n], grams[j][n]), weights[j]) for j in range(n_ret) if j != i]
            cons.append(sum(v * w for v, w in vals) / sum(w for _, w in vals) if vals else 0.0)
        words = set(t)
        prec = len(words & ocr_words) / len(words) if words else 0.0
        rec = len(words & ocr_words) / len(ocr_words) if ocr_words else 0.0
        ll = float(np.log1p(len(t)))
        rows.append([*meta[i], cons[0], cons[1], prec, rec, ll, ll * ll])
    feats = np.asarray(rows, np.float32).reshape(len(rows), len(FEATURES))
    return Candidates(texts, feats)


class CandidateScorer(nn.Module):
    """A linear score of standardized features, with separate weights for mention sentences."""

    def __init__(self, n_features: int = len(FEATURES)) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("std", torch.ones(n_features))
        self.linear = nn.Linear(2 * n_features, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = (x - self.mean) / self.std
        is_mention = x[:, :1]
        return self.linear(torch.cat([z, z * is_mention], 1)).squeeze(-1)


def retrieve(image_vecs: np.ndarray, pool_vecs: np.ndarray, pool_texts: Sequence[str], k: int,
             exclude: Optional[np.ndarray] = None) -> list[list[tuple[str, float]]]:
    """The ``k`` nearest pool texts per image (cosine of unit vectors); ``exclude[i, j]`` hides pool item j
    from image i."""
    if len(pool_texts) == 0:
        return [[] for _ in range(len(image_vecs))]
    sims = image_vecs @ pool_vecs.T
    if exclude is not None:
        sims = np.where(exclude, -np.inf, sims)
    k = min(k, sims.shape[1])
    top = np.argsort(-sims, axis=1)[:, :k]
    return [[(pool_texts[j], float(sims[i, j])) for j in top[i] if np.isfinite(sims[i, j])]
            for i in range(len(image_vecs))]


@dataclass
class Captioner:
    """A retrieval pool (normalized first sentences of training captions and their matcher text vectors)
    and one trained :class:`CandidateScorer` per context it serves."""

    pool_texts: list[str]
    pool_vecs: np.ndarray  # (n, d) float32 unit rows
    scorers: dict[str, CandidateScorer]
    settings: CaptionerSettings = field(default_factory=CaptionerSettings)

    @torch.no_grad()
    def generate(self, figs: Sequence[FigureInput], image_vecs: np.ndarray, context: str) -> list[str]:
        """One normalized caption per figure ("" when it has no candidate at all)."""
        if context not in self.scorers:
            raise ValueError(f"this captioner was trained for --context {' / '.join(self.scorers)}, not {context!r}")
        scorer = self.scorers[context].eval()
        found = retrieve(image_vecs, self.pool_vecs, self.pool_texts, self.settings.k)
        out = []
        for f, r in zip(figs, found):
            c = build_candidates(f, r, context)
            out.append(c.texts[int(scorer(torch.from_numpy(c.features)).argmax())] if c.texts else "")
        return out


def fit_captioner(figs: Sequence[FigureInput], image_vecs: np.ndarray, text_vecs: np.ndarray,
                  contexts: Sequence[str] = CONTEXTS, settings: CaptionerSettings = CaptionerSettings()) -> Captioner:
    """Train a captioner (a scorer per context) on figures with captions: their image vectors and
    caption-only text vectors."""
    for context in contexts:
        if context not in CONTEXTS:
            raise ValueError(f"unknown context {context!r}: choose {' or '.join(CONTEXTS)}")
    keep = [i for i, f in enumerate(figs) if caption_tokens(normalize_advanced(first_sentence(f.caption)))]
    if len(keep) < 2:
        raise ValueError(f"too few figures with captions to train a captioner ({len(keep)})")
    figs = [figs[i] for i in keep]
    image_vecs, text_vecs = image_vecs[keep], text_vecs[keep]
    pool_texts = [normalize_advanced(first_sentence(f.caption)) for f in figs]
    groups = np.array([f.group for f in figs])
    # a figure never retrieves itself, nor (when the ids name groups) a caption of its own group
    exclude = groups[:, None] == groups[None, :] if len(set(groups)) > 1 else np.eye(len(figs), dtype=bool)
    found = retrieve(image_vecs, text_vecs, pool_texts, settings.k, exclude)
    scorers = {}
    for context in contexts:
        cands = [build_candidates(f, r, context) for f, r in zip(figs, found)]
        targets = [np.array([agreement(caption_tokens(t), caption_tokens(ref)) for t in c.texts], np.float32)
                   for c, ref in zip(cands, pool_texts)]
        scorers[context] = _train_scorer(cands, targets, settings)
    return Captioner(pool_texts, text_vecs.astype(np.float32), scorers, settings)


def _train_scorer(cands: list[Candidates], targets: list[np.ndarray], settings: CaptionerSettings) -> CandidateScorer:
    """Listwise training: softmax of the scores against softmax(target / temperature), per figure."""
    torch.manual_seed(settings.seed)
    used = [(c, t) for c, t in zip(cands, targets) if len(c.texts) > 1 and t.max() > 0]
    scorer = CandidateScorer()
    if not used:
        return scorer
    x = torch.from_numpy(np.concatenate([c.features for c, _ in used]))
    y = torch.from_numpy(np.concatenate([t for _, t in used]))
    owner = torch.from_numpy(np.concatenate([np.full(len(c.texts), i) for i, (c, _) in enumerate(used)]))
    scorer.mean.copy_(x.mean(0))
    scorer.std.copy_(x.std(0).clamp(min=1e-4))
    n = len(used)
    opt = torch.optim.Adam(scorer.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)

    def group_log_softmax(v: torch.Tensor) -> torch.Tensor:
        m = torch.zeros(n).scatter_reduce(0, owner, v, "amax", include_self=False)
        e = (v - m[owner]).exp()
        return v - m[owner] - torch.zeros(n).index_add(0, owner, e).log()[owner]

    soft = group_log_softmax(y / settings.temperature).exp()
    for _ in range(settings.epochs):
        loss = -(soft * group_log_softmax(scorer(x))).sum() / n
        opt.zero_grad()
        loss.backward()
        opt.step()
    return scorer.eval()

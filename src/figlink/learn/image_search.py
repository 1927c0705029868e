"""Search a corpus by image through the matcher: the figures whose pictures and texts are nearest to a query
figure.

The corpus's figures are embedded once by the matcher (image tower and caption + mentions tower) into
``<corpus>/matcher/``: ``vectors.npz`` (keys, image and text vectors, the caption + mentions words) and
``state.json`` (the model and the paper fingerprints they were made from). :func:`update_figure_vectors` embeds only papers written since
(by :meth:`figlink.corpus.Corpus.fingerprints`) and drops removed ones; a different model re-embeds all.
The store lives beside the search index, not in it: the index is rebuilt by :mod:`figlink.index`, this is
the matcher's own. It also keeps each figure's OCR words and its hubness normalizer (:mod:`figlink.learn.hubness`:
the figure's text side scored by a bank of the corpus's own figure images, balanced by Sinkhorn iterations)
with the bank it was balanced on (:mod:`figlink.learn.figure_hub`), so an update scores only its new figures
against that bank until the corpus has changed by a tenth; a store written before it kept OCR words and
normalizers is re-embedded on its next update, one written before it kept the bank is balanced fully again.
With the matcher's character n-gram term on, the store also keeps the words' gram counts
(:class:`figlink.learn.char_grams.CharIndex`: a CSR matrix, the gram vocabulary and document frequencies; the
bank's queries' grams likewise, :mod:`figlink.learn.figure_hub`), appended with the new
figures' on an update, so only the figures added are cut into grams and a search loads the index instead of
building it; a store written before it kept them builds it once, on its next update.

A query image is embedded by the image tower (with its OCR text) and each figure is scored
``cos(query, figure image) + cos(query, figure text) + lexical``: the matcher's image → text score
(its cosine plus its weighted lexical term, BM25 and character n-grams of the query's OCR text against the
figures' words, each scaled to [0, 1] by the best, :mod:`figlink.learn.lexical`, less the figure's hubness
normalizer) plus the similarity of the two pictures in the same space.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
from scipy import sparse

from figlink.errors import InputError
from figlink.index.image import ImageSignal
from figlink.learn.cache import FeatureCache
from figlink.learn.char_grams import CharIndex
from figlink.learn.embedder import load_matcher
from figlink.learn.embeddings import Matcher
from figlink.learn.figure_hub import HubBank, full_balance, updated_normalizers
from figlink.learn.hubness import Hubness
from figlink.learn.lexical import LexicalWeights, char_scores, lexical_scores, lexicon_scores, write_lexicon
from figlink.learn.records import FigurePair, TextMode

STORE = "matcher"
LEXICON = "words.sqlite"
TEXT_MODE: TextMode = "caption+mentions"
KEY_SEP = "\t"  # between paper id and figure id in a stored key


@dataclass
class FigureVectors:
    """The matcher's vectors of a corpus's figures: ``keys[i]`` is ``(paper_id, figure_id)`` of row i."""

    keys: list[tuple[str, str]]
    image: np.ndarray  # (n, d) float32, unit rows
    text: np.ndarray  # (n, d) float32, unit rows
    words: list[str] = field(default_factory=list)  # caption + mentions of each figure, for the lexical term
    lexicon: Optional[Path] = None  # those words indexed (learn.lexical.write_lexicon), row i = figure i
    chars: Optional[CharIndex] = None  # their character n-grams (stored; else built by char_index on first use)
    ocr: Optional[list[str]] = None  # the words read in each figure's image (None: a store written before it)
    hub: Optional[np.ndarray] = None  # (n,) each figure's hubness normalizer (None: none computed)
    bank: Optional[HubBank] = None  # the bank the normalizers were balanced on (None: none kept)
    embedded: int = 0  # figures embedded by the last update
    problems: list[str] = field(default_factory=list)  # figures the last update left out, one line each
    left_out: int = 0  # figures with an image that have no vectors (all updates; each paper's last count)
    notes: list[str] = field(default_factory=list)  # what the last update did beyond embedding new figures

    @property
    def failed(self) -> int:
        """How many figures with an image the last update could not embed."""
        return len(self.problems)


@dataclass
class ImageHit:
    """One figure found by image: its rank, score and the two similarities it sums."""

    rank: int
    score: float
    paper_id: str
    figure_id: str
    image_similarity: float
    text_similarity: float
    lexical: float = 0.0  # the matcher's lexical term (words and character n-grams), weighted
    hub: float = 0.0  # the figure's hubness normalizer, taken off its score


def _model_id(matcher: Matcher) -> str:
    manifest = getattr(matcher, "manifest", None) or {}
    return hashlib.sha256(json.dumps(manifest, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _read_store(folder: Path) -> tuple[dict, Optional[FigureVectors]]:
    try:
        state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        with np.load(folder / "vectors.npz", allow_pickle=False) as z:
            keys = [tuple(k.split(KEY_SEP, 1)) for k in z["keys"].tolist()]
            vectors = FigureVectors(keys, z["image"], z["text"], z["words"].tolist())  # type: ignore[arg-type]
            if "ocr" in z.files and len(z["ocr"]) == len(keys):
                vectors.ocr = z["ocr"].tolist()
            if "hub" in z.files and len(z["hub"]) == len(keys) and state.get("hub"):
                vectors.hub = z["hub"]
                vectors.bank = _read_bank(z, state.get("bank"))
            vectors.chars = _read_chars(z, len(keys))
        if (folder / LEXICON).is_file() and state.get("lexicon") == len(keys):
            vectors.lexicon = folder / LEXICON
        return state, vectors
    except (OSError, ValueError, KeyError):
        return {}, None


def _read_bank(z, counts: Optional[dict]) -> Optional[HubBank]:
    """The kept bank of a store's vectors file (None: a store written before it kept one, or before it kept
    each query's best character cosine)."""
    if not counts or not {"bank_image", "bank_ocr", "bank_tops", "bank_char_tops", "bank_rows"} <= set(z.files):
        return None
    queries = z["bank_ocr"].tolist()
    return HubBank(z["bank_image"], queries, z["bank_tops"], z["bank_char_tops"], z["bank_rows"],
                   int(counts["figures"]), int(counts["changed"]), _read_chars(z, len(queries), "bank_char_"))


CHAR_ARRAYS = ("grams", "counts", "indices", "indptr", "df")  # a CharIndex's arrays in the store, after a prefix


def _read_chars(z, n: int, prefix: str = "char_") -> Optional[CharIndex]:
    """A stored character n-gram index of ``n`` texts (None: none stored, or not of these)."""
    names = [prefix + a for a in CHAR_ARRAYS]
    if not set(names) <= set(z.files) or len(z[names[3]]) != n + 1:
        return None
    grams, data, indices, indptr, df = (z[a] for a in names)
    grams = grams.tolist()
    chars = CharIndex(vocabulary=grams, counts=sparse.csr_matrix((data, indices, indptr), shape=(n, len(grams))),
                      df=df)
    return chars if len(chars.vocabulary) == len(grams) else None


def _chars_arrays(chars: Optional[CharIndex], n: int, prefix: str = "char_") -> dict[str, np.ndarray]:
    """The arrays that store ``chars`` (none when it is missing or not of ``n`` texts)."""
    if chars is None or len(chars) != n:
        return {}
    c = chars.counts
    return {prefix + a: v for a, v in zip(CHAR_ARRAYS, (np.array(chars.grams_in_order(), dtype=str), c.data,
                                                          c.indices, c.indptr, chars.df))}


def _write_store(folder: Path, state: dict, vectors: FigureVectors) -> None:
    """Each file written to a temporary name and renamed, the words' index (:func:`_write_words`) and the
    vectors first, the state last (a stale state re-embeds)."""
    bank = vectors.bank
    state = {**state, "lexicon": len(vectors.words),
             "bank": {"figures": bank.figures, "changed": bank.changed} if bank is not None else None}
    arrays: dict[str, Any] = {
        "keys": np.array([KEY_SEP.join(k) for k in vectors.keys], dtype=str),
        "image": vectors.image.astype(np.float32), "text": vectors.text.astype(np.float32),
        "words": np.array(vectors.words, dtype=str), "ocr": np.array(vectors.ocr or [], dtype=str),
        "hub": np.zeros(0, np.float32) if vectors.hub is None else vectors.hub.astype(np.float32)}
    if bank is not None:
        arrays.update(bank_image=bank.image, bank_ocr=np.array(bank.ocr, dtype=str), bank_tops=bank.tops,
                      bank_char_tops=bank.char_tops, bank_rows=bank.rows)
        arrays.update(_chars_arrays(bank.grams, len(bank.ocr), "bank_char_"))
    arrays.update(_chars_arrays(vectors.chars, len(vectors.keys)))
    tmp = folder / ".vectors.npz.tmp"
    with tmp.open("wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, folder / "vectors.npz")
    tmp = folder / ".state.json.tmp"
    tmp.write_text(json.dumps(state), encoding="utf-8")
    os.replace(tmp, folder / "state.json")


def _hub_settings(matcher: Matcher) -> Optional[dict]:
    """What the stored normalizers depend on besides the vectors (None: the matcher scores without them)."""
    hub = matcher.hubness
    return {"temperature": hub.temperature, "iterations": hub.iterations, "lexical_weight": matcher.lexical.words,
            "char_weight": matcher.lexical.chars} if hub.on else None


def _write_words(folder: Path, vectors: FigureVectors) -> None:
    """The figures' words indexed into the store (the state, written last, names how many rows it holds, so
    a stale one is not read); the normalizers' lexical term reads it."""
    folder.mkdir(parents=True, exist_ok=True)
    write_lexicon(folder / LEXICON, vectors.words)
    vectors.lexicon = folder / LEXICON


def char_index(vectors: FigureVectors) -> CharIndex:
    """The character n-grams of the stored figures' words: the store's index, or (vectors made without one)
    one built on first use and kept with the vectors."""
    if vectors.chars is None or len(vectors.chars) != len(vectors.words):
        vectors.chars = CharIndex(vectors.words)
    return vectors.chars


def _updated_chars(old: Optional[FigureVectors], rows: list[int], added: list[str]) -> CharIndex:
    """The character n-gram index of the kept rows of ``old`` and the ``added`` words after them: the old
    index cut and appended to (only the added words cut into grams), or one built over all of them."""
    if old is None or old.chars is None or len(old.chars) != len(old.keys):
        return CharIndex([old.words[i] for i in rows] + added if old is not None else added)
    chars = old.chars if len(rows) == len(old.keys) else old.chars.subset(rows)
    return chars.extended(added) if added else chars


def figure_normalizers(vectors: FigureVectors, lexical: LexicalWeights, hub: Hubness) -> np.ndarray:
    """Each stored figure's hubness normalizer, balanced fully: its text side scored as search by image scores
    it (cosine + the weighted lexical term) by a bank of the corpus's own figure images."""
    return full_balance(vectors.image, vectors.text, vectors.ocr or [], vectors.lexicon or vectors.words,
                        lexical, hub, char_index(vectors) if lexical.chars else None)[0]


def _left_out(before: dict[str, int], keep: set[str], tried: list[str], embedded: list[str]) -> dict[str, int]:
    """Per paper, how many of its figures with an image have no vectors: the kept papers' counts from before,
    and for the papers just updated, their figures tried (keys, or problem lines that start with one) less
    those embedded."""
    def paper(key: str) -> str:
        return key.split(KEY_SEP, 1)[0]

    counts = {pid: n for pid, n in before.items() if pid in keep}
    counts.update(Counter(paper(k) for k in tried) - Counter(paper(k) for k in embedded))
    return counts


def update_figure_vectors(corpus_dir: str | Path, matcher: Optional[Matcher] = None,
                          cache: Optional[FeatureCache] = None, ocr: bool = True,
                          retry: bool = False) -> FigureVectors:
    """Bring ``<corpus>/matcher/`` up to date with the corpus and return its vectors (figures with an image).
    A paper is embedded again when it changed; with ``retry`` also when some of its figures were left out
    before (an image since restored). Searches do not retry, so a figure that cannot be read costs one try."""
    from figlink.corpus import Corpus

    matcher = matcher or load_matcher()
    cache = cache or FeatureCache()
    folder = Path(corpus_dir) / STORE
    state, old = _read_store(folder)
    model = _model_id(matcher)
    notes: list[str] = []
    if old is not None and old.ocr is None:
        notes.append(f"the matcher store at {folder} was written before it kept each figure's OCR words and "
                     f"hubness normalizer: its {len(old.keys)} figures are embedded again")
        state, old = {}, None
    if state.get("model") != model or state.get("ocr") != ocr:
        if old is not None:
            why = "another matcher" if state.get("model") != model else "OCR " + ("off" if ocr else "on")
            notes.append(f"the matcher store at {folder} was written by {why}: its {len(old.keys)} figures are "
                         "embedded again")
        state, old = {}, None
    done: dict[str, str] = state.get("papers", {})
    left: dict[str, int] = state.get("left_out", {})
    with Corpus(corpus_dir, readonly=True) as corpus:
        prints = corpus.fingerprints()
        todo = sorted(pid for pid, fp in prints.items() if done.get(pid) != fp or (retry and left.get(pid)))
        pairs: list[FigurePair] = []
        problems: list[str] = []
        for paper in corpus.papers_with_ids(todo):
            for fig in paper.figures:
                if fig.image:
                    try:
                        file = corpus.image_file(fig.image)
                    except InputError as exc:
                        problems.append(f"{paper.paper_id}{KEY_SEP}{fig.figure_id}: {exc}")
                        continue
                    pairs.append(FigurePair(f"{paper.paper_id}{KEY_SEP}{fig.figure_id}", file, fig.caption.strip(),
                                            tuple(r.text for r in fig.inline_refs if r.text.strip())))
    keep = set(prints) - set(todo)
    rows = [i for i, k in enumerate(old.keys) if k[0] in keep] if old is not None else []
    emb = matcher.embed(pairs, TEXT_MODE, cache, ocr=ocr) if pairs else None
    keys = [old.keys[i] for i in rows] if old is not None else []
    words = [old.words[i] for i in rows] if old is not None else []
    read = [(old.ocr or [])[i] for i in rows] if old is not None else []
    image = [old.image[rows]] if old is not None else []
    text = [old.text[rows]] if old is not None else []
    if emb is not None:
        keys += [tuple(i.split(KEY_SEP, 1)) for i in emb.ids]  # type: ignore[misc]
        text_of = {p.id: p.text(TEXT_MODE) for p in pairs}
        words += [text_of[i] for i in emb.ids]
        read += emb.ocr_text if len(emb.ocr_text) == len(emb.ids) else ["" for _ in emb.ids]
        image.append(emb.image)
        text.append(emb.text)
    left = _left_out(left, keep, [p.id for p in pairs] + problems, emb.ids if emb else [])
    dim = matcher.dim
    vectors = FigureVectors(keys, np.concatenate(image) if image else np.zeros((0, dim), np.float32),
                            np.concatenate(text) if text else np.zeros((0, dim), np.float32), words, ocr=read,
                            embedded=len(emb.ids) if emb else 0,
                            problems=problems + ([b.line() for b in emb.bad] if emb else []),
                            left_out=sum(left.values()), notes=notes)
    hub = _hub_settings(matcher)
    if (todo or old is None or len(rows) != len(old.keys) or old.lexicon is None or state.get("hub") != hub
            or (matcher.lexical.chars and old.chars is None)):
        _write_words(folder, vectors)
        if matcher.lexical.chars:
            vectors.chars = _updated_chars(old, rows, words[len(rows):])
        if hub:
            same = old if old is not None and old.hub is not None and state.get("hub") == hub else None
            vectors.hub, vectors.bank = updated_normalizers(
                vectors.image, vectors.text, read, vectors.lexicon or words,
                same.hub[rows] if same is not None and same.hub is not None else None,
                same.bank if same is not None else None, len(old.keys) - len(rows) if old is not None else 0,
                matcher.lexical, matcher.hubness, vectors.chars)
        _write_store(folder, {"model": model, "ocr": ocr, "papers": {p: prints[p] for p in prints},
                              "left_out": left, "hub": hub}, vectors)
    else:
        vectors.lexicon, vectors.hub, vectors.bank, vectors.chars = old.lexicon, old.hub, old.bank, old.chars
    return vectors


def query_map(matcher: Matcher) -> tuple[np.ndarray, np.ndarray, str]:
    """The matcher's text tower for a text alone (no mentions) as ``(weight, bias, text encoder)``: a query's
    text vector ``q`` maps to ``normalize(weight @ q + bias)``. Only the built-in dual encoder has one, since its
    text tower is the text encoder's vector plus a learned linear correction."""
    model = getattr(matcher, "model", None)
    adapter = getattr(model, "caption_adapter", None)
    if model is None or adapter is None:
        raise InputError("this matcher's text tower is not a linear map of a text embedding: the index's image "
                         "signal needs the built-in dual encoder")
    weight = adapter.weight.detach().cpu().numpy().astype(np.float32)
    bias = adapter.bias.detach().cpu().numpy().astype(np.float32)
    return np.eye(weight.shape[0], weight.shape[1], dtype=np.float32) + weight, bias, model.config.text_encoder


def image_signal(corpus_dir: str | Path, matcher: Optional[Matcher] = None, cache: Optional[FeatureCache] = None,
                 ocr: bool = True) -> ImageSignal:
    """The corpus's figures embedded by the matcher's image tower (updating ``<corpus>/matcher/``) with the
    map of its text tower: the image signal of text search (:func:`figlink.index.build_index` ``image=``).
    Figures left out before are tried again (an explicit index run is where a restored image is picked up)."""
    matcher = matcher or load_matcher()
    weight, bias, text_encoder = query_map(matcher)
    vectors = update_figure_vectors(corpus_dir, matcher, cache, ocr=ocr, retry=True)
    return ImageSignal(_model_id(matcher), text_encoder, vectors.keys, vectors.image, weight, bias,
                       problems=tuple(vectors.problems))


def embed_query_image(image: str | Path, matcher: Matcher, cache: Optional[FeatureCache] = None,
                      ocr: bool = True) -> tuple[np.ndarray, str]:
    """The image tower's unit vector of one image file and the words read in it ("" without OCR);
    :class:`InputError` when it cannot be read."""
    emb = matcher.embed([FigurePair("query", Path(image), "")], TEXT_MODE, cache or FeatureCache.disabled(), ocr=ocr)
    if emb.bad or not emb.ids:
        raise InputError(f"query image: {emb.bad[0].reason if emb.bad else 'could not be embedded'}")
    return emb.image[0], (emb.ocr_text[0] if emb.ocr_text else "")


def _word_scores(vectors: FigureVectors, query_words: str) -> np.ndarray:
    """The query's BM25 term against the stored words, from their word index (or the words themselves)."""
    try:
        scores = lexicon_scores(vectors.lexicon, query_words, len(vectors.keys)) if vectors.lexicon else None
    except sqlite3.Error:  # a damaged or vanished word index: the words themselves give the same numbers
        scores = None
    return lexical_scores([query_words], vectors.words)[0] if scores is None else scores


def figure_scores(vectors: FigureVectors, query: np.ndarray, query_words: str,
                  lexical: LexicalWeights) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per stored figure: cosine to its image, cosine to its text, and the weighted lexical term of the
    query's words against its words (zeros when the weights are 0 or the query has no words)."""
    sim_image, sim_text = vectors.image @ query, vectors.text @ query
    term = np.zeros(len(vectors.keys))
    if lexical.on and query_words.strip() and len(vectors.words) == len(vectors.keys):
        if lexical.words:
            term += lexical.words * _word_scores(vectors, query_words)
        if lexical.chars:
            term += lexical.chars * char_scores(char_index(vectors), [query_words])[0]
    return sim_image, sim_text, term


def hub_normalizers(vectors: FigureVectors) -> np.ndarray:
    """The stored figures' hubness normalizers (zeros when the matcher scores without them)."""
    return vectors.hub.astype(np.float64) if vectors.hub is not None else np.zeros(len(vectors.keys))


def search_figures(vectors: FigureVectors, image: str | Path, k: int, matcher: Matcher,
                   cache: Optional[FeatureCache] = None, ocr: bool = True) -> list[ImageHit]:
    """The ``k`` stored figures nearest to an image: ``cos(image) + cos(text) + lexical − hubness normalizer``."""
    query, words = embed_query_image(image, matcher, cache, ocr=ocr)
    if not vectors.keys:
        return []
    sim_image, sim_text, lexical = figure_scores(vectors, query, words, matcher.lexical)
    hub = hub_normalizers(vectors)
    score = sim_image + sim_text + lexical - hub
    top = np.argsort(-score, kind="stable")[:k]
    return [ImageHit(r + 1, float(score[i]), vectors.keys[i][0], vectors.keys[i][1], float(sim_image[i]),
                     float(sim_text[i]), float(lexical[i]), float(hub[i])) for r, i in enumerate(top)]


def search_by_image(corpus_dir: str | Path, image: str | Path, k: int = 10, matcher: Optional[Matcher] = None,
                    cache: Optional[FeatureCache] = None, ocr: bool = True) -> list[ImageHit]:
    """The ``k`` figures of a corpus nearest to an image (embedding new figures of the corpus first)."""
    matcher = matcher or load_matcher()
    vectors = update_figure_vectors(corpus_dir, matcher, cache, ocr=ocr)
    return search_figures(vectors, image, k, matcher, cache, ocr=ocr)


def hit_records(corpus_dir: str | Path, hits: list[ImageHit]) -> list[dict]:
    """Each hit as a dict with its figure's label, caption, image (relative to the corpus), title and year,
    the fields a text search hit has, plus the two similarities in ``signals``."""
    from figlink.corpus import Corpus

    with Corpus(corpus_dir, readonly=True) as corpus:
        papers = {p.paper_id: p for p in corpus.papers_with_ids(sorted({h.paper_id for h in hits}))}
    out = []
    for h in hits:
        paper = papers.get(h.paper_id)
        fig = next((f for f in paper.figures if f.figure_id == h.figure_id), None) if paper else None
        if paper is None or fig is None:
            continue  # removed since the vectors were made
        out.append({"rank": h.rank, "score": round(h.score, 6), "level": "figure", "paper_id": h.paper_id,
                    "figure_id": h.figure_id, "panel": None, "label": fig.label, "caption": fig.caption,
                    "image": fig.image, "title": paper.title, "year": paper.year,
                    "figure_type": fig.figure_type.label if fig.figure_type else None,
                    "signals": {"image": round(h.image_similarity, 6), "text": round(h.text_similarity, 6),
                                "lexical": round(h.lexical, 6), "hub": round(h.hub, 6)}})
    return out

"""The matcher store's hubness normalizers when a corpus grows (issue 16, search by image at scale).

Quality: each OpenStax part (tune = the four train books, check = the held-out book) is taken as a corpus in
a fixed shuffled order; the first figures are balanced fully, the rest added in batches as
``figlink.learn.figure_hub.updated_normalizers`` adds them (each batch scored against the kept bank, the words'
index rewritten per batch, as the store does), up to a growth just under the rebalance share. The
normalizers are compared with a full balance of the whole part, and search by image is scored with each:
every figure's own image (its stored vector and OCR words) as the query, the figure itself first under the
search-by-image score, and image → text R@1 (its own caption + mentions first under cosine + lexical − hub);
the same without the correction is the baseline of the run.

Cost: the full balance against the update of one batch, at the part's size and with synthetic random unit
vectors (no words) at larger sizes: wall, CPU, and the peak of memory allocated during it (tracemalloc).
``--words-sizes``: the same with real words, all OpenStax figures repeated up to the size (vectors with a
little noise, their captions + mentions and OCR words), both halves of the lexical term on, beside the CPU of
indexing all the figures' character n-grams against appending the update's.

    python benchmarks/bench_hub_update.py [--part tune|check|both] [--sizes 20000,100000]
                                          [--words-sizes 18340] [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import print_table, require_shared_data  # noqa: E402

import numpy as np  # noqa: E402

from figlink.eval.splits import pair_split  # noqa: E402
from figlink.learn.cache import FeatureCache  # noqa: E402
from figlink.learn.figure_hub import REBALANCE, balanced_on, full_balance, updated_normalizers  # noqa: E402
from figlink.learn.hubness import Hubness, bank_rows  # noqa: E402
from figlink.learn.char_grams import CharIndex  # noqa: E402
from figlink.learn.lexical import LexicalWeights, char_scores, lexicon_scores, write_lexicon  # noqa: E402


def measured(fn, memory: bool = False):
    """``fn()`` with its wall s and CPU s, and with ``memory`` the peak MB allocated while it ran, from a second
    run under tracemalloc (which slows allocations, so the times are from the first)."""
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    if not memory:
        return out, wall, cpu, float("nan")
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, wall, cpu, peak


def embedded(data: Path, cache: FeatureCache) -> dict:
    """The OpenStax figures embedded by the shipped matcher (features from the cache), per part."""
    from figlink.learn.embedder import load_matcher
    from figlink.learn.image_search import TEXT_MODE
    from figlink.learn.records import read_pair_file

    pairs, _ = read_pair_file(data / "figures" / "openstax" / "pairs.jsonl")
    matcher = load_matcher()
    emb = matcher.embed(pairs, TEXT_MODE, cache, ocr=True)
    text_of = {p.id: p.text(TEXT_MODE) for p in pairs}
    out = {}
    for part in ("tune", "check"):
        idx = [i for i, x in enumerate(emb.ids) if pair_split(x) == part]
        order = np.random.default_rng(0).permutation(idx)  # ingested in no particular order
        out[part] = {"image": emb.image[order], "text": emb.text[order], "ocr": [emb.ocr_text[i] for i in order],
                     "words": [text_of[emb.ids[i]] for i in order]}
    return {"parts": out, "lexical": matcher.lexical, "hub": matcher.hubness}


def grown(v: dict, folder: Path, growth: float, batches: int, w: LexicalWeights,
          hub: Hubness) -> tuple[np.ndarray, Any, list]:
    """Normalizers after balancing the first figures fully and adding the rest (``growth`` of them) in batches,
    the character n-gram index appended per batch as the store appends it. Per batch: the update's (wall, CPU)
    and the CPU of appending its figures to the n-gram index."""
    n = len(v["text"])
    base = int(round(n / (1 + growth)))
    lex = folder / "words.sqlite"
    write_lexicon(lex, v["words"][:base])
    chars = CharIndex(v["words"][:base])
    norm, bank = full_balance(v["image"][:base], v["text"][:base], v["ocr"][:base], lex, w, hub, chars)
    costs = []
    prev = base
    for stop in np.linspace(base, n, batches + 1).round().astype(int)[1:]:
        write_lexicon(lex, v["words"][:stop])
        chars, _, char_cpu, _ = measured(lambda: chars.extended(v["words"][prev:stop]))
        prev = stop
        (norm, bank), wall, cpu, _ = measured(lambda: updated_normalizers(
            v["image"][:stop], v["text"][:stop], v["ocr"][:stop], lex, norm, bank, 0, w, hub, chars))
        costs.append((wall, cpu, char_cpu))
    assert bank.changed == n - base, "the update balanced fully: growth above the rebalance share"
    return norm, bank, costs


def search_scores(v: dict, lex: Path, chars: CharIndex, w: LexicalWeights) -> tuple[np.ndarray, np.ndarray]:
    """Every figure's own image (stored vector, OCR words) as a query against all figures: (image cosines,
    text cosines + the weighted lexical term, both halves, as ``image_search.figure_scores``), queries ×
    figures, before any normalizer."""
    n = len(v["text"])
    lexical = np.stack([w.words * lexicon_scores(lex, words, n) if w.words and words.strip() else np.zeros(n)
                        for words in v["ocr"]])
    if w.chars:
        has = np.array([bool(words.strip()) for words in v["ocr"]])
        lexical[has] += w.chars * char_scores(chars, [q for q, h in zip(v["ocr"], has) if h])
    return v["image"] @ v["image"].T, (v["image"] @ v["text"].T + lexical).astype(np.float32)


def search_quality(scores: tuple[np.ndarray, np.ndarray], hub: np.ndarray) -> tuple[float, float]:
    """(own figure first under the search-by-image score, image → text R@1) with these normalizers."""
    pictures, to_text = scores[0], scores[1] - hub[None, :].astype(np.float32)
    own = np.arange(len(hub))
    return float(np.mean((pictures + to_text).argmax(1) == own)), float(np.mean(to_text.argmax(1) == own))


def quality(parts: list[str], emb: dict, growths: list[float], batches: int) -> None:
    w, hub = emb["lexical"], emb["hub"]
    rows_diff, rows_search, rows_cost = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for part in parts:
            v = emb["parts"][part]
            n = len(v["text"])
            lex = Path(tmp) / f"{part}.sqlite"
            write_lexicon(lex, v["words"])
            chars, _, char_cpu, _ = measured(lambda: CharIndex(v["words"]))
            (full, _), wall, cpu, peak = measured(
                lambda: full_balance(v["image"], v["text"], v["ocr"], lex, w, hub, chars), True)
            rows_cost.append([part, f"{n:,}", "full balance", f"{wall:.2f} s", f"{cpu:.2f} s", f"{peak:.0f} MB",
                              f"{char_cpu:.2f} s (all figures)"])
            inside = np.zeros(n, bool)
            inside[bank_rows(n)] = True
            print(f"{part}: full balance, mean normalizer of the figures in the bank {full[inside].mean():.4f}, "
                  f"of those not in it {full[~inside].mean() if (~inside).any() else float('nan'):.4f}")
            scores = search_scores(v, lex, chars, w)
            none = search_quality(scores, np.zeros(n))
            exact = search_quality(scores, full)
            rows_search.append([part, "no correction (baseline)", f"{none[0]:.3f}", f"{none[1]:.3f}"])
            rows_search.append([part, "full balance", f"{exact[0]:.3f}", f"{exact[1]:.3f}"])
            for g in growths:
                norm, bank, costs = grown(v, Path(tmp), g, batches, w, hub)
                base = int(round(n / (1 + g)))
                same = balanced_on(bank.image, bank.ocr, v["text"], lex, w, hub, chars)[0].normalizers
                for name, ref in (("a full balance", full), ("a full balance over the kept bank", same)):
                    d = norm - ref
                    d = np.abs(d - np.median(d[:base]))  # less the offset they share, which changes no ranking
                    rows_diff.append([part, f"+{g:.0%} in {batches} batches ({base:,} → {n:,})", name,
                                      f"{d[:base].max():.4f} / {d[:base].mean():.4f}",
                                      f"{d[base:].max():.4f} / {d[base:].mean():.4f}",
                                      f"{np.corrcoef(norm, ref)[0, 1]:.4f}"])
                got = search_quality(scores, norm)
                rows_search.append([part, f"kept bank, +{g:.0%}", f"{got[0]:.3f}", f"{got[1]:.3f}"])
                wall_b = float(np.median([c[0] for c in costs]))
                cpu_b = float(np.median([c[1] for c in costs]))
                char_b = float(np.median([c[2] for c in costs]))
                rows_cost.append([part, f"{n:,}", f"update of one batch (~{(n - base) / batches:.0f} figures, "
                                  f"median of {batches})", f"{wall_b:.2f} s", f"{cpu_b:.2f} s", "",
                                  f"{char_b:.3f} s (appended)"])
    print_table("Normalizers after growth against a full balance (max / mean |difference| less the median "
                "difference of the figures there before; scores are cosines)",
                ["part", "growth", "against", "figures there before", "figures added", "correlation"], rows_diff)
    print_table("Search by image with each (every figure's own image as the query)",
                ["part", "normalizers", "own figure first", "image → text R@1"], rows_search)
    print_table("Cost at the parts' sizes (the words' index written per batch not included)",
                ["part", "figures", "what", "wall", "CPU", "peak allocated", "n-gram index CPU"], rows_cost)


def scale(sizes: list[int], hub: Hubness, dim: int = 384, batch: float = 0.01) -> None:
    """Full balance and a 1 % update on synthetic random unit vectors (no words)."""
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        unit = lambda m: (lambda x: (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32))(  # noqa: E731
            rng.standard_normal((m, dim), dtype=np.float32))
        image, text = unit(n), unit(n)
        (norm, bank), wall, cpu, peak = measured(lambda: full_balance(image, text, [], [], LexicalWeights(), hub), True)
        rows.append([f"{n:,}", f"full balance (bank {len(bank.rows):,})", f"{wall:.1f} s", f"{cpu:.1f} s",
                     f"{peak:.0f} MB", f"{(image.nbytes + text.nbytes) / 2**20:.0f} MB"])
        k = max(1, int(n * batch))
        image, text = np.concatenate([image, unit(k)]), np.concatenate([text, unit(k)])
        _, wall, cpu, peak = measured(lambda: updated_normalizers(image, text, [], [], norm, bank, 0, LexicalWeights(), hub), True)
        rows.append([f"{n:,} + {k:,}", "update (the new figures against the kept bank)", f"{wall:.2f} s",
                     f"{cpu:.2f} s", f"{peak:.0f} MB", ""])
    print_table("Cost with synthetic random unit vectors (384-d, no words)",
                ["figures", "what", "wall", "CPU", "peak allocated", "the vectors themselves"], rows)


def scale_words(sizes: list[int], emb: dict, batch: float = 0.01) -> None:
    """Full balance and a 1 % update with real words: the OpenStax figures repeated up to each size."""
    parts = emb["parts"]
    image = np.concatenate([parts[p]["image"] for p in ("tune", "check")])
    text = np.concatenate([parts[p]["text"] for p in ("tune", "check")])
    ocr = parts["tune"]["ocr"] + parts["check"]["ocr"]
    words = parts["tune"]["words"] + parts["check"]["words"]
    w, hub = emb["lexical"], emb["hub"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            rng = np.random.default_rng(n)
            take = np.resize(np.arange(len(words)), n + max(1, int(n * batch)))
            noisy = (lambda x: (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32))  # noqa: E731
            im = noisy(image[take] + 0.02 * rng.standard_normal((len(take), image.shape[1]), dtype=np.float32))
            tx = noisy(text[take] + 0.02 * rng.standard_normal((len(take), text.shape[1]), dtype=np.float32))
            oc, wd = [ocr[i] for i in take], [words[i] for i in take]
            lex = Path(tmp) / "w.sqlite"
            write_lexicon(lex, wd[:n])
            chars, _, build_cpu, _ = measured(lambda: CharIndex(wd[:n]))
            (norm, bank), wall, cpu, peak = measured(
                lambda: full_balance(im[:n], tx[:n], oc[:n], lex, w, hub, chars), True)
            rows.append([f"{n:,}", f"full balance (bank {len(bank.rows):,})", f"{wall:.1f} s", f"{cpu:.1f} s",
                         f"{peak:.0f} MB", f"{build_cpu:.1f} s (all; {chars.counts.nnz / n:.0f} grams a figure)"])
            write_lexicon(lex, wd)
            more, _, add_cpu, _ = measured(lambda: chars.extended(wd[n:]))
            _, wall, cpu, peak = measured(lambda: updated_normalizers(im, tx, oc, lex, norm, bank, 0, w, hub, more),
                                          True)
            rows.append([f"{n:,} + {len(take) - n:,}", "update (the new figures against the kept bank)",
                         f"{wall:.2f} s", f"{cpu:.2f} s", f"{peak:.0f} MB", f"{add_cpu:.2f} s (appended)"])
    print_table("Cost with real words (OpenStax figures repeated; both halves of the lexical term)",
                ["figures", "what", "wall", "CPU", "peak allocated", "n-gram index CPU"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=("tune", "check", "both", "none"), default="both")
    ap.add_argument("--growth", default=f"0.05,{REBALANCE - 0.005}", help="growths before a full balance")
    ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--sizes", default="20000,100000", help="synthetic corpus sizes ('' for none)")
    ap.add_argument("--words-sizes", default="", help="corpus sizes with real words, e.g. 18340 ('' for none)")
    ap.add_argument("--cache", default=os.environ.get("FIGLINK_CACHE_DIR") or str(FeatureCache().root))
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    data = require_shared_data("bench_hub_update")
    emb = embedded(data, FeatureCache(args.cache))
    parts = {"both": ["tune", "check"], "none": []}.get(args.part, [args.part])
    if parts:
        quality(parts, emb, [float(g) for g in args.growth.split(",")], args.batches)
    if args.sizes:
        scale([int(s) for s in args.sizes.split(",")], emb["hub"])
    if args.words_sizes:
        scale_words([int(s) for s in args.words_sizes.split(",")], emb)


if __name__ == "__main__":
    main()

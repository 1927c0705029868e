"""Image–text matcher benchmark (issue 16): retrieval both ways, captions vs captions + mentions, 5 seeds.

Data: OpenStax figure pairs. The matcher trains on four books (University Physics, Microbiology,
Astronomy, Psychology) and chooses its epoch count by holding each of them out in turn (the *tune* rows
are those held-out books, averaged); the Chemistry book is never trained or selected on (the *check*
rows). Out of domain: figures cut
from the eLife dev PDFs and matched to their JATS captions (tune/check halves by article).

Each row: pool size, R@1/5/10/20 and MRR as mean ± std over the seeds, random chance, and the baseline
of the same run: BM25 of the figure's OCR text against the texts (SciOL's OCR ablation), with the
R@1 ratio to it (target ≥ 1.5, aim 2). Costs: feature extraction, training time and peak memory (one
training in a child process), `figlink embed` figures/s end to end (CLI, cold and warm cache).

    python benchmarks/bench_matcher.py [--seeds 5] [--image-size PX] [--models DIR ...] [--cache DIR] [--quick]
                                       [--no-embed-speed]

``--image-size`` is the EfficientNet input side of the models trained here (default: the shipped recipe's).
Every model directory of ``--models`` (default: the shipped one) is scored in the same run: its own
weights on the check pools, and on tune its recipe's fold models (each train book held out in turn from a
model trained on the other three at its recorded epoch count and seed, as its MODEL_CARD); the search-by-image
costs are of the first of them.

Features (EfficientNet maps, OCR lines, MiniLM vectors) are cached in --cache ($FIGLINK_CACHE_DIR or
~/.cache/figlink); the first run OCRs 3,725 images (about 1 CPU-second each).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, print_table, require_shared_data  # noqa: E402

import numpy as np  # noqa: E402

from matcher_data import elife_part, elife_pdf_pairs  # noqa: E402

from figlink.eval.splits import OPENSTAX_CHECK_BOOK, pair_split  # noqa: E402
from figlink.learn.cache import FeatureCache  # noqa: E402
from figlink.learn.dataset import Features, featurize_pairs  # noqa: E402
from figlink.learn.evaluate import KS, both_ways, bm25_ocr_baseline  # noqa: E402
from figlink.learn.featurize import print_progress  # noqa: E402
from figlink.learn.lexical import LexicalWeights, pool_lexical  # noqa: E402
from figlink.learn.recipe import fit, fold_of_ids  # noqa: E402
from figlink.learn.records import TEXT_MODES, read_pair_file  # noqa: E402
from figlink.learn.reproduce import SHIPPED_CONFIG, SHIPPED_SETTINGS  # noqa: E402
from figlink.learn.train import encode_all, evaluate, train_matcher  # noqa: E402

METRICS = [f"R@{k}" for k in KS] + ["MRR"]
DENSE_ROW = "caption+mentions, cosine only (no lexical term, no hubness correction)"
NO_HUB_ROW = "caption+mentions, cosine + lexical (no hubness correction)"
NO_CHAR_ROW = "caption+mentions, cosine + word lexical - hub (no character n-gram term)"


IMAGE_SIZE = SHIPPED_CONFIG.image_size  # of the models trained here; --image-size sets it


def config_for(mode: str):
    return replace(SHIPPED_CONFIG, use_mentions=mode == "caption+mentions", image_size=IMAGE_SIZE)


_LOADED: dict[int, tuple[Features, Features]] = {}  # image size → (OpenStax, eLife) features of this run


def load_features(args, data: Path, image_size: Optional[int] = None) -> tuple[Features, Features]:
    """OpenStax and eLife features at ``image_size`` px (default: the models trained here), read once per size."""
    size = image_size or IMAGE_SIZE
    if size not in _LOADED:
        _LOADED[size] = _read_features(args, data, size)
    return _LOADED[size]


def _read_features(args, data: Path, size: int) -> tuple[Features, Features]:
    cache = FeatureCache(args.cache)
    pairs, bad = read_pair_file(data / "figures" / "openstax" / "pairs.jsonl")
    t = time.perf_counter()
    openstax, bad2 = featurize_pairs(pairs, cache, ocr=True, image_size=size,
                                     progress=print_progress(f"OpenStax features ({size} px)"))
    print(f"OpenStax: {len(openstax)} figures ({len(bad) + len(bad2)} bad), features at {size} px "
          f"{time.perf_counter() - t:.0f} s")
    elife_file = elife_pdf_pairs(data, Path(args.scratch))
    epairs, ebad = read_pair_file(elife_file)
    elife, ebad2 = featurize_pairs(epairs, cache, ocr=True, image_size=size, progress=print_progress("eLife features"))
    print(f"eLife PDFs: {len(elife)} figures ({len(ebad) + len(ebad2)} bad)")
    return openstax, elife


def score_models(args, data: Path, folders: list[Path]) -> dict[str, dict]:
    """results[row][set] = [metrics] of each model directory (caption + mentions, its own score): its weights
    on the check pools, its recipe's fold models on tune (:func:`figlink.learn.rescore.fold_metrics`)."""
    from figlink.learn.embedder import load_matcher
    from figlink.learn.rescore import fold_metrics

    results: dict[str, dict] = {}
    for folder in folders:
        matcher = load_matcher(folder)
        model = matcher.model  # type: ignore[attr-defined]
        training = matcher.manifest["training"]  # type: ignore[attr-defined]
        openstax, elife = load_features(args, data, model.config.image_size)
        train, sets = eval_sets(openstax, elife)
        settings = replace(SHIPPED_SETTINGS, seed=training["settings"]["seed"], epochs=training["epochs"])
        t = time.perf_counter()
        row = f"model {folder.name} ({model.config.image_size} px, {training['created'][:10]})"
        results[row] = {TUNE: [mean_metrics(list(fold_metrics(train, model.config, settings).values()))]}
        for name, f in sets.items():
            results[row][name] = [evaluate(model, f, "caption+mentions")]
        print(f"  {row}: scored in {time.perf_counter() - t:.0f} s", flush=True)
    return results


TUNE = "OpenStax tune (each train book held out in turn; mean over the 4 books)"
CHECK = f"OpenStax check ({OPENSTAX_CHECK_BOOK}, held out)"


def eval_sets(openstax: Features, elife: Features) -> tuple[Features, dict[str, Features]]:
    """The four train books, and the pools scored: the check book and the two halves of the eLife figures."""
    train = openstax.subset([i for i, x in enumerate(openstax.ids) if pair_split(x) == "tune"])
    parts = {CHECK: openstax.subset([i for i, x in enumerate(openstax.ids) if pair_split(x) == "check"])}
    for part in ("tune", "check"):
        idx = [i for i, x in enumerate(elife.ids) if elife_part(x) == part]
        parts[f"eLife PDF figures {part} (out of domain)"] = elife.subset(idx)
    return train, parts


def mean_metrics(runs: list[dict]) -> dict:
    """Metrics averaged over pools (the tune folds)."""
    return {d: {k: float(np.mean([r[d][k] for r in runs])) for k in METRICS} for d in ("t2i", "i2t")} | {
        "pool": int(round(np.mean([r["pool"] for r in runs]))),
        "chance": {k: float(np.mean([r["chance"][k] for r in runs])) for k in METRICS}}


def dense_only(model, f: Features, mode: str) -> dict:
    """The matcher's towers alone: its cosines without the lexical term."""
    image, text = encode_all(model, f, mode)
    return both_ways(text @ image.T)


def ablations(model, f: Features, mode: str) -> dict[str, dict]:
    """The rows scored with parts of the score left out, and with captions alone, of one c+m model."""
    words_only = pool_lexical(f.texts(mode), f.ocr_text, LexicalWeights(words=model.config.lexical_weight))
    return {"caption (c+m model)": evaluate(model, f, "caption"), DENSE_ROW: dense_only(model, f, mode),
            NO_HUB_ROW: evaluate(model, f, mode, hubness=False), NO_CHAR_ROW: evaluate(model, f, mode, lexical=words_only)}


def tune_ablations(train: Features, mode: str, seed: int, epochs: int) -> dict[str, dict]:
    """:func:`ablations` on the tune books, each held out in turn from a model trained on the other three
    for the chosen epoch count (the cross-validation keeps no models), averaged over the books."""
    folds = np.asarray(fold_of_ids(train.ids))
    runs: dict[str, list] = {}
    for k in sorted(set(folds.tolist())):
        r = train_matcher(train.subset(np.flatnonzero(folds != k)), None, config_for(mode),
                          replace(SHIPPED_SETTINGS, seed=seed, text_mode=mode, epochs=epochs))
        for row, m in ablations(r.model, train.subset(np.flatnonzero(folds == k)), mode).items():
            runs.setdefault(row, []).append(m)
    return {row: mean_metrics(ms) for row, ms in runs.items()}


def run_seeds(train: Features, sets: dict[str, Features], seeds: list[int], epochs: int):
    """results[row][set] = list over seeds of metrics; timings in seconds."""
    rows = (*TEXT_MODES, "caption (c+m model)", NO_CHAR_ROW, NO_HUB_ROW, DENSE_ROW)
    results: dict = {m: {s: [] for s in (TUNE, *sets)} for m in rows}
    times, chosen = [], []
    for mode in TEXT_MODES:
        for seed in seeds:
            t = time.perf_counter()
            r, sel = fit(train, config_for(mode), replace(SHIPPED_SETTINGS, seed=seed, text_mode=mode, epochs=epochs))
            times.append(time.perf_counter() - t)
            chosen.append(sel.epochs)
            results[mode][TUNE].append(mean_metrics(list(sel.folds.values())))
            for name, f in sets.items():
                results[mode][name].append(evaluate(r.model, f, mode))
                if mode == "caption+mentions":
                    for row, m in ablations(r.model, f, mode).items():
                        results[row][name].append(m)
            if mode == "caption+mentions":
                for row, m in tune_ablations(train, mode, seed, sel.epochs).items():
                    results[row][TUNE].append(m)
            print(f"  {mode} seed {seed}: {sel.epochs} epochs, {times[-1]:.0f} s", flush=True)
    return results, times, chosen


def mean_std(runs: list[dict], d: str, k: str) -> tuple[float, float]:
    v = np.array([r[d][k] for r in runs])
    return float(v.mean()), float(v.std())


def baseline(f: Features, mode: str) -> dict:
    return bm25_ocr_baseline(f.texts(mode), f.ocr_text)


def print_results(results: dict, train: Features, sets: dict[str, Features], n_seeds: int) -> None:
    header = ["matcher", "direction", "pool", *METRICS, "chance R@1", "BM25-OCR R@1", "R@1 / BM25"]
    books = sorted({x.split("/", 1)[0] for x in train.ids})
    for name in (TUNE, *sets):
        rows = []
        for row, per_set in results.items():
            runs = per_set.get(name) or []
            if not runs:
                continue
            mode = "caption" if row.startswith("caption (") else (
                "caption+mentions" if "+" in row or row.startswith("model ") else row)
            if name == TUNE:
                base = mean_metrics([baseline(train.subset([i for i, x in enumerate(train.ids)
                                                            if x.startswith(b + "/")]), mode) for b in books])
            else:
                base = baseline(sets[name], mode)
            for d, label in (("t2i", "text→image"), ("i2t", "image→text")):
                cells = [("{:.3f}±{:.3f}".format(*mean_std(runs, d, k))) for k in METRICS]
                r1, b1 = mean_std(runs, d, "R@1")[0], base[d]["R@1"]
                rows.append([row, label, str(runs[0]["pool"]), *cells, f"{base['chance']['R@1']:.4f}", f"{b1:.3f}",
                             f"{r1 / b1:.2f}x" if b1 > 0 else "-"])
        print_table(f"{name}: mean ± std over {n_seeds} seeds", header, rows)


def print_mentions_claim(results: dict, sets: dict[str, Features]) -> None:
    rows = []
    for name in (TUNE, *sets):
        for d in ("t2i", "i2t"):
            a = np.array([r[d]["MRR"] for r in results["caption"][name]])
            b = np.array([r[d]["MRR"] for r in results["caption+mentions"][name]])
            diff = b - a  # paired by seed
            se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
            verdict = ("holds" if diff.mean() > 2 * se else "reversed" if diff.mean() < -2 * se
                       else "no clear effect")
            rows.append([name.split(" (")[0], d, f"{a.mean():.3f}", f"{b.mean():.3f}",
                         f"{diff.mean():+.3f}±{se:.3f}", verdict])
    print_table("MedICaT's claim (inline mentions help matching): MRR, paired over seeds (±: standard error)",
                ["set", "direction", "captions", "captions+mentions", "difference", "claim"], rows)


def probe_training(args) -> dict:
    """One training in a child process: its wall time and peak resident memory (features from the cache)."""
    cmd = [sys.executable, __file__, "--probe-train", "--cache", str(args.cache), "--scratch", str(args.scratch),
           "--epochs", str(args.epochs), "--image-size", str(args.image_size)]
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    rec["process_wall_s"] = wall
    rec["child_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return rec


def probe_train_main(args) -> None:
    data = require_shared_data("the matcher benchmark")
    t0 = time.perf_counter()
    openstax, elife = load_features(args, data)
    load_s = time.perf_counter() - t0
    train, _ = eval_sets(openstax, elife)
    t = time.perf_counter()
    _, sel = fit(train, config_for("caption+mentions"), replace(SHIPPED_SETTINGS, seed=0, epochs=args.epochs))
    print(json.dumps({"train_s": time.perf_counter() - t, "epochs": sel.epochs, "load_features_s": load_s,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def embed_speed(args, data: Path, n: int = 100) -> list[list[str]]:
    """`figlink embed` on n check-book figures with the shipped model: cold (no cache) and warm cache."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        pairs = _check_book_pairs(data, Path(tmp), n)
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        cache = Path(tmp) / "cache"
        for label, extra in (("cold (decode, EfficientNet, OCR, MiniLM)", ["--cache", str(cache)]),
                             ("warm (features cached)", ["--cache", str(cache)]),
                             ("cold, --no-ocr", ["--no-cache", "--no-ocr"])):
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "figlink.cli", "embed", str(pairs), "--out",
                                  str(Path(tmp) / "emb"), "--threads", "1", *extra], capture_output=True, text=True,
                                 env=env)
            wall = time.perf_counter() - t
            if out.returncode != 0:
                raise RuntimeError(out.stderr[-2000:])
            rows.append([f"figlink embed, {label}", f"{n / wall:.2f} figures/s", f"{wall:.1f} s for {n}",
                         out.stderr.strip().splitlines()[-1]])
    return rows


def _check_book_pairs(data: Path, folder: Path, n: Optional[int] = None) -> Path:
    """The check book's lines (the first ``n``) as a pairs file with absolute image paths."""
    src = data / "figures" / "openstax" / "pairs.jsonl"
    # split on "\n" only: captions hold U+2028, which str.splitlines() would also cut at
    lines = [line for line in src.read_text(encoding="utf-8").split("\n")
             if line.strip() and json.loads(line)["id"].startswith(OPENSTAX_CHECK_BOOK)][:n]
    out = folder / "pairs.jsonl"
    out.write_text("\n".join(json.dumps({**json.loads(x), "image": str(src.parent / json.loads(x)["image"])})
                             for x in lines) + "\n", encoding="utf-8")
    return out


def image_search_latency(args, data: Path, queries: int = 20) -> list[list[str]]:
    """`figlink search --image` on a corpus of the check book (610 figures, ingested without the vision stage):
    the one-off embedding of the corpus's figures (features from the cache), then per query image, cold
    (its OCR and EfficientNet not cached): p50 / p99 latency, and how often the figure itself comes first."""
    import figlink
    from figlink.learn.embedder import load_matcher
    from figlink.learn import image_search
    from figlink.learn.image_search import (embed_query_image, figure_normalizers, figure_scores, hub_normalizers,
                                            update_figure_vectors)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        pairs = _check_book_pairs(data, Path(tmp))
        figlink.build([pairs], Path(tmp) / "c", vision=False, index=False, progress=False)
        matcher = load_matcher(args.models[0] if args.models else None)  # --models: the first one's costs
        t = time.perf_counter()
        vectors = update_figure_vectors(Path(tmp) / "c", matcher, FeatureCache(args.cache))
        rows.append(["search --image: embed the corpus's figures once", f"{time.perf_counter() - t:.0f} s",
                     f"{len(vectors.keys)} figures", "features from the cache"])
        t, c = time.perf_counter(), time.process_time()
        figure_normalizers(vectors, matcher.lexical, matcher.hubness)
        rows.append(["search --image: the figures' hubness normalizers (part of writing the vectors)",
                     f"{time.perf_counter() - t:.2f} s wall", f"{time.process_time() - c:.2f} s CPU",
                     f"bank of {len(vectors.keys)} figure images"])
        hub = hub_normalizers(vectors)
        lines = [json.loads(x) for x in pairs.read_text(encoding="utf-8").split("\n") if x.strip()]
        step = max(1, len(lines) // queries)
        times, cpu, first, first_before, read = [], [], 0, 0, []
        for rec in lines[::step][:queries]:
            t, c = time.perf_counter(), time.process_time()
            q, words = embed_query_image(rec["image"], matcher, FeatureCache.disabled())
            before = sum(figure_scores(vectors, q, words, matcher.lexical))
            best = int(np.argmax(before - hub))
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            first += vectors.keys[best][1] == rec["id"]
            first_before += vectors.keys[int(np.argmax(before))][1] == rec["id"]
            read.append((q, words))
        ms, cpu_ms = np.array(times) * 1000, np.array(cpu) * 1000
        rows.append(["search --image: one query image, cold", f"p50 {np.percentile(ms, 50):.0f} ms "
                     f"({np.percentile(cpu_ms, 50):.0f} CPU)", f"p99 {np.percentile(ms, 99):.0f} ms",
                     f"{len(ms)} queries; its own figure first in {first}/{len(ms)} "
                     f"({first_before} without the hubness correction)"])
        rows += lexical_term_cost(vectors, read, matcher.lexical, Path(tmp) / "c" / image_search.STORE)
    return rows


def lexical_term_cost(vectors, read: list, weights, store: Path) -> list[list[str]]:
    """CPU per query of the lexical term's halves, on the same query images' OCR words: the word half from
    the store's word index against indexing the words per query (what search by image did before the store
    kept one); the character n-gram half, and loading the store's n-gram index (weighted at its first query)
    against indexing the stored words' n-grams in memory (what search by image did before the store kept it)."""
    from dataclasses import replace

    from figlink.learn.char_grams import CharIndex
    from figlink.learn.image_search import figure_scores
    from figlink.learn.lexical import LexicalWeights

    def cpu_ms(v, w) -> tuple[float, list]:
        t = time.process_time()
        out = [figure_scores(v, q, words, w)[2] for q, words in read]
        return 1000 * (time.process_time() - t) / max(1, len(read)), out

    words = LexicalWeights(words=weights.words)
    stored, a = cpu_ms(vectors, words)
    per_query, b = cpu_ms(replace(vectors, lexicon=None), words)
    same = all(np.allclose(x, y) for x, y in zip(a, b))
    from figlink.learn.image_search import _read_chars

    t = time.process_time()
    chars = CharIndex(vectors.words)
    chars.docs  # noqa: B018  (weighted, as at its first query)
    build = 1000 * (time.process_time() - t)
    t = time.process_time()
    with np.load(store / "vectors.npz") as z:
        loaded = _read_chars(z, len(vectors.keys))
    loaded.docs  # noqa: B018
    load = 1000 * (time.process_time() - t)
    probe = [words for _, words in read if words.strip()]
    equal = bool(np.allclose(loaded.cosines(probe), chars.cosines(probe), rtol=0, atol=1e-12))
    char_ms, _ = cpu_ms(replace(vectors, chars=chars), LexicalWeights(chars=weights.chars))
    return [["search --image: lexical term (words), CPU per query", f"{stored:.1f} ms (word index)",
             f"{per_query:.1f} ms indexed per query", f"{per_query / max(stored, 1e-9):.1f}x; scores identical: {same}"],
            ["search --image: lexical term (character n-grams), CPU per query", f"{char_ms:.1f} ms",
             f"indexing the stored words' n-grams once: {build:.0f} ms", f"{len(vectors.words)} figures, in memory"],
            ["search --image: the stored n-gram index, CPU once per process", f"{load:.0f} ms loaded and weighted",
             f"{build:.0f} ms built in memory", f"{build / max(load, 1e-9):.1f}x; cosines equal: {equal}"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=SHIPPED_SETTINGS.epochs)
    ap.add_argument("--cache", default=os.environ.get("FIGLINK_CACHE_DIR") or str(FeatureCache().root))
    ap.add_argument("--scratch", default=str(Path(tempfile.gettempdir()) / "figlink-bench-matcher"))
    ap.add_argument("--quick", action="store_true", help="one seed, no cost probes")
    ap.add_argument("--no-embed-speed", action="store_true")
    ap.add_argument("--costs-only", action="store_true", help="only the cost table (training probe, embed speed)")
    ap.add_argument("--no-train-probe", action="store_true")
    ap.add_argument("--no-image-search", action="store_true")
    ap.add_argument("--probe-train", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--image-size", type=int, default=SHIPPED_CONFIG.image_size,
                    help="EfficientNet input side (px) of the models trained here (default: the shipped recipe's)")
    ap.add_argument("--models", type=Path, nargs="*", default=None,
                    help="model directories scored in the same run (default: the shipped one)")
    args = ap.parse_args()
    global IMAGE_SIZE
    IMAGE_SIZE = args.image_size
    import torch

    torch.set_num_threads(int(os.environ.get("FIGLINK_TORCH_THREADS", "1")))
    if args.probe_train:
        probe_train_main(args)
        return
    data = require_shared_data("the matcher benchmark")
    if args.costs_only:
        print_costs(args, data, [])
        return
    openstax, elife = load_features(args, data)
    train, sets = eval_sets(openstax, elife)
    print(f"train (4 books) {len(train)}, " + ", ".join(f"{k.split(' (')[0]} {len(v)}" for k, v in sets.items()))
    seeds = [0] if args.quick else list(range(args.seeds))
    results, times, chosen = run_seeds(train, sets, seeds, args.epochs)
    from figlink.learn.embedder import DEFAULT_MODEL

    results.update(score_models(args, data, args.models if args.models is not None else [DEFAULT_MODEL]))
    print(f"models trained here: {IMAGE_SIZE} px; seed rows {len(seeds)} seeds, model rows one model each")
    print_results(results, train, sets, len(seeds))
    print_mentions_claim(results, sets)
    cost = [["choosing the epochs (4-fold, by book) + training one model, cached features",
             f"{np.mean(times):.0f} ± {np.std(times):.0f} s", f"epochs chosen {min(chosen)}-{max(chosen)}",
             f"{len(times)} runs"]]
    if args.quick:
        print_table("Cost on this machine's CPU", ["what", "speed", "detail", "note"], cost)
    else:
        print_costs(args, data, cost)


def print_costs(args, data: Path, cost: list[list[str]]) -> None:
    """The training probe (child process: time, peak memory) and `figlink embed` speed, after ``cost``."""
    if not args.no_train_probe:
        p = probe_training(args)
        cost = cost + [["choosing the epochs + training one model, in a child process", f"{p['train_s']:.0f} s",
                        f"peak RSS {p['peak_rss_mb']:.0f} MB", f"features from cache {p['load_features_s']:.0f} s"]]
    if not args.no_embed_speed:
        cost += embed_speed(args, data)
    if not args.no_image_search:
        cost += image_search_latency(args, data)
    print_table("Cost on this machine's CPU", ["what", "speed", "detail", "note"], cost)


if __name__ == "__main__":
    main()

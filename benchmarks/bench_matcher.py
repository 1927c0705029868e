"""Image–text matcher benchmark (issue 16): retrieval both ways, captions vs captions + mentions, 5 seeds.

Data: OpenStax figure pairs. The matcher trains on four books (University Physics, Microbiology,
Astronomy, Psychology) and picks its epoch on a validation slice of them (1/10 by id hash: the *tune*
rows); the Chemistry book is never trained or selected on (the *check* rows). Out of domain: figures cut
from the eLife dev PDFs and matched to their JATS captions (tune/check halves by article).

Each row: pool size, R@1/5/10/20 and MRR as mean ± std over the seeds, random chance, and the baseline
of the same run: BM25 of the figure's OCR text against the texts (SciOL's OCR ablation), with the
R@1 ratio to it (target ≥ 1.5, aim 2). Costs: feature extraction, training time and peak memory (one
training in a child process), `figlink embed` figures/s end to end (CLI, cold and warm cache).

    python benchmarks/bench_matcher.py [--seeds 5] [--cache DIR] [--quick] [--no-embed-speed]

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, print_table, require_shared_data  # noqa: E402

import numpy as np  # noqa: E402

from matcher_data import elife_part, elife_pdf_pairs  # noqa: E402

from figlink.eval.splits import OPENSTAX_CHECK_BOOK, pair_split  # noqa: E402
from figlink.learn.cache import FeatureCache  # noqa: E402
from figlink.learn.dataset import Features, featurize_pairs  # noqa: E402
from figlink.learn.evaluate import KS, bm25_ocr_baseline  # noqa: E402
from figlink.learn.featurize import print_progress  # noqa: E402
from figlink.learn.recipe import split_features  # noqa: E402
from figlink.learn.records import TEXT_MODES, read_pair_file  # noqa: E402
from figlink.learn.reproduce import SHIPPED_CONFIG, SHIPPED_SETTINGS  # noqa: E402
from figlink.learn.train import evaluate, train_matcher  # noqa: E402

METRICS = [f"R@{k}" for k in KS] + ["MRR"]


def texts_of(f: Features, mode: str) -> list[str]:
    return f.captions if mode == "caption" else [f"{c} {m}" for c, m in zip(f.captions, f.mention_text)]


def config_for(mode: str):
    from dataclasses import replace

    return replace(SHIPPED_CONFIG, use_mentions=mode == "caption+mentions")


def load_features(args, data: Path) -> tuple[Features, Features]:
    cache = FeatureCache(args.cache)
    pairs, bad = read_pair_file(data / "figures" / "openstax" / "pairs.jsonl")
    t = time.perf_counter()
    openstax, bad2 = featurize_pairs(pairs, cache, ocr=True, progress=print_progress("OpenStax features"))
    print(f"OpenStax: {len(openstax)} figures ({len(bad) + len(bad2)} bad), features {time.perf_counter() - t:.0f} s")
    elife_file = elife_pdf_pairs(data, Path(args.scratch))
    epairs, ebad = read_pair_file(elife_file)
    elife, ebad2 = featurize_pairs(epairs, cache, ocr=True, progress=print_progress("eLife features"))
    print(f"eLife PDFs: {len(elife)} figures ({len(ebad) + len(ebad2)} bad)")
    return openstax, elife


def eval_sets(openstax: Features, elife: Features) -> tuple[Features, Features, dict[str, Features]]:
    split = split_features(openstax, OPENSTAX_CHECK_BOOK + "/")
    assert all(pair_split(i) == "check" for i in split.check.ids)
    parts = {"OpenStax tune (validation slice, 4 train books)": split.val,
             f"OpenStax check ({OPENSTAX_CHECK_BOOK}, held out)": split.check}
    for part in ("tune", "check"):
        idx = [i for i, x in enumerate(elife.ids) if elife_part(x) == part]
        parts[f"eLife PDF figures {part} (out of domain)"] = elife.subset(idx)
    return split.train, split.val, parts


def run_seeds(train: Features, val: Features, sets: dict[str, Features], seeds: list[int], epochs: int):
    """results[mode][set] = list over seeds of metrics; timings in seconds."""
    from dataclasses import replace

    results: dict = {m: {s: [] for s in sets} for m in (*TEXT_MODES, "caption (c+m model)")}
    times, best_epochs = [], []
    for mode in TEXT_MODES:
        for seed in seeds:
            settings = replace(SHIPPED_SETTINGS, seed=seed, text_mode=mode, epochs=epochs)
            r = train_matcher(train, val, config_for(mode), settings)
            times.append(r.seconds)
            best_epochs.append(r.best_epoch)
            for name, f in sets.items():
                results[mode][name].append(evaluate(r.model, f, mode))
                if mode == "caption+mentions":
                    results["caption (c+m model)"][name].append(evaluate(r.model, f, "caption"))
            print(f"  {mode} seed {seed}: best epoch {r.best_epoch}, {r.seconds:.0f} s", flush=True)
    return results, times, best_epochs


def mean_std(runs: list[dict], d: str, k: str) -> tuple[float, float]:
    v = np.array([r[d][k] for r in runs])
    return float(v.mean()), float(v.std())


def print_results(results: dict, sets: dict[str, Features], n_seeds: int) -> None:
    header = ["text", "direction", "pool", *METRICS, "chance R@1", "BM25-OCR R@1", "R@1 / BM25"]
    for name, f in sets.items():
        rows = []
        for mode, per_set in results.items():
            runs = per_set[name]
            text_mode = "caption" if mode.startswith("caption (") else mode
            base = bm25_ocr_baseline(texts_of(f, text_mode), f.ocr_text)
            for d, label in (("t2i", "text→image"), ("i2t", "image→text")):
                cells = []
                for k in METRICS:
                    m, s = mean_std(runs, d, k)
                    cells.append(f"{m:.3f}±{s:.3f}")
                r1 = mean_std(runs, d, "R@1")[0]
                b1 = base[d]["R@1"]
                rows.append([mode, label, str(len(f)), *cells, f"{base['chance']['R@1']:.4f}", f"{b1:.3f}",
                             f"{r1 / b1:.2f}x" if b1 > 0 else "-"])
        print_table(f"{name}: mean ± std over {n_seeds} seeds", header, rows)


def print_mentions_claim(results: dict, sets: dict[str, Features]) -> None:
    rows = []
    for name in sets:
        for d in ("t2i", "i2t"):
            a = np.array([r[d]["MRR"] for r in results["caption"][name]])
            b = np.array([r[d]["MRR"] for r in results["caption+mentions"][name]])
            diff = b - a  # paired by seed
            se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
            verdict = "holds" if diff.mean() > 2 * se else ("reversed" if diff.mean() < -2 * se else "no clear effect")
            rows.append([name.split(" (")[0], d, f"{a.mean():.3f}", f"{b.mean():.3f}", f"{diff.mean():+.3f}±{se:.3f}",
                         verdict])
    print_table("MedICaT's claim (inline mentions help matching): MRR, paired over seeds (±: standard error)",
                ["set", "direction", "captions", "captions+mentions", "difference", "claim"], rows)


def probe_training(args) -> dict:
    """One training in a child process: its wall time and peak resident memory (features from the cache)."""
    cmd = [sys.executable, __file__, "--probe-train", "--cache", str(args.cache), "--scratch", str(args.scratch),
           "--epochs", str(args.epochs)]
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
    train, val, _ = eval_sets(openstax, elife)
    from dataclasses import replace

    r = train_matcher(train, val, config_for("caption+mentions"),
                      replace(SHIPPED_SETTINGS, seed=0, epochs=args.epochs))
    print(json.dumps({"train_s": r.seconds, "epochs_run": r.epochs_run, "load_features_s": load_s,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def embed_speed(args, data: Path, n: int = 100) -> list[list[str]]:
    """`figlink embed` on n check-book figures with the shipped model: cold (no cache) and warm cache."""
    src = data / "figures" / "openstax" / "pairs.jsonl"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        lines = [line for line in src.read_text(encoding="utf-8").splitlines()
                 if json.loads(line)["id"].startswith(OPENSTAX_CHECK_BOOK)][:n]
        pairs = Path(tmp) / "pairs.jsonl"
        pairs.write_text("\n".join(json.dumps({**json.loads(x), "image": str(src.parent / json.loads(x)["image"])})
                                   for x in lines) + "\n", encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        cache = Path(tmp) / "cache"
        for label, extra in (("cold (no cache: decode, EfficientNet, OCR, MiniLM)", ["--cache", str(cache)]),
                             ("warm (features cached)", ["--cache", str(cache)])):
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=SHIPPED_SETTINGS.epochs)
    ap.add_argument("--cache", default=os.environ.get("FIGLINK_CACHE_DIR") or str(FeatureCache().root))
    ap.add_argument("--scratch", default=str(Path(tempfile.gettempdir()) / "figlink-bench-matcher"))
    ap.add_argument("--quick", action="store_true", help="one seed, no cost probes")
    ap.add_argument("--no-embed-speed", action="store_true")
    ap.add_argument("--probe-train", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(int(os.environ.get("FIGLINK_TORCH_THREADS", "2")))
    if args.probe_train:
        probe_train_main(args)
        return
    data = require_shared_data("the matcher benchmark")
    openstax, elife = load_features(args, data)
    train, val, sets = eval_sets(openstax, elife)
    print(f"train {len(train)}, tune {len(val)}, " + ", ".join(f"{k.split(' (')[0]} {len(v)}" for k, v in sets.items()))
    seeds = [0] if args.quick else list(range(args.seeds))
    results, times, best = run_seeds(train, val, sets, seeds, args.epochs)
    print_results(results, sets, len(seeds))
    print_mentions_claim(results, sets)
    cost = [["training one model (4 books, cached features, 2 threads)",
             f"{np.mean(times):.0f} ± {np.std(times):.0f} s", f"best epoch {np.mean(best):.0f} (range {min(best)}-{max(best)})",
             f"{len(times)} runs"]]
    if not args.quick:
        p = probe_training(args)
        cost.append(["one training in a child process", f"{p['train_s']:.0f} s training",
                     f"peak RSS {p['peak_rss_mb']:.0f} MB", f"features from cache {p['load_features_s']:.0f} s"])
        if not args.no_embed_speed:
            cost += embed_speed(args, data)
    print_table("Cost on this machine's CPU", ["what", "speed", "detail", "note"], cost)


if __name__ == "__main__":
    main()

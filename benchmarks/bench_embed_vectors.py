"""What `figlink embed` writes, ranked by plain dot products (issue 16 #3): the towers' vectors
(`--score dense`) against rows that carry the matcher's whole score (`--score full`, the default;
figlink.learn.pool_vectors), beside the whole score computed in process and BM25 over the OCR text.

A user or a benchmark that reads `image.npy` and `text.npy` ranks by `text @ image.T`; this measures what
that ranking is worth. Same data and split as bench_matcher.py: OpenStax tune = each of the four train books
held out in turn from a model of the shipped recipe trained on the other three (its recorded epoch count and
seed), averaged over the books; check = the chemistry book under the shipped model; eLife PDF figures (out of
domain) by article. Costs: CPU seconds of `pool_vectors` per pool, the rows' size, and (`--cli`) `figlink
embed` end to end on the check book with both settings, the feature cache warm (start-up and writing included).

    python benchmarks/bench_embed_vectors.py [--cache DIR] [--cli] [--dims WORDS,CHARS]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, print_table, require_shared_data  # noqa: E402

import numpy as np  # noqa: E402

from bench_matcher import CHECK, eval_sets, load_features  # noqa: E402

import figlink.learn.pool_vectors as pv  # noqa: E402
from figlink.learn.cache import FeatureCache  # noqa: E402
from figlink.learn.embedder import load_matcher  # noqa: E402
from figlink.learn.evaluate import both_ways, bm25_ocr_baseline  # noqa: E402
from figlink.learn.recipe import fold_of_ids, group_of  # noqa: E402
from figlink.learn.reproduce import SHIPPED_SETTINGS  # noqa: E402
from figlink.learn.train import encode_all, evaluate, train_matcher  # noqa: E402

MODE = "caption+mentions"
ROWS = ("BM25-OCR baseline", "whole score, in process", "embed --score dense (dot products)",
        "embed --score full (dot products)")


def score_pool(model, lexical, hub, f) -> tuple[dict, dict]:
    """Metrics of each row on one pool, and the costs of the full rows."""
    img, txt = encode_all(model, f, MODE)
    t = time.process_time()
    fi, ft = pv.pool_vectors(img, txt, f.ocr_text, f.texts(MODE), lexical, hub)
    cpu = time.process_time() - t
    rows = {ROWS[0]: bm25_ocr_baseline(f.texts(MODE), f.ocr_text), ROWS[1]: evaluate(model, f, MODE),
            ROWS[2]: both_ways(txt @ img.T), ROWS[3]: both_ways(ft @ fi.T)}
    return rows, {"pool": len(f), "cpu_s": cpu, "d": fi.shape[1], "mb_per_side": fi.nbytes / 2**20}


def tune_folds(train, manifest: dict, lexical, hub) -> list[tuple[str, dict, dict]]:
    from figlink.learn.matcher import MatcherConfig

    config = MatcherConfig.from_dict(manifest["config"])
    settings = replace(SHIPPED_SETTINGS, seed=manifest["training"]["settings"]["seed"],
                       epochs=manifest["training"]["epochs"])
    folds = fold_of_ids(train.ids) or []
    out = []
    for k in sorted(set(folds)):
        held = [i for i, x in enumerate(folds) if x == k]
        rest = [i for i, x in enumerate(folds) if x != k]
        model = train_matcher(train.subset(rest), None, config, settings).model
        f = train.subset(held)
        out.append((group_of(f.ids[0]), *score_pool(model, lexical, hub, f)))
    return out


def mean_rows(parts: list[dict]) -> dict:
    return {row: {way: {m: float(np.mean([p[row][way][m] for p in parts])) for m in ("R@1", "R@5", "R@10", "MRR")}
                  for way in ("t2i", "i2t")} for row in ROWS}


def cli_costs(data: Path, cache: str) -> list[list[str]]:
    """`figlink embed` on the check book's pairs, --score full and dense alternated, CPU of the child."""
    from figlink.eval.splits import pair_split

    src = data / "figures" / "openstax" / "pairs.jsonl"
    tmp = Path(tempfile.mkdtemp(prefix="figlink-embed-vectors-"))
    lines = [x for x in src.read_text(encoding="utf-8").split("\n") if x.strip()
             and pair_split(json.loads(x)["id"]) == "check"]
    pairs = tmp / "check.jsonl"
    pairs.write_text("".join(json.dumps({**json.loads(x), "image": str((src.parent / json.loads(x)["image"]))}) + "\n"
                             for x in lines), encoding="utf-8")
    exe = str(Path(sys.executable).with_name("figlink"))
    out: dict[str, list[float]] = {"full": [], "dense": []}
    for score in ("full", "dense", "dense", "full"):
        before = os.times()
        res = subprocess.run([exe, "embed", str(pairs), "--out", str(tmp / score), "--score", score, "--cache", cache,
                              "--threads", "1"], capture_output=True, text=True)
        after = os.times()
        assert res.returncode == 0, res.stderr[-2000:]
        out[score].append(after.children_user + after.children_system - before.children_user - before.children_system)
    size = {s: sum(p.stat().st_size for p in (tmp / s).glob("*.npy")) / 2**20 for s in out}
    return [[s, str(len(lines)), " / ".join(f"{x:.1f}" for x in out[s]), f"{size[s]:.0f}"] for s in out] + \
        [["full / dense CPU", "", f"{np.mean(out['full']) / np.mean(out['dense']):.2f}×", ""]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=os.environ.get("FIGLINK_CACHE_DIR") or str(FeatureCache().root))
    ap.add_argument("--scratch", default=str(Path(tempfile.gettempdir()) / "figlink-bench-matcher"))
    ap.add_argument("--cli", action="store_true", help="also time figlink embed end to end on the check book")
    ap.add_argument("--dims", default=None, help="WORDS,CHARS hashed coordinates per block (default: the module's)")
    args = ap.parse_args()
    data = require_shared_data("figures/openstax")
    if args.dims:
        pv.WORD_DIMS, pv.CHAR_DIMS = (int(x) for x in args.dims.split(","))
    matcher = load_matcher()
    manifest = matcher.manifest  # type: ignore[attr-defined]
    openstax, elife = load_features(args, data, matcher.model.config.image_size)  # type: ignore[attr-defined]
    train, sets = eval_sets(openstax, elife)
    print(f"hashed coordinates per block: words {pv.WORD_DIMS}, character n-grams {pv.CHAR_DIMS}")
    folds = tune_folds(train, manifest, matcher.lexical, matcher.hubness)
    results = {"OpenStax tune (4 books held out in turn, mean)": (mean_rows([r for _, r, _ in folds]),
                                                                 {"pool": int(np.mean([c["pool"] for *_, c in folds]))})}
    costs = [[name, str(c["pool"]), f"{c['cpu_s']:.2f}", str(c["d"]), f"{c['mb_per_side']:.1f}"] for name, _, c in folds]
    for name, f in sets.items():
        rows, c = score_pool(matcher.model, matcher.lexical, matcher.hubness, f)  # type: ignore[attr-defined]
        results[name] = (rows, c)
        costs.append([name, str(c["pool"]), f"{c['cpu_s']:.2f}", str(c["d"]), f"{c['mb_per_side']:.1f}"])
    for name, (rows, c) in results.items():
        table = []
        for row in ROWS:
            cells = [row]
            for way in ("t2i", "i2t"):
                m, base = rows[row][way], rows[ROWS[0]][way]["R@1"]
                cells.append(f"{m['R@1']:.3f} / {m['R@5']:.3f} / {m['R@10']:.3f} / {m['MRR']:.3f}"
                             + (f" ({m['R@1'] / base:.2f}×)" if base else ""))
            table.append(cells)
        print_table(f"{name}, pool {c['pool']}: R@1 / R@5 / R@10 / MRR (R@1 ratio to BM25-OCR)",
                    ["row", "text → image", "image → text"], table)
    for name, r, _ in folds:
        print(name, " ".join(f"{row.split(' (')[0]}: t2i {r[row]['t2i']['R@1']:.3f} i2t {r[row]['i2t']['R@1']:.3f};"
                             for row in ROWS))
    print_table("pool_vectors costs", ["pool", "figures", "CPU s", "d", "MB a side"], costs)
    if args.cli:
        print_table("figlink embed end to end, check book, warm cache (CPU s of the child, runs)",
                    ["--score", "figures", "CPU s", "MB written"], cli_costs(data, args.cache))


if __name__ == "__main__":
    main()

"""Vision benchmark: panels, labels, alignment (figlink vs baseline), OCR CER, speed and memory.

Data: ../shared/data relative to the repo root, or $FIGLINK_SHARED_DATA. Exits 0 with a message when
the data is absent. Run: ``python benchmarks/bench_vision.py`` (one core: OCR and torch use 1 thread).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("FIGLINK_OCR_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
from vision_baseline import baseline, caption_splitter  # noqa: E402

from figlink.eval.metrics import alignment_f1, cer, coco_map, recall_at_iou, iou  # noqa: E402



def shared_data() -> Path | None:
    """The development data, when it holds the exsclaim figures."""
    data = common.shared_data()
    return data if data is not None and (data / "compound" / "exsclaim" / "expected_dev.json").is_file() else None


def _box(geometry: list[dict]) -> list[float]:
    xs, ys = [p["x"] for p in geometry], [p["y"] for p in geometry]
    return [float(min(xs)), float(min(ys)), float(max(xs)), float(max(ys))]


def load_exsclaim(data: Path) -> list[dict]:
    d = json.loads((data / "compound" / "exsclaim" / "expected_dev.json").read_text())
    out = []
    for name, rec in d.items():
        gold = []
        for m in rec["master_images"]:
            lab = (m.get("subfigure_label") or {}).get("text")
            gold.append({"bbox": _box(m["geometry"]), "label": (lab or "").lower() or None,
                         "text": " ".join(m.get("caption") or [])})
        out.append({"name": name, "image": data / "compound" / "exsclaim" / "images" / name,
                    "caption": rec["full_caption"], "gold": gold})
    return out


def label_accuracy(gold: list[dict], panels) -> tuple[int, int]:
    """Gold panels with a label whose best-IoU (≥ .5) predicted panel carries the same label read in the image."""
    n = ok = 0
    for g in gold:
        if not g["label"]:
            continue
        n += 1
        best = max(panels, key=lambda p: iou(g["bbox"], p.bbox), default=None)
        if best is not None and iou(g["bbox"], best.bbox) >= 0.5 and best.label == g["label"]:
            ok += 1
    return ok, n


def rendered_cer(n: int = 12) -> tuple[float, int]:
    """OCR CER on text whose content is known: axis titles, titles and legend entries of charts rendered
    in the held-out styles. Each known string is scored against the OCR line that reads closest to it
    (a missed string scores 1)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import random

    import matplotlib.pyplot as plt
    import numpy as np
    from PIL import Image

    from figlink.train.figtype_render import TEST_STYLES, WORDS, XLABELS, YLABELS
    from figlink.vision.ocr import read_text

    total_err = total_len = 0.0
    count = 0
    for i in range(n):
        rng = random.Random(5000 + i)
        with plt.style.context(rng.choice(TEST_STYLES)):
            fig, ax = plt.subplots(figsize=(rng.uniform(3, 5), rng.uniform(2.5, 4)), dpi=rng.choice([80, 100]))
            known = [rng.choice([x for x in XLABELS if "$" not in x]), rng.choice([y for y in YLABELS if "$" not in y])]
            series = rng.sample(WORDS, 2)
            for k, name in enumerate(series):
                ax.plot(np.arange(10), np.random.default_rng(i + k).normal(0, 1, 10).cumsum(), label=name)
            ax.set_xlabel(known[0])
            ax.set_ylabel(known[1])
            ax.legend()
            buf = io.BytesIO()
            fig.savefig(buf, format="png", bbox_inches="tight")
            plt.close(fig)
        lines = [t.text for t in read_text(np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB")))]
        for gold in known + series:
            err = min((cer(l, gold) for l in lines), default=1.0)
            total_err += min(1.0, err) * len(gold)
            total_len += len(gold)
            count += 1
    return total_err / max(1.0, total_len), count


def main() -> int:
    data = shared_data()
    if data is None:
        print("bench_vision: shared data not found (set FIGLINK_SHARED_DATA or put it at ../shared/data); skipped")
        return 0
    import torch

    torch.set_num_threads(1)
    from figlink.enrich.vision import analyze_figure

    split_fn, split_name = caption_splitter()
    figs = load_exsclaim(data)
    rows = {"baseline": {"f1": [], "rec": [], "gold": [], "pred": [], "lab": [0, 0]},
            "figlink": {"f1": [], "rec": [], "gold": [], "pred": [], "lab": [0, 0], "read": [0, 0]}}
    analyze_figure(figs[0]["image"], split_fn(figs[0]["caption"]))  # load models before timing
    times: list[float] = []
    cpu: list[float] = []
    for f in figs:
        gold_pairs = [(g["bbox"], g["text"]) for g in f["gold"]]
        gold_boxes = [g["bbox"] for g in f["gold"]]
        for name in rows:
            r = rows[name]
            t0, c0 = time.perf_counter(), time.process_time()
            if name == "baseline":
                panels = baseline(f["image"], f["caption"])
            else:
                panels = analyze_figure(f["image"], split_fn(f["caption"])).panels
                times.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
                r["read"][0] += len({g["label"] for g in f["gold"] if g["label"]} & {p.label for p in panels})
                r["read"][1] += len({g["label"] for g in f["gold"] if g["label"]})
            r["f1"].append(alignment_f1(gold_pairs, [(p.bbox, p.subcaption) for p in panels]))
            r["rec"].append(recall_at_iou(gold_boxes, [p.bbox for p in panels]))
            r["gold"].append(gold_boxes)
            r["pred"].append([(p.bbox, p.score if p.score is not None else 0.5) for p in panels])
            ok, n = label_accuracy(f["gold"], panels)
            r["lab"][0] += ok
            r["lab"][1] += n

    medicat = sorted((data / "compound" / "medicat_sample" / "figures").glob("*.png"))
    for m in medicat:
        t0, c0 = time.perf_counter(), time.process_time()
        analyze_figure(m)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"vision benchmark on {len(figs)} exsclaim figures (silver), caption splitter: {split_name}")
    print(f"{'system':<10} {'align F1':>9} {'recall@.5':>10} {'mAP':>6} {'AP50':>6} {'label acc':>13} "
          f"{'labels read':>12}")
    for name, r in rows.items():
        m = coco_map(r["gold"], r["pred"])
        ok, n = r["lab"]
        acc = f"{ok}/{n}={ok / n:.2f}" if name == "figlink" and n else "n/a"
        rd = f"{r['read'][0]}/{r['read'][1]}={r['read'][0] / r['read'][1]:.2f}" if "read" in r else "n/a"
        print(f"{name:<10} {sum(r['f1']) / len(r['f1']):>9.3f} {sum(r['rec']) / len(r['rec']):>10.3f} "
              f"{m['map']:>6.3f} {m['ap50']:>6.3f} {acc:>13} {rd:>12}")
    print("label acc: gold panel's best-IoU (>= .5) panel carries the gold label read in the image; "
          "labels read: gold letters found in the image")
    print("per figure align F1 (baseline -> figlink):")
    for f, a, b in zip(figs, rows["baseline"]["f1"], rows["figlink"]["f1"]):
        print(f"  {f['name']:<32} {a:.3f} -> {b:.3f}")
    try:
        from figlink.train.figtype_train import heldout_report

        rep = heldout_report()
        print(f"figure type (held-out, never trained on: {rep['source']}): macro-F1 {rep['macro_f1']:.3f} "
              f"micro-F1 {rep['micro_f1']:.3f} on {rep['n']} images, {rep['classes']} classes")
    except Exception as exc:  # the head is optional until trained
        print(f"figure type: not evaluated ({type(exc).__name__}: {exc})")
    c, n_c = rendered_cer()
    print(f"OCR CER, known strings (axis titles, legend entries) of {n_c // 4} charts rendered in held-out styles: "
          f"{c:.3f} on {n_c} strings")
    n = len(times)
    print(f"speed (whole vision stage, 1 thread, models loaded once): {n} figures, CPU {sum(cpu) / n:.2f} s/figure "
          f"= {n / sum(cpu):.2f} figures/s per core (max {max(cpu):.2f} s); wall {sum(times) / n:.2f} s/figure "
          f"on this shared machine; peak RSS {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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

from vision_baseline import baseline, baseline_panels, caption_splitter  # noqa: E402

from figlink.eval.metrics import alignment_f1, cer, coco_map, recall_at_iou, iou  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def shared_data() -> Path | None:
    env = os.environ.get("FIGLINK_SHARED_DATA")
    for cand in ([Path(env)] if env else []) + [ROOT.parent / "shared" / "data", ROOT / "shared" / "data"]:
        if (cand / "compound" / "exsclaim" / "expected_dev.json").is_file():
            return cand
    return None


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


def docbank_cer(data: Path) -> tuple[float, int] | None:
    """Recognizer CER on words inside figures of DocBank pages (the PDF's own text is the gold)."""
    import numpy as np
    from PIL import Image

    from figlink.vision.ocr import recognize

    folder = data / "pdf" / "docbank"
    if not folder.is_dir():
        return None
    crops, golds = [], []
    for txt in sorted(folder.glob("*.txt")):
        rows = [l.rstrip("\n").split("\t") for l in txt.read_text(errors="replace").splitlines()]
        rows = [r for r in rows if len(r) >= 10 and r[-1] == "figure" and r[0].strip()]
        img_path = txt.with_name(txt.stem + "_ori.jpg")
        if not rows or not img_path.is_file():
            continue
        page = np.asarray(Image.open(img_path).convert("RGB"))
        H, W = page.shape[:2]
        for r in rows:
            x0, y0, x1, y1 = (int(r[1]) * W // 1000, int(r[2]) * H // 1000, int(r[3]) * W // 1000 + 1,
                              int(r[4]) * H // 1000 + 1)
            pad = max(2, (y1 - y0) // 4)
            crop = page[max(0, y0 - pad):y1 + pad, max(0, x0 - pad):x1 + pad]
            if crop.size:
                crops.append(crop)
                golds.append(r[0])
    if not crops:
        return None
    preds = [t for t, _ in recognize(crops)]
    total = sum(cer(p, g) * len(g) for p, g in zip(preds, golds)) / max(1, sum(len(g) for g in golds))
    return total, len(golds)


def main() -> int:
    data = shared_data()
    if data is None:
        print("bench_vision: shared data not found (set FIGLINK_SHARED_DATA or put it at ../shared/data); skipped")
        return 0
    import torch

    torch.set_num_threads(1)
    from figlink.vision.analyze import analyze_figure

    split_fn, split_name = caption_splitter()
    figs = load_exsclaim(data)
    rows = {"baseline": {"f1": [], "rec": [], "gold": [], "pred": [], "lab": [0, 0]},
            "figlink": {"f1": [], "rec": [], "gold": [], "pred": [], "lab": [0, 0]}}
    analyze_figure(figs[0]["image"], split_fn(figs[0]["caption"]))  # load models before timing
    times = []
    for f in figs:
        gold_pairs = [(g["bbox"], g["text"]) for g in f["gold"]]
        gold_boxes = [g["bbox"] for g in f["gold"]]
        for name in rows:
            t0 = time.perf_counter()
            if name == "baseline":
                panels = baseline(f["image"], f["caption"])
            else:
                panels = analyze_figure(f["image"], split_fn(f["caption"])).panels
                times.append(time.perf_counter() - t0)
            r = rows[name]
            r["f1"].append(alignment_f1(gold_pairs, [(p.bbox, p.subcaption) for p in panels]))
            r["rec"].append(recall_at_iou(gold_boxes, [p.bbox for p in panels]))
            r["gold"].append(gold_boxes)
            r["pred"].append([(p.bbox, p.score if p.score is not None else 0.5) for p in panels])
            ok, n = label_accuracy(f["gold"], panels)
            r["lab"][0] += ok
            r["lab"][1] += n

    medicat = sorted((data / "compound" / "medicat_sample" / "figures").glob("*.png"))
    for m in medicat:
        t0 = time.perf_counter()
        analyze_figure(m)
        times.append(time.perf_counter() - t0)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"vision benchmark on {len(figs)} exsclaim figures (silver), caption splitter: {split_name}")
    print(f"{'system':<10} {'align F1':>9} {'recall@.5':>10} {'mAP':>6} {'AP50':>6} {'label acc':>10}")
    for name, r in rows.items():
        m = coco_map(r["gold"], r["pred"])
        ok, n = r["lab"]
        acc = f"{ok}/{n}={ok / n:.2f}" if name == "figlink" and n else "n/a"
        print(f"{name:<10} {sum(r['f1']) / len(r['f1']):>9.3f} {sum(r['rec']) / len(r['rec']):>10.3f} "
              f"{m['map']:>6.3f} {m['ap50']:>6.3f} {acc:>10}")
    print("per figure align F1 (baseline -> figlink):")
    for f, a, b in zip(figs, rows["baseline"]["f1"], rows["figlink"]["f1"]):
        print(f"  {f['name']:<32} {a:.3f} -> {b:.3f}")
    try:
        from figlink.vision.figtype import evaluate_heldout

        rep = evaluate_heldout()
        print(f"figure type (held-out, never trained on: {rep['source']}): macro-F1 {rep['macro_f1']:.3f} "
              f"micro-F1 {rep['micro_f1']:.3f} on {rep['n']} images, {rep['classes']} classes")
    except Exception as exc:  # the head is optional until trained
        print(f"figure type: not evaluated ({type(exc).__name__}: {exc})")
    c = docbank_cer(data)
    if c:
        print(f"OCR CER, DocBank words inside figures (PDF text as gold, recognizer only): {c[0]:.3f} on {c[1]} words")
    n = len(times)
    print(f"speed: {n} figures, {sum(times) / n:.2f} s/figure, {n / sum(times):.2f} figures/s on 1 core "
          f"(max {max(times):.2f} s); peak RSS {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

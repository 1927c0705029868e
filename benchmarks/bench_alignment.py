"""Panels, panel labels and panel ↔ subcaption alignment, tune and check side by side (issue 15, row 3).

Two gold sets, each split by document (md5 of the key, even → tune):

1. ``compound/exsclaim`` (7 Nature Communications figures; *silver*: an earlier tool's panels, labels and
   subcaptions). Document: the article (``doc_key`` of the image name). Scored as MedICaT §3 defines it:
   for each gold panel the predicted panel of highest IoU; IoU < 0.5 scores 0, else the token F1 of the
   subcaptions (:func:`figlink.eval.metrics.alignment_f1`); label accuracy = gold panels whose best-IoU
   (≥ 0.5) panel carries the gold label read in the image; panel recall = gold panels matched at IoU ≥ 0.5.

2. **eLife vector figures** (:mod:`figlink.eval.pdf_panel_gold`): figures of ``pdf/elife`` (figures-only and
   article PDFs) whose panel labels are text objects of the PDF. The labels' positions are gold for label
   reading and panel count; their subcaptions come from the JATS caption's bold label markup. A figure is
   kept only when its text-layer letters are exactly its caption's labels. Document: the eLife folder.
   What it yields on the dev data: only ``elife-00230`` draws its figures as vectors (every other PDF
   pastes rasters, whose labels are pixels): 9 figures with 37 panels, all in the *check* part (the folder
   name's md5 is odd), so the tune column is empty; 1 more vector figure has no letters in its text layer
   and is left out. The label points were checked by eye on all 9 crops (red circles on the rendered
   crop: each sits on its printed letter). Known softness: a caption that names panels inside one group
   sentence ("(A–C) Examples of networks in which cooperative pairs intermixed (A), … (B), … (C)") gives
   the whole group sentence to each of A, B, C.
   There are no gold panel boxes, so a gold panel is matched to the smallest predicted panel whose box
   holds its label point (a label sits inside its panel); alignment F1 is then MedICaT's token F1 of the
   subcaptions, mean over gold panels (unmatched: 0). Label accuracy: the matched panel's label is the
   gold letter. Panel recall: gold labels whose matched panel holds no other gold label (merged panels
   count once). Panel count: figures whose predicted panel count equals the number of gold labels.

3. **Panel gold** (``benchmarks/gold/panel_gold.json``, made by hand, see ``benchmarks/gold/PANEL_GOLD.md``):
   eLife compound figures (embedded rasters or rendered vector figures of ``pdf/elife``; document: the
   folder) and OpenStax compound figures (``figures/openstax``; the book ``chemistry-bundle`` is check),
   with panel boxes, printed labels and subcaptions in two conventions. Scored per set:
   panel recall and precision at IoU ≥ 0.5 (one-to-one, greedy by IoU), COCO mAP@[.5:.95] and AP50
   (pycocotools; a panel's ``score``, 1.0 when it has none), label accuracy (gold panels with a printed
   label whose matched panel carries that label), and MedICaT alignment F1 (mean over figures) against
   the MedICaT subcaption (own + group text) and against the as-written subcaption (shared + own text;
   the prediction is then the split's shared text + the panel's subcaption). The eLife images are made
   by ``benchmarks/gold/make_panel_gold_images.py`` into ``$FIGLINK_PANEL_GOLD_IMAGES`` or
   ``<data>/../../scratch/panelgold`` when missing.

figlink runs as ingest does (caption stage, then ``analyze_figure`` with the caption's split and expected
panel count); the baseline of the same run is ``benchmarks/vision_baseline.py`` (whitespace XY-cuts, a
naive "(a)" regex split, reading-order pairing, no labels). Targets on check: alignment F1 ≥ 0.80,
labels ≥ 95%, and no row below the baseline.

    python benchmarks/bench_alignment.py [--part tune|check|both] [--set all|exsclaim|vector|gold] [--quick] [--failures]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("FIGLINK_OCR_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (OUT, add_part_args, cache_ocr, latency_row, parts_of, peak_rss_mb, print_table,  # noqa: E402
                    require_shared_data, split_table, write_failures)

from figlink.eval.metrics import alignment_f1, iou, recall_at_iou, token_f1  # noqa: E402
from figlink.eval.splits import doc_key, split_of  # noqa: E402


def run_figlink(image: Path, caption: str):
    """(panels, caption split) as ingest makes them: the caption stage, then the vision stage."""
    from figlink.enrich.captions import enrich_caption
    from figlink.enrich.vision import analyze_figure
    from figlink.model import Figure

    fig = enrich_caption(Figure(figure_id="f", caption=caption)).figure
    return analyze_figure(image, caption_split=fig.caption_split, expected_panels=fig.expected_panels).panels, fig.caption_split


def run_baseline(image: Path, caption: str):
    from vision_baseline import baseline, regex_split

    return baseline(image, caption), regex_split(caption)


def panel_text(panel, split) -> str | None:
    """A predicted panel's subcaption: the split's subcaptions it points at (figlink's panels), or the
    ``subcaption`` text the baseline sets on its panels."""
    from figlink.model import subcaption_text

    indices = getattr(panel, "subcaption_indices", None)
    return subcaption_text(split, indices) if indices else getattr(panel, "subcaption", None)


# ------------------------------------------------------------------------------------------ exsclaim

def exsclaim_scores(gold: list[dict], panels, split) -> dict:
    from bench_vision import label_accuracy

    ok, n = label_accuracy(gold, panels)
    return {"f1": alignment_f1([(g["bbox"], g["text"]) for g in gold], [(p.bbox, panel_text(p, split)) for p in panels]),
            "recall": recall_at_iou([g["bbox"] for g in gold], [p.bbox for p in panels]),
            "labels": (ok, n), "gold": len(gold)}


# ------------------------------------------------------------------------------------ eLife vector gold

def point_scores(fig, panels, split) -> dict:
    """Point-matched alignment F1, label accuracy, panel recall and count (see the module doc)."""
    def holder(pt):
        x, y = pt
        inside = [p for p in panels if p.bbox[0] - 3 <= x <= p.bbox[2] + 3 and p.bbox[1] - 3 <= y <= p.bbox[3] + 3]
        return min(inside, key=lambda p: (p.bbox[2] - p.bbox[0]) * (p.bbox[3] - p.bbox[1]), default=None)

    matched = [holder(g.point) for g in fig.panels]
    f1 = [token_f1(panel_text(m, split), g.subcaption) if m is not None else 0.0 for g, m in zip(fig.panels, matched)]
    ids = [id(m) for m in matched if m is not None]
    distinct = sum(1 for m in matched if m is not None and ids.count(id(m)) == 1)
    labels = sum(1 for g, m in zip(fig.panels, matched) if m is not None and (m.label or "").lower() == g.label)
    return {"f1": sum(f1) / len(f1), "recall": distinct / len(fig.panels), "labels": (labels, len(fig.panels)),
            "count_ok": len(panels) == len(fig.panels), "gold": len(fig.panels), "per_panel": f1, "matched": matched}


def elife_gold(data: Path, parts: tuple[str, ...]):
    from figlink.eval.pdf_panel_gold import build_gold

    figs, notes = [], []
    for d in sorted((data / "pdf" / "elife").iterdir()):
        if not d.is_dir() or split_of(doc_key(d.name)) not in parts:
            continue
        g, n = build_gold(d, OUT / "pdf_panel_gold")
        figs += g
        notes += n
    return figs, notes


# ------------------------------------------------------------------------------------- hand-made panel gold

def match_boxes(gold: list, pred: list, thr: float = 0.5) -> dict[int, int]:
    """One-to-one matching, greedy by IoU: gold index → predicted index, only pairs with IoU ≥ ``thr``."""
    pairs = sorted(((iou(g, p), i, j) for i, g in enumerate(gold) for j, p in enumerate(pred)), reverse=True)
    out: dict[int, int] = {}
    used: set[int] = set()
    for v, i, j in pairs:
        if v < thr:
            break
        if i not in out and j not in used:
            out[i] = j
            used.add(j)
    return out


def gold_scores(fig: dict, panels, split) -> dict:
    """Panel recall/precision counts, label counts, both alignment F1s and the boxes for COCO mAP."""
    gold = fig["panels"]
    match = match_boxes([g["bbox"] for g in gold], [p.bbox for p in panels])
    labelled = [i for i, g in enumerate(gold) if g["label"]]
    ok = sum(1 for i in labelled if i in match and (panels[match[i]].label or "").lower() == gold[i]["label"])
    shared = (split.shared_text if split is not None else "") or ""
    texts = [panel_text(p, split) for p in panels]
    as_written = [(p.bbox, " ".join(x for x in (shared, t or "") if x)) for p, t in zip(panels, texts)]
    return {"f1": alignment_f1([(g["bbox"], g["subcaption_medicat"]) for g in gold], [(p.bbox, t) for p, t in zip(panels, texts)]),
            "f1_asw": alignment_f1([(g["bbox"], g["subcaption_as_written"]) for g in gold], as_written),
            "matched": len(match), "gold": len(gold), "pred": len(panels), "labels": (ok, len(labelled)),
            "coco": ([g["bbox"] for g in gold], [(list(p.bbox), p.score if p.score is not None else 1.0) for p in panels]),
            "match": match}


def summarize_gold(rows: list[dict]) -> dict:
    if not rows:
        return {}
    from figlink.eval.metrics import coco_map

    ok, n = sum(r["labels"][0] for r in rows), sum(r["labels"][1] for r in rows)
    m = coco_map([r["coco"][0] for r in rows], [r["coco"][1] for r in rows])
    gold, pred, hit = (sum(r[k] for r in rows) for k in ("gold", "pred", "matched"))
    return {"recall": hit / gold, "precision": hit / pred if pred else 0.0, "map": m["map"], "ap50": m["ap50"],
            "labels": ok / n if n else None, "f1": sum(r["f1"] for r in rows) / len(rows),
            "f1_asw": sum(r["f1_asw"] for r in rows) / len(rows), "figures": len(rows), "panels": gold}


def gold_table(title: str, res: dict, parts: tuple[str, ...]) -> None:
    def cell(name: str, part: str, key: str, pct: bool) -> str:
        return cell_text(res, name, part, key, pct)

    spec = [("panel recall (IoU >= 0.5, one-to-one)", "recall", True, ">= baseline"),
            ("panel precision (IoU >= 0.5)", "precision", True, ">= baseline"),
            ("COCO mAP@[.5:.95]", "map", False, ">= baseline"), ("AP50", "ap50", False, ">= baseline"),
            ("panel-label accuracy (printed labels)", "labels", True, ">= 95%"),
            ("alignment F1, MedICaT subcaptions", "f1", False, ">= 0.80"),
            ("alignment F1, as-written subcaptions", "f1_asw", False, ">= baseline")]
    rows = [[m, cell("figlink", "tune", k, p), cell("figlink", "check", k, p), cell("baseline", "tune", k, p),
             cell("baseline", "check", k, p), t] for m, k, p, t in spec]
    rows.append(["gold", gold_count(res, "tune"), gold_count(res, "check"), "", "", ""])
    split_table(title, rows, parts, "baseline")


def gold_failure(fig: dict, image: Path, panels, split, sc: dict) -> dict:
    """One tune-part figure as a failure record: every gold panel beside the panel matched to it."""
    rows = []
    for i, g in enumerate(fig["panels"]):
        p = panels[sc["match"][i]] if i in sc["match"] else None
        rows.append({"gold_label": g["label"], "gold_bbox": g["bbox"], "gold_subcaption": g["subcaption_medicat"],
                     "predicted_label": p.label if p else None, "predicted_bbox": list(p.bbox) if p else None,
                     "iou": round(iou(g["bbox"], p.bbox), 3) if p else None,
                     "predicted_subcaption": panel_text(p, split) if p else None})
    return {"set": "panel-gold", "figure": fig["id"], "image": str(image), "caption": fig["caption"],
            "alignment_f1": round(sc["f1"], 3), "alignment_f1_as_written": round(sc["f1_asw"], 3),
            "labels": sc["labels"], "panels_gold": sc["gold"], "panels_predicted": sc["pred"],
            "panels_matched": sc["matched"], "panels": rows,
            "unmatched_predictions": [{"label": p.label, "bbox": list(p.bbox)} for j, p in enumerate(panels)
                                      if j not in sc["match"].values()]}


def panel_gold(data: Path, parts: tuple[str, ...], quick: bool, fails: list[dict]) -> None:
    """Score figlink and the baseline on the hand-made gold, per set, and print the tables."""
    sys.path.insert(0, str(Path(__file__).resolve().parent / "gold"))
    from make_panel_gold_images import default_out, write_images
    from panel_gold import image_of, load

    figures = [f for f in load()["figures"] if f["part"] in parts]
    if quick:
        figures = figures[::4]
    images = default_out(data)
    problems = write_images(figures, data, images)
    for p in problems:
        print(f"  panel gold image: {p}")
    res: dict = {}
    lat: dict = {"figlink": [], "baseline": []}
    for fig in figures:
        image = image_of(fig, data, images)
        if not image.is_file():
            continue
        for name, fn in (("figlink", run_figlink), ("baseline", run_baseline)):
            t = time.perf_counter()
            panels, split = fn(image, fig["caption"])
            lat[name].append(time.perf_counter() - t)
            sc = gold_scores(fig, panels, split)
            for key in ((name, fig["set"], fig["part"]), (name, "all", fig["part"])):
                res.setdefault(key, []).append(sc)
            if name == "figlink" and fig["part"] == "tune" and (
                    sc["f1"] < 0.8 or sc["labels"][0] < sc["labels"][1] or sc["matched"] < sc["gold"]):
                fails.append(gold_failure(fig, image, panels, split, sc))
    for subset, title in (("elife", "Panel gold, eLife compound figures (hand-made boxes, labels, subcaptions)"),
                          ("openstax", "Panel gold, OpenStax compound figures (tune: 4 books; check: chemistry-bundle)"),
                          ("all", "Panel gold, both sets together")):
        gold_table(title, {(n, p): summarize_gold(res.get((n, subset, p), [])) for n in ("figlink", "baseline")
                           for p in parts}, parts)
    print_table("Panel gold, speed (one process, one thread; figlink includes OCR and figure typing)",
                ["system", "throughput", "p50", "p99", ""],
                [latency_row(n, v, "figures") for n, v in lat.items() if v])
    print(f"  peak RSS of this process: {peak_rss_mb():.0f} MB")


# ------------------------------------------------------------------------------------------ report

def summarize(rows: list[dict]) -> dict:
    if not rows:
        return {}
    ok = sum(r["labels"][0] for r in rows)
    n = sum(r["labels"][1] for r in rows)
    gold = sum(r["gold"] for r in rows)
    out = {"f1": sum(r["f1"] for r in rows) / len(rows), "labels": ok / n if n else None,
           "recall": sum(r["recall"] * r["gold"] for r in rows) / gold, "figures": len(rows), "panels": gold}
    if "count_ok" in rows[0]:
        out["count"] = sum(r["count_ok"] for r in rows) / len(rows)
    return out


def cell_text(res: dict, name: str, part: str, key: str, pct: bool) -> str:
    """One cell of a summary table: a percentage or a 3-digit number, "- (no gold)" for an empty part."""
    r = res.get((name, part)) or {}
    v = r.get(key)
    if v is None:
        return "-" if r else "- (no gold)"
    return f"{100 * v:.1f}%" if pct else f"{v:.3f}"


def gold_count(res: dict, part: str) -> str:
    r = res.get(("figlink", part)) or {}
    return f"{r['figures']} figures, {r['panels']} panels" if r else "0"


def table(title: str, res: dict, parts: tuple[str, ...], with_count: bool) -> None:
    def cell(name: str, part: str, key: str, pct: bool) -> str:
        return cell_text(res, name, part, key, pct)

    spec = [("alignment F1 (mean over figures)", "f1", False, ">= 0.80"), ("panel-label accuracy", "labels", True, ">= 95%"),
            ("panel recall", "recall", True, ">= baseline")]
    if with_count:
        spec.append(("panel count exact (figures)", "count", True, ">= baseline"))
    rows = [[m, cell("figlink", "tune", k, p), cell("figlink", "check", k, p), cell("baseline", "tune", k, p),
             cell("baseline", "check", k, p), t] for m, k, p, t in spec]
    rows.append(["gold", gold_count(res, "tune"), gold_count(res, "check"), "", "", ""])
    split_table(title, rows, parts, "baseline")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_part_args(ap)
    ap.add_argument("--set", choices=("all", "exsclaim", "vector", "gold"), default="all",
                    help="which gold to score (default all three)")
    ap.add_argument("--ocr-cache", type=Path, default=None,
                    help="folder (outside the repo) caching full-image OCR by pixel hash; speeds up reruns")
    args = ap.parse_args(argv)
    data = require_shared_data("the alignment benchmark")
    import torch

    torch.set_num_threads(1)
    if args.ocr_cache:
        print(f"  OCR cache: {cache_ocr(args.ocr_cache)}")
    from bench_vision import load_exsclaim

    parts = parts_of(args.part)
    t0 = time.perf_counter()
    fails: list[dict] = []
    if args.set in ("all", "exsclaim"):
        ex: dict = {(n, p): [] for n in ("figlink", "baseline") for p in parts}
        for f in load_exsclaim(data):
            part = split_of(doc_key(f["name"]))
            if part not in parts:
                continue
            for name, fn in (("figlink", run_figlink), ("baseline", run_baseline)):
                sc = exsclaim_scores(f["gold"], *fn(f["image"], f["caption"]))
                ex[name, part].append(sc)
                if args.failures and part == "tune" and name == "figlink" and sc["f1"] < 0.8:
                    fails.append({"set": "exsclaim", "figure": f["name"], "alignment_f1": round(sc["f1"], 3),
                                  "labels": sc["labels"], "caption": f["caption"]})
        table("Compound figures, exsclaim (silver; MedICaT IoU >= 0.5 matching)", {k: summarize(v) for k, v in ex.items()},
              parts, False)

    if args.set in ("all", "vector"):
        gold, notes = elife_gold(data, parts)
        el: dict = {(n, p): [] for n in ("figlink", "baseline") for p in parts}
        for fig in gold:
            part = split_of(doc_key(fig.doc))
            for name, fn in (("figlink", run_figlink), ("baseline", run_baseline)):
                panels, split = fn(fig.image, fig.caption)
                sc = point_scores(fig, panels, split)
                el[name, part].append(sc)
                if args.failures and part == "tune" and name == "figlink" and (sc["f1"] < 0.8 or sc["labels"][0] < sc["labels"][1]):
                    fails.append({"set": "elife-vector", "figure": fig.key, "image": str(fig.image),
                                  "alignment_f1": round(sc["f1"], 3), "labels": sc["labels"],
                                  "panels": [{"gold_label": g.label, "point": g.point, "gold_subcaption": g.subcaption,
                                              "predicted_label": m.label if m else None,
                                              "predicted_subcaption": panel_text(m, split) if m else None}
                                             for g, m in zip(fig.panels, sc["matched"])]})
        table("eLife vector figures (labels from the PDF text layer, subcaptions from JATS; label-point matching)",
              {k: summarize(v) for k, v in el.items()}, parts, True)
        print(f"  left out: {len(notes)} figures whose text-layer letters are not their caption's labels "
              f"(raster figures: no letters at all)")

    if args.set in ("all", "gold"):
        panel_gold(data, parts, args.quick, fails)

    print(f"\nbench_alignment: {time.perf_counter() - t0:.0f} s")
    if args.failures and "tune" in parts:
        write_failures("alignment", fails)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Medical filter precision / recall, tune and check side by side (issue 15, row 6).

Data, pooled as the issue asks:
- ``captions/roco_validation``: 8,180 radiology captions (positives) and 611 non-radiology captions
  (negatives; ROCO's non-radiology set is PMC figures of other kinds). The folder holds captions,
  UMLS concepts, keywords, licences and download links only, **no images**, so only stage 1 can run on it.
  Document: the PMC id of the figure (``licences.txt``), so every figure of an article is in one part.
- ``compound/medicat_sample``: 5 MedICaT figures with images, captions and inline references; every one
  is a medical image (MedICaT kept them), so they are positives. Document: the paper's ``pdf_hash``.

Stage 1 = MedICaT's caption keyword filter (caption + inline references; ``figlink.text.keywords``: the
keywords in any form of their word family, and the list's acronyms in their other written forms).
Stage 1+2 = stage 1, then the figure-type head must rank a medical type in its top 4 unless the caption
names an imaging modality (``figlink.vision.figtype.is_medical``, ``strong``); it needs the image, so it is scored on the MedICaT figures
only, beside stage 1 on the same figures. Baseline (same run): a bare imaging-modality regex over the
caption (CT, MRI, X-ray, radiograph, ultrasound, …). Target: no row below the baseline on check; stage 2
must not lose a keyword hit on a real medical figure (its recall = stage 1's). ROCO's negatives are
"non-radiology", not "non-medical": endoscopy and echocardiography captions there are medical images by
MedICaT's own keyword list, so stage-1 precision against them reads low by those.

    python benchmarks/bench_medical.py [--part tune|check|both] [--failures] [--no-vision]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("FIGLINK_OCR_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import add_part_args, parts_of, require_shared_data, split_table, write_failures  # noqa: E402

from figlink.eval.splits import doc_key, split_of  # noqa: E402
from figlink.text.keywords import is_medical as keyword_hit  # noqa: E402

_MODALITY = re.compile(r"(?i)\b(?:CT|MRI?|X-?ray|radiograph\w*|ultraso\w+|sonograph\w*|tomograph\w*|angiogra\w*|"
                       r"scan|PET|mammogra\w*|fluorosc\w*)\b")


def naive(caption: str) -> bool:
    return bool(_MODALITY.search(caption))


def roco_items(data: Path) -> list[dict]:
    items = []
    for name, positive in (("radiology", True), ("non-radiology", False)):
        folder = data / "captions" / "roco_validation" / name
        pmc = {}
        for line in (folder / "licences.txt").read_text(encoding="utf-8", errors="replace").splitlines()[1:]:
            parts = line.split(",")
            if len(parts) >= 2:
                pmc[parts[0]] = parts[1].split("_", 1)[0]
        for line in (folder / "captions.txt").read_text(encoding="utf-8", errors="replace").splitlines():
            rid, _, caption = line.partition("\t")
            if caption.strip():
                items.append({"id": rid, "doc": pmc.get(rid, rid), "caption": caption.strip(), "refs": [],
                              "positive": positive, "image": None, "set": "roco"})
    return items


def medicat_items(data: Path) -> list[dict]:
    folder = data / "compound" / "medicat_sample"
    items = []
    for line in (folder / "sample_dev.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        img = folder / "figures" / f"{r['pdf_hash']}_{r['fig_uri']}"
        items.append({"id": f"{r['pdf_hash']}_{r['fig_key']}", "doc": r["pdf_hash"],
                      "caption": r.get("s2_caption") or r.get("s2orc_caption") or "",
                      "refs": r.get("s2orc_references") or [], "positive": True,
                      "image": img if img.is_file() else None, "set": "medicat"})
    return items


def stage2(item: dict, hit: bool) -> bool:
    from figlink.text.subcaptions import split_caption
    from figlink.enrich.vision import analyze_figure
    from figlink.text.keywords import find_medical_keywords, is_strong_signal
    from figlink.vision.figtype import is_medical

    fv = analyze_figure(item["image"], split_caption(item["caption"]))
    item["ranking"] = fv.type_ranking[:4]
    strong = is_strong_signal(find_medical_keywords([item["caption"], *item["refs"]]))
    return is_medical(fv.type_ranking, hit, strong=strong) if fv.type_ranking else hit


def pr(preds: list[tuple[bool, bool]]) -> tuple[float | None, float | None, int, int]:
    tp = sum(p and g for p, g in preds)
    fp = sum(p and not g for p, g in preds)
    fn = sum(g and not p for p, g in preds)
    prec = tp / (tp + fp) if tp + fp else None
    rec = tp / (tp + fn) if tp + fn else None
    return prec, rec, tp + fn, len(preds)


def f1(stats: tuple[float | None, float | None, int, int]) -> tuple[float | None]:
    """F1 of a :func:`pr` result, as a one-element tuple (the table reads index 0)."""
    prec, rec = stats[0], stats[1]
    return (2 * prec * rec / (prec + rec) if prec and rec else None,)


def cell(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_part_args(ap)
    ap.add_argument("--no-vision", action="store_true", help="skip stage 2 (it loads the vision models)")
    args = ap.parse_args(argv)
    data = require_shared_data("the medical filter benchmark")
    parts = parts_of(args.part)
    items = roco_items(data) + medicat_items(data)
    if args.quick:
        items = items[::10] + [it for it in items if it["set"] == "medicat"]
    t0 = time.perf_counter()
    res: dict = {}
    fails = []
    for part in parts:
        mine = [it for it in items if split_of(doc_key(it["doc"])) == part]
        s1 = [(keyword_hit(it["caption"], it["refs"]), it["positive"]) for it in mine]
        nv = [(naive(it["caption"]), it["positive"]) for it in mine]
        med = [it for it in mine if it["set"] == "medicat"]
        s1m = [(keyword_hit(it["caption"], it["refs"]), it["positive"]) for it in med]
        nvm = [(naive(it["caption"]), it["positive"]) for it in med]
        s12 = None
        if not args.no_vision:
            s12 = [(stage2(it, h) if it["image"] is not None else h, g) for it, (h, g) in zip(med, s1m)]
        res[part] = {"s1": pr(s1), "naive": pr(nv), "s1_f1": f1(pr(s1)), "naive_f1": f1(pr(nv)), "s1m": pr(s1m), "naivem": pr(nvm),
                     "s12": pr(s12) if s12 is not None else None,
                     "n": (len(mine), sum(it["positive"] for it in mine), len(med))}
        if part == "tune" and args.failures:
            for it, (p, g) in zip(mine, s1):
                if p != g:
                    fails.append({"stage": "1", "id": it["id"], "positive": g, "caption": it["caption"]})
            for it, (p, g) in zip(med, s12 or []):
                if p != g:
                    fails.append({"stage": "1+2", "id": it["id"], "positive": g, "caption": it["caption"],
                                  "type_top4": it.get("ranking")})

    def row(name: str, key: str, idx: int, base: str, target: str) -> list[str]:
        def get(part: str, k: str) -> str:
            r = res.get(part)
            return cell(r[k][idx]) if r and r.get(k) else "-"
        return [name, get("tune", key), get("check", key), get("tune", base), get("check", base), target]

    rows = [row("stage 1 precision (ROCO + MedICaT)", "s1", 0, "naive", ">= baseline"),
            row("stage 1 recall (ROCO + MedICaT)", "s1", 1, "naive", ">= baseline"),
            row("stage 1 F1 (ROCO + MedICaT)", "s1_f1", 0, "naive_f1", "-"),
            row("stage 1 recall (MedICaT figures)", "s1m", 1, "naivem", ">= baseline"),
            row("stage 1+2 precision (MedICaT figures, images)", "s12", 0, "naivem", ">= baseline"),
            row("stage 1+2 recall (MedICaT figures, images)", "s12", 1, "naivem", "= stage 1 recall"),
            ["items (all / positives / MedICaT)"] + [("%d / %d / %d" % res[p]["n"]) if p in res else "-" for p in ("tune", "check")]
            + ["", "", ""]]
    split_table("Medical filter (positives: ROCO radiology + MedICaT figures; baseline: modality-word regex)",
                rows, parts, "naive")
    print("  stage 1+2 cannot run on ROCO: captions/roco_validation holds no images")
    print(f"\nbench_medical: {time.perf_counter() - t0:.1f} s")
    if args.failures and "tune" in parts:
        write_failures("medical", fails)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The hand-made panel gold (``panel_gold.json``): loading it, its caption markup, and the annotation views.

Each gold figure keeps its caption twice: as the plain text and as ``caption_markup``, the same text with
two kinds of marks typed in by the annotator (see PANEL_GOLD.md):

- ``[[a,b]]`` opens a segment that belongs to panels a and b (``[[*]]``: shared by all panels); the
  segment runs to the next mark. Text before the first mark is shared.
- ``{{…}}`` wraps words that stay in the caption but not in any subcaption (the label markers
  themselves: ``{{(A)}}``, ``{{(a, }}``).

From the markup, a panel's **MedICaT subcaption** is the text of every segment whose panel set holds the
panel (its own and its groups' segments, nothing shared), and its **as-written subcaption** is the
shared segments plus those, in caption order (the convention of ``captions/prostate_gold_splits_dev.json``).
The gold stores both, and :func:`check_figure` verifies they are what the markup gives.

    python benchmarks/gold/panel_gold.py grid IMAGE OUT.png [STEP]     # pixel grid for annotating
    python benchmarks/gold/panel_gold.py show FIGURE_ID OUT.png        # gold boxes drawn on the image
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Optional

GOLD = Path(__file__).resolve().parent / "panel_gold.json"

_MARK = re.compile(r"\[\[([^\]]*)\]\]")
_DROP = re.compile(r"\{\{(.*?)\}\}", re.S)


def load(path: Path = GOLD) -> dict[str, Any]:
    """The gold file as a dict: ``figures`` (list), ``skipped``, ``conventions``."""
    return json.loads(path.read_text(encoding="utf-8"))


def plain(markup: str) -> str:
    """The caption that a markup stands for (marks removed, ``{{…}}`` text kept)."""
    return _DROP.sub(lambda m: m.group(1), _MARK.sub("", markup))


def segments(markup: str) -> list[tuple[Optional[list[str]], str]]:
    """``[(panel labels, or None when shared, text)]`` in caption order, ``{{…}}`` text left out."""
    out: list[tuple[Optional[list[str]], str]] = []
    pos, cur = 0, None
    for m in [*_MARK.finditer(markup), None]:
        end = m.start() if m else len(markup)
        text = " ".join(_DROP.sub(" ", markup[pos:end]).split())
        if text:
            out.append((cur, text))
        if m:
            spec = m.group(1).strip()
            cur = None if spec == "*" else [x.strip().lower() for x in spec.split(",") if x.strip()]
            pos = m.end()
    return out


def subcaptions(markup: str, label: Optional[str]) -> tuple[str, str]:
    """(MedICaT subcaption, as-written subcaption) of the panel the caption calls ``label``."""
    segs = segments(markup)
    own = [t for labs, t in segs if labs is not None and label in labs]
    shared = [t for labs, t in segs if labs is None or (label is not None and label in labs)]
    return " ".join(own), " ".join(shared)


def caption_labels(markup: str) -> set[str]:
    """Every panel label that some segment of the markup names."""
    return {lab for labs, _ in segments(markup) if labs for lab in labs}


def check_figure(fig: dict[str, Any]) -> list[str]:
    """Problems of one gold figure (empty when it is consistent): markup, subcaptions, boxes, labels."""
    problems = []
    fid = fig["id"]
    if plain(fig["caption_markup"]) != fig["caption"]:
        problems.append(f"{fid}: caption_markup does not give the caption back")
    W, H = fig["image"]["size"]
    for p in fig["panels"]:
        x0, y0, x1, y1 = p["bbox"]
        if not (0 <= x0 < x1 <= W and 0 <= y0 < y1 <= H):
            problems.append(f"{fid}: box {p['bbox']} of panel {p['caption_label']} is not inside {W}x{H}")
        med, asw = subcaptions(fig["caption_markup"], p["caption_label"])
        if (med, asw) != (p["subcaption_medicat"], p["subcaption_as_written"]):
            problems.append(f"{fid}: stored subcaptions of panel {p['caption_label']} differ from the markup's")
    if sorted(p["caption_label"] for p in fig["panels"]) != sorted(caption_labels(fig["caption_markup"])):
        problems.append(f"{fid}: panels {[p['caption_label'] for p in fig['panels']]} are not the caption's labels")
    return problems


def image_of(fig: dict[str, Any], data: Path, images: Path) -> Path:
    """Where a figure's image lies: the data file itself (OpenStax) or ``images / image.file``."""
    src = fig["image"]["source"]
    return data / src["path"] if src["kind"] == "file" else images / fig["image"]["file"]


# ------------------------------------------------------------------------------ annotation views

def grid_view(image: Path, out: Path, step: int = 50) -> None:
    """The image with a pixel grid (lines every ``step`` px, numbers every 2·step, repeated inside)."""
    from PIL import Image, ImageDraw, ImageFont

    im = Image.open(image).convert("RGB")
    W, H = im.size
    pad = max(30, max(W, H) // 30)
    font = ImageFont.load_default(size=max(11, max(W, H) // 90))
    canvas = Image.new("RGB", (W + pad, H + pad), "white")
    canvas.paste(im, (pad, pad))
    d = ImageDraw.Draw(canvas, "RGBA")
    for v in range(0, max(W, H) + 1, step):
        major = v % (2 * step) == 0
        if v <= W:
            d.line([(v + pad, pad), (v + pad, pad + H)], fill=(255, 0, 0, 150 if major else 70))
        if v <= H:
            d.line([(pad, v + pad), (pad + W, v + pad)], fill=(0, 0, 255, 150 if major else 70))
        if major:
            if v <= W:
                d.text((v + pad + 1, 1), str(v), fill="blue", font=font)
                for y in range(pad + 250, pad + H, 300):
                    d.text((v + pad + 2, y), str(v), fill="blue", font=font, stroke_width=2, stroke_fill="white")
            if v <= H:
                d.text((1, v + pad + 1), str(v), fill="blue", font=font)
                for x in range(pad + 400, pad + W, 400):
                    d.text((x, v + pad + 2), str(v), fill=(200, 0, 0), font=font, stroke_width=2, stroke_fill="white")
    canvas.save(out)


def overlay_view(image: Path, panels: list[dict[str, Any]], out: Path) -> None:
    """The image with every panel box drawn and tagged with its printed label (``-`` when none)."""
    from PIL import Image, ImageDraw, ImageFont

    im = Image.open(image).convert("RGB")
    d = ImageDraw.Draw(im, "RGBA")
    big = max(im.size)
    font = ImageFont.load_default(size=max(12, big // 40))
    colours = [(230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 200, 200)]
    for k, p in enumerate(panels):
        c = colours[k % len(colours)]
        d.rectangle(p["bbox"], outline=c + (255,), width=max(2, big // 400), fill=c + (28,))
        d.text((p["bbox"][0] + 4, p["bbox"][1] + 2), p["label"] or "-", fill=c + (255,), font=font,
               stroke_width=2, stroke_fill="white")
    im.save(out)


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "grid":
        grid_view(Path(argv[1]), Path(argv[2]), int(argv[3]) if len(argv) > 3 else 50)
        return 0
    if len(argv) == 3 and argv[0] == "show":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from make_panel_gold_images import default_out, shared_data

        data = shared_data()
        if data is None:
            print("skipped: needs ../shared/data")
            return 0
        fig = next(f for f in load()["figures"] if f["id"] == argv[1])
        overlay_view(image_of(fig, data, default_out(data)), fig["panels"], Path(argv[2]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

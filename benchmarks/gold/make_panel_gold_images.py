"""Re-create the figure images of the panel gold (``panel_gold.json``) from ``../shared/data``.

The gold's boxes are pixels of these images, so they are made without any of figlink's own logic
(no figure detection, no cropping heuristics), from what each figure's ``image.source`` records:

- ``pdf_raster``: the embedded raster image object of the figure, decoded as stored in the PDF
  (pypdfium2 ``PdfImage.get_bitmap(render=False)``: no page transform, no mask), for figures that are
  one raster with nothing drawn over it. ``object`` is the index of the image among the page's
  top-level objects (``FPDFPage_GetObject``), ``page`` is 0-based.
- ``pdf_render``: the page region ``crop`` (PDF points, origin top-left: x0, y0, x1, y1; chosen by hand
  around the figure, caption left out) rendered by pypdfium2 at ``scale`` (pixels per point), for
  figures drawn as vectors or as rasters with vector labels on top.
- ``file``: an image file of the data folder used as it is (OpenStax figures, at most 384 px); the
  gold records the sha256 of the file and of its RGB pixels, nothing is written.

Both PDF kinds then go through one deterministic rule: convert to RGB; when the longer side exceeds
``MAX_SIDE`` (2000 px), resize by ``MAX_SIDE / longer side`` with each side ``round(side * f)``,
Pillow LANCZOS; save as PNG (Pillow defaults, no metadata). The gold records each image's size,
the sha256 of the PNG bytes and the sha256 of its RGB pixels (the pixel hash is the one that must
match; PNG bytes can differ between zlib builds).

    python benchmarks/gold/make_panel_gold_images.py [--out DIR] [--gold FILE] [--data DIR]

``--out`` defaults to ``$FIGLINK_PANEL_GOLD_IMAGES`` or ``<data>/../../scratch/panelgold``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import shared_data  # noqa: E402  (benchmarks/common.py: ../shared/data or $FIGLINK_SHARED_DATA)

MAX_SIDE = 2000
GOLD = Path(__file__).resolve().parent / "panel_gold.json"


def default_out(data: Path) -> Path:
    env = os.environ.get("FIGLINK_PANEL_GOLD_IMAGES")
    return Path(env) if env else data.resolve().parents[1] / "scratch" / "panelgold"


def fit(im: Image.Image, max_side: int = MAX_SIDE) -> Image.Image:
    """RGB, and no side longer than ``max_side`` (LANCZOS, sides rounded)."""
    im = im.convert("RGB")
    if max(im.size) <= max_side:
        return im
    f = max_side / max(im.size)
    return im.resize((max(1, round(im.width * f)), max(1, round(im.height * f))), Image.Resampling.LANCZOS)


def pdf_raster(pdf: Path, page: int, obj: int) -> Image.Image:
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    doc = pdfium.PdfDocument(str(pdf))
    try:
        p = doc[page]
        o = list(p.get_objects(max_depth=0))[obj]
        if o.type != raw.FPDF_PAGEOBJ_IMAGE:
            raise ValueError(f"{pdf.name} page {page} object {obj} is not an image")
        return o.get_bitmap(render=False).to_pil().copy()
    finally:
        doc.close()


def pdf_render(pdf: Path, page: int, crop: list[float], scale: float) -> Image.Image:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        p = doc[page]
        W, H = p.get_size()
        x0, y0, x1, y1 = crop
        # pdfium's crop is what to cut from the left, bottom, right and top edges (points)
        return p.render(scale=scale, crop=(x0, H - y1, W - x1, y0)).to_pil().copy()
    finally:
        doc.close()


def make_image(source: dict[str, Any], data: Path) -> Image.Image:
    """The figure image a gold ``source`` describes (before :func:`fit` for the PDF kinds)."""
    kind = source["kind"]
    if kind == "pdf_raster":
        return fit(pdf_raster(data / source["pdf"], source["page"], source["object"]))
    if kind == "pdf_render":
        return fit(pdf_render(data / source["pdf"], source["page"], source["crop"], source["scale"]))
    if kind == "file":
        return Image.open(data / source["path"]).convert("RGB")
    raise ValueError(f"unknown image source kind {kind!r}")


def png_bytes(im: Image.Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def hashes(im: Image.Image) -> tuple[str, str]:
    """(sha256 of the PNG bytes, sha256 of the RGB pixels)."""
    return hashlib.sha256(png_bytes(im)).hexdigest(), hashlib.sha256(im.convert("RGB").tobytes()).hexdigest()


def image_path(fig: dict[str, Any], data: Path, out: Path) -> Path:
    """Where a gold figure's image lies: the data file itself (``file``) or ``out / image.file``."""
    src = fig["image"]["source"]
    return data / src["path"] if src["kind"] == "file" else out / fig["image"]["file"]


def write_images(figures: list[dict[str, Any]], data: Path, out: Path, force: bool = False) -> list[str]:
    """Create every PDF figure image under ``out`` (kept when its pixels already match); problems as text."""
    problems = []
    for fig in figures:
        img = fig["image"]
        path = image_path(fig, data, out)
        want = img.get("sha256_pixels")
        if img["source"]["kind"] == "file":
            if not path.is_file():
                problems.append(f"{fig['id']}: missing {path}")
            elif want and hashes(Image.open(path).convert("RGB"))[1] != want:
                problems.append(f"{fig['id']}: pixels of {path} differ from the gold's")
            continue
        if path.is_file() and not force and want:
            with Image.open(path) as cur:
                if hashes(cur.convert("RGB"))[1] == want:
                    continue
        try:
            im = make_image(img["source"], data)
        except Exception as e:  # one bad source must not stop the others
            problems.append(f"{fig['id']}: {type(e).__name__}: {e}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        blob = png_bytes(im)
        path.write_bytes(blob)
        if want and hashlib.sha256(im.tobytes()).hexdigest() != want:
            problems.append(f"{fig['id']}: pixels differ from the gold's (another pdfium/Pillow build?)")
        elif img.get("sha256_png") and hashlib.sha256(blob).hexdigest() != img["sha256_png"]:
            problems.append(f"{fig['id']}: PNG bytes differ (pixels match; another zlib build)")
        if img.get("size") and list(im.size) != list(img["size"]):
            problems.append(f"{fig['id']}: size {list(im.size)} != gold {img['size']}")
    return problems


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gold", type=Path, default=GOLD)
    ap.add_argument("--data", type=Path, default=None, help="the shared data folder (default ../shared/data)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--force", action="store_true", help="write every image again")
    args = ap.parse_args(argv)
    data = args.data or shared_data()
    if data is None:
        print("skipped: the panel gold images need ../shared/data (or FIGLINK_SHARED_DATA), which is absent")
        return 0
    out = args.out or default_out(data)
    figures = json.loads(args.gold.read_text(encoding="utf-8"))["figures"]
    problems = write_images(figures, data, out, force=args.force)
    for p in problems:
        print(p)
    print(f"{len(figures)} figures, images under {out}; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

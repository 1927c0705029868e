"""Train the figure-type head: ``python -m figlink.train.figtype_train [--per-class N] [--out PATH]``.

Training data: charts/tables/equations/diagrams rendered with :mod:`figlink.train.figtype_render`
(train style family, seeds from 0), and hand-labelled real panels of the dev figures (split 'train'
in ``figtype_dev_labels.json``; needs the shared data) with light augmentation. The held-out report
uses the other style family and seeds from 10**6, and the real panels of split 'test' — figures the
head never saw.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path
from typing import Optional

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from figlink.eval.dev_data import dev_data
from figlink.train.figtype_render import RENDERERS, TEST_STYLES, TRAIN_STYLES, render
from figlink.vision.figtype import HEAD_PATH, feature_vector, load_head, predict_proba
from figlink.vision.ocr import read_text

LABELS_PATH = Path(__file__).with_name("figtype_dev_labels.json")
HELDOUT_SEED = 10**6


def shared_data() -> Optional[Path]:
    """The development data with its hand-labelled compound figures, when ``$FIGLINK_SHARED_DATA`` names it."""
    return dev_data("compound")


def _open(ref: str, data: Optional[Path]) -> Optional[Image.Image]:
    if ref.startswith("mpl:"):
        import matplotlib.cbook as cbook

        name = ref[4:]
        if name.endswith(".ima.gz"):  # 256x256 big-endian 16-bit MRI slice
            with gzip.open(cbook.get_sample_data(name, asfileobj=False), "rb") as f:
                a = np.frombuffer(f.read(), ">u2").reshape(256, 256).astype(np.float32)
            return Image.fromarray((255 * a / max(1.0, a.max())).astype(np.uint8)).convert("RGB")
        return Image.open(cbook.get_sample_data(name, asfileobj=False)).convert("RGB")
    if data is None or not (data / ref).is_file():
        return None
    return Image.open(data / ref).convert("RGB")


def real_panels(split: str, data: Optional[Path]) -> list[tuple[Image.Image, str]]:
    """Hand-labelled real panels of one split (those whose image is available)."""
    out = []
    for item in json.loads(LABELS_PATH.read_text())["items"]:
        if item["split"] != split:
            continue
        im = _open(item["image"], data)
        if im is None:
            continue
        for p in item["panels"]:
            out.append((im if p["bbox"] is None else im.crop(tuple(p["bbox"])), p["label"]))
    return out


def _augment(im: Image.Image, rng: random.Random) -> Image.Image:
    w, h = im.size
    f = rng.uniform(0.8, 1.0)
    x0, y0 = rng.randint(0, int(w * (1 - f))), rng.randint(0, int(h * (1 - f)))
    im = im.crop((x0, y0, x0 + int(w * f), y0 + int(h * f)))
    if rng.random() < 0.5:
        im = ImageOps.mirror(im)
    im = ImageEnhance.Contrast(im).enhance(rng.uniform(0.8, 1.25))
    s = rng.uniform(0.6, 1.3)
    return im.resize((max(16, int(im.width * s)), max(16, int(im.height * s))))


def rendered(per_class: int, seed0: int, styles: list[str]) -> list[tuple[Image.Image, str]]:
    return [(render(kind, seed0 + i * 97 + k, styles), kind) for k, kind in enumerate(RENDERERS)
            for i in range(per_class)]


def featurize(items: list[tuple[Image.Image, str]]) -> tuple[np.ndarray, list[str]]:
    texts = [read_text(np.asarray(im)) for im, _ in items]
    return feature_vector([im for im, _ in items], texts), [lab for _, lab in items]


def train_head(X: np.ndarray, y: list[str], epochs: int = 300, l2: float = 1e-3, seed: int = 0) -> dict:
    """Class-balanced multinomial logistic regression on standardized features (torch, full batch)."""
    import torch

    torch.manual_seed(seed)
    classes = sorted(set(y))
    idx = torch.tensor([classes.index(v) for v in y])
    mean, std = X.mean(0), X.std(0) + 1e-4
    Xt = torch.from_numpy((X - mean) / std)
    counts = torch.bincount(idx, minlength=len(classes)).float()
    weights = (counts.sum() / (len(classes) * counts)).clamp(max=10)
    lin = torch.nn.Linear(X.shape[1], len(classes))
    opt = torch.optim.Adam(lin.parameters(), lr=1e-2, weight_decay=l2)
    for _ in range(epochs):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(lin(Xt), idx, weight=weights)
        loss.backward()
        opt.step()
    return {"classes": classes, "mean": mean, "std": std, "W": lin.weight.detach().numpy().T.copy(),
            "b": lin.bias.detach().numpy().copy()}


def f1_scores(gold: list[str], pred: list[str]) -> tuple[float, float, dict[str, float]]:
    """Macro F1 over the gold classes, micro F1 (= accuracy for single-label), per-class F1."""
    per = {}
    for c in sorted(set(gold)):
        tp = sum(g == c and p == c for g, p in zip(gold, pred))
        fp = sum(g != c and p == c for g, p in zip(gold, pred))
        fn = sum(g == c and p != c for g, p in zip(gold, pred))
        per[c] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    micro = sum(g == p for g, p in zip(gold, pred)) / max(1, len(gold))
    return sum(per.values()) / max(1, len(per)), micro, per


def heldout_report(per_class: int = 6) -> dict:
    """Evaluate the saved head on unseen rendered charts (other styles, other seeds) and unseen real panels."""
    head = load_head()
    if head is None:
        raise FileNotFoundError(f"no trained head at {HEAD_PATH}; run python -m figlink.train.figtype_train")
    items = rendered(per_class, HELDOUT_SEED, TEST_STYLES)
    real = real_panels("test", shared_data())
    X, y = featurize(items + real)
    pred = [head["classes"][i] for i in predict_proba(X, head).argmax(1)]
    macro, micro, per = f1_scores(y, pred)
    n_r = len(items)
    r_macro, r_micro, _ = f1_scores(y[:n_r], pred[:n_r])
    real_acc = (sum(a == b for a, b in zip(y[n_r:], pred[n_r:])) / len(real)) if real else float("nan")
    return {"macro_f1": macro, "micro_f1": micro, "per_class": per, "n": len(y), "classes": len(per),
            "rendered_macro_f1": r_macro, "real_accuracy": real_acc, "n_real": len(real),
            "source": f"{n_r} rendered in unseen styles + {len(real)} real dev panels from unseen figures",
            "real": [(g, p) for g, p in zip(y[n_r:], pred[n_r:])]}


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--per-class", type=int, default=24)
    ap.add_argument("--augment", type=int, default=6, help="augmented copies of each real training panel")
    ap.add_argument("--out", type=Path, default=HEAD_PATH)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    rng = random.Random(0)
    items = rendered(args.per_class, 0, TRAIN_STYLES)
    for im, lab in real_panels("train", shared_data()):
        items.append((im, lab))
        items.extend((_augment(im, rng), lab) for _ in range(args.augment))
    X, y = featurize(items)
    head = train_head(X, y)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, classes=np.array(head["classes"]), mean=head["mean"].astype(np.float16),
                        std=head["std"].astype(np.float16), W=head["W"].astype(np.float16),
                        b=head["b"].astype(np.float16))
    print(f"trained on {len(y)} images, {len(head['classes'])} classes -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

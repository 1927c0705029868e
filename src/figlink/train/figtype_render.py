"""Render varied, real-looking charts, tables, equations and diagrams with matplotlib, each with its type.

Used to train and test the figure-type head. ``styles`` lets training and testing use disjoint
matplotlib style families, so the test measures generalization, not memory of one look.
"""

from __future__ import annotations

import io
import random
from typing import Callable

import numpy as np
from PIL import Image

TRAIN_STYLES = ["default", "ggplot", "seaborn-v0_8-whitegrid", "seaborn-v0_8-ticks", "tableau-colorblind10"]
TEST_STYLES = ["bmh", "classic", "fivethirtyeight", "seaborn-v0_8-darkgrid", "grayscale"]

XLABELS = ["Time (s)", "Energy (eV)", "Distance (nm)", "Days after infection", "Temperature (°C)",
           "Wavelength (nm)", "Dose (mg/kg)", "Frequency (Hz)", "Age (years)", "Concentration (μM)", "Epoch"]
YLABELS = ["Intensity (a.u.)", "Voltage (V)", "Survival (%)", "Expression level", "Absorbance", "Counts",
           "Current density (mA cm$^{-2}$)", "Relative fold change", "Accuracy", "Weight (g)", "Loss"]
WORDS = ["Control", "Treated", "WT", "KO", "Sample A", "Sample B", "Pt/C", "Baseline", "Model", "Patient",
         "Group 1", "Group 2", "Day 7", "Day 14", "Placebo", "Low dose", "High dose", "Input", "Output"]


def _axes(rng: random.Random):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(rng.uniform(2.6, 5.5), rng.uniform(2.2, 4.2)), dpi=rng.choice([70, 80, 90, 100]))
    return fig, ax


def _labels(ax, rng: random.Random) -> None:
    if rng.random() < 0.85:
        ax.set_xlabel(rng.choice(XLABELS), fontsize=rng.uniform(7, 12))
        ax.set_ylabel(rng.choice(YLABELS), fontsize=rng.uniform(7, 12))
    if rng.random() < 0.3:
        ax.set_title(rng.choice(WORDS), fontsize=rng.uniform(8, 12))
    if rng.random() < 0.4:
        for s in ("top", "right"):
            ax.spines[s].set_visible(False)


def line(rng: random.Random, np_rng: np.random.Generator):
    fig, ax = _axes(rng)
    x = np.linspace(0, rng.uniform(1, 100), rng.randint(20, 300))
    for k in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.3:
            y = np.cumsum(np_rng.normal(0, 1, x.size))
        elif kind < 0.6:
            y = np.sin(x * rng.uniform(0.05, 0.5) + k) * rng.uniform(0.5, 3) + k
        elif kind < 0.8:
            y = np.exp(-x / (x.max() * rng.uniform(0.1, 0.8))) + np_rng.normal(0, 0.02, x.size)
        else:  # spectrum with peaks
            y = sum(rng.uniform(0.3, 1) * np.exp(-((x - rng.uniform(x.min(), x.max())) / (x.max() * 0.02)) ** 2)
                    for _ in range(rng.randint(1, 5))) + np_rng.normal(0, 0.02, x.size) + k * 0.5
        ax.plot(x, y, marker=rng.choice(["", "", "o", "s", "^"]), markersize=3, lw=rng.uniform(0.8, 2.2),
                label=rng.choice(WORDS))
    if rng.random() < 0.6:
        ax.legend(fontsize=7, frameon=rng.random() < 0.5)
    _labels(ax, rng)
    return fig


def bar(rng, np_rng):
    fig, ax = _axes(rng)
    n, groups = rng.randint(2, 8), rng.randint(1, 3)
    idx = np.arange(n)
    w = 0.8 / groups
    horizontal = rng.random() < 0.25
    for g in range(groups):
        v = np_rng.uniform(1, 10, n)
        err = np_rng.uniform(0.1, 1, n) if rng.random() < 0.5 else None
        if horizontal:
            ax.barh(idx + g * w, v, w, xerr=err, label=WORDS[g])
        else:
            ax.bar(idx + g * w, v, w, yerr=err, capsize=2, label=WORDS[g])
    (ax.set_yticks if horizontal else ax.set_xticks)(idx + w * (groups - 1) / 2)
    (ax.set_yticklabels if horizontal else ax.set_xticklabels)(rng.sample(WORDS, n), fontsize=7,
                                                             rotation=0 if horizontal else rng.choice([0, 45]))
    if groups > 1:
        ax.legend(fontsize=7)
    _labels(ax, rng)
    return fig


def scatter(rng, np_rng):
    fig, ax = _axes(rng)
    for k in range(rng.randint(1, 3)):
        n = rng.randint(20, 400)
        x = np_rng.normal(rng.uniform(-2, 2), rng.uniform(0.3, 1.5), n)
        y = x * rng.uniform(-1.5, 1.5) + np_rng.normal(0, rng.uniform(0.2, 1.5), n)
        ax.scatter(x, y, s=rng.uniform(4, 30), alpha=rng.uniform(0.4, 1), label=rng.choice(WORDS))
    if rng.random() < 0.3:
        xs = np.linspace(-3, 3, 10)
        ax.plot(xs, xs * rng.uniform(-1, 1), "k--", lw=1)
    if rng.random() < 0.5:
        ax.legend(fontsize=7)
    _labels(ax, rng)
    return fig


def box(rng, np_rng):
    fig, ax = _axes(rng)
    n = rng.randint(2, 7)
    data = [np_rng.normal(rng.uniform(0, 5), rng.uniform(0.3, 2), rng.randint(15, 80)) for _ in range(n)]
    ax.boxplot(data, vert=rng.random() < 0.8, patch_artist=rng.random() < 0.5)
    if rng.random() < 0.4:
        for i, d in enumerate(data):
            ax.scatter(np_rng.normal(i + 1, 0.05, d.size), d, s=4, alpha=0.5, color="k")
    ax.set_xticks(range(1, n + 1))
    ax.set_xticklabels(rng.sample(WORDS, n), fontsize=7)
    _labels(ax, rng)
    return fig


def heatmap(rng, np_rng):
    import matplotlib.pyplot as plt

    fig, ax = _axes(rng)
    r, c = rng.randint(4, 30), rng.randint(4, 30)
    m = np_rng.normal(0, 1, (r, c)).cumsum(axis=rng.choice([0, 1])) if rng.random() < 0.5 else np_rng.random((r, c))
    im = ax.imshow(m, cmap=rng.choice(["viridis", "RdBu_r", "magma", "coolwarm", "YlOrRd", "Blues"]), aspect="auto")
    if rng.random() < 0.8:
        plt.colorbar(im, ax=ax)
    if r <= 8 and c <= 8 and rng.random() < 0.5:
        for i in range(r):
            for j in range(c):
                ax.text(j, i, f"{m[i, j]:.1f}", ha="center", va="center", fontsize=6)
    return fig


def pie(rng, np_rng):
    fig, ax = _axes(rng)
    n = rng.randint(2, 7)
    ax.pie(np_rng.uniform(1, 10, n), labels=rng.sample(WORDS, n) if rng.random() < 0.7 else None,
           autopct="%1.0f%%" if rng.random() < 0.5 else None,
           wedgeprops={"width": 0.4} if rng.random() < 0.3 else None, textprops={"fontsize": 7})
    return fig


def area(rng, np_rng):
    fig, ax = _axes(rng)
    x = np.arange(rng.randint(10, 60))
    ys = [np.abs(np.cumsum(np_rng.normal(0.5, 1, x.size))) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.5:
        ax.stackplot(x, *ys, alpha=0.8, labels=rng.sample(WORDS, len(ys)))
        if rng.random() < 0.6:
            ax.legend(fontsize=7, loc="upper left")
    else:
        for y in ys:
            ax.fill_between(x, y, alpha=0.4)
            ax.plot(x, y, lw=1)
    _labels(ax, rng)
    return fig


def histogram(rng, np_rng):
    fig, ax = _axes(rng)
    for _ in range(rng.randint(1, 3)):
        d = np_rng.normal(rng.uniform(-2, 2), rng.uniform(0.5, 2), rng.randint(100, 3000))
        if rng.random() < 0.3:
            d = np_rng.exponential(rng.uniform(0.5, 3), d.size)
        ax.hist(d, bins=rng.randint(8, 60), alpha=rng.uniform(0.5, 1),
                histtype=rng.choice(["bar", "bar", "stepfilled", "step"]), edgecolor=rng.choice(["k", "white", "none"]))
    _labels(ax, rng)
    ax.set_ylabel(rng.choice(["Count", "Frequency", "Number of cells", "Density"]))
    return fig


def table(rng, np_rng):
    fig, ax = _axes(rng)
    ax.axis("off")
    r, c = rng.randint(3, 10), rng.randint(2, 6)
    cells = [[(f"{np_rng.uniform(0, 100):.{rng.randint(0, 2)}f}" if rng.random() < 0.7 else rng.choice(WORDS))
              for _ in range(c)] for _ in range(r)]
    t = ax.table(cellText=cells, colLabels=rng.sample(WORDS, c), loc="center",
                 edges=rng.choice(["closed", "horizontal", "open"]))
    t.auto_set_font_size(False)
    t.set_fontsize(rng.uniform(6, 9))
    t.scale(1, rng.uniform(1, 1.6))
    return fig


_EQ_PARTS = [r"\frac{\partial u}{\partial t}", r"\nabla^2 \phi", r"\sum_{i=1}^{N} x_i", r"\int_0^\infty e^{-x^2}dx",
             r"\alpha \beta", r"\sqrt{2\pi\sigma^2}", r"\mathbf{A}\mathbf{x}", r"\log p(y|x)", r"\hat{\theta}",
             r"\lambda_{max}", r"E = mc^2", r"\mathcal{L}(\theta)", r"\prod_{k} p_k", r"\lim_{n\to\infty} a_n"]


def equation(rng, np_rng):
    import matplotlib.pyplot as plt

    n = rng.randint(1, 4)
    fig = plt.figure(figsize=(rng.uniform(3, 6), 0.6 * n + 0.3), dpi=rng.choice([80, 100, 120]))
    for i in range(n):
        lhs, rhs = rng.sample(_EQ_PARTS, 2)
        op = rng.choice(["=", r"\leq", r"\approx", "+", r"\propto"])
        fig.text(0.05, 1 - (i + 0.7) / (n + 0.4), f"${lhs} {op} {rhs}$", fontsize=rng.uniform(11, 17))
        if rng.random() < 0.5:
            fig.text(0.92, 1 - (i + 0.7) / (n + 0.4), f"({rng.randint(1, 30)})", fontsize=10)
    return fig


def diagram(rng, np_rng):
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    fig = plt.figure(figsize=(rng.uniform(3, 6), rng.uniform(2.2, 4.5)), dpi=rng.choice([70, 90, 100]))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.axis("off")
    nodes = []
    for _ in range(rng.randint(3, 9)):
        x, y = rng.uniform(0.5, 8), rng.uniform(0.5, 8.5)
        w, h = rng.uniform(1.2, 2.5), rng.uniform(0.6, 1.3)
        style = rng.choice(["round,pad=0.1", "square,pad=0.1", "round4,pad=0.2"])
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=style, fc=rng.choice(["w", "#cde", "#fdc", "#dfd"]),
                                    ec="k", lw=1))
        ax.text(x + w / 2, y + h / 2, rng.choice(WORDS), ha="center", va="center", fontsize=rng.uniform(6, 9))
        nodes.append((x + w / 2, y + h / 2))
    for a, b in zip(nodes, nodes[1:]):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, lw=1, color="k"))
    return fig


RENDERERS: dict[str, Callable] = {"line_chart": line, "bar_chart": bar, "scatter_plot": scatter, "box_plot": box,
                                  "heatmap": heatmap, "pie_chart": pie, "area_chart": area, "histogram": histogram,
                                  "table": table, "equation": equation, "diagram": diagram}


def render(kind: str, seed: int, styles: list[str]) -> Image.Image:
    """One rendered image of ``kind`` (a key of RENDERERS), deterministic for ``seed``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng, np_rng = random.Random(seed), np.random.default_rng(seed)
    with plt.style.context(rng.choice(styles)):
        fig = RENDERERS[kind](rng, np_rng)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight" if rng.random() < 0.8 else None)
        plt.close(fig)
    buf.seek(0)
    return Image.open(buf).convert("RGB")

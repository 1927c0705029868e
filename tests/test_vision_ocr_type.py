"""OCR on rendered text, roles from geometry, EfficientNet-Lite0 features, figure type, medical filter."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from figlink.model import Box, OcrText
from figlink.vision import figtype
from figlink.vision.features import embed
from figlink.vision.ocr import assign_roles, panel_letter, read_text


@pytest.fixture(scope="module")
def chart():
    import matplotlib

    matplotlib.use("Agg")
    import io

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    ax.plot([0, 1, 2, 3], [1, 3, 2, 4], label="Control")
    ax.set_xlabel("Time (s)")
    ax.set_ylabel("Voltage (V)")
    ax.legend()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    buf.seek(0)
    return Image.open(buf).convert("RGB")


def test_ocr_reads_rendered_chart(chart):
    items = assign_roles(read_text(np.asarray(chart)), chart.width, chart.height)
    roles = {t.text: t.role for t in items}
    assert roles.get("Time (s)") == "axis_title"
    assert any(t.startswith("Voltage") and r == "axis_title" for t, r in roles.items())  # vertical, rotated
    assert sum(r == "tick_label" for r in roles.values()) >= 4


def test_roles_from_geometry():
    items = [OcrText(text, Box.pixels(box)) for text, box in (
        ("(b)", (0, 0, 12, 12)), ("100 nm", (50, 80, 90, 90)), ("0.5", (10, 50, 20, 58)), ("Sample A", (40, 10, 80, 20)),
        ("A long sentence describing the experiment", (0, 95, 99, 99)))]
    assert [t.role for t in assign_roles(items, 100, 100)] == ["panel_label", "scale_bar", "tick_label", "legend",
                                                                 "other"]
    assert panel_letter("(à)") == "a" and panel_letter("B.") == "b" and panel_letter("ab") is None


def test_features_shape_and_determinism(chart):
    f = embed([chart, chart.convert("L").convert("RGB")])
    assert f.shape == (2, 1280) and np.isfinite(f).all()
    assert np.allclose(embed([chart])[0], f[0], atol=1e-5)


def test_classify_chart_and_taxonomy(chart):
    if figtype.load_head() is None:
        pytest.skip("figure-type head not trained")
    ftype, ranking = figtype.classify_image(chart, read_text(np.asarray(chart)))
    assert ftype.label in figtype.TAXONOMY and ftype.label.endswith(("chart", "plot", "histogram"))
    assert abs(sum(p for _, p in ranking) - 1) < 1e-3


def test_medical_filter_stage_two():
    ranking = [("line_chart", 0.5), ("bar_chart", 0.2), ("table", 0.1), ("radiology_ct", 0.05), ("photo", 0.01)]
    assert figtype.is_medical(ranking, keyword_hit=True)
    assert not figtype.is_medical(ranking, keyword_hit=False)
    assert not figtype.is_medical(ranking[:3] + ranking[4:], keyword_hit=True, top_k=3)


def test_medical_filter_stage_two_keeps_a_strong_caption_signal():
    charts = [("line_chart", 0.5), ("bar_chart", 0.2), ("table", 0.1), ("diagram", 0.1), ("photo", 0.01)]
    assert not figtype.is_medical(charts, keyword_hit=True)  # a weak hit ("imaging") the head may veto
    assert figtype.is_medical(charts, keyword_hit=True, strong=True)  # "CT", "radiograph": never vetoed
    assert not figtype.is_medical(charts, keyword_hit=False, strong=True)

"""Vision stage: panels of compound figures, panel labels, OCR with roles, figure type.

Entry point: :func:`figlink.vision.analyze.analyze_figure` (re-exported here lazily).
"""

from __future__ import annotations

from typing import Any


def analyze_figure(*args: Any, **kwargs: Any):
    """See :func:`figlink.vision.analyze.analyze_figure`."""
    from figlink.vision.analyze import analyze_figure as _analyze

    return _analyze(*args, **kwargs)

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("FIGLINK_OCR_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"


@pytest.fixture(scope="session")
def jats_dir() -> Path:
    return SAMPLES / "jats"


@pytest.fixture(scope="session")
def sample(jats_dir):
    def get(name: str) -> Path:
        return jats_dir / name
    return get

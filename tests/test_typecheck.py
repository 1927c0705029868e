"""mypy is clean on src/figlink, with the settings of pyproject.toml ([tool.mypy]; `make typecheck` runs
the same). The cache is the repository's .mypy_cache: a first run takes about 14 s of CPU, later runs
a few seconds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="mypy is not installed (requirements-dev.txt pins it; `make test` installs it)")

REPO = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error_in_src():
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(REPO / ".mypy_cache")], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr

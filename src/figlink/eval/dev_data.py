"""Where the development data is, for the commands that rebuild the shipped models: the folder named by
``$FIGLINK_SHARED_DATA`` (the Makefile sets it to the development data beside the checkout). Nothing else
in figlink needs it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional


def dev_data(marker: str) -> Optional[Path]:
    """``$FIGLINK_SHARED_DATA`` when it is set and holds ``marker`` (a path inside it), else None."""
    env = os.environ.get("FIGLINK_SHARED_DATA")
    if env and (Path(env) / marker).exists():
        return Path(env)
    return None

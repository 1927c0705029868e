"""What figlink and the libraries it uses may print: library loggers are quiet unless asked.

The models figlink loads (rapid-layout, rapidocr) set up their own loggers at INFO level, with their own
handlers, each time one is created, and print a few lines per process on stderr. figlink creates them
inside :func:`quiet_library_logs`, which holds INFO and below back while they are created and leaves
their loggers at ERROR afterwards (rapidocr warns on every image without text, a normal case for figlink). ``figlink --verbose`` (or ``FIGLINK_VERBOSE=1``, which worker
processes inherit) lets them speak.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Iterator

ENV = "FIGLINK_VERBOSE"
LIBRARIES = ("rapid_layout", "RapidLayout", "rapidocr", "RapidOCR", "onnxruntime", "sentence_transformers",
             "transformers", "huggingface_hub", "faiss")


def verbose() -> bool:
    """Whether library logs are shown (``FIGLINK_VERBOSE`` set to anything but empty or 0)."""
    return os.environ.get(ENV, "") not in ("", "0")


def set_verbose(on: bool) -> None:
    """Show (or hide) library logs in this process and the worker processes it starts from now on."""
    if on:
        os.environ[ENV] = "1"
    else:
        os.environ.pop(ENV, None)


def _settle() -> None:
    """Every library logger (and those below it) at ERROR."""
    for name in list(logging.root.manager.loggerDict):
        if name.split(".", 1)[0] in LIBRARIES:
            logging.getLogger(name).setLevel(logging.ERROR)
    for name in LIBRARIES:
        logging.getLogger(name).setLevel(logging.ERROR)


@contextlib.contextmanager
def quiet_library_logs() -> Iterator[None]:
    """Around the creation of a library's model: its INFO and DEBUG records are dropped, and its loggers
    are left at ERROR. Does nothing when :func:`verbose`."""
    if verbose():
        yield
        return
    before = logging.root.manager.disable
    logging.disable(max(before, logging.INFO))
    try:
        yield
    finally:
        logging.disable(before)
        _settle()


__all__ = ["quiet_library_logs", "set_verbose", "verbose"]

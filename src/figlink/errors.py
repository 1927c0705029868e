"""Errors that describe one bad input item; the batch that meets one records it and goes on."""

from __future__ import annotations


class FiglinkError(Exception):
    """Base class: a clear, one-line reason why one item could not be processed."""

    stage: str = "figlink"

    def __init__(self, message: str, *, stage: str | None = None) -> None:
        super().__init__(message)
        if stage is not None:
            self.stage = stage


class InputError(FiglinkError):
    """The input is unreadable, empty, too large or of an unknown kind."""

    stage = "read"


class ParseError(FiglinkError):
    """The input is readable but its content cannot be parsed (malformed XML, no article)."""

    stage = "parse"


class UnsafeArchiveError(InputError):
    """An archive member would escape the output folder, is a link, or decompresses past the caps."""

    stage = "archive"

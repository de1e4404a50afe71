"""The errors a user sees. Every one is a ``PolicyBotError`` whose message is one line that says
what went wrong and how to fix it; the CLI and the app show it as it is."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Literal


class PolicyBotError(Exception):
    """A problem the user can fix; the message says how."""


class AlreadyDeleted(PolicyBotError):
    """The document an action was confirmed for is no longer in the library."""


class IndexUnavailable(PolicyBotError):
    """The index cannot be used as configured (wrong model for a collection, unreachable server)."""


class DiskFull(PolicyBotError):
    """The disk that holds the library has no space left."""

    def __init__(self, home: Path) -> None:
        super().__init__(
            f"the disk is full: no space left for the library in {home}; free some space there and try again "
            "(nothing already in the library was lost)"
        )


_DISK_FULL_TEXT = ("database or disk is full", "no space left on device", "disk quota exceeded")


def is_disk_full(exc: BaseException) -> bool:
    """Whether an error (or one it was raised from) means the disk has no space left: an OSError
    with ENOSPC or EDQUOT, or the way SQLite and Chroma word it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(text in str(current).lower() for text in _DISK_FULL_TEXT):
            return True
        current = current.__cause__ or current.__context__
    return False


class PromptError(PolicyBotError):
    """A prompt file is missing or its {placeholders} are not the ones the code fills in."""


IngestErrorKind = Literal["not_found", "not_pdf", "empty", "too_large", "corrupt", "encrypted", "scanned"]


class IngestError(PolicyBotError):
    """A file that cannot be ingested, with a one-line reason a user can act on."""

    def __init__(self, kind: IngestErrorKind, message: str, pages: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.pages = pages

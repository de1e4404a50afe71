"""The errors a user sees. Every one is a ``PolicyBotError`` whose message is one line that says
what went wrong and how to fix it; the CLI and the app show it as it is."""

from __future__ import annotations

from typing import Literal


class PolicyBotError(Exception):
    """A problem the user can fix; the message says how."""


class AlreadyDeleted(PolicyBotError):
    """The document an action was confirmed for is no longer in the library."""


class IndexUnavailable(PolicyBotError):
    """The index cannot be used as configured (wrong model for a collection, unreachable server)."""


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

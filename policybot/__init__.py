"""PolicyBot: local-first question answering over policy documents, with page-exact citations.

The public API is the facade and what it takes and returns::

    from policybot import PolicyBot, Settings
    bot = PolicyBot(Settings(home="my-library"))
    bot.ingest(["data/"])
    print(bot.ask("Is a slow leak under the sink covered?").answer)

The names load on first use, so that ``policybot.startup.configure_process`` can run before the
model libraries are imported (the CLI and the app call it first).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "PolicyBot": "policybot.service",
    "Settings": "policybot.settings",
    "AskOptions": "policybot.options",
    "EvidenceOptions": "policybot.options",
    "PolicyBotError": "policybot.errors",
    "AlreadyDeleted": "policybot.errors",
}
__all__ = ["__version__", "PolicyBot", "Settings", "AskOptions", "EvidenceOptions", "PolicyBotError", "AlreadyDeleted"]

if TYPE_CHECKING:
    from policybot.errors import AlreadyDeleted, PolicyBotError
    from policybot.options import AskOptions, EvidenceOptions
    from policybot.service import PolicyBot
    from policybot.settings import Settings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'policybot' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

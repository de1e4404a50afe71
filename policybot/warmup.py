"""Loading the models in the background, so the app shows the library at once.

Loading the embedding model (and torch under it) takes most of a cold start: seconds, during
which a page that waited for it would show nothing. The app starts this at once and draws the
library and a "loading" status meanwhile; a question asked before it ends simply waits for the
same load (the components are built once, under a lock).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Literal

log = logging.getLogger(__name__)
WarmupState = Literal["loading", "ready", "failed"]


class Warmup:
    """A load run once in a daemon thread, whose state anyone can read."""

    def __init__(self, load: Callable[[], None]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self.error: str | None = None
        self.seconds: float | None = None

    def start(self) -> Warmup:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="policybot-warmup", daemon=True)
                self._thread.start()
        return self

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            self._load()
        except Exception as exc:  # shown to the user; a question will retry the load and say why
            log.exception("loading the models failed")
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.seconds = round(time.perf_counter() - started, 2)
            self._done.set()

    @property
    def started(self) -> bool:
        return self._thread is not None

    @property
    def state(self) -> WarmupState:
        if not self._done.is_set():
            return "loading"
        return "failed" if self.error else "ready"

    def wait(self, timeout: float | None = None) -> bool:
        """True once the load has ended (ready or failed)."""
        return self._done.wait(timeout)

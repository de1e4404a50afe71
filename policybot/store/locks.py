"""A lock on the library shared by every process using the same data folder.

Ingestion holds it while it writes; the start-up clean-up only runs when it can take it,
so it never mistakes another process's ingestion in progress for the leftovers of a crash.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the lock is per process only
    fcntl = None  # type: ignore[assignment]


class LibraryLock:
    """An exclusive ``flock`` on ``HOME/library.lock``, plus a thread lock for this process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._threads = threading.Lock()

    @contextmanager
    def hold(self, wait: bool = True) -> Iterator[bool]:
        """Yield True when the lock is held; with ``wait=False``, yield False at once if not."""
        if not self._threads.acquire(blocking=wait):
            yield False
            return
        try:
            if fcntl is None:
                yield True
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                except BlockingIOError:
                    yield False
                    return
                yield True
            finally:
                os.close(fd)  # closing the descriptor releases the flock
        finally:
            self._threads.release()

"""A lock on the library shared by every process using the same data folder.

Ingestion holds it while it writes; the start-up clean-up only runs when it can take it,
so it never mistakes another process's ingestion in progress for the leftovers of a crash.

A second, short lock (``opening``) lets one process at a time create or open the library's
databases: four ingestions started together on a new data folder otherwise raced to create the
same SQLite files, and one failed with "database is locked".
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


@contextmanager
def opening(home: Path) -> Iterator[None]:
    """Held while a process creates or opens the registry and the embedded vector store (seconds
    at most; a long ingestion elsewhere does not hold it)."""
    home.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    with open(home / "opening.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

"""Kiosk admin access: checking the PIN with a back-off, and when an unlocked session re-locks.

A field kiosk serves one citizen after another. The admin PIN unlocks uploads, deletes and
settings for one browser session; it must not stay unlocked for the next visitor, and it
must not fall to someone trying PINs at the screen. Wrong PINs are counted per session and
across all sessions (opening a new tab does not reset the count), and after a few of them
each further try must wait, doubling each time.
"""

from __future__ import annotations

import hmac
import logging
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

log = logging.getLogger(__name__)


@dataclass
class PinVerdict:
    ok: bool
    message: str = ""
    wait_seconds: float = 0.0


@dataclass
class _SessionTries:
    failures: int = 0
    not_before: float = 0.0


@dataclass
class PinGate:
    """The PIN check shared by every browser session of one app process (thread-safe)."""

    pin: str | None
    free_attempts: int = 3  # wrong PINs per session before the back-off starts
    global_free_attempts: int = 10  # wrong PINs across sessions, within the window
    window_seconds: float = 900.0
    base_delay: float = 5.0
    max_delay: float = 300.0
    clock: Callable[[], float] = time.monotonic
    _sessions: dict[str, _SessionTries] = field(default_factory=dict)
    _recent: deque[float] = field(default_factory=deque)
    _global_not_before: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_seconds(self, session: str) -> float:
        """How long this session must wait before its next try (0: it may try now)."""
        with self._lock:
            return self._wait(session, self.clock())

    def attempt(self, session: str, pin: str) -> PinVerdict:
        """Check one PIN entry. During a back-off the entry is not even compared."""
        with self._lock:
            now = self.clock()
            wait = self._wait(session, now)
            if wait > 0:
                return PinVerdict(False, f"Too many wrong PINs. Try again in {math.ceil(wait)} s.", wait)
            if self.pin and hmac.compare_digest(pin.encode(), self.pin.encode()):
                self._sessions.pop(session, None)
                return PinVerdict(True)
            return self._failed(session, now)

    def _wait(self, session: str, now: float) -> float:
        tries = self._sessions.get(session)
        own = tries.not_before if tries else 0.0
        return max(0.0, own - now, self._global_not_before - now)

    def _failed(self, session: str, now: float) -> PinVerdict:
        tries = self._sessions.setdefault(session, _SessionTries())
        tries.failures += 1
        self._recent.append(now)
        while self._recent and self._recent[0] < now - self.window_seconds:
            self._recent.popleft()
        delay = self._delay(tries.failures - self.free_attempts)
        tries.not_before = now + delay
        global_delay = self._delay(len(self._recent) - self.global_free_attempts)
        self._global_not_before = max(self._global_not_before, now + global_delay)
        log.warning(
            "kiosk: wrong admin PIN (session %s: %d in a row; %d across sessions in the last %.0f min)",
            session,
            tries.failures,
            len(self._recent),
            self.window_seconds / 60,
        )
        wait = max(delay, global_delay)
        message = "Wrong PIN." + (f" Wait {math.ceil(wait)} s before trying again." if wait else "")
        return PinVerdict(False, message, wait)

    def _delay(self, over: int) -> float:
        """No wait for the free attempts, then base, 2 x base, 4 x base ... up to max_delay."""
        return 0.0 if over <= 0 else min(self.base_delay * 2 ** (over - 1), self.max_delay)


def relock_reason(
    now: float, unlocked_at: float | None, last_active: float, idle_seconds: float, max_unlocked_seconds: float
) -> str | None:
    """Why an unlocked admin session must lock again now, or None to stay unlocked."""
    if unlocked_at is None:
        return None
    if now - last_active > idle_seconds:
        return f"Admin locked again after {idle_seconds / 60:g} minutes without activity."
    if now - unlocked_at > max_unlocked_seconds:
        return f"Admin locked again: it stays unlocked for at most {max_unlocked_seconds / 60:g} minutes."
    return None

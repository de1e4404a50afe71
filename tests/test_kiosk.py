"""Kiosk admin access: the PIN gate's back-off (per session and across sessions) and re-locking."""

from __future__ import annotations

import pytest

from policybot.display import kiosk
from policybot.display.kiosk import PinGate, relock_reason


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_right_pin_unlocks_and_wrong_pins_back_off(clock):
    gate = PinGate("4321", free_attempts=3, base_delay=5, clock=clock)
    assert [gate.attempt("s1", "0000").message for _ in range(3)] == ["Wrong PIN."] * 3
    fourth = gate.attempt("s1", "1111")
    assert not fourth.ok and fourth.wait_seconds == 5 and fourth.message == "Wrong PIN. Wait 5 s before trying again."
    # During the wait even the right PIN is not checked.
    blocked = gate.attempt("s1", "4321")
    assert not blocked.ok and blocked.message == "Too many wrong PINs. Try again in 5 s."
    clock.now += 5
    fifth = gate.attempt("s1", "2222")
    assert fifth.wait_seconds == 10  # doubling
    clock.now += 10
    assert gate.attempt("s1", "4321").ok
    assert gate.wait_seconds("s1") == 0


def test_back_off_is_capped(clock):
    gate = PinGate("4321", free_attempts=1, base_delay=5, max_delay=60, global_free_attempts=1000, clock=clock)
    waits = []
    for _ in range(10):
        clock.now += 1000
        waits.append(gate.attempt("s", "0").wait_seconds)
    assert waits[:5] == [0, 5, 10, 20, 40] and set(waits[5:]) == {60}


def test_new_sessions_do_not_reset_the_global_count(clock):
    """A visitor opening a fresh tab for every guess is slowed down all the same."""
    gate = PinGate("4321", free_attempts=3, global_free_attempts=10, base_delay=5, clock=clock)
    for i in range(10):
        assert gate.attempt(f"tab-{i}", "0000").wait_seconds == 0
    eleventh = gate.attempt("tab-10", "0000")
    assert eleventh.wait_seconds == 5
    assert gate.wait_seconds("a-brand-new-tab") == 5
    assert gate.attempt("a-brand-new-tab", "4321").message.startswith("Too many wrong PINs")
    clock.now += 901  # outside the window, and past the wait
    assert gate.attempt("a-brand-new-tab", "4321").ok


def test_no_pin_configured_never_unlocks(clock):
    gate = PinGate(None, clock=clock)
    assert not gate.attempt("s", "").ok and not gate.attempt("s", "None").ok


def test_pin_is_compared_in_constant_time(clock, monkeypatch):
    calls = []
    real = kiosk.hmac.compare_digest
    monkeypatch.setattr(kiosk.hmac, "compare_digest", lambda a, b: calls.append((a, b)) or real(a, b))
    assert PinGate("4321", clock=clock).attempt("s", "4321").ok
    assert calls == [(b"4321", b"4321")]


def test_failures_are_logged(clock, caplog):
    gate = PinGate("4321", clock=clock)
    with caplog.at_level("WARNING", logger="policybot.display.kiosk"):
        gate.attempt("sess-1", "9999")
    assert "wrong admin PIN (session sess-1: 1 in a row" in caplog.text
    assert "9999" not in caplog.text  # the guess itself is never logged


def test_relock_reasons():
    assert relock_reason(100.0, None, 0.0, 60, 600) is None  # locked already
    assert relock_reason(100.0, 90.0, 95.0, 60, 600) is None
    assert "without activity" in relock_reason(200.0, 190.0, 100.0, 60, 600)
    assert "at most 10 minutes" in relock_reason(1000.0, 300.0, 990.0, 60, 600)

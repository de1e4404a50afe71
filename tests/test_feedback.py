"""Feedback storage (SQLite): ratings kept with the whole answer, safe from many threads."""

from __future__ import annotations

import threading

import pytest

from policybot.schemas import Answer
from policybot.store.feedback import MAX_COMMENT_CHARS, FeedbackStore
from tests.answers import extractive, generated, refused

# --- FeedbackStore ---------------------------------------------------------------------


def test_feedback_round_trip_newest_first(tmp_path):
    store = FeedbackStore(tmp_path / "fb" / "feedback.db")
    assert store.count() == 0 and store.all() == []
    first = store.add("Is my wife covered?", generated(), "up", "clear answer", session="s1")
    second = store.add("And my dog?", refused(), "down", session="s2")
    assert second > first
    assert store.count() == 2
    rows = store.all()
    assert [r["id"] for r in rows] == [second, first]
    newest, oldest = rows
    assert newest["question"] == "And my dog?" and newest["rating"] == "down" and newest["mode"] == "refused"
    assert newest["comment"] == "" and newest["session"] == "s2"
    assert oldest["answer"] == generated().answer and oldest["comment"] == "clear answer"
    assert oldest["created_at"].endswith("+00:00")  # UTC ISO time
    assert Answer.model_validate_json(oldest["answer_json"]) == generated()
    store.close()


def test_invalid_rating_is_rejected(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.db")
    for bad in ("meh", "", "UP"):
        with pytest.raises(ValueError, match="rating"):
            store.add("q", generated(), bad)  # type: ignore[arg-type]
    assert store.count() == 0


def test_comment_is_capped(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.db")
    store.add("q", generated(), "down", "x" * (MAX_COMMENT_CHARS + 500))
    assert len(store.all()[0]["comment"]) == MAX_COMMENT_CHARS


def test_feedback_persists_across_reopen(tmp_path):
    path = tmp_path / "feedback.db"
    with FeedbackStore(path) as store:
        store.add("q1", generated(), "up")
    with FeedbackStore(path) as store:
        store.add("q2", extractive(), "down")
        assert store.count() == 2
        assert [r["question"] for r in store.all()] == ["q2", "q1"]


def test_feedback_from_many_threads(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.db")
    answer = generated()

    def rate(i: int) -> None:
        for _ in range(10):
            store.add(f"q{i}", answer, "up", session=str(i))

    threads = [threading.Thread(target=rate, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count() == 80

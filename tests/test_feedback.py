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


# --- one record per answer, marks per citation ---------------------------------------------------


def test_rating_an_answer_again_updates_its_one_record(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.db")
    first = store.add("Is my wife covered?", generated(), "up", session="s1", answer_key="s1/0/1")
    again = store.add("Is my wife covered?", generated(), "down", "wrong clause", session="s1", answer_key="s1/0/1")
    other = store.add("And my dog?", refused(), "down", session="s1", answer_key="s1/0/3")
    assert again == first != other
    assert store.count() == 2
    row = next(r for r in store.all() if r["id"] == first)
    assert (row["rating"], row["comment"], row["answer_key"]) == ("down", "wrong clause", "s1/0/1")
    store.add("q", generated(), "up")  # without a key (the CLI): a record each time, as before
    store.add("q", generated(), "up")
    assert store.count() == 4


def test_a_citation_mark_is_one_record_updated_when_given_again(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.db")
    answer = generated()
    first = store.mark("s1/0/1", answer, 2, "right", session="s1")
    again = store.mark("s1/0/1", answer, 2, "wrong", correct_page=5, session="s1")
    store.mark("s1/0/1", answer, 1, "right", correct_page=9)  # a page only goes with "wrong"
    assert again == first
    marks = store.marks()
    assert [(m["n"], m["verdict"], m["correct_page"]) for m in marks] == [(2, "wrong", 5), (1, "right", None)]
    second = marks[0]
    cited = answer.citations[1]
    assert (second["doc"], second["page_start"], second["page_end"]) == (cited.doc, 2, 3)
    assert second["chunk_id"] == cited.chunk_id and second["question"] == "Is my wife covered?"
    with pytest.raises(ValueError, match="no source"):
        store.mark("s1/0/1", answer, 7, "right")
    with pytest.raises(ValueError, match="verdict"):
        store.mark("s1/0/1", answer, 1, "maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="page"):
        store.mark("s1/0/1", answer, 1, "wrong", correct_page=0)
    assert len(store.marks()) == 2


def test_a_database_from_before_answer_keys_is_upgraded_and_keeps_its_rows(tmp_path):
    import sqlite3

    path = tmp_path / "feedback.db"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE feedback (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, question TEXT NOT NULL,"
        " answer TEXT NOT NULL, mode TEXT NOT NULL, rating TEXT NOT NULL, comment TEXT NOT NULL, session TEXT NOT NULL,"
        " answer_json TEXT NOT NULL);"
        "INSERT INTO feedback (created_at, question, answer, mode, rating, comment, session, answer_json)"
        " VALUES ('2026-11-01T00:00:00+00:00', 'old q', 'old a', 'extractive', 'up', '', 's0', '{}');"
    )
    old.commit()
    old.close()
    store = FeedbackStore(path)
    assert [r["question"] for r in store.all()] == ["old q"]
    store.add("new q", generated(), "up", answer_key="k")
    store.add("new q", generated(), "down", answer_key="k")
    assert store.count() == 2

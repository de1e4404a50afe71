"""Conversations kept on this machine (SQLite): turns in order with whole answers, a question asked
again replaces the turns after it, a list with the last changed first, deletes, and answers of an
older format skipped rather than breaking the conversation."""

from __future__ import annotations

import sqlite3

from policybot.schemas import Answer
from policybot.store.conversations import ConversationStore
from tests.answers import extractive, generated, refused


def test_turns_come_back_in_order_with_their_whole_answers(tmp_path):
    path = tmp_path / "home" / "conversations.sqlite"
    store = ConversationStore(path)
    store.save_turn("c1", 0, "Is my wife covered?", generated())
    store.save_turn("c1", 1, "And my dog?", refused())
    store.close()
    again = ConversationStore(path)  # a restart
    turns = again.load("c1")
    assert [q for q, _ in turns] == ["Is my wife covered?", "And my dog?"]
    assert turns[0][1] == generated() and turns[1][1] == refused()
    assert again.load("never-kept") == []


def test_a_question_asked_again_replaces_the_turns_after_it(tmp_path):
    store = ConversationStore(tmp_path / "conversations.sqlite")
    for i, answer in enumerate([generated(), refused(), extractive()]):
        store.save_turn("c1", i, f"question {i}", answer)
    store.save_turn("c1", 1, "question 1, in other words", extractive())
    assert [q for q, _ in store.load("c1")] == ["question 0", "question 1, in other words"]
    store.keep_first("c1", 1)
    assert [q for q, _ in store.load("c1")] == ["question 0"]


def test_the_list_shows_the_last_changed_first_titled_by_the_first_question(tmp_path):
    store = ConversationStore(tmp_path / "conversations.sqlite")
    store.save_turn("old", 0, "  What is   the excess\nfor bicycles? " + "x" * 200, generated())
    store.save_turn("new", 0, "Is flood covered?", refused())
    store.save_turn("old", 1, "And theft?", refused())  # changed last
    kept = store.recent()
    assert [c.id for c in kept] == ["old", "new"]
    assert kept[0].title.startswith("What is the excess") and len(kept[0].title) == 80
    assert (kept[0].turns, kept[1].turns) == (2, 1)
    assert store.delete("old") and not store.delete("old")
    assert [c.id for c in store.recent()] == ["new"] and store.load("old") == []


def test_an_answer_of_an_older_format_is_left_out_not_fatal(tmp_path):
    path = tmp_path / "conversations.sqlite"
    store = ConversationStore(path)
    store.save_turn("c1", 0, "first", generated())
    store.save_turn("c1", 1, "second", refused())
    with sqlite3.connect(path) as db:
        db.execute("UPDATE turns SET answer_json=? WHERE idx=0", ('{"an": "old shape"}',))
    turns = store.load("c1")
    assert [q for q, _ in turns] == ["second"] and isinstance(turns[0][1], Answer)

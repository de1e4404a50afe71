"""A conversation's memory: bounded turns, and the history text an LLM is given."""

from __future__ import annotations

from policybot.answer.conversation import Conversation, Turn, as_turns, history_text
from tests.answers import generated


def test_history_is_bounded():
    turns = [Turn(question=f"question {i}", standalone=f"searched as {i}", answer="x" * 1000) for i in range(10)]
    text = history_text(turns, max_turns=6, max_chars=1500)
    assert "question 9" in text and "question 3" not in text
    assert "searched as" not in text  # the user's words, never what a turn was searched as
    assert len(text) <= 1500


def test_conversation_keeps_the_latest_turns_from_answers_or_turns():
    answer = generated()
    convo = Conversation(max_turns=2, history=[Turn(question="a", standalone="a", answer="x"), answer, answer])
    assert [t.question for t in convo.turns] == [answer.question, answer.question]
    assert as_turns([answer])[0] == Turn(
        question=answer.question, standalone=answer.standalone_question, answer=answer.answer
    )

"""A conversation's memory: bounded turns, and the history text an LLM is given."""

from __future__ import annotations

from policybot.answer.conversation import Conversation, Turn, as_turns, history_text, leading_document
from tests.answers import generated, refused


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
        question=answer.question, standalone=answer.standalone_question, answer=answer.answer, docs=["acme-home.pdf"]
    )


def test_a_turn_keeps_the_document_of_its_answer_s_leading_source():
    answer = generated()
    doc = answer.citations[0].doc
    mixed = [c.model_copy(update={"doc": d}) for c, d in zip(answer.citations, ["flood.pdf", doc, doc])]
    assert leading_document(answer.model_copy(update={"citations": mixed})) == ["flood.pdf"]
    # A source added because another points to it is not what the answer leads with.
    pointed = [mixed[0].model_copy(update={"referenced_by": [2]}), *mixed[1:]]
    assert leading_document(answer.model_copy(update={"citations": pointed})) == [doc]
    assert Turn.of(refused()).docs == []  # a refusal's closest passages are for reading, not what it was about

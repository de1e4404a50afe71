"""A conversation's memory: the turns kept for follow-ups, bounded so they never overflow the
context. Each browser session or kiosk visitor has its own."""

from __future__ import annotations

from typing import Sequence, Union

from pydantic import BaseModel

from policybot.schemas import Answer


class Turn(BaseModel):
    """One exchange of a conversation, kept for follow-ups."""

    question: str
    standalone: str
    answer: str
    # The document of the answer's leading source (none for a refusal): a follow-up that needs this
    # turn is searched mainly there (``follow_up_document``).
    docs: list[str] = []

    @classmethod
    def of(cls, answer: Answer) -> Turn:
        docs = [] if answer.refused else leading_document(answer)
        return cls(question=answer.question, standalone=answer.standalone_question, answer=answer.answer, docs=docs)


def leading_document(answer: Answer) -> list[str]:
    """The document of an answer's first retrieved source (not one added because a source points to
    it): what its first quote shows. The document most of its three leading sources come from was
    measured too and lost one more question than it won (record 2026-11-29-follow-up-document)."""
    return next(([c.doc] for c in answer.citations if not c.referenced_by), [])


History = Sequence[Union[Turn, Answer]]


def as_turns(history: History) -> list[Turn]:
    """A history of turns or answers as turns."""
    return [item if isinstance(item, Turn) else Turn.of(item) for item in history]


class Conversation:
    """The latest ``max_turns`` turns; older ones are dropped as new ones come."""

    def __init__(self, max_turns: int = 6, history: History = ()) -> None:
        self.max_turns = max_turns
        self.turns: list[Turn] = []
        for item in history:
            self.add(item)

    def add(self, item: Turn | Answer) -> None:
        self.turns.append(item if isinstance(item, Turn) else Turn.of(item))
        del self.turns[: max(0, len(self.turns) - self.max_turns)]


def history_text(turns: Sequence[Turn], max_turns: int, max_chars: int) -> str:
    """The latest turns that fit ``max_chars``; older ones are dropped, long answers shortened."""
    lines: list[str] = []
    used = 0
    for turn in reversed(list(turns)[-max_turns:] if max_turns else []):
        answer = turn.answer if len(turn.answer) <= 300 else turn.answer[:297] + "..."
        block = f"User: {turn.question}\nAssistant: {answer}"  # the user's words, never a searched-as text
        if used + len(block) > max_chars:
            break
        lines.insert(0, block)
        used += len(block)
    return "\n".join(lines)

"""What an answer streams to its caller, as it happens: typed events, one class per kind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

from policybot.schemas import Answer, Citation, EvidenceReport, TraceStep

StageName = Literal["searching", "condensing", "expanding", "reranking", "writing"]


@dataclass(frozen=True)
class StageEvent:
    """The pipeline moved on to a stage (for a status line)."""

    name: StageName


@dataclass(frozen=True)
class PassagesEvent:
    """The first pass's best passages, sent before any LLM call."""

    passages: list[Citation]


@dataclass(frozen=True)
class StandaloneEvent:
    """A follow-up as it is searched, made standalone."""

    question: str


@dataclass(frozen=True)
class TokenEvent:
    """A piece of the answer as the model writes it."""

    text: str


@dataclass(frozen=True)
class AnswerEvent:
    """The finished, checked answer: always the last event."""

    answer: Answer


Event = Union[StageEvent, PassagesEvent, StandaloneEvent, TokenEvent, AnswerEvent]


@dataclass(frozen=True)
class EvidenceStepEvent:
    """One step of an evidence run (Thought, Action, Observation), as it happens."""

    step: TraceStep


@dataclass(frozen=True)
class EvidenceDoneEvent:
    """The finished evidence table and its trace: always the last event of an evidence run."""

    report: EvidenceReport


EvidenceEvent = Union[StageEvent, EvidenceStepEvent, EvidenceDoneEvent]

"""What the pipelines stream to their callers, as it happens: typed events, one class per kind.
An answer streams stages, passages, tokens and the answer; an evidence run its steps and the
report; an ingestion its progress and the outcome. The stage labels people read are here too,
once, for the app and the CLI alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Union

from policybot.schemas import Answer, Citation, EvidenceReport, IngestOutcome, TraceStep

StageName = Literal["searching", "condensing", "expanding", "reranking", "writing"]
# What a person reads while a question is answered (the app's status line, the CLI's stderr).
ANSWER_STAGES: dict[StageName, str] = {
    "condensing": "Understanding your follow-up…",
    "expanding": "Writing search queries…",
    "searching": "Searching the documents…",
    "reranking": "Ranking the passages…",
    "writing": "Writing the answer…",
}


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


# --- ingestion ------------------------------------------------------------------------------

IngestStage = Literal["read", "ocr", "sections", "chunk", "embed", "probes", "store", "done"]
# What a person reads while a document is added (the app's progress bar, the CLI's).
INGEST_STAGES: dict[IngestStage, str] = {
    "read": "reading pages",
    "ocr": "reading scanned pages (OCR)",
    "sections": "finding sections",
    "chunk": "cutting into passages",
    "embed": "embedding passages",
    "probes": "calibrating",
    "store": "saving",
    "done": "done",
}


@dataclass(frozen=True)
class Progress:
    """How far one document's ingestion is: ``done`` of ``total`` in its current stage."""

    file: str
    stage: IngestStage
    done: int
    total: int

    @property
    def label(self) -> str:
        return f"{self.file}: {INGEST_STAGES[self.stage]} ({self.done}/{self.total})"


ProgressFn = Callable[[Progress], None]


@dataclass(frozen=True)
class IngestedEvent:
    """The outcome of one document's ingestion: always the last event of it."""

    outcome: IngestOutcome


IngestEvent = Union[Progress, IngestedEvent]

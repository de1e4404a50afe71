"""The facade: the one API the CLI, the Streamlit app and the evaluation call.

It only composes: models and stores come from ``Components`` (built once per process and
settings), documents are managed by the ``Library``, added by the ``IngestPipeline``, answered
by the ``AnswerPipeline`` and collected on an issue by the ``EvidenceCollector``.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal

from policybot.answer.conversation import History, as_turns
from policybot.answer.pipeline import WORDS_ONLY, AnswerPipeline
from policybot.answer.retrieval import search_hits
from policybot.components import Components
from policybot.errors import AlreadyDeleted, PolicyBotError
from policybot.events import AnswerEvent, Event, EvidenceDoneEvent, EvidenceEvent, ProgressFn
from policybot.evidence.collector import EvidenceCollector
from policybot.ingestion.pipeline import IngestPipeline
from policybot.library import Library
from policybot.options import AskOptions, EvidenceOptions
from policybot.schemas import (
    Answer,
    DeleteReport,
    EvidenceReport,
    IngestOutcome,
    IngestReport,
    SearchResponse,
    Status,
)
from policybot.settings import Settings
from policybot.warmup import Warmup

if TYPE_CHECKING:
    from policybot.models.llm import ChatLLM
    from policybot.store.conversations import ConversationStore

__all__ = ["AlreadyDeleted", "PolicyBot", "PolicyBotError"]
log = logging.getLogger(__name__)


class PolicyBot:
    """Ingest, search and answer over one library; ``library`` lists, scopes, edits and renders it."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.components = Components(self.settings)
        self.library = Library(self.components)
        self._warmup = Warmup(self.warm_up)
        # The background preparation after the latest ingest or delete, if any (see _after_change).
        self.preparing: threading.Thread | None = None

    # --- start-up ---------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the embedding model and the library's derived state now rather than on first use."""
        self.components.embedder.warm_up()
        self._prepare_library()

    def warm_up_in_background(self) -> Warmup:
        """``warm_up`` in a background thread (started once); its state says when it is done."""
        return self._warmup.start()

    def _prepare_library(self) -> None:
        """What the first question after a change would otherwise build: the BM25 shards of this
        generation and the library-wide calibration (60 probe searches, ~1 s at 50k chunks)."""
        index = self.components.index
        index.lexical_ready()
        docs = index.documents()
        if docs:
            self.components.calibration(docs)

    def _after_change(self) -> None:
        """A serving process (one that warmed up in the background) prepares the changed library
        in the background too; a one-shot CLI run has no next question to prepare for."""
        if self._warmup.started:
            self.preparing = threading.Thread(target=self._prepare_quietly, name="policybot-prepare", daemon=True)
            self.preparing.start()

    def _prepare_quietly(self) -> None:
        try:
            self._prepare_library()
        except Exception:  # the next question builds the same state and reports what fails
            log.exception("preparing the library after a change failed")

    def status(self) -> Status:
        """The profile, its models and the LLM that answers (or why none does)."""
        resolved = self.components.profile
        profile = resolved.profile
        llm, notice = self.llm()
        return Status(
            profile=resolved.name,
            profile_reason=resolved.reason,
            embedding_model=profile.embedding.name,
            embedding_backend=self.components.embedding_backend,
            reranker=profile.reranker.name if profile.reranker else None,
            llm=llm.name if llm is not None else None,
            llm_notice=notice if llm is None else None,
        )

    # --- changing the library ---------------------------------------------------------------
    def ingest(self, paths: Iterable[str | Path], progress: ProgressFn | None = None) -> IngestReport:
        """Add PDFs and folders of PDFs; one file's failure never stops the others."""
        try:
            return self._ingestion().run_many(paths, progress)
        finally:
            self._after_change()

    def ingest_file(self, path: Path, progress: ProgressFn | None = None, name: str | None = None) -> IngestOutcome:
        """Add one PDF completely, or not at all (``name`` overrides the file name)."""
        try:
            return self._ingestion().run(path, name, progress)
        finally:
            self._after_change()

    def ingest_upload(self, name: str, data: bytes, progress: ProgressFn | None = None) -> IngestOutcome:
        """Add a file received from a browser, under a safe version of its name."""
        try:
            return self._ingestion().run_upload(name, data, progress)
        finally:
            self._after_change()

    def _ingestion(self) -> IngestPipeline:
        return IngestPipeline(self.components.ingest_parts())

    def delete(self, name: str, sha256: str | None = None) -> DeleteReport:
        """Remove a document everywhere (``sha256``: only if it is still the one confirmed)."""
        try:
            return self.library.delete(name, sha256)
        finally:
            self._after_change()

    def record_feedback(
        self,
        answer: Answer,
        rating: Literal["up", "down"],
        comment: str = "",
        session: str = "",
        answer_key: str | None = None,
    ) -> int:
        """Keep a rating of an answer, with the whole answer, on this machine (one record per
        ``answer_key``: rating it again updates it)."""
        return self.components.feedback.add(answer.question, answer, rating, comment, session, answer_key)

    @property
    def conversations(self) -> ConversationStore:
        """The conversations kept on this machine (the app keeps them unless it is a kiosk)."""
        return self.components.conversations

    def mark_citation(
        self,
        answer_key: str,
        answer: Answer,
        n: int,
        verdict: Literal["right", "wrong"],
        correct_page: int | None = None,
        session: str = "",
    ) -> int:
        """A reviewer's mark on one source of an answer: right, or wrong (with the right page if known)."""
        return self.components.feedback.mark(answer_key, answer, n, verdict, correct_page, session)

    # --- the LLM ----------------------------------------------------------------------------
    def llm(self) -> tuple[ChatLLM | None, str | None]:
        """The LLM to answer with, or None and a one-line reason with the command that fixes it."""
        return self.components.llm.get()

    def set_llm(self, llm: ChatLLM | None, notice: str | None = None) -> None:
        """Use this LLM (tests, other providers) instead of probing Ollama."""
        self.components.llm.override(llm, notice)

    # --- answering --------------------------------------------------------------------------
    def ask_stream(
        self, question: str, history: History = (), options: AskOptions | None = None, **choices: Any
    ) -> Iterator[Event]:
        """Answer a question, streaming typed events: stages, the first passages (at once), the
        standalone question, answer tokens as they come, and finally the ``Answer``.
        Per-question choices come as ``options`` and/or keywords (``AskOptions`` fields)."""
        opts = (options or AskOptions()).merged(**choices)
        if not question.strip():
            raise PolicyBotError("the question is empty")
        scope = self.library.resolve_docs(opts.docs, opts.as_of)
        llm = self.llm()[0] if opts.use_llm else None
        settings = opts.apply(self.settings)
        pipeline = AnswerPipeline(self.components.answer_parts(settings), settings, llm)
        yield from pipeline.run(question, as_turns(history), scope)

    def ask(self, question: str, history: History = (), options: AskOptions | None = None, **choices: Any) -> Answer:
        """``ask_stream`` run to the end: the final Answer."""
        for event in self.ask_stream(question, history, options, **choices):
            if isinstance(event, AnswerEvent):
                return event.answer
        raise RuntimeError("the answer pipeline ended without an answer")  # pragma: no cover

    # --- evidence mode ----------------------------------------------------------------------
    def evidence_stream(
        self, issue: str, options: EvidenceOptions | None = None, **choices: Any
    ) -> Iterator[EvidenceEvent]:
        """Collect everything the library says on an issue: each step as it happens, then the
        ``EvidenceReport`` (table + trace). The ReAct agent when an LLM runs, else the planner."""
        opts = (options or EvidenceOptions()).merged(**choices)
        if not issue.strip():
            raise PolicyBotError("the issue is empty")
        scope = self.library.resolve_docs(opts.docs)
        llm = self.llm()[0] if opts.use_llm and not opts.single_k else None
        settings = self.settings.evidence
        if opts.max_steps is not None:
            settings = settings.model_copy(update={"max_steps": opts.max_steps})
        tools = self.components.evidence_tools(scope)
        yield from EvidenceCollector(tools, settings, llm).run(issue.strip(), scope, opts.single_k)

    def evidence(self, issue: str, options: EvidenceOptions | None = None, **choices: Any) -> EvidenceReport:
        """``evidence_stream`` run to the end: the report."""
        for event in self.evidence_stream(issue, options, **choices):
            if isinstance(event, EvidenceDoneEvent):
                return event.report
        raise RuntimeError("the evidence run ended without a report")  # pragma: no cover

    # --- search -----------------------------------------------------------------------------
    def search(
        self, query: str, k: int | None = None, docs: Iterable[str] | None = None, as_of: date | None = None
    ) -> SearchResponse:
        """Hybrid dense + BM25 search, fused; a document the query names ("under the Dwelling Form")
        is searched first and favoured, and a clause it names or a term it asks the meaning of comes
        first, as when it is asked."""
        if not query.strip():
            raise PolicyBotError("the query is empty")
        started = time.perf_counter()
        c = self.components
        scope = {d.doc_id: d for d in self.library.resolve_docs(docs, as_of)}
        named = c.name_documents(query, list(scope.values()))
        defined = c.references.definitions_asked(query, list(scope))
        fused = c.retriever.run(query, k or self.settings.search_k, list(scope), named=named, defined=defined)
        rows = c.registry.chunks(c.index.collection, [f.chunk_id for f in fused])
        return SearchResponse(
            query=query,
            profile=c.profile.name,
            embedding_model=c.profile.profile.embedding.vector_id,
            hits=search_hits(fused, rows, scope),
            seconds=round(time.perf_counter() - started, 3),
            notice=WORDS_ONLY.format(why=c.retriever.words_only) if c.retriever.words_only else None,
        )

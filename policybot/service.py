"""The facade: the one API the CLI, the Streamlit app and the evaluation call.

It only composes: models and stores come from ``Components`` (built once per process and
settings), documents from the ``Library``, answers from the ``AnswerPipeline``.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal

from policybot.components import Components
from policybot.conversation import History, as_turns
from policybot.editions import earlier_wording, edition_day
from policybot.errors import AlreadyDeleted, PolicyBotError
from policybot.events import AnswerEvent, Event, EvidenceDoneEvent, EvidenceEvent
from policybot.evidence_mode import EvidenceCollector
from policybot.library import Library, ProgressFn
from policybot.options import AskOptions, EvidenceOptions
from policybot.pipeline import AnswerPipeline, PipelineParts
from policybot.registry import ChunkRow, DocumentRow
from policybot.retrieval import Fused, ListKey
from policybot.schemas import Answer, Citation, DeleteReport, DocumentInfo, EvidenceReport, DocumentList, IngestOutcome, IngestReport, SearchHit, SearchResponse
from policybot.settings import Settings
from policybot.warmup import Warmup

if TYPE_CHECKING:
    from policybot.embeddings import Embedder
    from policybot.index import DocumentIndex
    from policybot.llm import ChatLLM
    from policybot.locks import LibraryLock
    from policybot.profiles import ResolvedProfile
    from policybot.registry import Registry
    from policybot.retrieval import HybridRetriever
    from policybot.schemas import DoctorReport

__all__ = ["AlreadyDeleted", "PolicyBot", "PolicyBotError"]
log = logging.getLogger(__name__)


class PolicyBot:
    """Ingest, list, delete, search and answer over one library."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.components = Components(self.settings)
        self.library = Library(self.components)
        self._warmup = Warmup(self.warm_up)
        # The background preparation after the latest ingest or delete, if any (see _after_change).
        self.preparing: threading.Thread | None = None

    # --- what it is built from (for the CLI, doctor, evaluation and tests) ------------------
    @property
    def profile(self) -> ResolvedProfile:
        return self.components.profile

    @property
    def embedder(self) -> Embedder:
        return self.components.embedder

    @property
    def registry(self) -> Registry:
        return self.components.registry

    @property
    def index(self) -> DocumentIndex:
        return self.components.index

    @property
    def retriever(self) -> HybridRetriever:
        return self.components.retriever

    @property
    def library_lock(self) -> LibraryLock:
        return self.components.library_lock

    def warm_up(self) -> None:
        """Load the embedding model and the library's derived state now rather than on first use."""
        self.embedder.warm_up()
        self._prepare_library()

    def warm_up_in_background(self) -> Warmup:
        """``warm_up`` in a background thread (started once); its state says when it is done."""
        return self._warmup.start()

    def _prepare_library(self) -> None:
        """What the first question after a change would otherwise build: the BM25 shards of this
        generation and the library-wide calibration (60 probe searches, ~1 s at 50k chunks)."""
        self.index.lexical_ready()
        docs = self.index.documents()
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

    # --- the library ------------------------------------------------------------------------
    def ingest(self, paths: Iterable[str | Path], progress: ProgressFn | None = None) -> IngestReport:
        try:
            return self.library.ingest(paths, progress)
        finally:
            self._after_change()

    def ingest_file(self, path: Path, progress: ProgressFn | None = None, name: str | None = None) -> IngestOutcome:
        try:
            return self.library.ingest_file(path, progress, name)
        finally:
            self._after_change()

    def ingest_upload(self, name: str, data: bytes, progress: ProgressFn | None = None) -> IngestOutcome:
        try:
            return self.library.ingest_upload(name, data, progress)
        finally:
            self._after_change()

    def delete(self, name: str, sha256: str | None = None) -> DeleteReport:
        try:
            return self.library.delete(name, sha256)
        finally:
            self._after_change()

    def documents(self) -> DocumentList:
        return self.library.documents()

    def set_effective(self, name: str, when: date | None) -> DocumentInfo:
        """Set by hand the date a document's edition takes effect (None: clear it)."""
        return self.library.set_effective(name, when)

    def resolve_docs(self, names: Iterable[str] | None, as_of: date | None = None) -> list[DocumentRow]:
        return self.library.resolve_docs(names, as_of)

    def confirm_edition(self, name: str, confirm: bool = True) -> DocumentInfo:
        """Confirm a detected edition (or, with False, take the document out of its family)."""
        return self.library.confirm_edition(name, confirm)

    def page_image(self, name: str, page: int, quote: str | None = None, dpi: int = 110) -> bytes:
        return self.library.page_image(name, page, quote, dpi)

    def stored_pdf(self, name: str) -> Path | None:
        return self.library.stored_pdf(name)

    def record_feedback(self, answer: Answer, rating: Literal["up", "down"], comment: str = "", session: str = "") -> int:
        """Keep a rating of an answer, with the whole answer, on this machine."""
        return self.components.feedback.add(answer.question, answer, rating, comment, session)

    def doctor(self, repair: bool = False) -> DoctorReport:
        from policybot.doctor import run_checks

        return run_checks(self, repair=repair)

    # --- the LLM ----------------------------------------------------------------------------
    def llm(self) -> tuple[ChatLLM | None, str | None]:
        """The LLM to answer with, or None and a one-line reason with the command that fixes it."""
        return self.components.llm.get()

    def set_llm(self, llm: ChatLLM | None, notice: str | None = None) -> None:
        """Use this LLM (tests, other providers) instead of probing Ollama."""
        self.components.llm.override(llm, notice)

    # --- answering --------------------------------------------------------------------------
    def ask_stream(self, question: str, history: History = (), options: AskOptions | None = None, **choices: Any) -> Iterator[Event]:
        """Answer a question, streaming typed events: stages, the first passages (at once), the
        standalone question, answer tokens as they come, and finally the ``Answer``.
        Per-question choices come as ``options`` and/or keywords (``AskOptions`` fields)."""
        opts = (options or AskOptions()).merged(**choices)
        if not question.strip():
            raise PolicyBotError("the question is empty")
        scope = self.resolve_docs(opts.docs, opts.as_of)
        llm, notice = self.llm() if opts.use_llm else (None, None)
        settings = opts.apply(self.settings)
        for event in AnswerPipeline(self._parts(settings), settings, llm, notice).run(question, as_turns(history), scope):
            if isinstance(event, AnswerEvent):
                self._note_earlier_edition(event.answer)
            yield event

    def _note_earlier_edition(self, answer: Answer) -> None:
        """When the best source's clause read differently in an older edition: say what it said
        (older editions are outside the question's scope, so the whole library is looked at)."""
        shown = answer.shown_citations
        if answer.refused or not shown:
            return
        top = shown[0]
        c = self.components
        docs = c.index.documents()
        current = next((d for d in docs if d.name == top.doc), None)
        chunk = c.registry.chunks(c.index.collection, [top.chunk_id]).get(top.chunk_id)
        if current is None or chunk is None:
            return
        found = earlier_wording(current, chunk, docs, lambda d: c.registry.chunks_of(d.collection, d.doc_id))
        if found is None:
            return
        answer.edition_note = found.note(current)
        answer.earlier_edition = Citation(
            n=len(answer.citations) + 1, chunk_id=found.chunk.chunk_id, doc=found.doc.name, title=found.doc.title, section=found.chunk.section,
            page_start=found.chunk.page_start, page_end=found.chunk.page_end, text=found.chunk.text, score=0.0,
            reference=f"the {edition_day(found.doc)[:4]} edition of [{top.n}]", referenced_by=[top.n],
        )

    def ask(self, question: str, history: History = (), options: AskOptions | None = None, **choices: Any) -> Answer:
        """``ask_stream`` run to the end: the final Answer."""
        for event in self.ask_stream(question, history, options, **choices):
            if isinstance(event, AnswerEvent):
                return event.answer
        raise RuntimeError("the answer pipeline ended without an answer")  # pragma: no cover

    def _parts(self, settings: Settings) -> PipelineParts:
        c = self.components
        return PipelineParts(
            retriever=c.retriever,
            rows=lambda ids: c.registry.chunks(c.index.collection, ids),
            vectors=c.index.vectors,
            embed_query=c.embedder.embed_query,
            reranker=c.reranker() if settings.rerank else None,
            thresholds=c.thresholds,
            profile=c.profile.name,
            llm_model=c.profile.profile.llm.name,
            calibration=c.calibration,
            name_documents=c.name_documents,
            references=c.references,
        )

    # --- evidence mode ----------------------------------------------------------------------
    def evidence_stream(self, issue: str, options: EvidenceOptions | None = None, **choices: Any) -> Iterator[EvidenceEvent]:
        """Collect everything the library says on an issue: each step as it happens, then the
        ``EvidenceReport`` (table + trace). The ReAct agent when an LLM runs, else the planner."""
        opts = (options or EvidenceOptions()).merged(**choices)
        if not issue.strip():
            raise PolicyBotError("the issue is empty")
        scope = self.resolve_docs(opts.docs)
        llm, notice = self.llm() if opts.use_llm and not opts.single_k else (None, None)
        settings = self.settings.evidence
        if opts.max_steps is not None:
            settings = settings.model_copy(update={"max_steps": opts.max_steps})
        tools = self.components.evidence_tools(scope)
        yield from EvidenceCollector(tools, settings, llm, notice).run(issue.strip(), scope, opts.single_k)

    def evidence(self, issue: str, options: EvidenceOptions | None = None, **choices: Any) -> EvidenceReport:
        """``evidence_stream`` run to the end: the report."""
        for event in self.evidence_stream(issue, options, **choices):
            if isinstance(event, EvidenceDoneEvent):
                return event.report
        raise RuntimeError("the evidence run ended without a report")  # pragma: no cover

    # --- search -----------------------------------------------------------------------------
    def search(self, query: str, k: int | None = None, docs: Iterable[str] | None = None, as_of: date | None = None) -> SearchResponse:
        """Hybrid dense + BM25 search fused with reciprocal rank fusion."""
        if not query.strip():
            raise PolicyBotError("the query is empty")
        started = time.perf_counter()
        k = k or self.settings.search_k
        scope = {d.doc_id: d for d in self.resolve_docs(docs, as_of)}
        fused = self.retriever.run(query, k, list(scope))
        rows = self.registry.chunks(self.index.collection, [f.chunk_id for f in fused])
        hits: list[SearchHit] = []
        for f in fused:
            row = rows.get(f.chunk_id)
            if row is None:  # deleted between the search and now
                continue
            hits.append(_hit(len(hits) + 1, f, row, scope[row.doc_id]))
        profile = self.profile
        return SearchResponse(
            query=query,
            profile=profile.name,
            embedding_model=profile.profile.embedding.hf_id,
            hits=hits,
            seconds=round(time.perf_counter() - started, 3),
        )


def _hit(rank: int, fused: Fused, row: ChunkRow, doc: DocumentRow) -> SearchHit:
    dense, lexical = ListKey("dense"), ListKey("lexical")
    return SearchHit(
        rank=rank,
        chunk_id=fused.chunk_id,
        doc=doc.name,
        title=doc.title,
        section=row.section,
        page_start=row.page_start,
        page_end=row.page_end,
        score=round(fused.score, 6),
        dense_rank=fused.ranks.get(dense),
        dense_score=_round(fused.scores.get(dense)),
        lexical_rank=fused.ranks.get(lexical),
        lexical_score=_round(fused.scores.get(lexical)),
        kind=row.kind,
        text=row.text,
        ocr_confidence=doc.ocr_confidence(row.page_start, row.page_end),
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)

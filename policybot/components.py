"""The components factory: every model and store built once per process and settings, on first use.

Models are the expensive part (seconds to load, hundreds of MB). Each is created under a lock
the first time it is asked for and then read without one, so a long ingestion in one browser
session never blocks a question in another.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from policybot.answer.naming import (
    NamedDocument,
    name_phrases,
    named_documents,
    names_it_lacks,
    names_it_writes,
    words_of,
)
from policybot.answer.neighbours import WordNeighbours
from policybot.answer.pipeline import AnswerParts
from policybot.answer.query import section_matches
from policybot.answer.references import ReferenceFollower
from policybot.answer.retrieval import HybridRetriever
from policybot.answer.scoring import Thresholds
from policybot.answer.token_match import TokenMatch
from policybot.core.glossary import Glossary, glossary_of
from policybot.core.probes import (
    Calibration,
    decode_probes,
    encode_probes,
    probe_bank,
    probe_scores,
    request_probes,
)
from policybot.core.rows import DocumentRow, doc_of
from policybot.errors import DiskFull, is_disk_full
from policybot.evidence.tools import EvidenceTools
from policybot.ingestion.chunking import Chunker, make_chunker
from policybot.ingestion.ocr import TesseractOCR
from policybot.ingestion.pdf import OcrPlan
from policybot.ingestion.pipeline import IngestParts
from policybot.models.embeddings import Embedder, choose_backend, get_embedder
from policybot.models.profiles import ResolvedProfile, resolve_profile
from policybot.models.providers import LLMProvider
from policybot.models.rerank import Reranker, get_reranker
from policybot.settings import Settings
from policybot.store.conversations import ConversationStore
from policybot.store.feedback import FeedbackStore
from policybot.store.index import DocumentIndex
from policybot.store.locks import LibraryLock
from policybot.store.registry import Registry

log = logging.getLogger(__name__)
T = TypeVar("T")


class Components:
    """Models, stores and the LLM provider for one ``Settings``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # One writer at a time across processes; questions never wait for it.
        self.library_lock = LibraryLock(settings.home / "library.lock")
        self._built: dict[str, Any] = {}
        self._lock = threading.RLock()

    def _once(self, name: str, build: Callable[[], T]) -> T:
        value = self._built.get(name)
        if value is None:
            with self._lock:
                value = self._built.get(name)
                if value is None:
                    value = self._built[name] = build()
        return value  # type: ignore[no-any-return]

    @property
    def profile(self) -> ResolvedProfile:
        return self._once("profile", lambda: resolve_profile(self.settings))

    @property
    def embedder(self) -> Embedder:
        return get_embedder(self.profile.profile.embedding, self.settings)

    @property
    def embedding_backend(self) -> str:
        """What runs the embedding model (torch, onnx, onnx-int8): the loaded one, or the one that will load."""
        return self.embedder.backend or choose_backend(self.profile.profile.embedding, self.settings)

    @property
    def registry(self) -> Registry:
        return self._once("registry", lambda: Registry(self.settings.home / "registry.sqlite"))

    @property
    def index(self) -> DocumentIndex:
        return self._once("index", self._open_index)

    def _open_index(self) -> DocumentIndex:
        index = DocumentIndex(self.settings, self.profile.profile.embedding, self.embedder, self.registry)
        try:
            index.recover(self.library_lock)  # leftovers of a crash never outlive a restart
        except Exception as exc:  # e.g. a Chroma server that is down: say so when it is used
            log.warning(
                "start-up clean-up skipped: %s", DiskFull(self.settings.home.resolve()) if is_disk_full(exc) else exc
            )
        return index

    @property
    def max_chunk_tokens(self) -> int:
        """The smallest window among the models that read chunks, so none truncates one."""
        if self.settings.max_chunk_tokens:
            return self.settings.max_chunk_tokens
        limit = self.embedder.max_tokens
        reranker = self.profile.profile.reranker
        if reranker is not None:
            # The reranker reads query + passage; keep ~64 tokens for the question.
            limit = min(limit, reranker.max_tokens - 64)
        return limit

    @property
    def chunker(self) -> Chunker:
        return self._once("chunker", lambda: make_chunker(self.settings, self.embedder, self.max_chunk_tokens))

    @property
    def retriever(self) -> HybridRetriever:
        s = self.settings
        return self._once(
            "retriever",
            lambda: HybridRetriever(
                self.index,
                self.embedder,
                self.calibration_of_ids,
                s.candidates_per_retriever,
                s.rrf_k,
                s.fusion,
                s.fusion_dense_weight,
                s.named_document_boost,
                s.naming_direction,
                TokenMatch(self.embedder, s.token_match_depth, s.token_match_weight) if s.token_match else None,
                s.search_without_ask,
                s.equivalent_words,
            ),
        )

    def calibration_of_ids(self, doc_ids: Sequence[str]) -> Calibration:
        wanted = set(doc_ids)
        return self.calibration([d for d in self.index.documents() if d.doc_id in wanted])

    @property
    def ocr(self) -> TesseractOCR:
        return self._once("ocr", lambda: TesseractOCR(self.settings.ocr))

    def ocr_engine(self) -> TesseractOCR | None:
        """The OCR engine when it is on and usable, else None (scanned pages are then reported)."""
        if not self.settings.ocr.enabled:
            return None
        return self.ocr if self.ocr.health().usable else None

    def ocr_fix(self) -> str:
        """What to do so that scanned pages are read (for notes and messages)."""
        if not self.settings.ocr.enabled:
            return "OCR is turned off (POLICYBOT_OCR__ENABLED=false)"
        return self.ocr.health().fix("policybot doctor")

    @property
    def feedback(self) -> FeedbackStore:
        return self._once("feedback", lambda: FeedbackStore(self.settings.home / "feedback.sqlite"))

    @property
    def conversations(self) -> ConversationStore:
        return self._once("conversations", lambda: ConversationStore(self.settings.home / "conversations.sqlite"))

    @property
    def llm(self) -> LLMProvider:
        return self._once("llm", lambda: LLMProvider(self.settings, self.profile.profile.llm))

    def reranker(self) -> Reranker | None:
        """The profile's cross-encoder (loaded on first use, once per process), if it has one."""
        model = self.profile.profile.reranker
        return None if model is None else get_reranker(model, self.settings)

    # --- what questions are judged against (computed per document, cached) -------------------
    @property
    def probe_vectors(self) -> np.ndarray:
        """The off-topic probe questions, embedded once per process."""
        return self._once("probe_vectors", lambda: self.embedder.embed(list(probe_bank()[1])))

    @property
    def request_vectors(self) -> np.ndarray:
        """The requests for the world outside the documents (``request_probes``), embedded once per process."""
        return self._once("request_vectors", lambda: self.embedder.embed(list(request_probes())))

    @property
    def word_neighbours(self) -> WordNeighbours | None:
        """The question-word neighbour finder, with its word vectors kept for the process; None when
        no threshold is set for the embedding model."""
        threshold = self.settings.word_neighbour_thresholds.get(self.profile.profile.embedding.base_name)
        if threshold is None:
            return None
        return self._once("word_neighbours", lambda: WordNeighbours(self.embedder.embed, threshold))

    def probe_scores_of(self, doc: DocumentRow) -> list[float]:
        """A document's off-topic probe scores: stored at ingestion; computed (and stored) here
        for documents indexed before they were kept, or with another probe bank."""
        bank, model = probe_bank()[0], self.profile.profile.embedding.vector_id
        key = f"probes:{doc.doc_id}:{bank}"
        cached = self._built.get(key)
        if cached is not None:
            return cached  # type: ignore[no-any-return]
        scores = decode_probes(doc.probes, bank, model)
        if scores is None:
            chunk_ids = [c.chunk_id for c in self.registry.chunks_of(doc.collection, doc.doc_id)]
            vectors = self.index.vectors(chunk_ids)
            matrix = (
                np.vstack([vectors[c] for c in chunk_ids if c in vectors])
                if vectors
                else np.zeros((0, 1), dtype=np.float32)
            )
            scores = probe_scores(matrix, self.probe_vectors)
            self.registry.set_probes(doc.collection, doc.doc_id, encode_probes(bank, model, scores))
        self._built[key] = scores
        return scores

    def calibration(self, scope: Sequence[DocumentRow]) -> Calibration:
        """What off-topic questions score in these documents: cosines per document (stored), BM25
        per scope (BM25 depends on the whole library's statistics: redone when it changes)."""
        ids = sorted(d.doc_id for d in scope)
        key = hashlib.sha1("|".join(ids).encode()).hexdigest()[:12]
        lexical = self._per_generation(f"lexical-probes:{key}", lambda: self._lexical_probe_scores(ids))
        return Calibration.of([self.probe_scores_of(d) for d in scope], lexical)

    def _lexical_probe_scores(self, doc_ids: list[str]) -> list[float]:
        lexical, allowed = self.index.lexical_ready(), set(doc_ids)
        return [next(iter(lexical.search(probe, 1, allowed)), ("", 0.0))[1] for probe in probe_bank()[1]]

    def _per_generation(self, name: str, build: Callable[[], T]) -> T:
        """Something derived from the whole library, rebuilt when documents come or go (the
        value of an earlier generation is dropped, so a long-running app does not pile them up)."""
        generation = f"@{self.registry.generation(self.index.collection)}"
        key = name + generation
        if key not in self._built:
            with self._lock:  # whatever an earlier generation derived (any name, any scope) is stale
                for stale in [k for k in self._built if "@" in k and not k.endswith(generation)]:
                    del self._built[stale]
        return self._once(key, build)

    def name_documents(self, question: str, scope: Sequence[DocumentRow]) -> list[NamedDocument]:
        """The documents of the scope the question names (by title, file name or acronym)."""
        if not self.settings.name_documents:
            return []
        docs = self.index.documents()
        phrases = self._per_generation("names", lambda: name_phrases(docs, self._used_elsewhere))
        in_scope = {d.doc_id for d in scope}
        found = [n for n in named_documents(question, docs, phrases) if n.doc.doc_id in in_scope]
        found = names_it_lacks(question, found, self._words_of_document)
        return names_it_writes(question, found, self._words_of_document)

    def _words_of_document(self, doc: DocumentRow) -> str:
        """A document's words, lower case, one space apart (kept per library generation): whether it
        writes a party's whole name."""

        def build() -> str:
            return " ".join(words_of(" ".join(c.text for c in self.registry.chunks_of(doc.collection, doc.doc_id))))

        return self._per_generation(f"words:{doc.doc_id}", build)

    def _used_elsewhere(self, word: str, doc_id: str) -> bool:
        return any(doc_of(c) != doc_id for c in self.index.lexical_ready().chunk_ids_with(word))

    @property
    def references(self) -> ReferenceFollower:
        """Follows cross-references and defined terms to their clauses (``answer/references.py``)."""
        collection = self.index.collection

        def clause(doc_id: str, number: str) -> str | None:
            for chunk_id, section in self.registry.chunk_ids_with_section(collection, number):
                if doc_of(chunk_id) == doc_id and section_matches(section.split(" > ")[-1], [number]):
                    return chunk_id
            return None

        def glossary(doc_id: str) -> Glossary:
            return self._per_generation(
                f"glossary:{doc_id}", lambda: glossary_of(self.registry.chunks_of(collection, doc_id))
            )

        rows = lambda ids: self.registry.chunks(collection, ids)  # noqa: E731
        return ReferenceFollower(clause, glossary, rows, self.settings.max_supporting_sources)

    def evidence_tools(self, scope: Sequence[DocumentRow]) -> EvidenceTools:
        """``Search`` and ``Lookup`` over a scope, for evidence mode (``evidence/tools.py``)."""
        collection = self.index.collection

        def clause_chunks(doc_id: str, number: str) -> list[str]:
            return [
                chunk_id
                for chunk_id, section in self.registry.chunk_ids_with_section(collection, number)
                if doc_of(chunk_id) == doc_id and section_matches(section.split(" > ")[-1], [number])
            ][:3]

        def sections_of(doc_id: str) -> list[tuple[str, str]]:
            return self._per_generation(
                f"sections:{doc_id}",
                lambda: [(c.chunk_id, c.section) for c in self.registry.chunks_of(collection, doc_id)],
            )

        def glossary(doc_id: str) -> Glossary:
            return self._per_generation(
                f"glossary:{doc_id}", lambda: glossary_of(self.registry.chunks_of(collection, doc_id))
            )

        rows = lambda ids: self.registry.chunks(collection, ids)  # noqa: E731
        return EvidenceTools(self.retriever, rows, clause_chunks, sections_of, glossary, self.calibration(scope), scope)

    # --- what the pipelines are built from --------------------------------------------------
    def answer_parts(self, settings: Settings) -> AnswerParts:
        """The answer pipeline's parts for one question's settings (the reranker only if asked)."""
        collection = self.index.collection
        return AnswerParts(
            retriever=self.retriever,
            rows=lambda ids: self.registry.chunks(collection, ids),
            vectors=self.index.vectors,
            embed_query=self.embedder.embed_query,
            embed=self.embedder.embed,
            reranker=self.reranker() if settings.rerank else None,
            thresholds=self.thresholds,
            profile=self.profile.name,
            calibration=self.calibration,
            name_documents=self.name_documents,
            probe_vectors=lambda: self.probe_vectors,
            request_vectors=lambda: self.request_vectors,
            library=self.index.documents,
            chunks_of=lambda doc: self.registry.chunks_of(doc.collection, doc.doc_id),
            references=self.references,
            neighbours=self.word_neighbours if _neighbours_wanted(settings) else None,
        )

    def ingest_parts(self) -> IngestParts:
        """The ingestion pipeline's parts. Opening the index here cleans a crash's leftovers before
        the library lock is taken."""
        engine = self.ocr_engine()
        return IngestParts(
            settings=self.settings,
            registry=self.registry,
            index=self.index,
            embedder=self.embedder,
            chunker=lambda: self.chunker,
            lock=self.library_lock,
            embedding_model=self.profile.profile.embedding.vector_id,
            probe_vectors=lambda: self.probe_vectors,
            ocr=OcrPlan(engine, self.settings.ocr, "" if engine else self.ocr_fix()),
            llm=lambda: self.llm.get()[0],
            profile=self.profile.name,
        )

    @property
    def thresholds(self) -> Thresholds:
        profile = self.profile.profile
        reranker = profile.reranker.name if profile.reranker else None
        return Thresholds.of(self.settings, profile.embedding.base_name, reranker)


def _neighbours_wanted(settings: Settings) -> bool:
    """Word neighbours choose quotes by shared words: not used when quotes are chosen by meaning alone."""
    return settings.word_neighbours and settings.quote_choice != "meaning"

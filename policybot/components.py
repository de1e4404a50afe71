"""The components factory: every model and store built once per process and settings, on first use.

Models are the expensive part (seconds to load, hundreds of MB). Each is created under a lock
the first time it is asked for and then read without one, so a long ingestion in one browser
session never blocks a question in another.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, TypeVar

from policybot.chunking import Chunker, make_chunker
from policybot.embeddings import Embedder, get_embedder
from policybot.feedback import FeedbackStore
from policybot.index import DocumentIndex
from policybot.locks import LibraryLock
from policybot.profiles import ResolvedProfile, resolve_profile
from policybot.providers import LLMProvider
from policybot.registry import Registry
from policybot.rerank import Reranker, get_reranker
from policybot.retrieval import HybridRetriever
from policybot.scoring import Thresholds
from policybot.settings import Settings

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
            log.warning("start-up clean-up skipped: %s", exc)
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
        return self._once("retriever", lambda: HybridRetriever(self.index, self.embedder, s.candidates_per_retriever, s.rrf_k))

    @property
    def feedback(self) -> FeedbackStore:
        return self._once("feedback", lambda: FeedbackStore(self.settings.home / "feedback.sqlite"))

    @property
    def llm(self) -> LLMProvider:
        return self._once("llm", lambda: LLMProvider(self.settings, self.profile.profile.llm))

    def reranker(self) -> Reranker | None:
        """The profile's cross-encoder (loaded on first use, once per process), if it has one."""
        model = self.profile.profile.reranker
        return None if model is None else get_reranker(model, self.settings)

    @property
    def thresholds(self) -> Thresholds:
        profile = self.profile.profile
        return Thresholds.of(self.settings, profile.embedding.name, profile.reranker.name if profile.reranker else None)

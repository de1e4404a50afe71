"""Sentence embeddings: one model load per process, batched, normalised vectors."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

from policybot.models.profiles import EmbeddingModel, load_source
from policybot.settings import Settings

log = logging.getLogger(__name__)

# Tokens the tokenizer adds around every input ([CLS] ... [SEP]).
SPECIAL_TOKENS = 2


def pick_device(preference: str) -> str:
    if preference != "auto":
        return preference
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except Exception:
        return "cpu"


def apply_cpu_threads(settings: Settings) -> None:
    """torch's CPU thread count is process-wide: set it before a model runs, when asked to."""
    if settings.cpu_threads is None:
        return
    import torch

    if torch.get_num_threads() != settings.cpu_threads:
        torch.set_num_threads(settings.cpu_threads)


# Texts per batch when not set: small batches pad less and run fastest on CPU cores (52.8 against
# 41.2 chunks/s for 8 and 32 on two cores); a GPU is fastest with large ones.
CPU_BATCH = 8
GPU_BATCH = 32


class Embedder:
    """Embeds texts with a sentence-transformers model, loaded lazily by ``warm_up``."""

    def __init__(self, model: EmbeddingModel, settings: Settings) -> None:
        self.model = model
        self.settings = settings
        self.batch_size = settings.embed_batch_size or CPU_BATCH  # set for the device when the model loads
        self._st: Any = None
        self._lock = threading.Lock()
        self._queries: dict[str, np.ndarray] = {}

    @property
    def name(self) -> str:
        return self.model.name

    def warm_up(self) -> None:
        """Load the model once; later calls are free."""
        if self._st is not None:
            return
        with self._lock:
            if self._st is not None:
                return
            from sentence_transformers import SentenceTransformer

            source = load_source(self.model.hf_id, self.settings)
            if not source.local:
                log.info("downloading %s (first use)", source.path)
            device = pick_device(self.settings.device)
            if self.settings.embed_batch_size is None:
                self.batch_size = CPU_BATCH if device == "cpu" else GPU_BATCH
            apply_cpu_threads(self.settings)
            # local_files_only: with the files here, no hub look-up (one costs ~70 s offline).
            self._st = SentenceTransformer(
                source.path,
                device=device,
                trust_remote_code=self.model.trust_remote_code,
                local_files_only=source.local,
            )
            log.info("loaded %s on %s", self.model.name, device)

    @property
    def tokenizer(self) -> Any:
        self.warm_up()
        return self._st.tokenizer

    @property
    def max_tokens(self) -> int:
        """Content tokens the model reads per input, after its special tokens."""
        self.warm_up()
        window = min(self.model.max_tokens, int(self._st.max_seq_length or self.model.max_tokens))
        return window - SPECIAL_TOKENS

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encoded = self.tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        self.warm_up()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._st.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector, remembered: the first pass, the relevance check and the
        follow-up rounds of one question all embed the same text."""
        cached = self._queries.get(text)
        if cached is None:
            cached = self.embed([text])[0]
            with self._lock:
                if len(self._queries) >= 256:
                    self._queries.pop(next(iter(self._queries)), None)
                self._queries[text] = cached
        return cached

    @property
    def dimension(self) -> int:
        self.warm_up()
        getter = getattr(self._st, "get_embedding_dimension", None) or self._st.get_sentence_embedding_dimension
        return int(getter())

    def as_langchain(self) -> "LangChainEmbeddings":
        return LangChainEmbeddings(self)


class LangChainEmbeddings(Embeddings):
    """Adapter so LangChain components (SemanticChunker) reuse the loaded model."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_query(text).tolist()


_EMBEDDERS: dict[tuple[str, str, str], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(model: EmbeddingModel, settings: Settings) -> Embedder:
    """The process-wide embedder for a model: loaded once, reused by every caller."""
    key = (model.hf_id, settings.device, str(Path(settings.resolved_models_dir).resolve()))
    with _EMBEDDERS_LOCK:
        embedder = _EMBEDDERS.get(key)
        if embedder is None:
            embedder = _EMBEDDERS[key] = Embedder(model, settings)
        return embedder

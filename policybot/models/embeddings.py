"""Sentence embeddings: one model load per process, batched, normalised vectors.

Two backends run the same model: torch (sentence-transformers) and onnxruntime on the model's
ONNX export (``models.onnx``). ``auto`` takes the export on a CPU when there is one: the same
vectors, without torch's ~4 s of imports before the first question.
"""

from __future__ import annotations

import copy
import logging
import threading
from dataclasses import dataclass
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
# 41.2 chunks/s for 8 and 32 on two cores); a GPU is fastest with large ones. onnxruntime runs
# fastest one text at a time (no padding at all: 41.9 against 36.9 chunks/s for 8, fp32).
CPU_BATCH = 8
GPU_BATCH = 32
ONNX_BATCH = 1


def choose_backend(model: EmbeddingModel, settings: Settings) -> str:
    """``torch``, ``onnx`` or ``onnx-int8`` for this model here (see ``Settings.embedding_backend``)."""
    return _backend_and_export(model, settings)[0]


def _backend_and_export(model: EmbeddingModel, settings: Settings) -> tuple[str, Any]:
    """The backend, and the ONNX export it runs when there is one (found once: a json and a stat)."""
    from policybot.models.onnx import find_export, nvidia_visible

    if model.vectors == "int8":  # the vector family decides: int8 vectors come from the int8 export only
        return "onnx-int8", find_export(model, settings)
    wanted = settings.embedding_backend
    if wanted == "torch":
        return "torch", None
    if wanted == "onnx":
        return "onnx", find_export(model, settings)
    on_cpu = settings.device == "cpu" or (settings.device == "auto" and not nvidia_visible())
    export = find_export(model, settings) if on_cpu else None
    return ("onnx", export) if export is not None and export.same_vectors else ("torch", None)


@dataclass(frozen=True)
class TokenVectors:
    """A text's word pieces as the model read them (special tokens left out, truncated to the
    model's window) and their contextual vectors, unit length, one row per piece."""

    pieces: tuple[str, ...]
    vectors: np.ndarray


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class _TorchEncoder:
    """sentence-transformers on torch."""

    def __init__(self, model: EmbeddingModel, settings: Settings, device: str) -> None:
        from sentence_transformers import SentenceTransformer

        source = load_source(model.hf_id, settings)
        if not source.local:
            log.info("downloading %s (first use)", source.path)
        apply_cpu_threads(settings)
        # local_files_only: with the files here, no hub look-up (one costs ~70 s offline).
        self.st = SentenceTransformer(
            source.path, device=device, trust_remote_code=model.trust_remote_code, local_files_only=source.local
        )
        self.max_seq_length = int(self.st.max_seq_length or model.max_tokens)
        getter = getattr(self.st, "get_embedding_dimension", None) or self.st.get_sentence_embedding_dimension
        self.dimension = int(getter() or 0)
        # A fast tokenizer keeps its truncation and padding as state, set by each call that asks for
        # other ones. Counting and piece reading (no padding) on the model's own tokenizer could switch
        # padding off under a batch another thread is encoding: "Unable to create tensor". So they
        # use a copy of their own, one call at a time; the model's tokenizer is only ever called with
        # the model's settings.
        self._plain = copy.deepcopy(self.st.tokenizer)
        self._plain_lock = threading.Lock()

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        with self._plain_lock:
            encoded = self._plain(list(texts), add_special_tokens=False, truncation=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        vectors = self.st.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def pieces(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """The word pieces ``token_vectors`` gives, from the tokenizer alone (no model pass): the
        same truncation, and the same frame tokens left out (``_frame_ids``)."""
        tokenizer = self._plain
        frame = _frame_ids(tokenizer)
        with self._plain_lock:
            read = [tokenizer(t, truncation=True, max_length=self.max_seq_length, verbose=False) for t in texts]
        return [tuple(tokenizer.convert_ids_to_tokens([i for i in r["input_ids"] if i not in frame])) for r in read]

    def token_vectors(self, texts: Sequence[str], batch_size: int) -> list[TokenVectors]:
        """The model's word pieces and last hidden states, from one pass: ``output_value=None``
        returns each text's ``input_ids`` beside its ``token_embeddings``, so nothing is tokenized
        twice. The frame tokens (``_frame_ids``) and padding are left out."""
        tokenizer = self.st.tokenizer
        frame = _frame_ids(tokenizer)
        features: list[dict[str, Any]] = self.st.encode(  # type: ignore[assignment]  # output_value=None: dicts
            list(texts), batch_size=batch_size, output_value=None, convert_to_numpy=False, show_progress_bar=False
        )
        out = []
        for one in features:
            ids, mask = one["input_ids"].tolist(), one["attention_mask"].tolist()
            keep = [i for i, (token, real) in enumerate(zip(ids, mask)) if real and token not in frame]
            pieces = tokenizer.convert_ids_to_tokens([ids[i] for i in keep])
            rows = one["token_embeddings"].detach().float().cpu().numpy()[keep]
            out.append(TokenVectors(tuple(pieces), unit_rows(rows)))
        return out


def _frame_ids(tokenizer: Any) -> set[int]:
    """The ids the tokenizer wraps every text in ([CLS], [SEP], <s>, </s>): one rule for the pieces
    read with and without the model, so the two can never disagree. Padding goes by its mask."""
    ids = (tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
    return {i for i in ids if i is not None}


class Embedder:
    """Embeds texts with a sentence-embedding model, loaded lazily by ``warm_up``."""

    def __init__(self, model: EmbeddingModel, settings: Settings) -> None:
        self.model = model
        self.settings = settings
        self.batch_size = settings.embed_batch_size or CPU_BATCH  # set for the backend when the model loads
        self.backend = ""  # torch, onnx or onnx-int8, once loaded
        self._encoder: Any = None
        self._lock = threading.Lock()
        self._queries: dict[str, np.ndarray] = {}

    @property
    def name(self) -> str:
        return self.model.name

    def warm_up(self) -> None:
        """Load the model once; later calls are free."""
        if self._encoder is not None:
            return
        with self._lock:
            if self._encoder is not None:
                return
            backend, export = _backend_and_export(self.model, self.settings)
            if backend == "torch":
                device = pick_device(self.settings.device)
                encoder: Any = _TorchEncoder(self.model, self.settings, device)
                default_batch = CPU_BATCH if device == "cpu" else GPU_BATCH
            else:
                from policybot.models.onnx import OnnxEncoder, OnnxUnavailable, export_problem

                if export is None:
                    raise OnnxUnavailable(
                        f"the {backend} embedding backend cannot start: {export_problem(self.model, self.settings)}"
                    )
                device = "cpu"
                encoder = OnnxEncoder(export, int8=backend == "onnx-int8", threads=self.settings.cpu_threads)
                default_batch = ONNX_BATCH
            self.batch_size = self.settings.embed_batch_size or default_batch
            self.backend = backend
            self._encoder = encoder
            log.info("loaded %s on %s (%s)", self.model.name, device, backend)

    @property
    def max_tokens(self) -> int:
        """Content tokens the model reads per input, after its special tokens."""
        self.warm_up()
        window = min(self.model.max_tokens, int(self._encoder.max_seq_length or self.model.max_tokens))
        return window - SPECIAL_TOKENS

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        self.warm_up()
        return list(self._encoder.count_tokens(texts))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        self.warm_up()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray(self._encoder.encode(list(texts), self.batch_size), dtype=np.float32)

    def token_vectors(self, texts: Sequence[str]) -> list[TokenVectors]:
        """Each text's word pieces and their contextual vectors (``TokenVectors``): what late
        interaction compares (``answer/token_match.py``)."""
        self.warm_up()
        if not texts:
            return []
        return list(self._encoder.token_vectors(list(texts), self.batch_size))

    def pieces(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """Each text's word pieces as ``token_vectors`` gives them, without running the model:
        enough to count which passages hold a piece."""
        self.warm_up()
        return list(self._encoder.pieces(list(texts))) if texts else []

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
        return int(self._encoder.dimension)

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


_EMBEDDERS: dict[tuple[str, str, str, str, int | None, int | None], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(model: EmbeddingModel, settings: Settings) -> Embedder:
    """The process-wide embedder for a model: loaded once, reused by every caller. Libraries with
    models folders of their own share it when it loads from the same files: a torch model from
    one folder (the packaged MiniLM, a shared download) is one model, whichever library asks; an
    ONNX export lives in a models folder, so that folder names it. A library that sets its own batch
    size or threads gets an embedder of its own."""
    backend, _ = _backend_and_export(model, settings)
    if backend == "torch":
        source = load_source(model.hf_id, settings)
        origin = str(Path(source.path).resolve()) if source.local else source.path
    else:
        origin = str(Path(settings.resolved_models_dir).resolve())
    key = (model.vector_id, settings.device, backend, origin, settings.embed_batch_size, settings.cpu_threads)
    with _EMBEDDERS_LOCK:
        embedder = _EMBEDDERS.get(key)
        if embedder is None:
            embedder = _EMBEDDERS[key] = Embedder(model, settings)
        return embedder

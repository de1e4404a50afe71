"""Cross-encoder reranking and the paper's top-p cut-off.

A reranker reads a query and one passage together and scores how well the passage
answers the query. Two backends share one small interface (Haystack style: a light
``__init__``, ``warm_up()`` loads the model once, ``run(query, texts)`` scores):

* :class:`FlagReranker` -- the paper profile's ``BAAI/bge-reranker-base`` through
  ``FlagEmbedding`` (an optional extra: ``pip install -e '.[paper]'``);
* :class:`CrossEncoderReranker` -- the same kind of model through sentence-transformers'
  ``CrossEncoder``, which is always installed.

Scores are in [0, 1] (a sigmoid of the model's relevance logit), higher is more
relevant, one per passage and in the order given. Query and passage are truncated
together to the model's window (``RerankerModel.max_tokens``), never rejected.

``policybot.answer.selection.top_p`` then decides how many of the best-first candidates to keep.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from policybot.models.embeddings import pick_device
from policybot.models.profiles import ModelSource, RerankerModel, load_source
from policybot.settings import Settings

log = logging.getLogger(__name__)

BATCH_SIZE = 16
BACKENDS = ("auto", "flag", "cross-encoder")
PAPER_EXTRA_HINT = "pip install -e '.[paper]'"


def _sigmoid(values: np.ndarray) -> np.ndarray:
    """Logistic function without overflow warnings for large |x|."""
    return 0.5 * (1.0 + np.tanh(0.5 * values))


def _as_unit_scores(values: Any, expected: int) -> list[float]:
    """A backend's output (float, list, array) as ``expected`` floats in [0, 1]."""
    scores = np.atleast_1d(np.asarray(values, dtype=np.float64)).ravel()
    if scores.shape[0] != expected:
        raise RuntimeError(f"reranker returned {scores.shape[0]} scores for {expected} passages")
    scores = np.clip(np.nan_to_num(scores, nan=0.0), 0.0, 1.0)
    return [float(s) for s in scores]


class Reranker:
    """Scores (query, passage) pairs; subclasses load a model in ``_load`` and score in ``_score``."""

    backend = "base"

    def __init__(
        self,
        model: RerankerModel,
        settings: Settings,
        path: str | os.PathLike[str] | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.model = model
        self.settings = settings
        self.path = str(path) if path is not None else None
        self.batch_size = batch_size
        self.device: str | None = None
        self._impl: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def max_tokens(self) -> int:
        """Word pieces the model reads per pair: query, passage and special tokens together."""
        return self.model.max_tokens

    def source(self) -> ModelSource:
        """What to load: an explicit path, the model's local files, else its hub id (downloads)."""
        source = load_source(self.model.hf_id, self.settings, self.path)
        if not source.local:
            log.info("downloading %s (first use)", source.path)
        return source

    def warm_up(self) -> None:
        """Load the model once; later calls are free."""
        if self._impl is not None:
            return
        with self._lock:
            if self._impl is not None:
                return
            self._preflight()  # fail on a missing library before any lookup or download
            device = pick_device(self.settings.device)
            impl = self._load(self.source(), device)
            self.device = device
            self._impl = impl
            log.info("loaded reranker %s (%s) on %s", self.model.name, self.backend, device)

    def run(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score in [0, 1] per text, in the order given; higher means more relevant."""
        if not texts:
            return []
        self.warm_up()
        scores: list[float] = []
        for start in range(0, len(texts), self.batch_size):
            pairs = [(query, text) for text in texts[start : start + self.batch_size]]
            scores.extend(_as_unit_scores(self._score(pairs), len(pairs)))
        return scores

    def _preflight(self) -> None:
        """Import the backend library; raise a clear error when it is missing."""

    def _load(self, source: ModelSource, device: str) -> Any:
        raise NotImplementedError

    def _score(self, pairs: list[tuple[str, str]]) -> Any:
        raise NotImplementedError


class FlagReranker(Reranker):
    """The paper's reranker: ``FlagEmbedding.FlagReranker`` with sigmoid-normalised scores."""

    backend = "flag"

    def _preflight(self) -> None:
        self._flag_class()

    def _flag_class(self) -> Any:
        try:
            from FlagEmbedding import FlagReranker as _FlagReranker
        except ImportError as exc:
            raise RuntimeError(
                f"The '{self.backend}' reranker for {self.model.name} needs FlagEmbedding, which is not "
                f"installed. Install the paper extra: {PAPER_EXTRA_HINT}"
            ) from exc
        return _FlagReranker

    def _load(self, source: ModelSource, device: str) -> Any:
        _FlagReranker = self._flag_class()
        kwargs: dict[str, Any] = {"use_fp16": device.startswith("cuda")}
        params = _parameters(_FlagReranker)
        # FlagEmbedding >= 1.3 takes a device list (and spawns one process per GPU by
        # default); 1.2 took a single device. Pin ours either way.
        if "devices" in params:
            kwargs["devices"] = [device]
        elif "device" in params:
            kwargs["device"] = device
        return _FlagReranker(source.path, **kwargs)

    def _score(self, pairs: list[tuple[str, str]]) -> Any:
        # normalize=True applies the sigmoid; a single pair comes back as a bare float.
        return self._impl.compute_score(
            [list(pair) for pair in pairs],
            batch_size=self.batch_size,
            max_length=self.max_tokens,
            normalize=True,
        )


class CrossEncoderReranker(Reranker):
    """A cross-encoder through sentence-transformers, scores mapped into [0, 1]."""

    backend = "cross-encoder"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._outputs_probabilities = False
        self._num_labels = 1

    def _load(self, source: ModelSource, device: str) -> Any:
        from sentence_transformers import CrossEncoder

        encoder = CrossEncoder(source.path, device=device, max_length=self.max_tokens, local_files_only=source.local)
        self._num_labels = int(getattr(encoder, "num_labels", 1) or 1)
        # sentence-transformers >= 4 calls it activation_fn, older versions
        # default_activation_function; a single-label head defaults to a sigmoid.
        activation = getattr(encoder, "activation_fn", None)
        if activation is None:
            activation = getattr(encoder, "default_activation_function", None)
        self._outputs_probabilities = self._num_labels == 1 and _is_sigmoid(activation)
        return encoder

    def _score(self, pairs: list[tuple[str, str]]) -> Any:
        import torch

        kwargs: dict[str, Any] = {
            "batch_size": self.batch_size,
            "convert_to_numpy": True,
            "show_progress_bar": False,
        }
        if not self._outputs_probabilities:
            kwargs["activation_fn"] = torch.nn.Identity()  # raw logits; we map them below
        raw = np.asarray(self._impl.predict(pairs, **kwargs), dtype=np.float64)
        if self._outputs_probabilities:
            return raw
        if raw.ndim == 2 and raw.shape[1] > 1:
            # Several labels: the probability of the last one ("relevant").
            shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
            return shifted[:, -1] / shifted.sum(axis=1)
        return _sigmoid(raw.reshape(-1))


def _is_sigmoid(activation: Any) -> bool:
    if activation is None:
        return False
    try:
        import torch

        if isinstance(activation, torch.nn.Sigmoid) or activation is torch.sigmoid:
            return True
    except ImportError:  # pragma: no cover - torch comes with sentence-transformers
        pass
    return type(activation).__name__.lower() == "sigmoid"


def _parameters(callable_: Any) -> set[str]:
    import inspect

    try:
        return set(inspect.signature(callable_).parameters)
    except (TypeError, ValueError):
        return set()


def flag_embedding_available() -> bool:
    """Whether FlagEmbedding can be imported, without importing it (it is slow to import)."""
    if "FlagEmbedding" in sys.modules:
        return sys.modules["FlagEmbedding"] is not None
    try:
        return importlib.util.find_spec("FlagEmbedding") is not None
    except (ImportError, ValueError):
        return False


def resolve_backend(backend: str) -> str:
    """``auto`` is FlagEmbedding when installed, else sentence-transformers' CrossEncoder."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown reranker backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return "flag" if flag_embedding_available() else "cross-encoder"
    return backend


_RERANKERS: dict[tuple[str, ...], Reranker] = {}
_RERANKERS_LOCK = threading.Lock()


def get_reranker(
    model: RerankerModel,
    settings: Settings,
    backend: str = "auto",
    path: str | os.PathLike[str] | None = None,
) -> Reranker:
    """The process-wide reranker for a model: loaded once, reused by every caller."""
    resolved = resolve_backend(backend)
    key = (
        resolved,
        model.hf_id,
        str(model.max_tokens),
        settings.device,
        str(Path(settings.resolved_models_dir).resolve()),
        str(path) if path is not None else "",
    )
    with _RERANKERS_LOCK:
        reranker = _RERANKERS.get(key)
        if reranker is None:
            cls = FlagReranker if resolved == "flag" else CrossEncoderReranker
            reranker = _RERANKERS[key] = cls(model, settings, path=path)
        return reranker

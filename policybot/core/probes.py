"""The off-topic probe bank: what questions about something else entirely (cooking, sport,
astronomy …, ``calibration/offtopic-probes.txt``) score against a library's passages, by the
embedding model (per document, at ingestion) and by BM25 (per scope). It sets the scale on which
``answer.bands`` decides whether a question is out of scope and on which ``answer.retrieval``
fuses dense and BM25 scores: the library calibrates itself, no constant fitted to one corpus."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Sequence

import numpy as np


@lru_cache(maxsize=1)
def probe_bank() -> tuple[str, tuple[str, ...]]:
    """The probe questions, and an id that changes when they do (stored scores then go stale)."""
    text = resources.files("policybot").joinpath("calibration", "offtopic-probes.txt").read_text(encoding="utf-8")
    probes = tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return hashlib.sha1("\n".join(probes).encode()).hexdigest()[:10], probes


@lru_cache(maxsize=1)
def request_probes() -> tuple[str, ...]:
    """Requests for the world outside the documents ("can you book me a table for two"): evidence of
    what a question is near, beside the topic probes, never part of the floors or the scale."""
    text = resources.files("policybot").joinpath("calibration", "request-probes.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def probe_scores(chunk_vectors: np.ndarray, probe_vectors: np.ndarray) -> list[float]:
    """For each probe, its best cosine over a document's chunks (unit vectors: dot products)."""
    if len(chunk_vectors) == 0:
        return [0.0] * len(probe_vectors)
    return [round(float(x), 4) for x in (probe_vectors @ chunk_vectors.T).max(axis=1)]


def encode_probes(bank: str, model: str, scores: Sequence[float]) -> str:
    return json.dumps({"bank": bank, "model": model, "scores": list(scores)})


def decode_probes(stored: str | None, bank: str, model: str) -> list[float] | None:
    """Stored probe scores, or None when missing or made with another bank or model."""
    if not stored:
        return None
    try:
        data = json.loads(stored)
    except ValueError:
        return None
    if data.get("bank") != bank or data.get("model") != model:
        return None
    return [float(x) for x in data.get("scores", [])]


@dataclass(frozen=True)
class Calibration:
    """What off-topic questions score in a scope: per probe, its best cosine and its best BM25
    score over the scope's passages."""

    dense: tuple[float, ...]
    lexical: tuple[float, ...] = ()

    @classmethod
    def of(cls, per_document: Sequence[Sequence[float]], lexical: Sequence[float] = ()) -> Calibration:
        """A scope's calibration: the best cosine over the scope is the best of its documents'."""
        dense = (
            tuple(float(x) for x in np.max(np.asarray(per_document, dtype=np.float64), axis=0)) if per_document else ()
        )
        return cls(dense, tuple(float(x) for x in lexical))

    def standardise(self, kind: str, scores: Sequence[float]) -> list[float]:
        """Scores as z-scores against what the off-topic probes score by the same measure: on
        this scale a cosine and a BM25 score mean the same thing ("this far above off-topic")."""
        probes = self.dense if kind == "dense" else self.lexical
        if len(probes) < 2:
            return [float(x) for x in scores]
        mean, sd = float(np.mean(probes)), float(np.std(probes)) or 1.0
        return [(float(x) - mean) / sd for x in scores]

    def spread(self) -> float:
        """How widely the off-topic probes' best cosines vary in this scope (their standard deviation)."""
        return float(np.std(self.dense)) if len(self.dense) > 1 else 0.0

    def dense_floor(self, q: float) -> float:
        return float(np.quantile(self.dense, q)) if self.dense else 0.0

    def lexical_floor(self, q: float) -> float:
        return float(np.quantile(self.lexical, q)) if self.lexical else 0.0

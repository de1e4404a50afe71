"""Deciding in bands, not at a cliff: a question is out of scope (refused), uncertain (answered
with a caution, or left to the LLM to decide from the passages) or confident (answered).

A fixed cosine threshold does not carry: cosines depend on the embedding model and on the
corpus (a library of long legal clauses scores everything lower than one of short FAQs), and
BM25 scores on the corpus's statistics. So the scale is set by the library itself: a bank of
off-topic probe questions (cooking, sport, astronomy …, ``calibration/offtopic-probes.txt``) is
scored against the documents searched, by the embedding model (per document, at ingestion) and
by BM25 (per scope, when the library changes). A question whose best passage is no closer in
meaning than what 95 % of off-topic questions reach in the same documents, and whose best BM25
match is no stronger than any off-topic question's, is clearly outside them. One on which
dense retrieval and BM25 agree about the best passage is a confident match (agreement is what
predicts a good first pass); the rest is uncertain.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal, Sequence

import numpy as np

Band = Literal["confident", "uncertain", "out_of_scope"]


@lru_cache(maxsize=1)
def probe_bank() -> tuple[str, tuple[str, ...]]:
    """The probe questions, and an id that changes when they do (stored scores then go stale)."""
    text = resources.files("policybot").joinpath("calibration", "offtopic-probes.txt").read_text(encoding="utf-8")
    probes = tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return hashlib.sha1("\n".join(probes).encode()).hexdigest()[:10], probes


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
        dense = tuple(float(x) for x in np.max(np.asarray(per_document, dtype=np.float64), axis=0)) if per_document else ()
        return cls(dense, tuple(float(x) for x in lexical))

    def standardise(self, kind: str, scores: Sequence[float]) -> list[float]:
        """Scores as z-scores against what the off-topic probes score by the same measure: on
        this scale a cosine and a BM25 score mean the same thing ("this far above off-topic")."""
        probes = self.dense if kind == "dense" else self.lexical
        if len(probes) < 2:
            return [float(x) for x in scores]
        mean, sd = float(np.mean(probes)), float(np.std(probes)) or 1.0
        return [(float(x) - mean) / sd for x in scores]

    def dense_floor(self, q: float) -> float:
        return float(np.quantile(self.dense, q)) if self.dense else 0.0

    def lexical_floor(self, q: float) -> float:
        return float(np.quantile(self.lexical, q)) if self.lexical else 0.0


# Out of scope: no closer in meaning than this share of the off-topic probes, and no stronger a
# word match than the best of them. Not fitted to any set: "no closer than 95 % of questions
# about something else entirely" is the definition. The word-match test only rescues: an
# off-topic question sharing a few common words with the documents ("won", "world") still
# reaches the 95th percentile of the probes' BM25, never their maximum.
OUT_QUANTILE = 0.95
LEXICAL_RESCUE_QUANTILE = 1.0


@dataclass(frozen=True)
class Signals:
    """What is known about a question's best passages when the band is decided."""

    cosine: float  # best cosine of the question with a kept passage
    lexical: float  # best BM25 score of the question over the scope
    agreement: bool  # dense retrieval and BM25 put the same passage first
    clause_led: bool  # a clause the question names leads the ranking


def decide(signals: Signals, calibration: Calibration, out_quantile: float = OUT_QUANTILE) -> tuple[Band, float]:
    """The band, and the cosine at or below which the question is out of scope (when BM25 too
    finds nothing better than the off-topic probes do)."""
    floor = calibration.dense_floor(out_quantile)
    if signals.clause_led:
        return "confident", floor  # the user pointed at the clause
    if signals.cosine <= floor and signals.lexical <= calibration.lexical_floor(LEXICAL_RESCUE_QUANTILE):
        return "out_of_scope", floor
    return ("confident" if signals.agreement else "uncertain"), floor

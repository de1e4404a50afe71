"""Scoring the selected passages against the question, with the score's own refusal threshold.

Two scorers share one interface: the profile's cross-encoder (a probability that the passage
answers the question) or, without one, the cosine similarity of the question's and the
passage's embeddings. Each owns the threshold measured for it (``eval/decisions/``), so the
refusal decision never compares a score with another model's threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable, Protocol, Sequence

import numpy as np

from policybot.answer.selection import top_p
from policybot.core.passages import Passage
from policybot.models.rerank import Reranker
from policybot.settings import Settings


class ScoreSource(str, Enum):
    COSINE = "cosine"
    RERANKER = "reranker"


@dataclass
class Scored:
    """The passages kept after scoring, best first, and the best relevance among those scored."""

    candidates: list[Passage]
    relevance: float
    source: ScoreSource
    threshold: float


class Scorer(Protocol):
    source: ScoreSource
    threshold: float

    def run(self, question: str, candidates: list[Passage]) -> Scored: ...


VectorLookup = Callable[[Sequence[str]], dict[str, np.ndarray]]
QueryEmbedder = Callable[[str], np.ndarray]


class CosineScorer:
    """Cosine similarity of question and passage; the fused order is kept, cut to the most
    passages an answer uses (``rerank_max_chunks``)."""

    source = ScoreSource.COSINE

    def __init__(self, embed_query: QueryEmbedder, vectors: VectorLookup, threshold: float, keep: int) -> None:
        self.embed_query = embed_query
        self.vectors = vectors
        self.threshold = threshold
        self.keep = keep

    def run(self, question: str, candidates: list[Passage]) -> Scored:
        cosines = self.cosines(question, candidates)
        for c, cosine in zip(candidates, cosines):
            c.score = cosine
        return Scored(candidates[: self.keep], max(cosines, default=0.0), self.source, self.threshold)

    def cosines(self, question: str, candidates: list[Passage]) -> list[float]:
        if not candidates:
            return []
        vectors = self.vectors([c.chunk.chunk_id for c in candidates])
        q = self.embed_query(question)
        return [float(vectors[c.chunk.chunk_id] @ q) if c.chunk.chunk_id in vectors else 0.0 for c in candidates]


class CrossEncoderScorer:
    """The reranker's probability; candidates re-sorted by it and cut with the second top-p."""

    source = ScoreSource.RERANKER

    def __init__(self, reranker: Reranker, threshold: float, settings: Settings) -> None:
        self.reranker = reranker
        self.threshold = threshold
        self.settings = settings

    def run(self, question: str, candidates: list[Passage]) -> Scored:
        s = self.settings
        scores = self.reranker.run(question, [c.chunk.text for c in candidates])
        for c, score in zip(candidates, scores):
            c.score = float(score)
        ranked = sorted(candidates, key=lambda c: -c.score)
        keep = top_p(
            [c.score for c in ranked], s.rerank_top_p, s.rerank_temperature, s.rerank_min_chunks, s.rerank_max_chunks
        )
        return Scored(ranked[:keep], ranked[0].score if ranked else 0.0, self.source, self.threshold)


@dataclass(frozen=True)
class Thresholds:
    """The measured thresholds for the models in use (``eval/decisions/``)."""

    cosine: float  # refuse below this cosine (the embedding model's)
    reranker: float  # refuse below this reranker probability
    confident: float  # skip expansion when dense and BM25 agree and the top cosine reaches this

    @classmethod
    def of(cls, settings: Settings, embedding: str, reranker: str | None) -> Thresholds:
        return cls(
            cosine=settings.refusal_thresholds.get(embedding, 0.3),
            reranker=settings.refusal_thresholds.get(reranker or "bge-reranker-base", 0.1),
            confident=settings.confident_thresholds.get(embedding, 1.01),
        )

"""Retrieval stages: ranked lists of chunks from the dense index, BM25 and the clauses a question
names, and the rank fusion that joins any number of such lists.

Each list is keyed by what made it (``ListKey``: which retriever, for which of the plan's
queries), so fusion weights are chosen by meaning, never by parsing list names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Literal, Mapping, Sequence, TypeVar

from policybot.embeddings import Embedder
from policybot.index import DocumentIndex
from policybot.query import section_matches
from policybot.registry import doc_of

Ranked = list[tuple[str, float]]  # (chunk_id, score), best first
K = TypeVar("K", bound=Hashable)  # what names a ranked list
ListKind = Literal["dense", "lexical", "clause"]


@dataclass(frozen=True)
class ListKey:
    """Which retriever made a ranked list, and for which query (0: the question itself)."""

    kind: ListKind
    query: int = 0


RankedLists = dict[ListKey, Ranked]


class DenseRetriever:
    """Nearest chunks by cosine similarity of sentence embeddings."""

    def __init__(self, index: DocumentIndex, embedder: Embedder) -> None:
        self.index = index
        self.embedder = embedder

    def run(self, query: str, k: int, doc_ids: Sequence[str]) -> Ranked:
        vector = self.embedder.embed_query(query)
        return self.index.store.query(vector, k, doc_ids)


class LexicalRetriever:
    """Best chunks by BM25 over the same chunks."""

    def __init__(self, index: DocumentIndex) -> None:
        self.index = index

    def run(self, query: str, k: int, doc_ids: Sequence[str]) -> Ranked:
        return self.index.lexical_ready().search(query, k, set(doc_ids))


class ClauseRetriever:
    """Chunks of the clauses a question names ("clause 5.2", "Section VII"), in document order."""

    def __init__(self, index: DocumentIndex) -> None:
        self.index = index

    def run(self, refs: Sequence[str], doc_ids: Sequence[str], limit: int = 20) -> Ranked:
        allowed = set(doc_ids)
        out: Ranked = []
        for ref in refs:
            for chunk_id, section in self.index.registry.chunk_ids_with_section(self.index.collection, ref):
                if doc_of(chunk_id) in allowed and section_matches(section, [ref]) and (chunk_id, 1.0) not in out:
                    out.append((chunk_id, 1.0))
        return out[:limit]


@dataclass
class Fused:
    chunk_id: str
    score: float
    ranks: dict[Hashable, int] = field(default_factory=dict)  # list key -> 1-based rank
    scores: dict[Hashable, float] = field(default_factory=dict)


class RankFusion:
    """Join ranked lists: the sum over lists of weight / (k + rank) (Cormack et al., 2009)."""

    def __init__(self, k: int = 60) -> None:
        self.k = k

    def run(self, lists: Mapping[K, Ranked], weights: Mapping[K, float] | None = None) -> list[Fused]:
        fused: dict[str, Fused] = {}
        for key, ranked in lists.items():
            weight = (weights or {}).get(key, 1.0)
            for rank, (chunk_id, score) in enumerate(ranked, start=1):
                item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
                item.score += weight / (self.k + rank)
                item.ranks[key] = rank
                item.scores[key] = score
        # Ties (same fused score) go to the chunk ranked best in any list, then by id for stability.
        return sorted(fused.values(), key=lambda f: (-f.score, min(f.ranks.values()), f.chunk_id))


def fusion_weights(lists: Sequence[ListKey], original_query_weight: float, planned: bool) -> dict[ListKey, float]:
    """RRF weights for a question's lists.

    When the plan's queries were searched (``planned``: not just the first pass again), the
    question's own lists count ``original_query_weight`` times each rewrite's, so weak
    rewrites cannot drown it. A clause named in the question counts as much as all the
    other lists together.
    """
    searched = [key for key in lists if key.kind != "clause"]
    weights = {key: original_query_weight for key in searched if planned and key.query == 0}
    weights.update({key: float(len(searched)) for key in lists if key.kind == "clause"})
    return weights


class HybridRetriever:
    """Dense + BM25 candidates for a query: as separate lists, or fused with RRF."""

    def __init__(self, index: DocumentIndex, embedder: Embedder, candidates: int = 50, rrf_k: int = 60) -> None:
        self.dense = DenseRetriever(index, embedder)
        self.lexical = LexicalRetriever(index)
        self.clauses = ClauseRetriever(index)
        self.fusion = RankFusion(rrf_k)
        self.candidates = candidates

    def lists(self, query: str, doc_ids: Sequence[str], query_index: int = 0) -> RankedLists:
        """The dense and BM25 lists of one query."""
        return {
            ListKey("dense", query_index): self.dense.run(query, self.candidates, doc_ids),
            ListKey("lexical", query_index): self.lexical.run(query, self.candidates, doc_ids),
        }

    def run(self, query: str, k: int, doc_ids: Sequence[str]) -> list[Fused]:
        return self.fusion.run(self.lists(query, doc_ids))[:k]

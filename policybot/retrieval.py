"""Retrieval components: dense (Chroma), lexical (BM25), and rank fusion joining them.

Each component has a light constructor and a ``run`` method. Fusion is a join mode over
any number of ranked lists (later: one per query rewrite), not a special case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Sequence

from policybot.embeddings import Embedder
from policybot.index import DocumentIndex

Ranked = list[tuple[str, float]]  # (chunk_id, score), best first


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
        from policybot.query import section_matches

        allowed = set(doc_ids)
        out: Ranked = []
        for ref in refs:
            for chunk_id, section in self.index.registry.chunk_ids_with_section(self.index.collection, ref):
                if chunk_id.split(":", 1)[0] in allowed and section_matches(section, [ref]) and (chunk_id, 1.0) not in out:
                    out.append((chunk_id, 1.0))
        return out[:limit]


@dataclass
class Fused:
    chunk_id: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # list name -> 1-based rank
    scores: dict[str, float] = field(default_factory=dict)


class RankFusion:
    """Join ranked lists. ``rrf``: sum of weight / (k + rank) (Cormack et al., 2009)."""

    def __init__(self, mode: Literal["rrf"] = "rrf", k: int = 60) -> None:
        self.mode = mode
        self.k = k

    def run(self, lists: dict[str, Ranked], weights: dict[str, float] | None = None) -> list[Fused]:
        fused: dict[str, Fused] = {}
        for name, ranked in lists.items():
            weight = (weights or {}).get(name, 1.0)
            for rank, (chunk_id, score) in enumerate(ranked, start=1):
                item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
                item.score += weight / (self.k + rank)
                item.ranks[name] = rank
                item.scores[name] = score
        # Ties (same fused score) go to the chunk ranked best in any list, then by id for stability.
        return sorted(fused.values(), key=lambda f: (-f.score, min(f.ranks.values()), f.chunk_id))


class HybridRetriever:
    """Dense + BM25 candidates for a query, fused with RRF."""

    def __init__(self, index: DocumentIndex, embedder: Embedder, candidates: int = 50, rrf_k: int = 60) -> None:
        self.dense = DenseRetriever(index, embedder)
        self.lexical = LexicalRetriever(index)
        self.fusion = RankFusion("rrf", rrf_k)
        self.candidates = candidates

    def run(self, query: str, k: int, doc_ids: Sequence[str]) -> list[Fused]:
        lists = {
            "dense": self.dense.run(query, self.candidates, doc_ids),
            "lexical": self.lexical.run(query, self.candidates, doc_ids),
        }
        return self.fusion.run(lists)[:k]

"""Exact nearest-neighbour search over the library's stored vectors.

Chroma searches an approximate (HNSW) graph. On the dev libraries (200-1,500 chunks) it usually
returns the true nearest passages, but not always, and not the same way in every process: in one
process of three, over the 486-chunk conversations library, "What wind speed counts as a storm on my
policy?" came back without its two nearest passages (cosines .66 and .45, the Storm definition and
its cover), led by one at .40. The same question then got another answer, and the follow-up rule
another decision. A citizen's library is small enough to search exactly: every vector is in the
registry already (BM25 reads the same rows), a matrix product over 50,000 MiniLM vectors takes a few
milliseconds, and the result is the same in every process. Above ``exact_search_max_chunks`` (and for
libraries indexed before vectors were kept in the registry) the search stays with Chroma
(eval/decisions/2026-11-29-exact-dense-search.md)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class VectorMatrix:
    """Every chunk's unit vector, with its chunk id and the index of its document."""

    chunk_ids: tuple[str, ...]
    doc_of: np.ndarray  # per row: the index of its document in ``doc_ids``
    doc_ids: tuple[str, ...]
    matrix: np.ndarray  # rows: unit vectors, float32

    @classmethod
    def of(cls, rows: Sequence[tuple[str, str, bytes]]) -> VectorMatrix:
        """From registry rows (chunk id, doc id, vector bytes), in the registry's stable order."""
        doc_ids = tuple(dict.fromkeys(doc for _, doc, _ in rows))
        position = {doc: i for i, doc in enumerate(doc_ids)}
        matrix = (
            np.vstack([np.frombuffer(v, dtype=np.float32) for _, _, v in rows])
            if rows
            else np.zeros((0, 1), dtype=np.float32)
        )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        doc_of = np.fromiter((position[doc] for _, doc, _ in rows), dtype=np.int32, count=len(rows))
        return cls(tuple(c for c, _, _ in rows), doc_of, doc_ids, matrix)

    @cached_property
    def position(self) -> dict[str, int]:
        """Each document's index in ``doc_ids`` (made once per matrix, not per query)."""
        return {doc: i for i, doc in enumerate(self.doc_ids)}

    def nearest(self, vector: np.ndarray, k: int, doc_ids: Sequence[str]) -> list[tuple[str, float]]:
        """(chunk_id, cosine) of the ``k`` nearest chunks among ``doc_ids``; ties in storage order."""
        wanted = [self.position[d] for d in doc_ids if d in self.position]
        if not wanted or k <= 0 or not len(self.matrix):
            return []
        query = np.asarray(vector, dtype=np.float32)
        scores = self.matrix @ (query / (float(np.linalg.norm(query)) or 1.0))  # one product, no copy
        rows = (
            np.arange(len(scores)) if len(wanted) == len(self.doc_ids) else np.flatnonzero(np.isin(self.doc_of, wanted))
        )
        scoped = scores[rows]
        if len(scoped) > k:  # the k best first, then only those sorted: ties keep the storage order
            best = np.sort(np.argpartition(-scoped, k - 1)[:k])
            order = best[np.argsort(-scoped[best], kind="stable")]
        else:
            order = np.argsort(-scoped, kind="stable")
        return [(self.chunk_ids[rows[i]], float(scoped[i])) for i in order]


class ExactSearch:
    """The matrix of one collection, built from the registry once per registry generation (a new
    or removed document rebuilds it; a library beyond ``max_chunks`` never builds it)."""

    def __init__(self, max_chunks: int) -> None:
        self.max_chunks = max_chunks
        self._lock = threading.Lock()
        self._built: tuple[int, VectorMatrix | None] | None = None

    def matrix(
        self, generation: int, count: int, load: Callable[[], list[tuple[str, str, bytes | None]]]
    ) -> VectorMatrix | None:
        """The matrix at ``generation``, or None when the library is too large (``count`` chunks)
        or holds chunks without a stored vector: then Chroma searches. ``load`` returns the rows."""
        if count > self.max_chunks:
            return None
        with self._lock:
            if self._built is None or self._built[0] != generation:
                rows = load()
                stored = [(c, d, v) for c, d, v in rows if v is not None]
                self._built = (generation, VectorMatrix.of(stored) if len(stored) == len(rows) else None)
            return self._built[1]

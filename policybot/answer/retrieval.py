"""Retrieval stages: ranked lists of chunks from the dense index, BM25 and the clauses a question
names, and the fusions that join them.

A query's dense and BM25 lists are joined by ``ScoreFusion``: each score is standardised
against what the library's off-topic probe questions score by the same measure (``core/probes.py``),
and the two are averaged, so neither retriever's scale dominates and a weak list counts for
little. The queries of a plan (the question, its rewrites, HyDE) and a named clause's chunks
are then joined by weighted reciprocal rank fusion (``RankFusion``). Each list is keyed by what
made it (``ListKey``), so weights are chosen by meaning, never by parsing list names.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Hashable, Literal, Mapping, Sequence, TypeVar

import numpy as np

from policybot.answer.equivalents import Equivalents
from policybot.answer.naming import NamedDocument, split_naming
from policybot.answer.query import clause_references, section_matches, split_item, without_ask
from policybot.answer.token_match import TokenMatch
from policybot.core.probes import Calibration
from policybot.core.rows import ChunkRow, DocumentRow, doc_of
from policybot.errors import IndexUnavailable
from policybot.models.embeddings import Embedder
from policybot.schemas import SearchHit
from policybot.store.index import DocumentIndex

log = logging.getLogger(__name__)

Ranked = list[tuple[str, float]]  # (chunk_id, score), best first
K = TypeVar("K", bound=Hashable)  # what names a ranked list
ListKind = Literal["dense", "lexical", "hybrid", "plain", "clause"]


@dataclass(frozen=True)
class ListKey:
    """Which retriever made a ranked list, and for which query (0: the question itself)."""

    kind: ListKind
    query: int = 0


RankedLists = dict[ListKey, Ranked]


class DenseRetriever:
    """Nearest chunks by cosine similarity of sentence embeddings.

    When the vector store is a server that cannot be reached, the list is empty and
    ``unavailable`` says why: the search goes on by words (BM25 is local) and the answer says so."""

    def __init__(self, index: DocumentIndex, embedder: Embedder) -> None:
        self.index = index
        self.embedder = embedder
        self.unavailable: str | None = None

    def run(self, query: str, k: int, doc_ids: Sequence[str], away_from: str = "") -> Ranked:
        """``away_from``: words whose meaning the query vector is made orthogonal to (see
        ``without_direction``)."""
        vector = self.embedder.embed_query(query)
        if away_from:
            vector = without_direction(vector, self.embedder.embed_query(away_from))
        try:
            found = self.index.nearest(vector, k, doc_ids)
        except IndexUnavailable as exc:
            if not self.index.settings.chroma_url:
                raise
            if self.unavailable is None:
                log.warning("searching by words only: %s", exc)
            self.unavailable = str(exc)
            return []
        self.unavailable = None
        return found


class LexicalRetriever:
    """Best chunks by BM25 over the same chunks."""

    def __init__(self, index: DocumentIndex) -> None:
        self.index = index

    def run(self, query: str, k: int, doc_ids: Sequence[str]) -> Ranked:
        return self.index.lexical_ready().search(query, k, set(doc_ids))


class ClauseRetriever:
    """Chunks of the clauses a question names ("clause 5.2", "Section VII", "2.5(c)"), in document
    order; for a list item, the clause's chunks that hold it first."""

    def __init__(self, index: DocumentIndex) -> None:
        self.index = index

    def run(self, refs: Sequence[str], doc_ids: Sequence[str], limit: int = 20) -> Ranked:
        allowed = set(doc_ids)
        out: Ranked = []
        for ref in refs:
            number, item = split_item(ref)
            found = [
                chunk_id
                for chunk_id, section in self.index.registry.chunk_ids_with_section(self.index.collection, number)
                if doc_of(chunk_id) in allowed and section_matches(section, [number])
            ]
            if item:
                rows = self.index.registry.chunks(self.index.collection, found)
                found.sort(key=lambda cid: item not in (rows[cid].text if cid in rows else ""))
            out.extend((cid, 1.0) for cid in found if (cid, 1.0) not in out)
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


class ScoreFusion:
    """One query's dense and BM25 lists as one list: a convex combination of scores standardised
    against the off-topic probes (a chunk missing from a list gets that list's lowest score)."""

    def __init__(self, calibration: Calibration, dense_weight: float = 0.5) -> None:
        self.calibration = calibration
        self.dense_weight = dense_weight

    def run(self, dense: Ranked, lexical: Ranked) -> Ranked:
        parts = []
        for kind, ranked, weight in (
            ("dense", dense, self.dense_weight),
            ("lexical", lexical, 1.0 - self.dense_weight),
        ):
            z = self.calibration.standardise(kind, [score for _, score in ranked])
            parts.append(({cid: x for (cid, _), x in zip(ranked, z)}, min(z, default=0.0), weight))
        ids = dict.fromkeys([cid for cid, _ in dense] + [cid for cid, _ in lexical])
        fused = {cid: sum(w * scores.get(cid, floor) for scores, floor, w in parts) for cid in ids}
        return sorted(fused.items(), key=lambda x: -x[1])


def fusion_weights(
    lists: Mapping[ListKey, Ranked],
    original_query_weight: float,
    planned: bool,
    anchor: Ranked | None = None,
    own_queries: int = 1,
) -> dict[ListKey, float]:
    """RRF weights for a question's lists.

    When the plan's queries were searched (``planned``: not just the first pass again), the
    question's own list counts ``original_query_weight`` times each rewrite's, so weak rewrites
    cannot drown it, and each rewrite (or HyDE passage) counts only as far as it agrees with what
    the question alone found (``anchor``: the share of its best 10 among the question's best 20).
    A confused model's rewrites find other passages and so count for nothing; a good rewrite
    that finds the same ground reorders it. A clause named in the question counts as much as the
    question's own list: a boost, never enough to bury the passages the question matches. The
    question's own lists are its first ``own_queries`` (a follow-up: with its context, and alone).
    """
    own = original_query_weight if planned else 1.0
    near = {cid for cid, _ in anchor[:AGREEMENT_DEPTH]} if anchor else None

    def weight(key: ListKey) -> float:
        if key.kind == "clause" or key.query < own_queries:
            return own
        return 1.0 if near is None else agreement_share(lists[key], near)

    return {key: weight(key) for key in lists}


def agreement_share(ranked: Ranked, near: set[str]) -> float:
    """The share of a list's best 10 passages among ``near`` (an anchor's best ``AGREEMENT_DEPTH``)."""
    best = [cid for cid, _ in ranked[:10]]
    return sum(cid in near for cid in best) / len(best) if best else 0.0


def beyond_chance(share: float, depth: int, passages: int) -> float:
    """An agreement share with what any list would share by chance taken out: a list's passages fall among
    the other's best ``depth`` of ``passages`` by chance at ``depth / passages``. 0 when that is all of
    them (a 13-passage wording: every list "agrees" with a best 20), 1 for full agreement."""
    chance = min(1.0, depth / passages) if passages else 1.0
    return max(0.0, (share - chance) / (1.0 - chance)) if chance < 1.0 else 0.0


# How deep in the question's own ranking a rewrite's best passages count as agreeing with it.
AGREEMENT_DEPTH = 20


Calibrate = Callable[[Sequence[str]], Calibration]  # doc ids -> their off-topic probe scores


class HybridRetriever:
    """Dense + BM25 candidates for a query: the two lists and the one they fuse into."""

    def __init__(
        self,
        index: DocumentIndex,
        embedder: Embedder,
        calibrate: Calibrate,
        candidates: int = 50,
        rrf_k: int = 60,
        fusion: Literal["calibrated", "rrf"] = "calibrated",
        dense_weight: float = 0.5,
        named_boost: float = 3.0,
        naming_direction: bool = False,
        token_match: TokenMatch | None = None,
        without_ask: bool = False,
        equivalents: bool = False,
    ) -> None:
        self.dense = DenseRetriever(index, embedder)
        self.lexical = LexicalRetriever(index)
        self.clauses = ClauseRetriever(index)
        self.fusion = RankFusion(rrf_k)
        self.calibrate = calibrate
        self.mode = fusion
        self.dense_weight = dense_weight
        self.named_boost = named_boost
        self.naming_direction = naming_direction
        self.candidates = candidates
        self.token_match = token_match
        self.without_ask = without_ask
        self.equivalents = Equivalents() if equivalents else None
        self._added: dict[tuple[int | None, str, tuple[str, ...]], str] = {}  # searched and shown: looked up once

    def lists(
        self,
        query: str,
        doc_ids: Sequence[str],
        query_index: int = 0,
        candidates: int | None = None,
        named: Sequence[NamedDocument] = (),
        reorder: bool = True,
    ) -> RankedLists:
        """One query's dense and BM25 lists (``candidates`` each) and their fusion (``hybrid``, what
        ranks). ``named``: documents the question names. They are searched first (their own best
        passages join the candidates) and favoured in the fusion (``plain`` keeps the fusion
        without that), BM25 ranks passages by the question without the words that name them, and
        the dense order inside the named document also follows the question without their
        direction (``naming_direction``, ``_own_dense``). With ``token_match``, each fused list's best
        candidates are then re-ordered by how well their word pieces match the question's
        (``answer/token_match.py``), the question read without its naming words; ``reorder=False``
        leaves them as fused: token match bridges a citizen's own words to the library's, so an
        LLM's expansion (written in the library's words), a follow-up joined to its context and an
        evidence search (which collects, not ranks) ask for none."""
        n = candidates or self.candidates
        query = without_ask(query) if self.without_ask else query  # the situation, not "can I claim?"
        favoured = [d.doc.doc_id for d in named if d.doc.doc_id in set(doc_ids)]
        words, naming = split_naming(query, named) if favoured else (query, "")
        added = self._equivalent(words, doc_ids)  # "excess": "deductible"
        query, words = (f"{query} {added}", f"{words} {added}") if added else (query, words)
        dense = self.dense.run(query, n, doc_ids)
        lexical = self.lexical.run(words, n, doc_ids)
        if favoured:
            others = [(cid, score) for cid, score in dense if doc_of(cid) not in favoured]
            dense = _merged(others, self._own_dense(query, n, favoured, (words, naming)))
            lexical = _merged(lexical, self.lexical.run(words, n, favoured))
        if self.mode == "rrf":
            plain = [(f.chunk_id, f.score) for f in self.fusion.run({"dense": dense, "lexical": lexical})]
        else:
            plain = ScoreFusion(self.calibrate(doc_ids), self.dense_weight).run(dense, lexical)
        hybrid = self._favour(plain, set(favoured))
        if self.token_match is not None and reorder:
            hybrid = self.token_match.run(words, hybrid, self._texts)
            plain = self.token_match.run(words, plain, self._texts) if favoured else plain
        lists = {
            ListKey("dense", query_index): dense,
            ListKey("lexical", query_index): lexical,
            ListKey("hybrid", query_index): hybrid,
        }
        if favoured:
            lists[ListKey("plain", query_index)] = plain
        return lists

    def equivalent_words(self, queries: Sequence[str], doc_ids: Sequence[str]) -> list[str]:
        """The documents' words searched beside the queries' (none with ``equivalents`` off)."""
        return list(dict.fromkeys(w for q in queries for w in self._equivalent(q, doc_ids).split()))

    def _equivalent(self, query: str, doc_ids: Sequence[str]) -> str:
        if self.equivalents is None:
            return ""
        lexical = self.lexical.index.lexical_ready()
        key = (lexical.generation, query, tuple(doc_ids))
        if key not in self._added:
            if len(self._added) >= 64:
                self._added.clear()
            self._added[key] = self.equivalents.run(
                query,
                lambda stem: lexical.uses(stem, doc_ids),
                lambda stem: self._texts(lexical.chunk_ids_using(stem, doc_ids)).values(),
            )
        return self._added[key]

    def _own_dense(self, query: str, n: int, favoured: list[str], split: tuple[str, str]) -> Ranked:
        """The named documents' own best passages by the dense query. With ``naming_direction`` and
        one named document, their order is that of the whole question and of the question turned
        away from its naming words together, each on the whole question's cosines; the list keeps
        the whole question's cosines in that order (``in_order_of``).

        The turned order counts as far as the naming words are *not* what is asked (``naming_is_topic``):
        a party's name ("Zenbo Industries") says which document, and the turned order leads; in
        "intellectual property agreement" or "Bereavement Support Payment" the name is the topic,
        and the whole question's order leads. Turned alone, the order lost contracts whose naming
        words are their topic; the even mean of the two was the uninformed weight until this
        per-question one (record 2026-11-27-naming-direction, addenda). With two named documents
        nothing is turned (one of them is often named by such words). ``split``: the question
        without its naming words, and those words (``naming.split_naming``)."""
        own = self.dense.run(query, n, favoured)
        asks, words = split
        if not (words and self.naming_direction and len(favoured) == 1):
            return own
        embed = self.dense.embedder.embed_query
        topic = naming_is_topic(embed(words), embed(asks))
        turned = in_order_of(self.dense.run(query, n, favoured, words), own)
        return in_order_of(blended(turned, own, 1.0 - topic), own)

    def _texts(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        rows = self.dense.index.registry.chunks(self.dense.index.collection, list(chunk_ids))
        return {cid: row.text for cid, row in rows.items()}

    @property
    def words_only(self) -> str | None:
        """Why the last search could not use the vector store (None: it could)."""
        return self.dense.unavailable

    def _favour(self, ranked: Ranked, named: set[str]) -> Ranked:
        """A named document's passages moved up by ``named_boost`` standard deviations of this
        query's candidate scores (a clearly better passage elsewhere still ranks first; the unit
        follows the query and the library, however the scores are scaled), or, with RRF, by
        counting the named document's own order once more."""
        if not named:
            return ranked
        if self.mode == "rrf":
            own = [(cid, score) for cid, score in ranked if doc_of(cid) in named]
            return [(f.chunk_id, f.score) for f in self.fusion.run({"all": ranked, "named": own})]
        spread = float(np.std([score for _, score in ranked])) if len(ranked) > 1 else 1.0
        bonus = self.named_boost * (spread or 1.0)
        boosted = [(cid, score + (bonus if doc_of(cid) in named else 0.0)) for cid, score in ranked]
        return sorted(boosted, key=lambda x: -x[1])

    def run(
        self,
        query: str,
        k: int,
        doc_ids: Sequence[str],
        named: Sequence[NamedDocument] = (),
        defined: Sequence[str] = (),
    ) -> list[Fused]:
        """The fused ranking of one query (search, and the eval's first-pass configurations): a clause
        the query names ("what does clause 5.2 say") first, as when it is asked; else the definitions
        it asks the meaning of (``defined``: chunk ids, ``ReferenceFollower.definitions_asked``)."""
        lists = self.lists(query, doc_ids, named=named)
        refs = clause_references(query)
        clause = self.clauses.run(refs, doc_ids) if refs else [(cid, 1.0) for cid in defined]
        if clause:
            ranked = [
                (f.chunk_id, f.score) for f in self.fusion.run({"hybrid": lists[ListKey("hybrid")], "clause": clause})
            ]
        else:
            ranked = lists[ListKey("hybrid")]
        fused = [Fused(cid, score) for cid, score in ranked[:k]]
        for key in (ListKey("dense"), ListKey("lexical")):  # each retriever's own rank and score, for search results
            ranks = {cid: (rank, score) for rank, (cid, score) in enumerate(lists[key], start=1)}
            for f in fused:
                if f.chunk_id in ranks:
                    f.ranks[key], f.scores[key] = ranks[f.chunk_id]
        return fused


def without_direction(vector: np.ndarray, away: np.ndarray) -> np.ndarray:
    """``vector`` made orthogonal to ``away`` and unit length again: the question's meaning without
    that of the words that name its document. Whole, "What law governs our manufacturing agreement
    with AMAG?" is nearest to the preamble that names AMAG and the agreement; stripping the words
    instead leaves "What law governs", too short a query for the model (record
    2026-11-27-naming-direction). Unchanged when nothing of it is left."""
    unit = away / max(float(np.linalg.norm(away)), 1e-12)
    rest = vector - float(vector @ unit) * unit
    norm = float(np.linalg.norm(rest))
    return vector if norm < 1e-6 else (rest / norm).astype(vector.dtype)


def in_order_of(order: Ranked, scale: Ranked) -> Ranked:
    """``order``'s chunks, best first, given ``scale``'s scores, best first: the turned query's
    order inside the named document on the whole question's cosines. A turned vector's cosines are
    far lower than any the probes, the bands or the expansion gate were measured against (the top
    one fell from .77 to .20 in a test library); on the whole question's scale the named document
    keeps its level and only its order changes (record 2026-11-27-naming-direction)."""
    scores = sorted((score for _, score in scale), reverse=True)
    return [(cid, score) for (cid, _), score in zip(order, scores)]


def naming_is_topic(naming: np.ndarray, rest: np.ndarray) -> float:
    """How far a question's naming words are also what it asks, from 0 (a name: "Zenbo Industries"
    beside "What law governs …") to 1: the cosine of their vector with that of the rest of the
    question, below 0 taken as 0. No constant is fitted: with MiniLM unrelated words score near 0; a
    more anisotropic model scores them higher, which leans towards the whole question's order, the
    cautious side (provisional for the paper profile: record 2026-11-27-naming-direction)."""
    return min(1.0, max(0.0, float(naming @ rest)))


def blended(first: Ranked, second: Ranked, weight: float) -> Ranked:
    """Two rankings by the same measure as one by each chunk's weighted mean score, ``weight`` on
    ``first`` (a chunk one list lacks gets that list's lowest score), best first."""
    a, b = dict(first), dict(second)
    floor_a, floor_b = min(a.values(), default=0.0), min(b.values(), default=0.0)
    ids = dict.fromkeys([*a, *b])
    return sorted(
        ((cid, weight * a.get(cid, floor_a) + (1.0 - weight) * b.get(cid, floor_b)) for cid in ids),
        key=lambda x: -x[1],
    )


def _merged(first: Ranked, second: Ranked) -> Ranked:
    """Two rankings by the same measure as one, best first, each chunk once."""
    best: dict[str, float] = {}
    for cid, score in [*first, *second]:
        best[cid] = max(score, best.get(cid, score))
    return sorted(best.items(), key=lambda x: -x[1])


def ranked_for_fusion(lists: RankedLists) -> RankedLists:
    """The lists that rank: each query's fused list and any clause list (the per-retriever lists
    are kept for the signals that read them: agreement, the lexical band test)."""
    return {key: ranked for key, ranked in lists.items() if key.kind in ("hybrid", "clause")}


def search_hits(
    fused: Sequence[Fused], rows: Mapping[str, ChunkRow], scope: Mapping[str, DocumentRow]
) -> list[SearchHit]:
    """A search's fused ranking as hits, numbered from 1, with each retriever's own rank and
    score (chunks deleted between the search and now are left out)."""
    dense, lexical = ListKey("dense"), ListKey("lexical")
    hits: list[SearchHit] = []
    for f in fused:
        row = rows.get(f.chunk_id)
        if row is None:
            continue
        doc = scope[row.doc_id]
        hits.append(
            SearchHit(
                rank=len(hits) + 1,
                chunk_id=f.chunk_id,
                doc=doc.name,
                title=doc.title,
                section=row.section,
                page_start=row.page_start,
                page_end=row.page_end,
                score=round(f.score, 6),
                dense_rank=f.ranks.get(dense),
                dense_score=_round(f.scores.get(dense)),
                lexical_rank=f.ranks.get(lexical),
                lexical_score=_round(f.scores.get(lexical)),
                kind=row.kind,
                text=row.text,
                ocr_confidence=doc.ocr_confidence(row.page_start, row.page_end),
            )
        )
    return hits


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)

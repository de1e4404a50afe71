"""Token match: a second look at a query's best candidates, word piece by word piece.

A sentence embedding squeezes a passage into one vector, so a citizen's own words ("my dog",
"mudslide", "hand the contract over") must match the passage's meaning as a whole; BM25 matches
only the same stems. Late interaction (ColBERT's MaxSim, BERTScore's recall) compares each word
piece of the query with every word piece of the passage, in the embedding model's own contextual
vectors, and averages the best matches. It needs no other model and no labels: the model that
embeds the library reads the candidates once more (cached), and nothing is stored at ingestion.

Each query piece counts by how rare it is among the candidates (inverse document frequency over
the best ``pool`` candidates, twice those re-ordered, as BERTScore weighs by IDF): a party name that
every passage of a contract shares, or "agreement", counts for nothing, and the words that tell
the passages apart decide. Stopwords, function words and punctuation of the query are left out.

It bridges a gap: when every word of the question is already in one of its five best passages,
BM25 and the sentence vector have seen the question's own words, and the list is left as fused.
Only the passages that may move are read by the model (and kept); the others of the pool need only
their pieces, which the tokenizer gives.

The match does not replace the fused ranking: the best ``depth`` candidates are re-ordered by
their fused score plus ``weight`` times their token match, both standardised over those
candidates, and each keeps the score of the rank it lands on, so every later stage (the bands, the
naming boost, the expansion guard) sees the fused scale it was measured on. Measured on every set
(eval/decisions/2026-11-28-token-match.md, addendum): it lifts the contracts and most citizen sets
and costs no set more than noise, so it is on by default (``Settings.token_match``).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Callable, Mapping, NamedTuple, Sequence

import numpy as np

from policybot.models.embeddings import Embedder, TokenVectors
from policybot.store.lexical import STOPWORDS, Tokenizer

Ranked = list[tuple[str, float]]  # (chunk_id, score), best first
Texts = Callable[[Sequence[str]], Mapping[str, str]]  # chunk ids -> their texts
# How a citizen asks, not what: English function words and conversational fillers beside BM25's
# stopwords. Neither a question piece nor a missing word when one of these; negations, "only",
# "before", "after", "within", "over" and the like stay, as policies turn on them.
FUNCTION_WORDS = STOPWORDS | frozenset(
    "about again all also am any anyone anything been being both but because doing each else ever every "
    "everything few further get gets getting got had having hello her here hers herself hi him himself his "
    "into itself just know let me more most much myself now ok okay once other ours ourselves please "
    "really same some someone something still thank thanks theirs themselves through too very want "
    "wanted whom whose why yes yours yourself yourselves "
    # The same words typed without their apostrophe, as citizens do ("whats the most for one item").
    # Not "id", "ill", "well", "wed", "lets" (words of their own) nor "cant", "dont" (negations stay).
    "whats thats theres heres hows whos wheres whens im ive youre youve youd theyre theyve theyd weve hes shes".split()
)
GAP_WINDOW = 5  # the first candidates, what a citizen reads, whose words say whether there is a gap to bridge


class Passage(NamedTuple):
    """What token match keeps of a passage once read: its text, its pieces, its words as BM25 reads them
    (lowercase, stemmed, stopwords dropped) and, once the model has read it, its piece vectors
    (float16). Only a passage that may move is read by the model; the wider pool needs only its
    pieces, from the tokenizer, for the rarity of each question piece."""

    text: str
    pieces: frozenset[str]
    words: frozenset[str]
    vectors: np.ndarray | None = None


class TokenMatch:
    """Re-orders a ranked list's best candidates by fused score and token match together, when the
    question has words its best candidates lack."""

    def __init__(
        self, embedder: Embedder, depth: int = 10, weight: float = 0.5, pool: int | None = None, cache_size: int = 512
    ) -> None:
        self.embedder = embedder
        self.depth = depth
        self.weight = weight
        self.pool = max(pool or 2 * depth, depth)  # the candidates the IDF is taken over
        self.cache_size = cache_size
        self.tokenizer = Tokenizer()
        self._function_stems = frozenset(self.tokenizer(" ".join(FUNCTION_WORDS)))  # "really" -> "realli"
        self._passages: OrderedDict[str, Passage] = OrderedDict()
        self._lock = threading.Lock()

    def run(self, query: str, ranked: Ranked, texts: Texts) -> Ranked:
        """``ranked`` with its best ``depth`` re-ordered (see the module's docstring); the rest as it
        was. Unchanged when every word of the question is already in one of its first passages."""
        top = ranked[: self.depth]
        if len(top) < 2 or self.weight <= 0:
            return ranked
        pool = [cid for cid, _ in ranked[: self.pool]]
        if not self.has_gap(query, pool[:GAP_WINDOW], texts):
            return ranked
        ids = pool[: len(top)]
        match = self.scores(query, ids, texts, among=pool)
        if match is None:
            return ranked
        combined = standardised([score for _, score in top]) + self.weight * standardised(match)
        order = sorted(range(len(top)), key=lambda i: (-combined[i], i))
        return [(ids[i], score) for i, (_, score) in zip(order, top)] + ranked[self.depth :]

    def has_gap(self, query: str, ids: Sequence[str], texts: Texts) -> bool:
        """Whether a word of the question (as BM25 reads it: stemmed, stopwords dropped) is in none
        of the passages ``ids``: a gap between the question's words and the library's that BM25 and
        the sentence vector may have bridged wrongly."""
        words = set(self.tokenizer(query)) - self._function_stems
        found = frozenset().union(*(p.words for p in self._read(ids, texts).values()))
        return bool(words - found)

    def scores(self, query: str, ids: Sequence[str], texts: Texts, among: Sequence[str] = ()) -> list[float] | None:
        """Each candidate's IDF-weighted mean, over the query's pieces, of its best cosine with one of
        the candidate's pieces, the IDF taken over ``ids`` and ``among`` (a wider pool); None when
        the query has no content piece."""
        question = self.embedder.token_vectors([query])[0]
        words = content_pieces(question)
        if not words:
            return None
        chosen = set(ids)
        pool = list(ids) + [cid for cid in among if cid not in chosen]
        pieces = self._read(pool, texts)
        weights = idf_weights([question.pieces[i] for i in words], [pieces[cid].pieces for cid in pool])
        if weights is None:
            return None
        passages = self._read(ids, texts, vectors=True)
        query_rows = question.vectors[words]
        rows = [np.asarray(passages[cid].vectors, dtype=np.float32) for cid in ids]
        return [float((query_rows @ passage.T).max(axis=1) @ weights) for passage in rows]

    def _read(self, ids: Sequence[str], texts: Texts, vectors: bool = False) -> dict[str, Passage]:
        """The passages ``ids`` (with their piece vectors when ``vectors``), read once and kept (the
        ``cache_size`` last used)."""
        with self._lock:
            found = {cid: self._passages[cid] for cid in ids if cid in self._passages}
        unread = [cid for cid in ids if cid not in found]
        if unread:
            text = texts(unread)
            bodies = [text.get(cid, "") for cid in unread]
            for cid, body, pieces in zip(unread, bodies, self.embedder.pieces(bodies)):
                found[cid] = Passage(body, frozenset(pieces), frozenset(self.tokenizer(body)))
        unseen = [cid for cid in ids if vectors and found[cid].vectors is None]
        for cid, tokens in zip(unseen, self.embedder.token_vectors([found[cid].text for cid in unseen])):
            rows = tokens.vectors if len(tokens.pieces) else np.zeros((1, tokens.vectors.shape[-1]), np.float32)
            found[cid] = found[cid]._replace(vectors=rows.astype(np.float16))
        with self._lock:
            for cid in ids:
                self._passages[cid] = found[cid]
                self._passages.move_to_end(cid)
            while len(self._passages) > self.cache_size:
                self._passages.popitem(last=False)
        return found


def content_pieces(tokens: TokenVectors) -> list[int]:
    """Positions of the query's pieces that carry content: not a function word, not punctuation."""
    return [
        i for i, piece in enumerate(tokens.pieces) if piece not in FUNCTION_WORDS and any(ch.isalnum() for ch in piece)
    ]


def idf_weights(pieces: Sequence[str], candidates: Sequence[frozenset[str]]) -> np.ndarray | None:
    """Each query piece's weight, ``log((n + 1) / (df + 0.5))`` over the ``n`` candidates (a piece in
    every candidate weighs almost nothing), normalised to sum to 1; None when there is no piece."""
    n = len(candidates)
    raw = np.array([max(0.0, math.log((n + 1) / (sum(p in c for c in candidates) + 0.5))) for p in pieces])
    total = float(raw.sum())
    return raw / total if total > 0 else None


def standardised(values: Sequence[float]) -> np.ndarray:
    """``values`` as z-scores over themselves (all zero when they are all equal)."""
    a = np.asarray(values, dtype=np.float64)
    spread = float(a.std())
    return (a - a.mean()) / spread if spread > 0 else np.zeros_like(a)

"""Answering one question: the stages composed, each one's progress streamed as it happens.

first pass (hybrid search; its best passages go to the caller at once) → plan (condense a
follow-up; HyDE + rewrites in one LLM call unless the first pass is confident) → ranking
(every query's dense and BM25 lists and any named clause, fused with RRF, cut with top-p) →
scoring (cross-encoder or cosine) → context budget → guard (refuse below the threshold) →
writing (LLM, streamed, citations checked; or extractive) → earlier edition (what a superseded
edition of the best source said, when it read differently).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Generator, Iterator, Sequence

import numpy as np

from policybot.answer.bands import Signals
from policybot.answer.citations import renumbered
from policybot.answer.conversation import Turn
from policybot.answer.earlier_edition import ChunksOf, EarlierEdition, Library
from policybot.answer.guard import Guard, Verdict
from policybot.answer.naming import NamedDocument, without_naming
from policybot.answer.neighbours import WordNeighbours
from policybot.answer.openings import ListOpenings
from policybot.answer.query import (
    PlanRequest,
    QueryPlan,
    QueryPlanner,
    adds_to_story,
    asks_meaning_of_title,
    carries_on,
    clause_references,
    names_something,
    says_little,
)
from policybot.answer.references import ReferenceFollower
from policybot.answer.retrieval import (
    AGREEMENT_DEPTH,
    Fused,
    HybridRetriever,
    ListKey,
    Ranked,
    RankedLists,
    agreement_share,
    beyond_chance,
    fusion_weights,
    ranked_for_fusion,
)
from policybot.answer.scoring import (
    CosineScorer,
    CrossEncoderScorer,
    QueryEmbedder,
    Scored,
    ScoreSource,
    Thresholds,
    VectorLookup,
)
from policybot.answer.selection import Selector, group_siblings
from policybot.answer.social import social_reply
from policybot.answer.writers import EXTRACTIVE_SOURCES, AnswerDraft, ExtractiveWriter, LLMWriter
from policybot.core.passages import Passage
from policybot.core.probes import Calibration
from policybot.core.rows import DocumentRow, RowLookup, doc_of
from policybot.core.timing import Timings
from policybot.events import AnswerEvent, Event, PassagesEvent, StageEvent, StandaloneEvent
from policybot.models.llm import ChatLLM, LLMUsage
from policybot.models.rerank import Reranker
from policybot.schemas import NOT_A_QUESTION, Answer, Citation
from policybot.settings import Settings

# The answer's ``retrieved`` list (for evaluation) holds this many chunks.
RANKING_DEPTH = 20
PREVIEW_PASSAGES = 5


# Said with an answer found without the vector store (a Chroma server that is down).
WORDS_ONLY = "Searched by words only, not by meaning: {why}."


@dataclass
class AnswerParts:
    """What the pipeline is built from; ``Components`` makes these once per process and settings."""

    retriever: HybridRetriever
    rows: RowLookup
    vectors: VectorLookup
    embed_query: QueryEmbedder
    reranker: Reranker | None
    thresholds: Thresholds
    profile: str
    calibration: Callable[[Sequence[DocumentRow]], Calibration]  # off-topic probe scores of a scope
    name_documents: Callable[[str, Sequence[DocumentRow]], list[NamedDocument]]
    probe_vectors: Callable[[], np.ndarray]  # the off-topic probe questions, embedded (once per process)
    request_vectors: Callable[[], np.ndarray]  # the requests for the world outside the documents, embedded
    library: Library  # every document, for the earlier-edition note (outside the question's scope)
    chunks_of: ChunksOf
    references: ReferenceFollower | None = None
    embed: Callable[[Sequence[str]], np.ndarray] | None = None  # passages' sentences, to choose quotes
    neighbours: WordNeighbours | None = None  # the passages' words for the question's, to choose quotes


@dataclass
class FirstPass:
    queries: list[str]  # the question as searched first (a follow-up: with its context, and alone)
    lists: RankedLists
    fused: list[Fused]
    preview: list[Citation]
    confidence: float  # the top cosine when dense and BM25 agree on the best passage, else 0
    weights: dict[ListKey, float] = field(default_factory=dict)  # lists that count less than the question's own


@dataclass
class Ranking:
    fused: list[Fused]
    candidates: list[Passage]
    clause_ids: set[str]
    question: str  # what the passages are scored against and the answer written to


class AnswerPipeline:
    """Runs the stages for one question's settings; holds no state between questions."""

    def __init__(self, parts: AnswerParts, settings: Settings, llm: ChatLLM | None) -> None:
        self.parts = parts
        self.settings = settings
        self.llm = llm
        self.planner = QueryPlanner(settings, llm, parts.thresholds.confident)
        self.selector = Selector(settings, parts.rows)
        self.openings = ListOpenings(parts.rows)
        self.extractive = ExtractiveWriter(parts.embed, parts.embed_query, settings.quote_choice, parts.neighbours)
        self.earlier = EarlierEdition(parts.library, parts.rows, parts.chunks_of)

    def run(self, question: str, history: Sequence[Turn], scope: Sequence[DocumentRow]) -> Iterator[Event]:
        reply = social_reply(question)
        if reply is not None:  # "thanks", "hello": a kind word back, nothing searched
            yield AnswerEvent(self._social(question, reply))
            return
        history = [t for t in history if social_reply(t.question) is None]  # "thanks" is no context
        named = self.parts.name_documents(question, scope)  # searched first and favoured, never alone
        by_id = {d.doc_id: d for d in scope}
        usage, timings = LLMUsage(), Timings()
        yield StageEvent("searching")
        queries = self.planner.first_queries(question, history)
        with timings.measure("first_pass"):
            if len(queries) > 1 and not self._follows(question, history[-1].question, list(by_id)):
                queries = queries[1:]
            first = self._first_pass(queries, by_id, named, before=history[-1].docs if history else [])
            continuing = self._continuing(first, history, scope, named)
            if continuing:  # a follow-up: searched again, mainly in the document it continues
                named = continuing
                first = self._first_pass(first.queries, by_id, named, decided=True)
        yield PassagesEvent(first.preview)
        context = history if len(first.queries) > 1 else ()  # a question that stands alone is planned alone
        request = PlanRequest(question, context, first.queries, first.confidence, _summary(scope))
        plan = yield from self.planner.run(request, usage, timings)
        yield StageEvent("searching")
        with timings.measure("retrieval"):
            ranking = self._rank(plan, first, by_id, named)
        plan = replace(plan, standalone=ranking.question)
        if plan.standalone != question:
            yield StandaloneEvent(plan.standalone)
        scored = yield from self._score(plan.standalone, ranking.candidates, timings)
        with timings.measure("context"):
            kept = self.selector.fit_budget(group_siblings(scored.candidates))
            sources = [c.citation(i + 1) for i, c in enumerate(kept)]
            verdict = self._decide(plan.standalone, scored, ranking, first, scope, bool(sources))
            if verdict.band != "out_of_scope":
                sources += self._supporting(plan.standalone, sources, by_id)
            sources = self.openings.run(sources)
        changed = _naming_changed(first.lists)
        mainly = [n.doc.name for n in named if not n.by_conversation] if changed else []
        draft = self._draft(question, plan, first, ranking, scored, verdict, mainly, usage, timings)
        draft.continued_documents = [n.doc.name for n in named if n.by_conversation] if changed else []
        draft.also_searched = self.parts.retriever.equivalent_words(first.queries, list(by_id))
        if verdict.refusal:
            answer = draft.refusal(sources, verdict.refusal)
        elif self.llm is None:
            names = [n.doc.name for n in named]
            words = without_naming(plan.standalone, named)  # the quote's words: not those naming the document
            answer = self.extractive.run(draft, plan.standalone, sources, named=names, words=words)
        else:
            answer = yield from LLMWriter(self.llm, self.settings, self.extractive).run(draft, plan.standalone, sources)
        words_only = self.parts.retriever.words_only
        if words_only:  # the vector server is down: the answer still comes, from a search by words
            answer.notice = " ".join(filter(None, [answer.notice, WORDS_ONLY.format(why=words_only)]))
        yield AnswerEvent(renumbered(self.earlier.run(answer)))

    # --- stages -----------------------------------------------------------------------
    def _follows(self, question: str, previous: str, doc_ids: list[str]) -> bool:
        """Whether a question may follow the previous one at all: it is closer in meaning to it than
        half of the off-topic probe questions are ("what time does the football start?" after a
        question on legal cover is not). A turn that says too little of its own (``says_little``)
        is near nothing and far from nothing: it may follow when it is nearer the library than any
        off-topic question ("does it cost anything"), never when it is not ("what time is it?",
        "tell me a joke": searched alone, they are refused). Whether it needs the turn before, the
        search decides (``_needs_context``). ``follow_up_context`` "always" / "never" are the ablations."""
        if self.settings.follow_up_context != "auto":
            return self.settings.follow_up_context == "always"
        if carries_on(question):  # "and what if it's too low?" says it goes on, however far its words are
            return True
        if says_little(question):  # too little of its own for its closeness to the turn before to mean anything:
            return self._nearer_the_library(question, doc_ids)  # "does it cost anything" yes, "what time is it?" no
        before = self.parts.embed_query(previous)
        probes = self.parts.probe_vectors() @ before
        return float(self.parts.embed_query(question) @ before) > float(np.median(probes)) if len(probes) else True

    def _nearer_the_library(self, question: str, doc_ids: list[str]) -> bool:
        """Whether a question is closer in meaning to a passage of the scope than to every off-topic
        probe question ("does it cost anything" is; "what time is it?" is not): the test the refusal
        band reads as evidence that a question is about something else, turned round."""
        best = self.parts.retriever.dense.run(question, 1, doc_ids)
        return bool(best) and best[0][1] > (self._probe_nearness(question) or 0.0)

    def _probe_nearness(self, question: str, probes: np.ndarray | None = None) -> float | None:
        """The question's best cosine with an off-topic probe question, or with one of ``probes`` (None:
        no probes). Whether a turn that says little follows is judged against the topic probes alone: it
        is a little near every request ("is there anything for that")."""
        probes = self.parts.probe_vectors() if probes is None else probes
        return float(np.max(probes @ self.parts.embed_query(question))) if len(probes) else None

    def _continuing(
        self, first: FirstPass, history: Sequence[Turn], scope: Sequence[DocumentRow], named: list[NamedDocument]
    ) -> list[NamedDocument]:
        """The document a follow-up continues: that of the previous answer's leading source, when the
        question keeps its context (it needs the turn before it), names no document itself, and the
        scope holds others. "And if I'm still not happy after that?" after a complaints answer is
        about the same policy; searched across the library it found a flood form's loss-payment
        clause. Favoured as a named document is, never searched alone."""
        if not self.settings.follow_up_document or named or len(first.queries) < 2 or len(scope) < 2:
            return []
        docs = {d.name: d for d in scope}
        return [NamedDocument(docs[n], "", by_conversation=True) for n in history[-1].docs[:1] if n in docs]

    def _first_pass(
        self,
        queries: list[str],
        by_id: dict[str, DocumentRow],
        named: list[NamedDocument],
        decided: bool = False,
        before: Sequence[str] = (),
    ) -> FirstPass:
        """The question (a follow-up both with its context and alone) searched once, before any LLM call.
        ``decided``: whether it keeps its context is already known (the queries are searched as given).
        ``before``: the document the previous answer came from (``_turned_away``)."""
        retriever = self.parts.retriever
        lists: RankedLists = {}
        for i, query in enumerate(queries):
            # Token match reads a citizen's own words: a follow-up joined to the question before it
            # would reward passages about both, the old topic as much as what is asked now.
            in_own_words = len(queries) == 1 or i > 0
            lists.update(retriever.lists(query, list(by_id), i, named=named, reorder=in_own_words))
        own = queries[1] if len(queries) > 1 and not decided and self.settings.follow_up_context == "auto" else ""
        goes = bool(own) and goes_on(own)
        stands = bool(own) and (
            self._points_at_clause(own, list(by_id))
            or not _needs_context(lists, goes)
            or (not goes and _turned_away(lists, by_id, before))
        )
        if stands:  # the question stands alone: search it alone
            queries, lists = queries[1:], {ListKey(key.kind, key.query - 1): v for key, v in lists.items() if key.query}
        weights = (
            self._little_turn_weights(queries[1], lists, by_id) if len(queries) > 1 and says_little(queries[1]) else {}
        )
        if weights.get(ListKey("hybrid", 1)) == 0.0:  # its own words' search does not count: drop its lists
            lists = {key: v for key, v in lists.items() if key.query != 1}
        fused = retriever.fusion.run(ranked_for_fusion(lists), weights)
        preview = self.selector.candidates(fused[: self.settings.search_k], by_id)[:PREVIEW_PASSAGES]
        citations = [c.citation(i + 1) for i, c in enumerate(preview)]
        return FirstPass(queries, lists, fused, citations, _agreement(lists), weights)

    def _little_turn_weights(self, own: str, lists: RankedLists, by_id: dict[str, DocumentRow]) -> dict[ListKey, float]:
        """How much the lone search counts for a follow-up that keeps its context but says too little of
        its own to stand (query 1: its own words). One that names something ("and what about
        subsidence?") counts fully. Otherwise its few words searched alone ("is there anything for
        that", "how much would I have to pay myself?", "what about single trip" on a travel wording)
        find whatever they match: ``little_turn_own_search`` "joined" leaves it out, "agreeing" counts
        it as far as its best passages are among the joined search's best beyond what chance puts there
        (``beyond_chance``; the share is the one that weighs a rewrite), and
        "fused" counts it fully (2026-11-30-h-turns-that-say-little-searched-joined)."""
        mode = self.settings.little_turn_own_search
        lexical, doc_ids = self.parts.retriever.lexical.index.lexical_ready(), list(by_id)
        if mode == "fused" or names_something(own, lambda w: lexical.share_using(w, doc_ids)):
            return {}
        lone = ListKey("hybrid", 1)
        if mode == "joined":
            return {lone: 0.0}
        near = {cid for cid, _ in (lists.get(ListKey("hybrid", 0)) or [])[:AGREEMENT_DEPTH]}
        return {
            lone: beyond_chance(
                agreement_share(lists.get(lone) or [], near), len(near), sum(d.chunks for d in by_id.values())
            )
        }

    def _points_at_clause(self, question: str, doc_ids: list[str]) -> bool:
        """Whether a question names its own clause, by number ("what does clause 5.2 say?") or by the
        term it asks the meaning of ("What does Unoccupied mean?"): it says what it is about, so the
        question before it adds nothing to search."""
        follower = self.parts.references
        return bool(clause_references(question)) or bool(follower and follower.definitions_asked(question, doc_ids))

    def _rank(
        self, plan: QueryPlan, first: FirstPass, by_id: dict[str, DocumentRow], named: list[NamedDocument]
    ) -> Ranking:
        """Every planned query's lists, plus the chunks of a clause the question names, fused. The
        plan's queries begin with the first pass's, whose lists are reused."""
        retriever, doc_ids = self.parts.retriever, list(by_id)
        own = len(first.queries)
        planned = plan.queries[:own] == first.queries and len(plan.queries) > own
        lists: RankedLists = dict(first.lists)
        for i, query in enumerate(plan.queries[own:] if planned else [], start=own):
            lists.update(retriever.lists(query, doc_ids, i, named=named, reorder=False))
        refs = clause_references(plan.standalone)
        clause = retriever.clauses.run(refs, doc_ids) if refs else self._definitions(plan.standalone, doc_ids)
        ranking = ranked_for_fusion(lists)
        if clause:
            ranking[ListKey("clause")] = clause
        # What the rewrites must agree with: what the first pass found (a follow-up: with its
        # context and alone), which is also the order no expansion may push a passage below.
        anchor: Ranked = [(f.chunk_id, f.score) for f in first.fused]
        guard = planned and self.settings.expansion_guard
        weights = fusion_weights(ranking, self.settings.original_query_weight, planned, anchor if guard else None, own)
        weights.update({key: weights[key] * w for key, w in first.weights.items() if key in weights})
        fused = retriever.fusion.run(ranking, weights)
        if guard and anchor:
            fused = _keep_own_order(fused, anchor)
        kept = self.selector.candidates(fused[: self.selector.keep_fused(fused)], by_id)
        return Ranking(fused, kept, {cid for cid, _ in clause}, self._settled(plan, first, lists))

    def _definitions(self, question: str, doc_ids: list[str]) -> Ranked:
        """The definition of a term the question asks the meaning of, ranked like a named clause."""
        follower = self.parts.references
        return [(cid, 1.0) for cid in follower.definitions_asked(question, doc_ids)] if follower else []

    def _settled(self, plan: QueryPlan, first: FirstPass, lists: RankedLists) -> str:
        """The question the passages are scored against and the answer written to: a model's
        standalone follow-up when its own passages agree with the first pass's (at least half of its best
        10 among the first pass's best 20), else the question as the first pass searched it."""
        if plan.standalone in first.queries or plan.standalone not in plan.queries:
            return plan.standalone
        own = lists.get(ListKey("hybrid", plan.queries.index(plan.standalone))) or []
        near = {f.chunk_id for f in first.fused[:AGREEMENT_DEPTH]}
        return plan.standalone if agreement_share(own, near) >= 0.5 else first.queries[0]

    def _score(self, question: str, candidates: list[Passage], timings: Timings) -> Generator[Event, None, Scored]:
        parts = self.parts
        if parts.reranker is not None and self.settings.rerank and candidates:
            yield StageEvent("reranking")
            with timings.measure("rerank"):
                return CrossEncoderScorer(parts.reranker, parts.thresholds.reranker, self.settings).run(
                    question, candidates
                )
        with timings.measure("relevance"):
            scorer = CosineScorer(
                parts.embed_query, parts.vectors, parts.thresholds.cosine, self.settings.rerank_max_chunks
            )
            return scorer.run(question, candidates)

    def _decide(
        self,
        question: str,
        scored: Scored,
        ranking: Ranking,
        first: FirstPass,
        scope: Sequence[DocumentRow],
        has_sources: bool,
    ) -> Verdict:
        """The band: the best passage's cosine against what off-topic questions reach in this scope."""
        cosine = (
            scored.relevance if scored.source is ScoreSource.COSINE else self._best_cosine(question, ranking.candidates)
        )
        leader = scored.candidates[0].chunk if scored.candidates else None
        clause_led = leader is not None and (
            leader.chunk_id in ranking.clause_ids or asks_meaning_of_title(question, leader.section)
        )
        lexical = max(
            (score for key, ranked in first.lists.items() if key.kind == "lexical" for _, score in ranked[:1]),
            default=0.0,
        )
        nearness = self._probe_nearness(question)
        signals = Signals(
            cosine=cosine,
            lexical=lexical,
            agreement=first.confidence > 0,
            clause_led=clause_led,
            probe_nearness=nearness,
            request_nearness=self._probe_nearness(question, self.parts.request_vectors()),
        )
        return Guard().run(signals, self.parts.calibration(scope), scored, has_sources)

    def _best_cosine(self, question: str, candidates: list[Passage]) -> float:
        scorer = CosineScorer(self.parts.embed_query, self.parts.vectors, self.parts.thresholds.cosine, len(candidates))
        return max(scorer.cosines(question, candidates), default=0.0)

    def _supporting(self, question: str, sources: list[Citation], by_id: dict[str, DocumentRow]) -> list[Citation]:
        """The clauses and definitions the sources point to, numbered after them. A definition the
        question turns on that was retrieved below the quoted sources is marked as referenced in
        place (it keeps its number), so the answer quotes it."""
        follower = self.parts.references
        if follower is None:
            return []
        added: list[Citation] = []
        position = {s.chunk_id: i for i, s in enumerate(sources)}
        for item in follower.run(question, sources, by_id, shown=EXTRACTIVE_SOURCES):
            mark = {"referenced_by": [item.referenced_by], "reference": item.reason}
            at = position.get(item.chunk.chunk_id)
            if at is not None:
                sources[at] = sources[at].model_copy(update=mark)
                continue
            citation = Passage(item.chunk, item.doc, 0.0).citation(len(sources) + len(added) + 1)
            added.append(citation.model_copy(update=mark))
        return added

    def _social(self, question: str, reply: str) -> Answer:
        """The answer to a turn that asks nothing of the documents (``answer.social``)."""
        return Answer(
            question=question,
            standalone_question=question,
            answer=reply,
            mode="refused",
            refused=True,
            refusal_reason=NOT_A_QUESTION,
            citations=[],
            profile=self.parts.profile,
            llm_model=self.llm.name if self.llm else None,
        )

    def _draft(
        self,
        question: str,
        plan: QueryPlan,
        first: FirstPass,
        ranking: Ranking,
        scored: Scored,
        verdict: Verdict,
        named: list[str],
        usage: LLMUsage,
        timings: Timings,
    ) -> AnswerDraft:
        retrieved, scores = evaluation_ranking(scored.candidates, ranking.fused)
        return AnswerDraft(
            question=question,
            standalone_question=plan.standalone,
            queries=plan.queries,
            expansion=plan.expansion,
            relevance=verdict.relevance,
            first_pass_score=first.confidence,
            refusal_threshold=verdict.threshold,
            retrieved=retrieved,
            retrieved_scores=scores,
            profile=self.parts.profile,
            llm_model=self.llm.name if self.llm else None,
            band=verdict.band,
            named_documents=named,
            timings=timings,
            usage=usage,
        )


def _keep_own_order(fused: list[Fused], own: Ranked) -> list[Fused]:
    """The expanded ranking, with every passage at least as high as the question alone ranked it:
    expansions add passages and may lift them, never push out what the question itself found
    (the two orders interleave, the question's first). Scores keep their order by position."""
    by_id = {f.chunk_id: f for f in fused}
    own_rank = {cid: rank for rank, (cid, _) in enumerate(own) if cid in by_id}
    fused_rank = {f.chunk_id: rank for rank, f in enumerate(fused)}
    last = len(fused) + len(own)
    order = sorted(
        by_id,
        key=lambda cid: (min(fused_rank[cid], own_rank.get(cid, last)), own_rank.get(cid, last), fused_rank[cid]),
    )
    scores = [f.score for f in fused]
    return [replace(by_id[cid], score=score) for cid, score in zip(order, scores)]


def goes_on(question: str) -> bool:
    """Whether a later turn's own words say it goes on from the question before it: it opens by
    carrying on ("and the cash that was in it?"), asks nothing of its own ("I only told the bank 2
    days later"), or names too little of its own to stand ("how much would I have to pay myself?")."""
    return carries_on(question) or adds_to_story(question) or says_little(question)


def _needs_context(lists: RankedLists, said_to_go_on: bool = False) -> bool:
    """Whether a question that may lean on the previous one (query 0: the two joined; query 1:
    the question alone) does. Always when its own words say it goes on from the turn before
    (``goes_on``: "and the cash that was in it?", "and what about subsidence?", "I only told the bank
    2 days later"), whatever its own search finds. Otherwise not when its own search is confident (dense and
    BM25 agree on its best passage: "My son broke the TV, is that covered?"), nor when the joined
    search finds nothing closer in meaning than the question alone does."""
    joined, alone = lists.get(ListKey("dense", 0)) or [], lists.get(ListKey("dense", 1)) or []
    if said_to_go_on:
        return bool(joined)
    alone_lexical = lists.get(ListKey("lexical", 1)) or []
    if alone and alone_lexical and alone[0][0] == alone_lexical[0][0]:
        return False
    return bool(joined) and (not alone or joined[0][1] > alone[0][1])


def _turned_away(lists: RankedLists, by_id: dict[str, DocumentRow], before: Sequence[str]) -> bool:
    """Whether a question has turned to another document than the one the previous answer came from:
    searched alone, its best passage and its closest in meaning are in one other document ("whats the
    excess on my travel insurance" after a contract's liability clause; "my landlord says he's keeping
    £200 of my deposit…" after a car insurance question). Joined to the question before, its search
    found that question's clauses again, closer in meaning than anything it finds alone, and it was
    taken for a follow-up. A turn whose words say it goes on (``goes_on``: "and how long does it
    last?", "only if the water actually reaches us?") is not asked this."""
    alone, fused = lists.get(ListKey("dense", 1)) or [], lists.get(ListKey("hybrid", 1)) or []
    if not before or not alone or not fused:
        return False
    found = {doc_of(alone[0][0]), doc_of(fused[0][0])}
    return len(found) == 1 and found <= set(by_id) and by_id[next(iter(found))].name not in before


def _naming_changed(lists: RankedLists, depth: int = PREVIEW_PASSAGES) -> bool:
    """Whether favouring the named documents changed the question's best passages (the answer then
    says where it searched mainly)."""
    plain = lists.get(ListKey("plain"))
    return plain is not None and [c for c, _ in plain[:depth]] != [c for c, _ in lists[ListKey("hybrid")][:depth]]


def _agreement(lists: RankedLists) -> float:
    """Top cosine when dense and BM25 agree on the best chunk, else 0: agreement is what
    predicts a good first pass (82 % hit@5 vs 67-71 % without; cosine alone does not)."""
    dense = lists.get(ListKey("dense")) or []
    lexical = lists.get(ListKey("lexical")) or []
    return dense[0][1] if dense and lexical and dense[0][0] == lexical[0][0] else 0.0


def evaluation_ranking(kept: Sequence[Passage], fused: Sequence[Fused]) -> tuple[list[str], list[float]]:
    """The final ranking for evaluation: the kept passages (with their relevance scores), then
    the rest of the fused list (with their RRF scores), ``RANKING_DEPTH`` in all."""
    kept_ids = [c.chunk.chunk_id for c in kept]
    skip = set(kept_ids)
    rest = [f for f in fused if f.chunk_id not in skip][: max(0, RANKING_DEPTH - len(kept_ids))]
    return kept_ids + [f.chunk_id for f in rest], [round(c.score, 4) for c in kept] + [round(f.score, 6) for f in rest]


def _summary(scope: Sequence[DocumentRow]) -> str:
    """What the documents are, for the expansion prompt."""
    return " | ".join(d.summary or d.title for d in scope[:8])[:600]

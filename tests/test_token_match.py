"""Token match: the best fused candidates re-ordered by late interaction on the packaged model's
word-piece vectors, rare query pieces counting most, the fused scale kept."""

from __future__ import annotations

import numpy as np
import pytest

from policybot.answer.naming import split_naming
from policybot.answer.retrieval import ListKey
from policybot.answer.token_match import TokenMatch, content_pieces, idf_weights, standardised
from policybot.evaluation.harness import CONFIGS
from policybot.models.embeddings import TokenVectors
from policybot.service import PolicyBot
from tests.conftest import make_settings, supply_contracts

TEXTS = {
    "fences": "Storm damage to fences and gates is not covered.",
    "pets": "Damage caused by pets or domestic animals chewing, scratching or tearing is not covered.",
    "car": "Theft from an unlocked car is not covered.",
}


def lookup(calls: list[list[str]] | None = None):
    def texts(ids):
        if calls is not None:
            calls.append(list(ids))
        return {cid: TEXTS[cid] for cid in ids}

    return texts


def test_a_passage_that_matches_the_citizen_s_words_in_meaning_moves_up(embedder):
    fused = [("fences", 0.9), ("pets", 0.8), ("car", 0.7)]
    match = TokenMatch(embedder, weight=2.0)
    scores = match.scores("My dog chewed the sofa, am I covered?", list(TEXTS), lookup())
    assert scores is not None and scores[1] == max(scores)  # "dog", "chewed" meet "pets", "chewing"
    ranked = match.run("My dog chewed the sofa, am I covered?", fused, lookup())
    assert [cid for cid, _ in ranked][0] == "pets"
    assert [score for _, score in ranked] == [0.9, 0.8, 0.7]  # each rank keeps the fused scale


def test_no_weight_or_one_candidate_leaves_the_order_alone(embedder):
    fused = [("fences", 0.9), ("pets", 0.8), ("car", 0.7)]
    assert TokenMatch(embedder, weight=0.0).run("my dog chewed the sofa", fused, lookup()) == fused
    assert TokenMatch(embedder).run("my dog chewed the sofa", fused[:1], lookup()) == fused[:1]
    assert TokenMatch(embedder).run("?", fused, lookup()) == fused  # no content piece to match


def test_only_the_best_candidates_are_looked_at_again_and_their_pieces_are_kept(embedder):
    fused = [("fences", 0.9), ("pets", 0.8), ("car", 0.7)]
    calls: list[list[str]] = []
    match = TokenMatch(embedder, depth=2, pool=2, weight=2.0)
    first = match.run("My dog chewed the sofa", fused, lookup(calls))
    assert first[2] == ("car", 0.7)  # below the depth: untouched
    assert calls == [["fences", "pets"]]
    match.run("Did the storm knock my fence down?", fused, lookup(calls))
    assert calls == [["fences", "pets"]]  # the passages' pieces were kept, not read again


def test_rarity_is_measured_over_a_wider_pool_than_is_reordered(embedder):
    fused = [("fences", 0.9), ("pets", 0.8), ("car", 0.7)]
    calls: list[list[str]] = []
    match = TokenMatch(embedder, depth=2, weight=2.0)
    assert match.pool == 4  # twice the depth by default
    ranked = match.run("My dog chewed the sofa", fused, lookup(calls))
    assert calls == [["fences", "pets", "car"]]  # read for the IDF ...
    assert ranked[2] == ("car", 0.7)  # ... but not moved: below the depth
    assert match._passages["car"].vectors is None  # so only its pieces were needed, not the model
    assert [cid for cid, _ in ranked[:2]] == ["pets", "fences"]


def test_a_question_whose_words_its_first_passages_all_hold_is_left_alone(embedder):
    """No gap to bridge: BM25 and the sentence vector have seen the question's own words."""
    fused = [("car", 0.9), ("pets", 0.8), ("fences", 0.7)]
    match = TokenMatch(embedder, weight=5.0)
    question = "Storm damage to fences?"  # storm, damag, fenc: all in the third passage
    assert not match.has_gap(question, ["car", "pets", "fences"], lookup())
    assert match.run(question, fused, lookup()) == fused
    assert match.has_gap("Did the storm knock my fence down?", ["car", "pets", "fences"], lookup())  # knock


def test_the_cache_keeps_at_most_its_size(embedder):
    match = TokenMatch(embedder, weight=1.0, cache_size=2)
    match.scores("my dog chewed the sofa", list(TEXTS), lookup())
    assert len(match._passages) == 2


def test_a_query_piece_every_candidate_shares_counts_least():
    weights = idf_weights(["zenbo", "assign", "delaware"], [frozenset({"zenbo", "assign"}), frozenset({"zenbo"})])
    assert weights is not None and abs(float(weights.sum()) - 1.0) < 1e-9
    zenbo, assign, delaware = weights
    assert zenbo < assign < delaware
    assert idf_weights([], [frozenset({"zenbo"})]) is None


def test_stopwords_function_words_and_punctuation_of_the_query_are_left_out():
    pieces = ("can", "i", "hand", "the", "contract", "over", "?", "and", "what", "about", "not", "before")
    tokens = TokenVectors(pieces, np.eye(len(pieces), dtype=np.float32))
    kept = [tokens.pieces[i] for i in content_pieces(tokens)]
    assert kept == ["hand", "contract", "over", "not", "before"]  # a policy turns on negations and times


def test_a_function_word_missing_from_the_passages_is_no_gap(embedder):
    match = TokenMatch(embedder)
    assert not match.has_gap("and what about the fences, really?", list(TEXTS), lookup())


def test_standardised_values_and_equal_ones():
    assert np.allclose(standardised([1.0, 2.0, 3.0]), [-1.224744871, 0.0, 1.224744871])
    assert np.allclose(standardised([2.0, 2.0]), [0.0, 0.0])


@pytest.fixture(scope="module")
def contracts(tmp_path_factory):
    """Two agreements whose every passage names their parties, token match on."""
    return supply_contracts(tmp_path_factory.mktemp("token-contracts"), token_match=True)


def test_each_fused_list_is_reordered_by_the_question_without_its_naming_words(contracts):
    c = contracts.components
    docs = c.index.documents()
    ids = [d.doc_id for d in docs]
    question = "Can Zenbo hand our supply agreement over to another company?"
    named = c.name_documents(question, docs)
    retriever = c.retriever
    match = retriever.token_match
    assert isinstance(match, TokenMatch)
    with_match = retriever.lists(question, ids, named=named)
    retriever.token_match = None
    try:
        without = retriever.lists(question, ids, named=named)
    finally:
        retriever.token_match = match
    words = split_naming(question, named)[0] if named else question
    for kind in ("hybrid", "plain") if named else ("hybrid",):
        expected = match.run(words, without[ListKey(kind)], retriever._texts)
        assert with_match[ListKey(kind)] == expected
    assert with_match[ListKey("dense")] == without[ListKey("dense")]  # each retriever's own list stays
    top = c.registry.chunks(c.index.collection, [with_match[ListKey("hybrid")][0][0]])
    assert "assign" in next(iter(top.values())).text


def test_on_by_default_as_its_record_decides_and_the_ablation_turns_it_off(tmp_path):
    """It lifts contracts R@5 and costs no set more than noise (eval/decisions/2026-11-28-token-match.md)."""
    on = PolicyBot(make_settings(tmp_path / "home")).components.retriever.token_match
    assert isinstance(on, TokenMatch) and on.depth == 10 and on.weight == 0.5 and on.pool == 20
    assert PolicyBot(make_settings(tmp_path / "off", token_match=False)).components.retriever.token_match is None
    ablation = CONFIGS["no-token-match"]
    assert ablation.overrides["token_match"] is False and ablation.overrides["fast_mode"] is True

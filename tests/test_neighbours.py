"""A question's words and a passage's words for the same things, found by the packaged embedding
model on single words; and the extractive answer quoting the sentence that words it differently."""

import pytest

from policybot.answer.neighbours import WordNeighbours
from policybot.settings import Settings

THRESHOLD = Settings().word_neighbour_thresholds["all-MiniLM-L6-v2"]


def test_a_citizen_s_word_finds_the_policy_s_word_for_it_and_nothing_unrelated(embedder):
    near = WordNeighbours(embedder.embed, THRESHOLD).run(
        "My kids' bike was stolen from the condo garage",
        ["Bicycles belonging to children are covered against theft.", "Condominium buildings need an association."],
    )
    assert set(near["bike"]) == {"bicycl"}  # stems, as BM25 and the quote choice count words
    assert set(near["kid"]) == {"children"}
    assert set(near["condo"]) == {"condominium"}
    assert near["bike"]["bicycl"] >= THRESHOLD
    assert "garag" not in near  # no passage word means a garage
    assert not any("associ" in found or "build" in found for found in near.values())


def test_a_word_the_passages_use_themselves_is_not_given_their_other_words_for_it(embedder):
    finder = WordNeighbours(embedder.embed, THRESHOLD)
    texts = ["This site collects browsing data.", "Our website uses cookies."]
    assert "websit" not in finder.run("Does this website collect my data?", texts)  # "site" would count it twice
    near = finder.run("Does this website collect my data?", texts[:1])
    assert near == {"websit": {"site": pytest.approx(0.92, abs=0.05)}}


def test_words_to_skip_are_not_looked_up_and_word_vectors_are_embedded_once(embedder):
    asked: list[list[str]] = []

    def embed(words):
        asked.append(list(words))
        return embedder.embed(words)

    finder = WordNeighbours(embed, THRESHOLD)
    near = finder.run("Is my bike covered under our Stryker deal?", ["A bicycle is covered."], skip={"stryker", "deal"})
    assert "bike" in near and "stryker" not in near and "deal" not in near
    assert "stryker" not in asked[0]
    finder.run("Is my bike covered?", ["A bicycle is covered."])
    assert len(asked) == 1  # every word already has its vector: nothing embedded again
    finder.run("Is my scooter covered?", ["A bicycle is covered."])
    assert asked[1] == ["scooter"]


def test_the_quote_is_the_sentence_that_words_the_question_differently(embedder):
    """ "Is my bike covered if it is stolen from the garden?": the garden furniture sentence shares two
    of its words ("covered", "garden"), the one that answers shares one and says "bicycle" and
    "theft". With the passage's words for the question's, the answer quotes the one that answers."""
    from policybot.answer.writers import ExtractiveWriter
    from tests.answers import _citation, draft

    text = (
        "Garden furniture is covered up to $500 for any one incident.\n"
        "Theft of a bicycle left outside the Home is covered only if it was locked to a fixed object."
    )
    source = _citation(1, text, cited=False, verified=False, doc="home.pdf", section="3.4 Outside", title="")
    question = "Is my bike covered if it is stolen from the garden?"
    plain = ExtractiveWriter(embedder.embed, embedder.embed_query).run(draft(), question, [source]).answer
    assert '"Garden furniture is covered' in plain.splitlines()[0]
    finder = WordNeighbours(embedder.embed, THRESHOLD)
    answer = ExtractiveWriter(embedder.embed, embedder.embed_query, neighbours=finder).run(draft(), question, [source])
    assert '"Theft of a bicycle left outside the Home is covered only if it was locked' in answer.answer.splitlines()[0]


def test_the_answer_pipeline_gets_the_finder_only_when_switched_on_with_a_threshold_for_its_model(tmp_path):
    from policybot.components import Components
    from tests.conftest import make_settings

    settings = make_settings(tmp_path)
    components = Components(settings)
    finder = components.answer_parts(settings).neighbours
    assert isinstance(finder, WordNeighbours) and finder.threshold == THRESHOLD
    assert components.answer_parts(settings).neighbours is finder  # one per process: its word vectors are kept
    assert components.answer_parts(settings.model_copy(update={"word_neighbours": False})).neighbours is None
    assert components.answer_parts(settings.model_copy(update={"quote_choice": "meaning"})).neighbours is None
    unknown = make_settings(tmp_path / "other", word_neighbour_thresholds={})
    assert Components(unknown).answer_parts(unknown).neighbours is None  # no measured threshold: not guessed

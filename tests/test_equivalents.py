"""A citizen's word and the policy's word for the same thing ("excess" and "deductible"), searched
beside the question only where the documents never use the citizen's word."""

from typing import Callable

from policybot.answer.equivalents import Equivalents
from policybot.service import PolicyBot
from policybot.store.lexical import Tokenizer
from tests.conftest import make_settings, sample_home


def _equivalents(words: str) -> Callable[[str], str]:
    """What a question is searched beside, over documents that use exactly ``words``."""
    stems, equivalents = set(Tokenizer()(words)), Equivalents()
    return lambda question: equivalents.run(question, stems.__contains__)


def test_a_word_the_documents_never_use_is_searched_also_as_theirs():
    us = _equivalents("the deductible applies to each claim for stolen jewelry")
    assert us("burst pipe excess?") == "deductible"
    assert us("my jewellery was nicked").split() == ["jewelry", "stolen"]  # "theft": not theirs
    assert us("my jewelry was stolen") == ""  # their own words: nothing added


def test_a_library_that_uses_the_citizen_s_word_is_searched_for_it_alone():
    uk = _equivalents("an excess applies to every claim; the deductible of the flood form")
    assert uk("what is the excess?") == ""
    assert uk("what is the deductible?") == ""


def test_everyday_words_are_searched_as_the_policy_s_but_not_the_other_way():
    policy = _equivalents("theft of a vehicle; stolen goods; nicked")
    assert set(policy("someone took my van").split()) == {"vehicle"}
    assert policy("is theft of a vehicle covered?") == ""


def test_a_word_with_a_second_sense_is_not_searched_as_another():
    """ "fired" is stemmed as "fire": a kitchen fire is not a dismissal; "flat" is also a flat roof."""
    table = Equivalents().table
    stem = Tokenizer()
    assert stem("fired")[0] not in table and stem("flat")[0] not in table
    assert {"attorney", "flat"}.isdisjoint(word for words in table.values() for word in words)


def test_the_excess_a_citizen_asks_about_finds_the_policy_s_deductible(tmp_path):
    """The sample policy says "Deductible" throughout and never "excess": asked in British words,
    the voluntary deductible clause is found only when searched also as "deductible"."""
    home = sample_home(tmp_path / "home")
    question = "Can I choose a bigger excess to make the insurance cheaper?"

    def best(on: bool) -> list[str]:
        bot = PolicyBot(make_settings(home, equivalent_words=on))
        return [hit.section for hit in bot.search(question, k=5).hits]

    assert any("5.5 Voluntary deductible" in section for section in best(True)), best(True)
    assert not any("deductible" in section.lower() for section in best(False)[:1])


def test_the_answer_says_which_of_the_documents_words_were_searched_too(tmp_path):
    bot = PolicyBot(make_settings(sample_home(tmp_path / "home")))
    answer = bot.ask("burst pipe excess?", use_llm=False)
    assert answer.also_searched == ["deductible"]
    assert "Deductible" in answer.answer.splitlines()[0] or "deductible" in answer.answer.splitlines()[0]
    assert bot.ask("burst pipe deductible?", use_llm=False).also_searched == []

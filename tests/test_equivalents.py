"""A citizen's word and the policy's word for the same thing ("excess" and "deductible"), searched
beside the question only where the documents never use the citizen's word."""

from typing import Callable

from policybot.answer.equivalents import Equivalents, without_set_phrases
from policybot.schemas import Answer
from policybot.service import PolicyBot
from policybot.store.lexical import Tokenizer
from tests import pdfs
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


def _equivalents_over(texts: list[str]) -> Callable[[str], str]:
    """As ``_equivalents``, reading the passages themselves where a word has a set phrase."""
    tokenize, equivalents = Tokenizer(), Equivalents()
    stems = {stem for text in texts for stem in tokenize(text)}
    return lambda question: equivalents.run(
        question, stems.__contains__, lambda stem: [t for t in texts if stem in tokenize(t)]
    )


def test_a_word_the_documents_use_only_in_a_set_phrase_of_another_sense_counts_as_unused():
    """The flood forms say "in excess of", "excess insurance" and "actual cash values", never
    "excess" for their deductible nor "cash" for money."""
    forms = _equivalents_over(
        [
            "Payment in excess of the limit is not made. If the other policy is excess insurance, this one pays first.",
            "A separate deductible applies to the building. Actual cash values are listed.",
            "We do not insure money, currency or securities.",
        ]
    )
    assert forms("whats the excess on that") == "deductible"
    assert forms("I kept $3,000 in cash in a box") == "money currency"
    # The question's own set phrase asks about a way of settling a claim, not about money.
    assert forms("do we get replacement cost or actual cash value?") == ""
    # A use outside the set phrases is a use: nothing is added.
    uk = _equivalents_over(["An excess of $250 applies, and nothing in excess of the limit is paid.", "deductible"])
    assert uk("whats the excess on that") == ""


def _ask_over(tmp_path, path, question: str) -> Answer:
    """The extractive answer to a question over a library of one generated PDF."""
    bot = PolicyBot(make_settings(tmp_path / "home"))
    assert bot.ingest_file(path).status == "ingested"
    return bot.ask(question, use_llm=False)


def test_the_british_excess_finds_the_deductible_of_a_library_that_says_excess_only_in_in_excess_of(tmp_path):
    """Over a real index: the word is looked up in the passages that use it."""
    path = pdfs.simple_pdf(
        tmp_path / "flood-form.pdf",
        [
            "Deductibles. A deductible of $1,250 applies separately to the building and to its contents.",
            "Loss payment. We will not pay any amount in excess of the limit shown on the declarations page.",
            "Other insurance. If the other policy is excess insurance, this policy is primary.",
            "Suit against us. You must start any suit within one year of the written denial of the claim.",
        ],
        heading="Flood Policy",
    )
    answer = _ask_over(tmp_path, path, "how much is the excess?")
    assert answer.also_searched == ["deductible"]
    assert "$1,250" in answer.answer.split("\n\n")[0]


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


def test_someone_hurt_finds_the_liability_clauses_that_say_bodily_injury(tmp_path):
    """ "hurt" and "injured" are not stemmed as "injury": the liability clauses ("accidental bodily
    injury to any person") are found by a citizen's words only when searched also as theirs."""
    home = sample_home(tmp_path / "home")
    question = "I accidentally hurt someone while cycling, am I covered?"

    def best(on: bool) -> str:
        bot = PolicyBot(make_settings(home, equivalent_words=on))
        return bot.search(question, k=1).hits[0].section

    assert "liability" in best(True).lower(), best(True)
    assert "liability" not in best(False).lower()
    assert _equivalents("accidental bodily injury to any person")("a guest was injured on our stairs") == "injury"


def test_the_answer_says_which_of_the_documents_words_were_searched_too(tmp_path):
    bot = PolicyBot(make_settings(sample_home(tmp_path / "home")))
    answer = bot.ask("burst pipe excess?")
    assert answer.also_searched == ["deductible"]
    assert "Deductible" in answer.answer.splitlines()[0] or "deductible" in answer.answer.splitlines()[0]
    assert bot.ask("burst pipe deductible?", use_llm=False).also_searched == []


def test_the_quote_is_chosen_by_the_documents_word_searched_for_the_user_s(tmp_path):
    """ "mudslide" is searched also as "mudflow": the definitions passage is quoted by the
    sentence that says "Mudflow", not by the one sharing "flood" with the question."""
    path = pdfs.simple_pdf(
        tmp_path / "flood-definitions.pdf",
        [
            "Emergency Program. The initial phase of a community's participation in the flood program. "
            "Mudflow. A river of liquid and flowing mud on the surface of normally dry land areas.",
            "Deductibles. A deductible of $1,250 applies separately to the building and to its contents.",
            "Suit against us. You must start any suit within one year of the written denial of the claim.",
        ],
        heading="Flood Policy Definitions",
    )
    answer = _ask_over(tmp_path, path, "mudslide hit my house - flood cover?")
    assert answer.also_searched == ["mudflow"]
    first = next(line for line in answer.answer.splitlines() if line.startswith("1. "))
    assert "Mudflow. A river of liquid" in first, answer.answer


def test_a_set_phrase_shares_no_word_with_a_question_that_does_not_say_it():
    unit = "11. Buildings if more than 49 percent of the actual cash value of the building is below ground."
    assert "cash" not in without_set_phrases(unit, "I kept $3,000 in cash in a box")
    assert "actual cash value" in without_set_phrases(unit, "Do they pay the actual cash values?")
    assert "actual cash value" in without_set_phrases(unit, "what is the cash value of my house?")  # said within it
    excess = without_set_phrases("We pay nothing in excess of the limit.", "whats the excess")
    assert excess == "We pay nothing   the limit."


def test_a_passage_is_not_quoted_for_a_word_of_its_set_phrase(tmp_path):
    """ "cash" in the question is not the "cash" of "actual cash value": the list of property not
    insured is quoted by its item on money (which shares "money" and "currency", searched for "cash"),
    not by the item that says "actual cash value" and "flood"."""
    b = pdfs.PdfBuilder()
    b.heading("Flood Policy")
    for heading, lines in (
        ("IV. Property Not Insured", ["We do not insure any of the following:"]),
        ("V. Deductibles", ["A deductible of $1,250 applies separately to the building and to its contents."]),
        ("VI. Suit Against Us", ["You must start any suit within one year of the written denial of the claim."]),
    ):
        b.heading(heading, level=2)
        for line in lines:
            b.paragraph(line)
        if heading.startswith("IV."):
            b.paragraph("6. Buildings if 49 percent of the actual cash value is below the base flood elevation.")
            b.paragraph(
                "7. Accounts, bills, coins, currency, deeds, medals, money, securities or other valuable papers."
            )
    path = b.save(tmp_path / "flood-form.pdf")
    answer = _ask_over(tmp_path, path, "I kept my cash in a box in the closet and the flood ruined it, is it insured?")
    quotes = [line for line in answer.answer.splitlines() if line.startswith(("1. ", "2. "))]
    assert quotes and "coins, currency" in quotes[0], answer.answer

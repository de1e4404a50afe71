"""Query writing: parsing messy expansion replies, follow-ups, clause references."""

import pytest

from policybot.answer.query import (
    adds_to_story,
    carries_on,
    clause_references,
    merge_queries,
    names_something,
    own_words,
    parse_expansion,
    says_little,
    section_matches,
    with_context,
    without_ask,
)


@pytest.mark.parametrize(
    "reply, rewrites, hyde",
    [
        (
            '{"hyde": "Water damage is covered.", "rewrites": ["a query", "b query"]}',
            ["a query", "b query"],
            "Water damage is covered.",
        ),
        (
            'Sure! Here you go:\n```json\n{"hyde": "H.", "rewrites": ["one", "two"]}\n```\nHope it helps',
            ["one", "two"],
            "H.",
        ),
        ('{"hyde": "H.", "queries": ["from queries key"]}', ["from queries key"], "H."),
        ('{"hyde": "H.", "rewrites": "semi; colon\\nsplit"}', ["semi", "colon", "split"], "H."),
        ('{"hyde": ["list", "of", "words"], "rewrites": [1, "real one", null]}', ["real one"], "list of words"),
        (
            "1. first rewrite\n2) second rewrite\n- third rewrite",
            ["first rewrite", "second rewrite", "third rewrite"],
            "",
        ),
        ('{"hyde": "", "rewrites": ["dup", "DUP", "  dup ", "ok"]}', ["dup", "ok"], ""),
    ],
)
def test_parse_expansion_tolerates_messy_replies(reply, rewrites, hyde):
    exp = parse_expansion(reply, max_rewrites=5)
    assert exp.rewrites == rewrites
    assert exp.hyde == hyde


def test_parse_expansion_caps_rewrites():
    reply = '{"rewrites": ["q1", "q2", "q3", "q4", "q5", "q6"]}'
    assert parse_expansion(reply, max_rewrites=4).rewrites == ["q1", "q2", "q3", "q4"]


@pytest.mark.parametrize("reply", ["", "no structure here at all", '{"hyde": 1, "rewrites": [', "null"])
def test_parse_expansion_rejects_unusable_replies(reply):
    with pytest.raises(ValueError):
        parse_expansion(reply, max_rewrites=4)


def test_merge_queries_keeps_the_original_first():
    assert merge_queries("Q?", ["q?", "other", "", "other"]) == ["Q?", "other"]


def test_context_is_the_previous_user_question_only():
    assert with_context("and for floods?", []) == "and for floods?"
    assert with_context("and for floods?", ["What is the deductible?"]) == "What is the deductible; and for floods?"
    # Never a searched-as text: three turns join two questions, not three.
    first, second = "Someone stole my bike from the garden. Am I covered?", "My son broke the TV, is that covered?"
    assert with_context("and if it was only 3 weeks?", [first, second]) == (
        "My son broke the TV, is that covered; and if it was only 3 weeks?"
    )


@pytest.mark.parametrize(
    "question, refs",
    [
        ("What does clause 5.2 say?", ["5.2"]),
        ("Explain Section VII and Article 12", ["VII", "12"]),
        ("Under §3.2, who pays?", ["3.2"]),
        ("Is wear and tear covered?", []),
        ("Explain 2.5(c)", ["2.5(c)"]),  # a bare clause number, with its list item
        ("What does clause 2.5(c) exclude?", ["2.5(c)"]),
        ("1.18 Unoccupied: what does it mean?", ["1.18"]),
        ("The repair cost $5.2 million, is the 12.5% excess applied?", []),  # amounts, not clauses
    ],
)
def test_clause_references(question, refs):
    assert clause_references(question) == refs


@pytest.mark.parametrize(
    "section, refs, expected",
    [
        ("Section 5 Deductibles > 5.2 Escape of water deductible", ["5.2"], True),
        ("Section 5 Deductibles > 5.20 Something", ["5.2"], False),
        ("VII. General Conditions > G. Requirements in Case of Loss", ["VII"], True),
        ("Section 12 Complaints", ["12"], True),
        ("Section 1 Definitions > 1.12 Personal Possessions", ["12"], False),
    ],
)
def test_section_matches(section, refs, expected):
    assert section_matches(section, refs) is expected


def test_a_later_question_is_offered_with_its_context_and_alone():
    """Both are searched; the pipeline keeps the context only when the search needs it."""
    from policybot.answer.conversation import Turn
    from policybot.answer.query import QueryPlanner

    history = [
        Turn(
            question="How does the deductible apply to water damage?",
            standalone="How does the deductible apply to water damage?",
            answer="$750 [1]",
        )
    ]
    follow_up = "And what if the leak happened slowly over months?"
    assert QueryPlanner.first_queries(follow_up, history) == [
        "How does the deductible apply to water damage; And what if the leak happened slowly over months?",
        follow_up,
    ]
    history.append(Turn(question="How do I cancel my policy?", standalone="x; How do I cancel my policy?", answer="."))
    assert QueryPlanner.first_queries("and the refund?", history)[0] == "How do I cancel my policy; and the refund?"
    assert QueryPlanner.first_queries(follow_up, []) == [follow_up]


def test_a_models_plan_for_a_follow_up_comes_after_the_first_pass():
    """The first pass's queries lead; the model's standalone and rewrites follow, once each, and
    with no standalone from the model the question is the one the first pass searched first."""
    from policybot.answer.query import PlanRequest, QueryPlan, after_first_pass

    searched = ["the deductible for water; and if it was slow?", "and if it was slow?"]
    request = PlanRequest("and if it was slow?", [], searched, 0.0, "a policy")
    model = QueryPlan("Is a slow leak covered?", ["Is a slow leak covered?", "gradual leak", "AND IF IT WAS SLOW?"])
    plan = after_first_pass(request, model)
    assert plan.queries == [*searched, "Is a slow leak covered?", "gradual leak"]
    assert plan.standalone == "Is a slow leak covered?"
    none = after_first_pass(request, QueryPlan("and if it was slow?", ["and if it was slow?", "gradual leak"]))
    assert none.standalone == searched[0] and none.queries == [*searched, "gradual leak"]


def test_a_question_asking_what_a_clause_title_means_names_that_clause():
    from policybot.answer.query import asks_meaning_of_title

    definition = "Section 1 Definitions > 1.9 Insured Person"
    assert asks_meaning_of_title("What is the definition of an Insured Person?", definition)
    assert asks_meaning_of_title("what does insured person mean", definition)
    assert not asks_meaning_of_title("Is an Insured Person covered abroad?", definition)  # not asked what it means
    assert not asks_meaning_of_title("What does Insured mean?", definition)  # part of a title is not the title
    assert asks_meaning_of_title("What is the meaning of Flood?", "II. Definitions > A. Flood")
    assert not asks_meaning_of_title("What does 5.2 mean?", "Section 5 > 5.2")  # a number is not a title


@pytest.mark.parametrize(
    "question, searched",
    [
        ("my dog chewed the sofa, can i claim?", "my dog chewed the sofa"),
        (
            "Someone hacked my computer and my photos are gone. Can I claim for that?",
            "Someone hacked my computer and my photos are gone",
        ),
        # Written on without a stop: the closing ask is left out all the same.
        ("my dog chewed the sofa can i claim for it", "my dog chewed the sofa"),
        # The ask names what it asks about, belongs to a question word, or is all there is: searched whole.
        ("flood damage - how late can i claim?", "flood damage - how late can i claim?"),
        # An ask in the words of cover or payment is searched: "we will cover", "we will pay" decide it.
        ("A slow leak ruined my kitchen floor. Will you pay?", "A slow leak ruined my kitchen floor. Will you pay?"),
        (
            "Storm took a few tiles off the roof. What can I claim for?",
            "Storm took a few tiles off the roof. What can I claim for?",
        ),
        ("Can I claim Carer's Allowance?", "Can I claim Carer's Allowance?"),
        ("Am I covered?", "Am I covered?"),
        (
            "Water comes up through our cellar floor. Is that covered?",
            "Water comes up through our cellar floor. Is that covered?",
        ),
        ("How do I make a claim?", "How do I make a claim?"),
        ("Is water damage, such as a leak, covered?", "Is water damage, such as a leak, covered?"),
        (
            "Someone hit our wall. Can I claim on my house insurance?",
            "Someone hit our wall. Can I claim on my house insurance?",
        ),
    ],
)
def test_a_bare_coverage_ask_is_not_searched_beside_the_story_it_follows(question, searched):
    assert without_ask(question) == searched


@pytest.mark.parametrize(
    "question, carrying",
    [
        ("and what about subsidence?", True),
        ("And if I'm still not happy after that?", True),
        ("What about the cash that was in it?", True),
        ("but only 3 weeks?", True),
        ("Android phone stolen, am I covered?", False),  # "and" inside a word
        ("My son broke the TV, is that covered?", False),  # a pronoun alone is no evidence
        ("What is the excess for subsidence?", False),
    ],
)
def test_a_question_that_opens_by_carrying_on_from_the_turn_before(question, carrying):
    assert carries_on(question) is carrying


@pytest.mark.parametrize(
    "turn, telling",
    [
        ("I only told the bank 2 days later", True),
        ("They got in through the back door, which I'd forgotten to lock.", True),  # a relative "which"
        ("The cracks were already there when we bought the place last year, just smaller.", True),
        ("we claimed for a burst pipe in march tho", True),
        ("whats the most for one item", False),  # a question without its question mark
        ("does it cost anything", False),
        ("we cant live there while it dries out, do you pay for somewhere to stay", False),
        ("My son broke the TV, is that covered", False),
        ("tell me about the excess", False),  # a request asks too
        ("Explain 2.5(c)", False),
        ("I wonder whether that counts", False),
        ("Who pays", False),
    ],
)
def test_a_turn_that_asks_nothing_adds_to_the_story(turn, telling):
    assert adds_to_story(turn) is telling


@pytest.mark.parametrize(
    "turn, words",
    [
        ("does it cost anything", ["cost"]),
        ("how much would I have to pay myself?", ["pay"]),
        ("Is that covered?", ["covered"]),
        ("what's the excess on that", ["excess"]),  # "what's": "what" and a single letter
        ("whats the most for one item", ["one", "item"]),  # "whats": "what's" typed without its apostrophe
        ("my ID card was stolen", ["id", "card", "stolen"]),  # "id" is a word of its own, not "I'd"
        ("tell me a joke", ["tell", "joke"]),
        ("How long do I have to report a claim?", ["long", "report", "claim"]),
        ("My son broke the TV, is that covered?", ["son", "broke", "tv", "covered"]),
    ],
)
def test_a_turn_that_says_little_of_its_own(turn, words):
    """A turn's own words are those that are not function words; with fewer than three it cannot
    carry its topic alone."""
    assert own_words(turn) == words
    assert says_little(turn) is (len(words) < 3)


def test_a_turn_names_something_when_one_of_its_own_words_is_used_by_a_few_passages_only():
    """The share of the library's passages that use each word decides: "subsidence" is in 1 in 20 of a
    home policy's passages, "pay" in 2 in 5, "excess" in none of them (it says "deductible")."""
    share = {"subsidence": 0.05, "pay": 0.43, "cash": 0.04, "one": 0.22, "item": 0.11, "low": 0.0}.get
    assert names_something("and what about subsidence?", lambda w: share(w, 1.0))
    assert names_something("and the cash that was in it?", lambda w: share(w, 1.0))
    assert not names_something("how much would I have to pay myself?", lambda w: share(w, 1.0))
    assert not names_something("whats the most for one item", lambda w: share(w, 1.0))
    assert not names_something("and what if it's too low?", lambda w: share(w, 1.0))  # used nowhere: finds nothing
    assert not names_something("is there anything for that", lambda w: share(w, 1.0))  # no word of its own

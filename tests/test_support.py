"""Sentence support: every sentence of a generated answer that states something must be backed
by a passage it cites (a quotation found there, a run of its words, or most of its words and
every number)."""

from __future__ import annotations

import pytest

from policybot.answer.support import SupportChecker
from tests.test_citations import DEDUCTIBLE, FLOOD_DEFINITION, PROOF_OF_LOSS, citation

SLOW_LEAK = (
    "2.5 Escape of water\n"
    "We will not cover:\n"
    "(c) damage caused by water escaping gradually over a period of time, such as a slow drip from "
    "a pipe joint or a leaking shower seal;"
)


@pytest.fixture
def sources():
    return [citation(1, PROOF_OF_LOSS), citation(2, FLOOD_DEFINITION), citation(3, DEDUCTIBLE), citation(4, SLOW_LEAK)]


@pytest.fixture(scope="module")
def checker():
    return SupportChecker()


def verdicts(checker, answer, sources):
    return [(s.text.strip(), s.supported) for s in checker.run(answer, sources).sentences]


def test_a_faithful_quote_and_a_close_paraphrase_are_backed(checker, sources):
    answer = (
        'You must "send us a proof of loss" within 60 days after the loss [1]. '
        "Damage from water escaping gradually, such as a slow drip, is not covered [4]."
    )
    assert [ok for _, ok in verdicts(checker, answer, sources)] == [True, True]


def test_a_made_up_price_is_not_backed_by_a_real_passage(checker, sources):
    report = checker.run("The cost of this policy per month is $2.50 for the deductible [3].", sources)
    assert [s.supported for s in report.sentences] == [False]
    assert not report.any_supported


def test_a_number_the_passage_does_not_hold_sinks_an_otherwise_faithful_sentence(checker, sources):
    faithful = "Within 60 days after the loss, send us a proof of loss [1]."
    changed = "Within 90 days after the loss, send the insurer your statement of the amount claimed [1]."
    assert checker.run(faithful, sources).sentences[0].supported is True
    assert checker.run(changed, sources).sentences[0].supported is False


def test_a_quotation_found_nowhere_it_cites_sinks_the_sentence(checker, sources):
    report = checker.run('The policy says "we pay every claim in full within a week" [1].', sources)
    assert report.sentences[0].supported is False
    assert report.sentences[0].reason == "a quotation is not in its sources"


def test_a_sentence_that_cites_nothing_is_not_backed_but_framing_asks_nothing(checker, sources):
    answer = "Yes. I'll make sure to pay for the damage to your floor straight away."
    assert verdicts(checker, answer, sources) == [
        ("Yes.", None),
        ("I'll make sure to pay for the damage to your floor straight away.", False),
    ]


def test_a_sentence_borrows_the_markers_of_its_paragraph(checker, sources):
    answer = "Send a proof of loss within 60 days after the loss. It must be signed and sworn to by you [1]."
    assert [ok for _, ok in verdicts(checker, answer, sources)] == [True, True]


def test_unsupported_sentences_are_taken_out_and_the_rest_kept(checker, sources):
    answer = (
        "Within 60 days after the loss, send us a proof of loss [1].\n\n"
        "The cost of this policy per month is $2.50 [1].\n\n"
        "Damage from water escaping gradually, such as a slow drip, is not covered [4]."
    )
    report = checker.run(answer, sources)
    assert len(report.unsupported) == 1
    kept = report.without_unsupported(answer)
    assert "$2.50" not in kept
    assert kept.startswith("Within 60 days") and kept.endswith("is not covered [4].")
    assert "\n\n\n" not in kept


def test_a_page_named_in_words_is_checked_like_a_citation(checker, sources):
    """Issue 23: "…the claim is covered [page 99]." names a page nothing cited is on."""
    planted = 'You must "send us a proof of loss" within 60 days after the loss [page 99].'
    assert verdicts(checker, planted, sources) == [(planted, False)]
    wrong_page = 'You must "send us a proof of loss" within 60 days after the loss, see page 7 [1].'
    assert verdicts(checker, wrong_page, sources) == [(wrong_page, False)]
    right_page = 'You must "send us a proof of loss" within 60 days after the loss (p. 1) [1].'
    assert verdicts(checker, right_page, sources) == [(right_page, True)]
    assert verdicts(checker, "See page 99.", sources) == [("See page 99.", False)]  # short, still checked
    assert verdicts(checker, "See pp. 3-4 [3] [4].", sources) == [("See pp. 3-4 [3] [4].", None)]  # right pages

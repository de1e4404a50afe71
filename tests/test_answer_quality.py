"""What the citizen reads, measured apart from the writer: gold passage and conditions in the
answer text, and sentences no cited passage backs."""

from __future__ import annotations

from policybot.evaluation.answer_quality import (
    conditions_stated,
    gold_first,
    gold_in_answer,
    summary,
    unsupported_sentences,
)
from policybot.evaluation.datasets import Gold, Question

PASSAGE = (
    "Disablement is worked out as a percentage, and 'severe disablement' means at least 60% disabled. "
    "You could get a one-off tax-free payment of £120,000."
)
QUESTION = Question(
    "q1",
    "Can I claim for damage caused by the vaccine?",
    True,
    [Gold("vaccine.pdf", 1, "You could get a one-off tax-free payment of £120,000.")],
    conditions=["Disablement is worked out as a percentage, and 'severe disablement' means at least 60% disabled."],
)


def test_gold_and_conditions_are_found_in_the_text_as_one_run():
    quoted = f'1. "{PASSAGE}" [1] — Vaccine Damage Payment, p.1'
    assert gold_in_answer(QUESTION, quoted) and conditions_stated(QUESTION, quoted) == 1
    paraphrase = "Yes, you can get a payment if you are severely disabled [1]."
    assert not gold_in_answer(QUESTION, paraphrase) and conditions_stated(QUESTION, paraphrase) == 0


def test_gold_first_reads_only_the_first_quote_or_the_first_citing_sentence():
    """What a citizen who reads one line reads: the first numbered quote, past any heading."""
    gold = "You could get a one-off tax-free payment of £120,000."
    second = f'Your documents may not say this directly.\n1. "Payments stop at 65." [1]\n2. "{gold}" [2]'
    first = f'Your documents may not say this directly.\n1. "{gold}" [1]\n2. "Payments stop at 65." [2]'
    assert gold_in_answer(QUESTION, second) and not gold_first(QUESTION, second)
    assert gold_first(QUESTION, first)
    written = f"It depends. Payments stop at 65 [1]. {gold[:-1]} [2]."
    assert not gold_first(QUESTION, written) and gold_first(QUESTION, f"Yes. {gold[:-1]} [1]. Payments stop at 65 [2].")


def test_an_extractive_quote_must_be_its_passage_letter_for_letter():
    good = f'1. "{PASSAGE[:60]}" [1] — Vaccine Damage Payment, p.1'
    bad = '1. "You could get a one-off payment of £200,000." [1] — Vaccine Damage Payment, p.1'
    assert unsupported_sentences("extractive", good, {1: PASSAGE}, [1]) == []
    assert unsupported_sentences("extractive", bad, {1: PASSAGE}, [1]) == [
        "You could get a one-off payment of £200,000."
    ]
    table = "|Type of property|Limit|\n|---|---|\n|Money|$750|\n|Valuables|$2,500|"
    row = '1. "Type of property · Limit … Money · $750" [1] — Limits, p.8'  # a row read as text, under its header
    assert unsupported_sentences("extractive", row, {1: table}, [1]) == []
    wrong = '1. "Type of property · Limit … Money · $7,500" [1] — Limits, p.8'
    assert unsupported_sentences("extractive", wrong, {1: table}, [1]) == ["Type of property · Limit … Money · $7,500"]


def test_a_generated_sentence_needs_its_words_and_every_number_in_a_cited_passage():
    answer = (
        "Yes. You could get a one-off tax-free payment of £120,000 [1]. "
        "The payment is made within 30 days of your claim [1]. "
        "I'll make sure your application goes through quickly."
    )
    assert unsupported_sentences("generated", answer, {1: PASSAGE}, [1]) == [
        "The payment is made within 30 days of your claim [1].",
        "I'll make sure your application goes through quickly.",
    ]
    assert unsupported_sentences("refused", answer, {1: PASSAGE}, [1]) == []


def test_summary_counts_shown_answers_only():
    rows = [
        dict(
            answerable=True,
            refused=False,
            gold_in_answer=True,
            gold_first=True,
            conditions_total=1,
            conditions_stated=1,
            unsupported=[],
        ),
        dict(
            answerable=True,
            refused=False,
            gold_in_answer=False,
            conditions_total=2,
            conditions_stated=0,
            unsupported=["x"],
        ),
        dict(
            answerable=False,
            refused=True,
            gold_in_answer=False,
            conditions_total=0,
            conditions_stated=0,
            unsupported=[],
        ),
    ]
    assert summary(rows) == {
        "gold_in_answer": 0.5,
        "gold_first": 0.5,
        "conditions": 3,
        "conditions_stated": 0.3333,
        "shown": 2,
        "with_unsupported": 1,
        "unsupported_rate": 0.5,
    }

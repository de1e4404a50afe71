"""Naming what the documents do not state: a question that asks for an amount, a length of time,
a phone number or an email address, where none of the passages found states one.

"How much does this policy cost per month?" finds the monthly-instalment clauses, which never
give a price (that lives in the schedule or the quote). Quoting them under a general caution
reads as an answer; saying plainly that no amount is stated is what a citizen needs before
they call. The test is the kind of thing asked against the kinds the passages state, so it
holds on any library: it needs no list of topics, and when any passage states an amount the
answer is left as it was.
"""

from __future__ import annotations

import re
from typing import Sequence

from policybot.answer.query import is_coverage_question
from policybot.core.quotes import quote_units
from policybot.core.text import QUANTITIES
from policybot.store.lexical import Tokenizer

# What a question asks for, the pattern that finds one in a passage, and its plain name.
_ASKS: dict[str, tuple[re.Pattern[str], re.Pattern[str], str]] = {
    "money": (
        re.compile(r"\bhow much\b|\b(?:cost|costs|price|prices|premium|fee|fees)\b", re.I),
        re.compile(QUANTITIES["money"].pattern + r"|\b(?:USD|GBP|EUR|INR|Rs\.?)\s?\d|[₹¥]\s?\d", re.I),
        "an amount",
    ),
    "period": (
        re.compile(r"\bhow long\b|\bhow many (?:hours|days|weeks|months|years)\b", re.I),
        QUANTITIES["period"],
        "a length of time",
    ),
    "phone": (
        re.compile(r"\b(?:phone|telephone|helpline|contact) number\b|\bnumber (?:to|should I|do I) call\b", re.I),
        re.compile(r"(?:\+|\b0)\d[\d ()-]{7,}\d\b|\b\d{3}[ .-]\d{3}[ .-]\d{4}\b"),
        "a phone number",
    ),
    "email": (
        re.compile(r"\be-?mail address\b|\bwhat e-?mail\b", re.I),
        re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b"),
        "an email address",
    ),
}

_TOKENIZER = Tokenizer()
_LEAD = "\n\x00"  # joins a unit to its lead-in, which gives words but never the quantity
_FUNCTION = {"per", "each", "everi"}  # not stopwords to BM25, but say nothing of the subject
# A worked example's amount is not the amount asked for ("For example, if your annual premium is $480…").
_EXAMPLE = re.compile(r"^\W*(?:for example|for instance|e\.g\.|example)\b", re.I)

MISSING = "Your documents do not seem to state {what} for this. The closest passages — check them:"


def missing(question: str, passages: Sequence[str]) -> str | None:
    """The plain name of what ``question`` asks for ("an amount") when no passage states one
    about it: a sentence with an amount counts when it shares a word with the question (the
    $30 administration charge does not say what the policy costs per month)."""
    for kind, (asks, states, what) in _ASKS.items():
        asked = asks.search(question)
        if not asked or not passages or (kind == "money" and _asks_if_covered(question)):
            continue
        # Every word that asks ("how much", "cost") is left out: "the cost of a road ambulance, up to
        # Rs. 2,000" says nothing of what "How much does this policy cost per month?" asks.
        asking = " ".join(m.group() for m in asks.finditer(question))
        terms = set(_TOKENIZER(question)) - set(_TOKENIZER(asking)) - _FUNCTION
        stating = [s for s in _statements(passages) if states.search(s.split(_LEAD, 1)[-1])]
        if not any(not terms or terms & set(_TOKENIZER(s)) for s in stating):
            return what
    return None


# "Divorce legal costs covered?", "Do you pay the cost of a hotel?": a cost named as what is
# covered, not an amount asked for; "how much" always asks for one.
_COVERED_COST = re.compile(
    r"\b(?:costs?|fees?|expenses?)\b(?:\s+\w+){0,2}?\s+(?:covered|included|paid|refunded|reimbursed)\b", re.I
)


def _asks_if_covered(question: str) -> bool:
    if re.search(r"\bhow much\b", question, re.I):
        return False
    return bool(_COVERED_COST.search(question)) or is_coverage_question(question)


def _statements(passages: Sequence[str]) -> list[str]:
    """The passages' sentences and list items, each after its lead-in ("Claims:" leads in to
    "call 0800 123 4567"), worked examples left out."""
    out = []
    for p in passages:
        units = [p[s:e] for s, e in quote_units(p)]
        lead = [units[i - 1] + _LEAD if i and units[i - 1].rstrip().endswith(":") else "" for i in range(len(units))]
        out += [lead[i] + u for i, u in enumerate(units) if not _EXAMPLE.match(u)]
    return out

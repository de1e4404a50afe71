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

# Where a clause of a question asks for something: at its start, after the words that join it on
# ("…, and how much?", "and for how long each time?"). "I don't agree with how much you offered,
# what can I do" asks what to do; "Is there a break fee?" and "does it cost anything" ask whether:
# none of them asks for an amount, and saying that none is stated answers what was not asked.
_OPENS = r"^\s*(?:(?:and|but|so|then|ok|okay|also|please|roughly|exactly|for|to|until)\s+)*"
_COST_NOUN = r"(?:costs?|prices?|premiums?|fees?|charges?)"
_TIME_NOUN = r"(?:notice|time|warning)"  # "how much notice do I have to give" asks for a length of time
_CLAUSE = re.compile(r"[^.?!;,]+")
_DATE = (
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|"
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?,?\s+\d{4}|"
    r"\b\d{1,2}/\d{1,2}/\d{2,4}\b"
)

# What a question asks for (at a clause's start), the pattern that finds one in a passage, and its
# plain name. A stretch of time is also stated by its first and last dates ("beginning November 27,
# 2018 and ending November 30th, 2019").
_ASKS: dict[str, tuple[re.Pattern[str], re.Pattern[str], str]] = {
    "money": (
        re.compile(
            _OPENS + rf"(?:how much\b(?!\s+{_TIME_NOUN}\b)" + r"|what(?:'s|\s+is|\s+are|\s+will\s+be|\s+would\s+be)\s+"
            rf"(?:the\s+|my\s+|your\s+|our\s+)?(?:\w+\s+){{0,2}}?{_COST_NOUN}\b"
            r"|what\s+(?:does|do|will|would)\b[^?]*?\bcost\b)",
            re.I,
        ),
        re.compile(QUANTITIES["money"].pattern + r"|\b(?:USD|GBP|EUR|INR|Rs\.?)\s?\d|[₹¥]\s?\d", re.I),
        "an amount",
    ),
    "period": (
        re.compile(
            _OPENS + rf"(?:how long\b|how many (?:hours|days|weeks|months|years)\b|how much(?=\s+{_TIME_NOUN}\b))",
            re.I,
        ),
        re.compile(QUANTITIES["period"].pattern + rf"|(?:{_DATE})\b.*?(?:{_DATE})", re.I),
        "a length of time",
    ),
    "phone": (
        re.compile(r"\b(?:phone|telephone|helpline|contact) number\b|\bnumber (?:to|should I|do I) call\b", re.I),
        re.compile(r"(?:\+|\b0)\d[\d ()-]{7,}\d\b|\b\d{3}[ .-]\d{3}[ .-]\d{4}\b|\b\d{3}-\d{4}\b"),
        "a phone number",
    ),
    "email": (
        re.compile(r"\be-?mail address\b|\bwhat e-?mail\b", re.I),
        re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b"),
        "an email address",
    ),
}
_ANYWHERE = {"phone", "email"}  # named anywhere: "legal helpline number", "what email address…"


def _asked(kind: str, asks: re.Pattern[str], question: str) -> list[str]:
    """The words of ``question`` that ask for ``kind`` ("how much", "what is the premium")."""
    if kind in _ANYWHERE:
        return [m.group() for m in asks.finditer(question)]
    return [m.group() for c in _CLAUSE.finditer(question) if (m := asks.search(c.group()))]


_TOKENIZER = Tokenizer()
_LEAD = "\n\x00"  # joins a unit to its lead-in, which gives words but never the quantity
_FUNCTION = {"per", "each", "everi"}  # not stopwords to BM25, but say nothing of the subject
# A worked example's amount is not the amount asked for ("For example, if your annual premium is $480…").
_EXAMPLE = re.compile(r"^\W*(?:for example|for instance|e\.g\.|example)\b", re.I)

MISSING = "Your documents do not seem to state {what} for this. The closest passages — check them:"


def missing(question: str, passages: Sequence[str]) -> str | None:
    """The plain name of what ``question`` asks for ("an amount") when no passage states one
    about it: a sentence with an amount counts when it shares a word with the question (the
    $30 administration charge does not say what the policy costs per month). The user's own
    words only: a question searched with the one before it ("How much does this policy cost per
    month?" after a leak) would share the earlier question's words with any amount it found."""
    for kind, (asks, states, what) in _ASKS.items():
        asked = _asked(kind, asks, question)
        if not asked or not passages or (kind == "money" and _asks_if_covered(question)):
            continue
        # Every word that asks ("how much", "cost") is left out: "the cost of a road ambulance, up to
        # Rs. 2,000" says nothing of what "How much does this policy cost per month?" asks.
        asking = " ".join(asked + re.findall(_COST_NOUN + r"|\bcost\w*", question, re.I))
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

"""What a passage does for an issue: it covers, limits, defines, sets a condition or a claim
procedure. Read from the titles of its section path and from its own words."""

from __future__ import annotations

import re
from typing import Callable

from policybot.answer.references import Glossary
from policybot.schemas import EvidenceRole

ClauseChunks = Callable[[str, str], list[str]]  # (doc_id, clause number) -> its chunk ids
SectionChunks = Callable[[str], list[tuple[str, str]]]  # doc_id -> (chunk id, section path) in order
GlossaryOf = Callable[[str], Glossary]

# What a passage does, from the titles of its section path (deepest first) and its own words.
_ROLE_OF_TITLE: list[tuple[EvidenceRole, re.Pattern[str]]] = [
    ("defines", re.compile(r"\bdefinitions?\b|\bmeaning of\b|\bglossary\b", re.I)),
    (
        "limits",
        re.compile(r"exclu|not (?:covered|insured)|deductible|excess|\blimits?\b|coinsurance|underinsur|average", re.I),
    ),
    (
        "procedure",
        re.compile(r"\bclaims?\b|proof of loss|loss payment|how to|appraisal|complain|notif|settlement|payment", re.I),
    ),
    ("condition", re.compile(r"conditions?|\bcancel|obligations|duties|requirements?", re.I)),
    ("covers", re.compile(r"cover|insured|insuring|coverage|benefits?|what we pay|extensions?", re.I)),
]
_LIMITING_WORDS = re.compile(
    r"\b(?:we will not|we do not|does not (?:cover|insure|apply)|not (?:covered|insured)|excluded?|exclusions?|"
    r"except|the most we will pay|deductible|excess|limited to|no more than)\b",
    re.I,
)


def role_of(section: str, quote: str) -> EvidenceRole:
    """The role of a passage: a definition by its section; a quote that excludes or caps is a
    limit wherever it sits (the "What is not covered" list inside a cover clause); otherwise the
    nearest section title that says what it is."""
    parts = [p for p in section.split(" > ") if p]
    if any(_ROLE_OF_TITLE[0][1].search(p) for p in parts):
        return "defines"
    if _LIMITING_WORDS.search(quote):
        return "limits"
    for part in reversed(parts):
        for role, pattern in _ROLE_OF_TITLE[1:]:
            if pattern.search(part):
                return role
    return "other"

"""What a passage does: it covers, limits, defines, sets a condition or a claim procedure. Read
from the titles of its section path and from its own words. One role model for evidence mode's
table and for the labels an answer puts on its quotes (*Covered*, *Not covered*, *Limit*,
*Condition*, *Definition*)."""

from __future__ import annotations

import re

from policybot.schemas import EvidenceRole

# What a passage does, from the titles of its section path (deepest first) and its own words.
_ROLE_OF_TITLE: list[tuple[EvidenceRole, re.Pattern[str]]] = [
    ("defines", re.compile(r"\bdefinitions?\b|\bmeaning of\b|\bglossary\b", re.I)),
    (
        "limits",
        re.compile(
            r"exclu(?!siv)|not (?:covered|insured)|deductible|excess|\blimits?\b|coinsurance|underinsur|average", re.I
        ),
    ),
    (
        "procedure",
        re.compile(r"\bclaims?\b|proof of loss|loss payment|how to|appraisal|complain|notif|settlement|payment", re.I),
    ),
    ("condition", re.compile(r"conditions?|\bcancel|obligations|duties|requirements?", re.I)),
    ("covers", re.compile(r"\bcover|insured|insuring|coverage|benefits?|what we pay|extensions?", re.I)),
]
# What a cover is refused by: "we will not pay", "we do not cover", "we shall not be liable". A
# refusal of something else ("we will not share your information", "we do not sell it to third
# parties", "i-Escrow shall not run banner advertisements") neither limits nor excludes a cover.
_REFUSED = (
    r"(?:we|it|they|this policy|the policy|the insurer) (?:will|do|does|shall|would) not (?:\w+ ){0,2}?"
    r"(?:pay|cover|insure|include|reimburse|refund|indemnify|compensate|accept|be liable|be responsible)"
    r"|we (?:won't|won’t|don't|don’t) (?:\w+ ){0,2}?(?:pay|cover|insure|include|reimburse|refund)"
)
_LIMITING_WORDS = re.compile(
    rf"\b(?:{_REFUSED}|does not (?:cover|insure|apply)|not (?:covered|insured)|excluded|we exclude|exclusions?|"
    r"except|the most we will pay|deductible|excess|limited to|no more than|"
    r"(?:shall|will) not be (?:liable|responsible)|neither party (?:shall|will) be liable)\b",
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


_EXCLUDING_WORDS = re.compile(
    rf"\b(?:{_REFUSED}|does not (?:cover|insure|include)|not (?:covered|insured|included)|"
    r"excluded|we exclude|exclusions?|what is not covered|"
    r"you (?:cannot|can't|can’t|can not) (?:\w+ ){0,2}?(?:get|claim|receive)|"
    r"(?:is|are) not eligible|(?:do|does) not qualify|(?:is|are) not entitled)\b",
    re.I,
)
# The plain words a citizen reads beside a quote, by role.
_LABELS: dict[EvidenceRole, str] = {
    "covers": "Covered",
    "limits": "Limit",
    "defines": "Definition",
    "condition": "Condition",
    "procedure": "Condition",
}


# What a quote itself says, for a passage whose titles do not (a guide's "2. What you'll get", a
# contract's "12. General provisions"): a condition it sets ("if you are over State Pension age",
# "only if your schedule shows it", "provided you reported it within 24 hours", "you must…"; the
# answer's "Depends on:" lists sentences by the same words), or something it grants.
CONDITION_WORDS = re.compile(
    r"\b(?:if|only if|unless|provided(?: that)?|as long as|so long as|you must|you need to|you(?:'|’)ll need|"
    r"you will need|you have to|must be|at least|no more than|no later than|within \d+|subject to)\b",
    re.IGNORECASE,
)
_GRANTING_WORDS = re.compile(
    r"\b(?:you (?:can|could|may|might)(?: be able to)? (?:get|claim)|you(?:'|’)ll get|you will get|"
    r"we will (?:pay|cover)|is covered|are covered|is entitled to|are entitled to|you are eligible)\b",
    re.I,
)


# A short heading that says what the list under it is: "What is not covered", "Exclusions", "What is
# covered", "What we will pay". A list's lead-in even without a colon (``core/quotes.list_lead_in``),
# where a heading that names no role ("Liability" over a contract's numbered lines) is not.
_LIST_ROLE_HEADING = re.compile(
    r"exclu(?!siv)|\bnot (?:covered|insured|included)\b|^what (?:is|are) (?:covered|insured|included)$"
    r"|^what we (?:will )?(?:pay|cover|insure)\b",
    re.I,
)
MAX_ROLE_HEADING_CHARS = 60


def heads_a_list_by_role(line: str) -> bool:
    """Whether a line is a short heading that says what the list under it is (see ``_LIST_ROLE_HEADING``)."""
    text = " ".join(line.split())
    return len(text) <= MAX_ROLE_HEADING_CHARS and text[-1:] not in ".;,!?" and bool(_LIST_ROLE_HEADING.search(text))


# A section title that lists what is not covered ("Section 4 General Exclusions", "V. EXCLUSIONS",
# "What is not insured"); a deductible or a limit of liability is a *Limit*, not this. "Exclusivity"
# and "Exclusive licence" grant, not exclude (a contract's clause titles).
_EXCLUSION_TITLE = re.compile(r"exclu(?!siv)|not (?:covered|insured)", re.I)


# The share of a claim the policyholder bears: listed among exclusions, it still limits what is paid.
_BORNE = re.compile(r"\b(?:excess|deductible|co-?payment|co-?insurance)\b", re.I)


def _under_exclusions(section: str) -> bool:
    """Whether the nearest title that limits is one that excludes: an item of "General Exclusions"
    ("Loss or damage caused by insects… mice") excludes though its own words never say so."""
    limiting = _ROLE_OF_TITLE[1][1]
    for part in reversed([p for p in section.split(" > ") if p]):
        if limiting.search(part):
            return bool(_EXCLUSION_TITLE.search(part))
    return False


def plain_label(section: str, quote: str) -> str | None:
    """The label of a quoted passage in plain words; *Not covered* when the quote (or the heading
    over it, "What is not covered … (c) …") excludes; none when its role is unclear. A claims or
    payment procedure is a *Condition* only where the quote sets one; a passage whose titles say
    nothing is labelled by what its quote says, or not at all."""
    role = role_of(section, quote)
    if role == "limits" and _BORNE.search(quote):
        # "What is not covered … 1. The first £100 of each claim (the excess)." is what the claimant
        # pays, not a loss left out: a *Limit*, under whatever heading.
        return "Limit"
    if role in ("limits", "covers", "other") and _EXCLUDING_WORDS.search(quote):
        return "Not covered"
    if role == "limits" and _under_exclusions(section) and not _GRANTING_WORDS.search(quote):
        return "Not covered"
    if role == "procedure":
        return "Condition" if CONDITION_WORDS.search(quote) else None
    if role == "other":
        if CONDITION_WORDS.search(quote):
            return "Condition"
        return "Covered" if _GRANTING_WORDS.search(quote) else None
    return _LABELS.get(role)

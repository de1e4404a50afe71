"""Editions of a policy: the date an edition takes effect, read from the document where it says.

Policies state their edition on the cover or near the start: "edition 5, effective 1 January
2025", "F-122 / October 2021", "Effective Date: 2024-04-01", "last updated on July 10, 2014". A
labelled date wins over a bare month and year on the cover; nothing is guessed from elsewhere
(a date in a clause, "after 1 January 2020", is not the document's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np

if TYPE_CHECKING:
    from policybot.core.rows import ChunkRow, DocumentRow

# Two documents are editions of one policy when their titles match once edition words and numbers
# are set aside, and their passages, averaged, point the same way. Provisional: set on the sample
# policy's two editions (title 1.0, content 0.99) against the FEMA forms and the generated scale
# corpus, whose different policies share much wording (see eval/decisions/2026-11-24-editions.md).
TITLE_SIMILARITY = 0.85
CONTENT_SIMILARITY = 0.95
_EDITION_WORDS = {
    "edition",
    "ed",
    "version",
    "rev",
    "revised",
    "revision",
    "updated",
    "effective",
    "new",
    "old",
    "draft",
}

MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}
MONTHS.update({name[:3]: number for name, number in list(MONTHS.items())})
_MONTH = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE = (
    rf"(?:(?P<day1>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\s*,?\s+(?P<year1>(?:19|20)\d\d)"  # 1 January 2025
    # January 1, 2025 / October 2021
    rf"|{_MONTH.replace('month', 'month2')}\s+(?:(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s+)?(?P<year2>(?:19|20)\d\d)"
    r"|(?P<iso>(?:19|20)\d\d-\d\d-\d\d))"  # 2025-01-01
)
# "effective 1 January 2025", "Edition: October 2021", "last updated on July 10, 2014".
_LABELLED = re.compile(
    rf"\b(?:effective(?:\s+date)?|edition(?:\s+date)?|last\s+(?:updated|revised|modified)|revised|updated|in\s+force)\b"
    rf"[^.\n]{{0,24}}?\b(?:from|on|as\s+of)?\s*:?\s*{_DATE}",
    re.IGNORECASE,
)
# A cover line that is only a form reference and a month and year: "F-122 / October 2021".
_COVER = re.compile(rf"^[\w./ -]{{0,24}}?\b{_DATE}\s*$", re.IGNORECASE)


def _month(token: str) -> int:
    return MONTHS[token.lower().rstrip(".")[:3]]


def _parsed(match: re.Match[str]) -> date | None:
    g = match.groupdict()
    try:
        if g.get("iso"):
            return date.fromisoformat(g["iso"])
        if g.get("year1"):
            return date(int(g["year1"]), _month(g["month"]), int(g["day1"]))
        return date(int(g["year2"]), _month(g["month2"]), int(g.get("day2") or 1))
    except (ValueError, KeyError):  # "31 February", an unknown month: not a date
        return None


def effective_date(first_pages: Iterable[str], title: str = "") -> date | None:
    """The edition's date from its opening text (the first pages' lines, in order) or its title:
    the first labelled date, else a short cover line that holds only a form reference and a date
    ("F-122 / October 2021"). A month without a day means its first day."""
    lines = [" ".join(line.split()) for line in first_pages]
    for text in ("\n".join(lines), title):
        for match in _LABELLED.finditer(text):
            found = _parsed(match)
            if found:
                return found
    for text in lines[:12]:
        cover = _COVER.match(text)
        found = _parsed(cover) if cover else None
        if found:
            return found
    return None


def title_key(title: str) -> str:
    """A title without its edition words, numbers and dates: the policy's name."""
    words = re.sub(r"[^a-z]+", " ", title.lower()).split()
    return " ".join(w for w in words if w not in _EDITION_WORDS and w not in MONTHS)


@dataclass
class EditionMatch:
    doc: DocumentRow
    title: float
    content: float


def find_edition_of(
    title: str,
    vector: np.ndarray,
    candidates: Sequence[DocumentRow],
    mean_of: Callable[[DocumentRow], np.ndarray | None],
) -> EditionMatch | None:
    """The library document the new one is another edition of (``vector``: its passages' mean
    direction), or None. ``mean_of`` gives a candidate's mean direction; it is asked only for
    candidates whose title matches, so a large library costs a title comparison per document."""
    from difflib import SequenceMatcher

    key = title_key(title)
    best: EditionMatch | None = None
    for doc in candidates:
        title_score = SequenceMatcher(None, key, title_key(doc.title)).ratio() if key else 0.0
        if title_score < TITLE_SIMILARITY:
            continue
        mean = mean_of(doc)
        content = float(np.dot(vector, mean)) if mean is not None else 0.0
        if content >= CONTENT_SIMILARITY and (best is None or content > best.content):
            best = EditionMatch(doc, round(title_score, 3), round(content, 4))
    return best


def mean_direction(vectors: np.ndarray) -> np.ndarray:
    """The unit vector of the passages' mean: which way a document points as a whole."""
    mean: np.ndarray = np.asarray(vectors, dtype=np.float64).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else mean


def edition_day(doc: DocumentRow) -> str:
    """When an edition takes effect: its date, else the day it was added."""
    return doc.effective_date or doc.ingested_at[:10]


def in_force(members: Sequence[DocumentRow], day: str) -> DocumentRow:
    """The edition in force on ``day`` (ISO): the latest that took effect by then, else the first."""
    started = [m for m in members if edition_day(m) <= day]
    return max(started, key=edition_day) if started else min(members, key=edition_day)


def _families(docs: Sequence[DocumentRow]) -> list[list[DocumentRow]]:
    """The confirmed edition families among ``docs``."""
    families: dict[str, list[DocumentRow]] = {}
    for doc in docs:
        if doc.family and doc.family_status == "confirmed":
            families.setdefault(doc.family, []).append(doc)
    return list(families.values())


def unconfirmed_editions(a: DocumentRow, b: DocumentRow) -> bool:
    """Whether two documents look like editions of one policy that nobody has confirmed yet: both
    are searched, and their passages are never joined as one source (one may say $500 where
    the other says $750)."""
    return (
        a.doc_id != b.doc_id
        and a.family is not None
        and a.family == b.family
        and ("proposed" in (a.family_status, b.family_status))
    )


def current_editions(docs: Sequence[DocumentRow], as_of: date | None = None) -> list[DocumentRow]:
    """What a question searches: every document outside a confirmed edition family, and of each
    family the edition in force on ``as_of`` (default today). Order kept."""
    day = (as_of or date.today()).isoformat()
    left_out = {m.doc_id for members in _families(docs) for m in members if m.doc_id != in_force(members, day).doc_id}
    return [d for d in docs if d.doc_id not in left_out]


def superseded(docs: Sequence[DocumentRow], as_of: date | None = None) -> dict[str, str]:
    """Names of editions not in force on ``as_of`` -> the name of the edition that is."""
    day = (as_of or date.today()).isoformat()
    out: dict[str, str] = {}
    for members in _families(docs):
        current = in_force(members, day)
        out.update({m.name: current.name for m in members if m.doc_id != current.doc_id})
    return out


# --- editions that disagree -------------------------------------------------------------------------------

# An older passage is "the same clause" when it has the same section path, else when its words
# are at least this alike (SequenceMatcher over words).
SAME_CLAUSE_RATIO = 0.6


@dataclass
class EarlierWording:
    """The same clause in an older edition, worded differently."""

    doc: DocumentRow
    chunk: ChunkRow
    changed: str  # the older edition's sentence that the current one no longer has

    def note(self, current: DocumentRow) -> str:
        return (
            f"The {edition_day(self.doc)[:4]} edition ({self.doc.name}) said: “{self.changed}” — "
            f"this answer uses the {edition_day(current)[:4]} edition ({current.name})."
        )


def earlier_wording(
    current: DocumentRow,
    chunk: ChunkRow,
    library: Sequence[DocumentRow],
    chunks_of: Callable[[DocumentRow], list[ChunkRow]],
) -> EarlierWording | None:
    """The cited clause as an older edition of ``current`` (same confirmed family) worded it, when
    the wording differs; the newest older edition first."""
    from difflib import SequenceMatcher

    from policybot.core.text import prose_sentences

    if not (current.family and current.family_status == "confirmed"):
        return None
    older = sorted(
        (
            d
            for d in library
            if d.family == current.family and d.family_status == "confirmed" and edition_day(d) < edition_day(current)
        ),
        key=edition_day,
        reverse=True,
    )
    words = chunk.text.split()
    for doc in older:
        candidates = chunks_of(doc)
        same = [c for c in candidates if c.section and c.section == chunk.section]
        scored = [(SequenceMatcher(None, words, c.text.split(), autojunk=False).ratio(), c) for c in same or candidates]
        if not scored:
            continue
        ratio, best = max(scored, key=lambda pair: pair[0])
        if not same and ratio < SAME_CLAUSE_RATIO:
            continue
        current_text = " ".join(words)
        sentences = [best.text[a:b] for a, b in prose_sentences(best.text)]
        changed = [s for s in sentences if " ".join(s.split()) not in current_text]
        if changed:
            text = " ".join(changed[0].split())
            return EarlierWording(doc, best, text if len(text) <= 240 else text[:237] + "…")
        return None  # the same words: nothing to say
    return None

"""Editions of a policy: the date an edition takes effect, read from the document where it says.

Policies state their edition on the cover or near the start: "edition 5, effective 1 January
2025", "F-122 / October 2021", "Effective Date: 2024-04-01", "last updated on July 10, 2014". A
labelled date wins over a bare month and year on the cover; nothing is guessed from elsewhere
(a date in a clause, "after 1 January 2020", is not the document's).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Iterable

MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"], start=1)}
MONTHS.update({name[:3]: number for name, number in list(MONTHS.items())})
_MONTH = r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DATE = (
    rf"(?:(?P<day1>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\s*,?\s+(?P<year1>(?:19|20)\d\d)"  # 1 January 2025
    rf"|{_MONTH.replace('month', 'month2')}\s+(?:(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s+)?(?P<year2>(?:19|20)\d\d)"  # January 1, 2025 / October 2021
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

"""The run-in clause a quote stands under, for its citation.

Contracts and many real wordings set their clause titles in body type, run into the clause ("3.
EXCLUSIVITY. Auriemma expressly agrees…", "12.2 Assignment. Except as…"). Ingestion does not cut
sections at them (that cost retrieval: eval/decisions/2026-11-25-run-in-headings.md); it writes the
titles a chunk holds into the chunk's index header instead (2026-11-27-clause-titles.md). So a chunk
of a contract whose section finder saw only "1. DEFINITIONS." holds clauses 2 and 3 under that
section, and its citation read "1. DEFINITIONS." with the role *Definition* over an exclusivity
clause. A reviewer checks the cited clause against the page: the citation names the clause its
quote is in, read from that header. The header's format is written and read here, in one place.
"""

from __future__ import annotations

import re
from typing import Sequence

from policybot.core.roles import role_of

MAX_CLAUSE_TITLES = 4  # per chunk: the header stays a label, not a second text
_SEPARATOR = " — "
_JOIN = "; "
_WORD = re.compile(r"[^\W_]+")
# A title's number, after an optional keyword, and the mark after it: "3.", "12.2", "Section 11.5", "18)".
_STYLE = re.compile(r"^\s*(?:(section|article|clause)\s+)?(\d{1,3}(?:\.\d{1,3})*)(?!\d)([.)])?", re.IGNORECASE)
# A line that opens with a clause or list number: "7. ", "18) ", "12.3 ", "Section 4."; a bare
# number before a word ("30 days after…", a wrapped line) is not one.
_LINE_NUMBER = re.compile(
    r"(?m)^[^\S\n]*(?:(?:section|article|clause)\s+)?(\d{1,3}(?:\.\d{1,3})+|\d{1,3}(?=[.)]))[.)]?(?!\d)(?=\s|$)",
    re.IGNORECASE,
)


# Where a contract's clauses end and its signatures or attachments begin: "IN WITNESS WHEREOF", a
# signature line ("By: /s/ …"), "EXHIBIT D", "C-1 EXHIBIT D" (after a page label), "Schedule A".
# English contract words, not one corpus's.
_PART = re.compile(
    r"(?m)^[^\S\n]*(?:[A-Z]-\d+\s+)?(?:(?:EXHIBIT|SCHEDULE|ANNEX|APPENDIX|ATTACHMENT)\b"
    r"|(?:Exhibit|Schedule|Annex|Appendix|Attachment)\s+[A-Z0-9]\b|(?i:in\s+witness\s+whereof)\b|By:[\s_/])"
)


def section_header(title: str, section: str) -> str:
    """The contextual header a chunk is indexed under: its document's title and its section."""
    return f"{title}{_SEPARATOR}{section}" if section else title


def clause_header(titles: Sequence[str]) -> str:
    """What a chunk's index header adds after its section: " — 12.1 Agency; 12.2 Assignment"."""
    return f"{_SEPARATOR}{_JOIN.join(titles)}" if titles else ""


def header_clauses(index_text: str, title: str, section: str) -> list[str]:
    """The clause titles written into a chunk's index header (``clause_header``) after its contextual
    header (``section_header``); none when the first line is not that header followed by titles."""
    header = section_header(title, section)
    first = index_text.split("\n", 1)[0]
    prefix = f"{header}{_SEPARATOR}"
    if not header or not first.startswith(prefix):
        return []
    return [t for t in first[len(prefix) :].split(_JOIN) if t.strip()]


def clause_starts(text: str, titles: Sequence[str]) -> list[tuple[int, str | None]]:
    """Where each clause of a chunk starts in its text, as (offset, title). A listed title that the
    text does not open (the clause the chunk opens inside) starts at 0. A clause ends where a line
    opens with another number of its depth ("7." after "6. Special Limits." is an untitled item of
    the same list, and "5." after a full header's "4. Base Flood." a clause the header left out:
    ``MAX_CLAUSE_TITLES``) or where the contract's signatures or exhibits begin; from there the
    clause is unknown (None)."""
    starts: list[tuple[int, str | None]] = []
    for title in titles:
        at = _title_at(text, title)
        if at is not None:
            starts.append((at, title))
        elif not starts:  # the clause the chunk opens inside
            starts.append((0, title))
    starts.sort(key=lambda s: s[0])
    ends: list[tuple[int, str | None]] = []
    for i, (at, name) in enumerate(starts):
        until = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        end = _clause_end(text, name or "", at, until)
        if end is not None:
            ends.append((end, None))
    return sorted(starts + ends, key=lambda s: s[0])


def clause_at(starts: Sequence[tuple[int, str | None]], offset: int) -> str | None:
    """The clause title the text at ``offset`` stands under (None: none listed, or unknown)."""
    found: str | None = None
    for at, title in starts:
        if at > offset:
            break
        found = title
    return found


def cited_under(section: str, starts: Sequence[tuple[int, str | None]], offset: int) -> str | None:
    """The section path text at ``offset`` is cited under, where its clause changes the passage's
    section (None: it does not)."""
    path = under_clause(section, clause_at(starts, offset))
    return path if path != section else None


def role_section(section: str, clause_section: str | None) -> str:
    """The section path a quote's role is read from (``core/roles``). A clause that replaced its
    passage's section (the finder filed "3. EXCLUSIVITY." under "1. DEFINITIONS.") gives its own.
    A clause under the section is read only where the section's titles say nothing of a role: "VII.
    General Conditions > D. … > 2. Reforming the Policy with Reduced Coverage" stays a condition,
    though its last title holds "Coverage"."""
    if not clause_section:
        return section
    if section and clause_section.startswith(f"{section} > ") and role_of(section, "") != "other":
        return section
    return clause_section


def under_clause(section: str, clause: str | None) -> str:
    """The section path a quote is cited under, given the clause it stands in: the clause replaces
    the last heading when it is numbered like it ("1. DEFINITIONS." and "3. EXCLUSIVITY." are
    siblings), and goes under it when it is not ("II. Definitions > 5. Basement", "ARTICLE 12
    MISCELLANEOUS > 12.2 Assignment", "Section 3. Exclusions > 7) Maternity"). A clause that is the
    last heading itself changes nothing; one the last heading only begins with replaces it (a heading
    in capitals that ran on into its text: "10. LIMITATION ON LIABILITY. EXCEPT IN THE EVENT OF A")."""
    if not clause:
        return section
    clause = " ".join(clause.split())  # as printed, spaced for reading ("Notice\xa0and…", "SOFTWARE    OWNERSHIP")
    parts = [p for p in section.split(" > ") if p.strip()]
    if not parts:
        return clause
    last = parts[-1]
    if _words(last) == _words(clause) or _words(clause)[: len(_words(last))] == _words(last):
        return section
    if _words(last)[: len(_words(clause))] == _words(clause):  # the heading ran on into its text
        return " > ".join([*parts[:-1], clause])  # "10. LIMITATION ON LIABILITY. EXCEPT IN THE EVENT OF A"
    mine, theirs = _numbering(clause), _numbering(last)
    if mine and theirs and mine[1:] == theirs[1:]:
        return " > ".join([*parts[:-1], clause]) if mine[0] != theirs[0] else section
    return " > ".join([*parts, clause])


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _numbering(title: str) -> tuple[str, str, int, str] | None:
    """A title's number and how it is numbered: its keyword, depth and the mark after it ("Section
    3." -> ("3", "section", 0, "."), "7) Maternity" -> ("7", "", 0, ")")). Two titles are siblings
    only when numbered alike: "7)" under "Section 3." is an item of it."""
    m = _STYLE.match(title)
    if not m:
        return None
    return m.group(2), (m.group(1) or "").lower(), m.group(2).count("."), m.group(3) or " "


def _number(title: str) -> str | None:
    numbering = _numbering(title)
    return numbering[0] if numbering else None


def _title_at(text: str, title: str) -> int | None:
    """Where a line of the text opens with the title (its words in order; punctuation and line
    breaks between them as printed: "12.2" / "Assignment.")."""
    words = _WORD.findall(title)
    if not words:
        return None
    m = re.search(r"(?m)^[^\S\n]*" + r"[\W_]+".join(map(re.escape, words)) + r"\b", text)
    return m.start() if m else None


def _clause_end(text: str, title: str, after: int, until: int) -> int | None:
    """Where, between ``after`` and ``until``, the clause has ended: a line opens with another number
    of the title's depth ("7." after "6.", "12.3" after "12.2"; the chunk's first line too, when it
    opens inside the clause), or the contract's clauses end (``_PART``)."""
    part = _PART.search(text, after + 1, until)
    ends = [part.start()] if part else []
    number = _number(title)
    if number:
        depth = number.count(".")
        found = (m for m in _LINE_NUMBER.finditer(text, after, until) if m.group(1) != number)
        sibling = next((m for m in found if m.group(1).count(".") == depth), None)
        ends += [sibling.start()] if sibling else []
    return min(ends) if ends else None

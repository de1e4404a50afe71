"""A document's defined terms ("Escape of Water", "5. Basement.") and what each one means.

One reading for every room: the answer follows a kept passage to the definitions of the terms it
uses (``answer/references``), evidence mode plans its aspects from them, and ingestion can index a
clause under the meaning of the term it is about (``term_glosses``): "2.5 Escape of water: we
will cover loss or damage caused by Escape of Water" never says "burst pipe"; its definition does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from policybot.core.rows import ChunkRow
from policybot.core.text import alnum, heading_title, in_definitions, names_phrase

# A numbered definition inside a Definitions section: "5. Basement. Any area of a building ..."
DEFINITION_ITEM = re.compile(r"^\s*(?:\d+|[A-Z])\.\s+([A-Z][\w'’()-]*(?:\s+[\w'’()-]+){0,5}?)\.\s", re.MULTILINE)


# A definition set as its term, then a dash, a colon or "means", at the start of a line of a Definitions
# section: "Baggage — luggage, clothing…", "Unattended: when you are not…", '"Affiliate" means any…',
# "1.2 “Confidential Information” shall mean…". The term is capitalised, at most six words, and opens
# with no function word ("In this policy:", "The following words…" introduce, they define nothing).
DEFINITION_LINE = re.compile(
    r"^[ \t]*(?:\(?(?:\d{1,3}(?:\.\d{1,3})*|[a-z]|[ivx]{1,4})[.)]?\s+)?[\"“']?"
    r"([A-Z][\w'’()/&-]*(?:[ \t]+[\w'’()/&-]+){0,5}?)[\"”']?"
    r"(?:[ \t]*[—–:][ \t]+|[ \t]+-[ \t]+|[ \t]+(?:means|shall mean|has the meaning)\b)",
    re.MULTILINE,
)
_NOT_TERMS = frozenset(
    "in the this these that those for where when if as any all each every words wherever following "
    "we you our your it section part clause article schedule definitions".split()
)


def term_of_line(unit: str) -> str | None:
    """The term a sentence or line defines when it opens ``DEFINITION_LINE``'s way ("Baggage — …")."""
    m = DEFINITION_LINE.match(unit)
    return _term(m) if m else None


def _term(m: re.Match[str]) -> str | None:
    term = m.group(1).strip()
    words = term.split()
    return None if words[0].lower() in _NOT_TERMS or any(w.isdigit() for w in words) else term


def _line_terms(text: str) -> list[tuple[str, int]]:
    """The terms ``DEFINITION_LINE`` finds in a chunk, with where each one's meaning starts."""
    return [(term, m.end()) for m in DEFINITION_LINE.finditer(text) if (term := _term(m))]


@dataclass
class Glossary:
    """A document's defined terms (as written) and the chunk that defines each."""

    terms: dict[str, str] = field(default_factory=dict)  # term -> chunk id

    def used_in(self, text: str) -> list[str]:
        """Defined terms the text uses, as written (capitalised), in order of first use. A lone
        capitalised word at the start of a sentence is not taken for a use."""
        found: list[tuple[int, str]] = []
        for term, _ in self.terms.items():
            for m in re.finditer(rf"(?<![\w-]){re.escape(term)}(?![\w-])", text):
                if " " not in term and re.search(r"(?:^|[.!?:]\s+|\n\s*)$", text[: m.start()]):
                    continue
                found.append((m.start(), term))
                break
        return [t for _, t in sorted(found)]


def glossary_of(chunks: Sequence[ChunkRow]) -> Glossary:
    """The defined terms of one document, from the chunks of its Definitions section(s):
    sub-headings ("1.6 Escape of Water"), numbered items ("5. Basement. Any area ...") and terms set
    before a dash, a colon or "means" ("Baggage — luggage…", '"Affiliate" means…')."""
    glossary = Glossary()
    for chunk in chunks:
        if not in_definitions(chunk.section):
            continue
        if "definition" not in chunk.section.split(" > ")[-1].lower():
            term = heading_title(chunk.section)
            if 2 <= len(term) <= 60:
                glossary.terms.setdefault(term, chunk.chunk_id)
        for m in DEFINITION_ITEM.finditer(chunk.text):
            glossary.terms.setdefault(m.group(1).strip(), chunk.chunk_id)
        for term, _ in _line_terms(chunk.text):
            glossary.terms.setdefault(term, chunk.chunk_id)
    # Pronoun-like "you" definitions and one-letter terms say nothing.
    glossary.terms = {
        t: c
        for t, c in glossary.terms.items()
        if len(alnum(t)) >= 3 and t.lower() not in {"you", "your", "we", "us", "our"}
    }
    return glossary


def definition_text(term: str, chunk: ChunkRow) -> str:
    """What a defining chunk says a term means, without the term's heading or item marker: the
    body under "1.6 Escape of Water", or the numbered item "5. Basement. Any area …" up to the next
    item. Empty when the chunk does not hold it (a definition cut across chunks starts elsewhere)."""
    for m in DEFINITION_ITEM.finditer(chunk.text):
        if m.group(1).strip() == term:
            after = DEFINITION_ITEM.search(chunk.text, m.end())
            return chunk.text[m.end() : after.start() if after else len(chunk.text)].strip()
    for found, start in _line_terms(chunk.text):
        if found == term:  # up to the next line set as a term's ("In this policy:" too)
            after = DEFINITION_LINE.search(chunk.text, start)
            return chunk.text[start : after.start() if after else len(chunk.text)].strip()
    if heading_title(chunk.section) != term:
        return ""
    first, _, rest = chunk.text.partition("\n")
    return rest.strip() if alnum(term).lower() in alnum(first).lower() else chunk.text.strip()


def term_glosses(chunks: Sequence[ChunkRow], max_words: int) -> list[str]:
    """For each chunk of one document, the meaning of the defined term its clause is about: the
    term its heading names and its text uses ("2.5 Escape of water": "Escape of Water: Water
    escaping suddenly and unexpectedly from any … water pipe …"), cut to ``max_words`` words; empty
    for a chunk of the Definitions and for one whose heading names no term.

    Only the term the heading names: glossing every term a clause uses indexed "2.6 Escape of oil"
    under what *Unoccupied* means, and "empty house over winter" found it before 6.3 Unoccupancy
    (record 2026-11-29-term-glosses)."""
    glossary = glossary_of(chunks)
    by_id = {c.chunk_id: c for c in chunks}
    meaning: dict[str, str] = {}  # each term's meaning, read once however many clauses are about it
    glosses = []
    for c in chunks:
        title = heading_title(c.section)
        # The terms the heading names first (most headings name none); only those are looked for in the text.
        named = {} if in_definitions(c.section) else {t: i for t, i in glossary.terms.items() if names_phrase(title, t)}
        about = Glossary(named).used_in(c.text) if named else []
        for t in about:
            if t not in meaning:
                meaning[t] = _cut(definition_text(t, by_id[named[t]]), max_words)
        glosses.append("; ".join(f"{t}: {meaning[t]}" for t in about if meaning[t]))
    return glosses


def _cut(text: str, max_words: int) -> str:
    words = text.split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")

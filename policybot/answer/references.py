"""Following what a kept passage points to: the clauses it cross-references ("see clause 6.3",
"set out in clause 5.2") and the defined terms it uses ("Escape of Water", "Unoccupied").

A cover clause rarely answers alone: the amount you pay is in the deductible clause it points
to, the meaning of its words in the Definitions. The referenced clause or definition is added
as a supporting source (at most ``max_supporting`` per answer, within the context budget) and
marked as referenced by the source that pointed to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from policybot.answer.query import terms_asked
from policybot.core.glossary import Glossary
from policybot.core.rows import ChunkRow, DocumentRow, RowLookup
from policybot.core.text import QUANTITIES, names_phrase
from policybot.schemas import Citation

# "clause 6.3", "clauses 5.2 and 5.3", "paragraph 2.5(c)", "section 4.2". A bare "Section 4" is a
# whole part of the policy, not a clause to quote: it is not followed.
_CROSS_REF = re.compile(
    r"\b(?:(?:clauses?|paragraphs?|conditions?)\s+(?P<any>\d+(?:\.\d+)*(?:\s*(?:,|and|or)\s*\d+(?:\.\d+)*)*)"
    r"|sections?\s+(?P<dotted>\d+\.\d+(?:\.\d+)*))",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:\.\d+)*")


def cross_references(text: str) -> list[str]:
    """Clause numbers a passage points to, in order: "see clauses 5.2 and 6.3" -> ["5.2", "6.3"]."""
    out: list[str] = []
    for m in _CROSS_REF.finditer(text):
        for number in _NUMBER.findall(m.group("any") or m.group("dotted")):
            if number not in out:
                out.append(number)
    return out


def quantity_kinds(text: str) -> set[str]:
    """The kinds of quantity a text states: {"period"} for "only 3 weeks", {"money"} for "$750",
    {"age"} for "23 years old"."""
    return {kind for kind, pattern in QUANTITIES.items() if pattern.search(text)}


def turns_on(question: str, term: str, definition: str) -> bool:
    """Whether a question turns on a defined term: it names the term ("what counts as Unoccupied?"),
    or it states a quantity of the kind the definition sets ("only 3 weeks" against "more than 60
    consecutive days"), so the answer depends on where the definition draws its line."""
    return _names(question, term) or _same_kind(question, definition)


def _names(question: str, term: str) -> bool:
    return names_phrase(question, term)


def _same_kind(question: str, definition: str) -> bool:
    return bool(quantity_kinds(question) & quantity_kinds(definition))


ClauseLookup = Callable[[str, str], "str | None"]  # (doc_id, clause number) -> its first chunk's id
GlossaryLookup = Callable[[str], Glossary]  # doc_id -> its glossary


@dataclass
class Supporting:
    """A passage added because a kept source points to it."""

    chunk: ChunkRow
    doc: DocumentRow
    referenced_by: int  # the [n] of the source that points to it
    reason: str  # "clause 5.2" or "definition of Escape of Water"


class ReferenceFollower:
    """Adds the clauses and definitions the kept sources point to, best first: definitions whose
    line the question's quantity falls on ("only 3 weeks" against "more than 60 days"), explicit
    cross-references, definitions of terms the question names, then other defined terms.

    ``shown`` is how many leading sources the answer quotes: only what those point to is
    followed, never a definition the question does not turn on ("definition of Storm" beside
    "burst pipe excess?"), and a definition the question turns on from any source; one that was retrieved
    further down is returned too, so the caller can mark it as referenced and quote it, rather
    than leave it unread below the answer."""

    def __init__(
        self, clause: ClauseLookup, glossary: GlossaryLookup, rows: RowLookup, max_supporting: int = 2
    ) -> None:
        self.clause = clause
        self.glossary = glossary
        self.rows = rows
        self.max_supporting = max_supporting

    def definitions_asked(self, question: str, doc_ids: Sequence[str]) -> list[str]:
        """The chunks that define the term a question asks the meaning of ("What does Unoccupied
        mean?"), from each document's glossary: the user pointed at the definition by its term, as
        "clause 1.18" would point at it by number. Of the terms the question names, the one nearest
        its "mean" / "definition" is asked about ("What does 'flood' mean in my policy?" asks about
        *Flood*, not *Policy*), and the longest term wins ("Escape of Water", not a shorter term
        inside it); none when the question does not ask what something means."""
        found: list[tuple[int, str]] = []  # (distance to a meaning word, chunk id)
        for doc_id in doc_ids:
            terms = self.glossary(doc_id).terms
            found += [(gap, terms[term]) for term, gap in terms_asked(question, terms).items()]
        nearest = min((gap for gap, _ in found), default=0)
        return list(dict.fromkeys(chunk_id for gap, chunk_id in found if gap == nearest))

    def run(
        self,
        question: str,
        sources: Sequence[Citation],
        scope: dict[str, DocumentRow],
        shown: int | None = None,
    ) -> list[Supporting]:
        if self.max_supporting <= 0:
            return []
        by_name = {d.name: d for d in scope.values()}
        text_of = {s.chunk_id: s.text for s in sources}
        found: list[tuple[int, str, DocumentRow, int, str]] = []  # (rank, chunk id, doc, [n], reason)
        for src in sources:
            doc = by_name.get(src.doc)
            if doc is None:
                continue
            for number in cross_references(src.text):
                chunk_id = self.clause(doc.doc_id, number)
                if chunk_id is not None:
                    found.append((1, chunk_id, doc, src.n, f"clause {number}"))
            glossary = self.glossary(doc.doc_id)
            used = glossary.used_in(src.text)
            texts = self.rows([glossary.terms[t] for t in used if glossary.terms[t] not in text_of])
            for term in used:
                chunk_id = glossary.terms[term]
                definition = text_of.get(chunk_id) or (texts[chunk_id].text if chunk_id in texts else "")
                rank = 0 if _same_kind(question, definition) else 2 if _names(question, term) else 3
                found.append((rank, chunk_id, doc, src.n, f"definition of {term}"))
        chosen: list[tuple[str, DocumentRow, int, str]] = []
        quoted = sources if shown is None else sources[:shown]
        have = {s.chunk_id for s in quoted}
        later = {s.chunk_id for s in sources} - have
        pointers = {s.n for s in quoted}
        for rank, chunk_id, doc, n, reason in sorted(found, key=lambda x: x[0]):
            if rank == 3 and shown is not None:
                continue  # the answer quotes a definition only when the question turns on it
            if rank not in (0, 2) and (chunk_id in later or n not in pointers):
                # Already listed below the answer, or pointed to by a source the answer does not
                # quote: quoted, it would stand alone, read as an answer (a definition question
                # got "Wear and tear" because an unquoted overview mentions clause 4.1). Only a
                # definition the question turns on is taken from anywhere.
                continue
            if chunk_id not in have and len(chosen) < self.max_supporting:
                have.add(chunk_id)
                chosen.append((chunk_id, doc, n, reason))
        rows = self.rows([c for c, _, _, _ in chosen])
        return [Supporting(rows[c], doc, n, reason) for c, doc, n, reason in chosen if c in rows]

"""The evidence table: one row per passage found, with a quote located in its chunk and its
role, sibling documents' copies of the same text folded into one row."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from policybot.answer.citations import locate_quote
from policybot.answer.openings import ListOpenings
from policybot.answer.selection import same_source
from policybot.core.clauses import cited_under, role_section
from policybot.core.editions import unconfirmed_editions
from policybot.core.glossary import Glossary
from policybot.core.passages import Passage, quote_as_read
from policybot.core.roles import plain_label, role_of
from policybot.evidence.quotes import best_quote
from policybot.schemas import EvidenceRole, EvidenceRow, page_range

ClauseChunks = Callable[[str, str], list[str]]  # (doc_id, clause number) -> its chunk ids
SectionChunks = Callable[[str], list[tuple[str, str]]]  # doc_id -> (chunk id, section path) in order
GlossaryOf = Callable[[str], Glossary]


def _notes(row: EvidenceRow, hit: Passage) -> bool:
    """Whether a row already notes ``hit``'s document as holding the same text."""
    return any(s.startswith(f"{hit.doc.name}, ") for s in row.citation.same_text_in)


def _cited_first(hit: Passage, held: Passage) -> bool:
    """Whether a sibling's copy is the one to cite instead of the row's passage: the same text in the
    same section of a document ingested earlier (then by name). Searches rank two copies of one text
    in either order; a table then cited one document here and the other there."""
    same = hit.chunk.text == held.chunk.text and hit.chunk.section == held.chunk.section
    return same and (hit.doc.ingested_at, hit.doc.name) < (held.doc.ingested_at, held.doc.name)


# The fields of a citation that say where its passage is (``Passage.citation`` sets them).
_PLACE = {"chunk_id", "doc", "title", "page_start", "page_end", "ocr_confidence"}


def _where(hit: Passage) -> dict[str, object]:
    """Where ``hit`` is, as its own citation says it."""
    return hit.citation(0).model_dump(include=_PLACE)


def _label(copy: Passage) -> str:
    """How a row notes a sibling's copy: "acme-silver.pdf, p.3"."""
    return f"{copy.doc.name}, {page_range(copy.chunk.page_start, copy.chunk.page_end)}"


def _twin_row(twins: list[EvidenceRow], hit: Passage) -> EvidenceRow:
    """The row a sibling document's copy folds into. Overlapping chunks can all look alike: a row
    that does not note this document yet comes first, then the one with exactly this text, then the
    one of the same section. Folded into the first alike row, a second copy left its own twin row
    without "same text in"."""
    fresh = [r for r in twins if not _notes(r, hit)]
    pool = fresh or twins
    return next(
        (r for r in pool if r.citation.text == hit.chunk.text),
        next((r for r in pool if r.citation.section == hit.chunk.section), pool[0]),
    )


@dataclass
class EvidenceTable:
    """Rows collected so far: one per passage, sibling documents' copies folded into one row."""

    topic: str
    rows: list[EvidenceRow] = field(default_factory=list)
    chunks: dict[str, Passage] = field(default_factory=dict)  # chunk id -> the hit (rows and siblings)
    openings: ListOpenings | None = None  # a passage that opens inside a list gets the list's lead-in

    def note_copies(self, copies: Callable[[Passage, Iterable[str]], list[Passage]]) -> None:
        """Notes on each row the sibling documents' copies of its passage that no search returned
        (``copies``: the exact copies in the given documents). Only documents the table has passages of
        are read: a search that ranked one copy just inside its depth and the other just outside left a
        row without "same text in"."""
        docs = {hit.doc.doc_id for hit in self.chunks.values()}
        for row in self.rows:
            held = self.chunks[row.citation.chunk_id]
            for copy in copies(held, docs):
                # Noted on this row itself: the copy may already be folded into an alike row.
                if not unconfirmed_editions(copy.doc, held.doc) and not _notes(row, copy):
                    self.chunks.setdefault(copy.chunk.chunk_id, copy)
                    row.citation.same_text_in.append(_label(copy))

    def add(
        self, hit: Passage, found_by: str, why: str | None = None, quote: str | None = None, because: str = ""
    ) -> tuple[EvidenceRow | None, bool]:
        """Add a hit; (its row, whether the row is new). A chunk already in the table, or the
        same text in a sibling document (then noted as "same text in"), adds no row. ``why`` is
        the LLM's line; without one, the row says what its role is and ``because`` of what."""
        if hit.chunk.chunk_id in self.chunks:
            return self._row_of(hit.chunk.chunk_id), False
        twins = [row for row in self.rows if same_source(self.chunks[row.citation.chunk_id], hit)]
        if twins:
            row = _twin_row(twins, hit)
            self.chunks[hit.chunk.chunk_id] = hit
            held = self.chunks[row.citation.chunk_id]
            if _cited_first(hit, held) and not _notes(row, hit):  # one document cited, whichever came first
                row.citation = row.citation.model_copy(update=_where(hit))
                hit = held
            row.citation.same_text_in.append(_label(hit))
            return row, False
        self.chunks[hit.chunk.chunk_id] = hit
        citation = hit.citation(len(self.rows) + 1)
        if self.openings is not None:
            citation = self.openings.run([citation])[0]
        if quote:  # the LLM's own words: shown as given, verified only if they are in the passage
            span = locate_quote(quote, hit.chunk.text)
            citation.quote, citation.verified = quote, span is not None
            citation.quote_start, citation.quote_end = span or (None, None)
        else:  # the rule's quote is a slice of the passage: located by construction
            start, end = best_quote(hit.chunk.text, f"{self.topic} {hit.reason}")
            citation.quote, citation.quote_start, citation.quote_end = hit.chunk.text[start:end], start, end
            citation.verified = end > start
        read = quote_as_read(citation)  # "(f) Accidental Damage…" is read after its list's lead-in
        # Cited under the run-in clause its quote is in ("3. EXCLUSIVITY.", not "1. DEFINITIONS.").
        citation.clause_section = cited_under(citation.section, citation.clauses, citation.quote_start or 0)
        section = role_section(citation.section, citation.clause_section)
        role = role_of(section, read)
        citation.role = plain_label(section, read)  # the chat's words for it, one role model
        row = EvidenceRow(
            n=citation.n,
            citation=citation,
            role=role,
            why=why or _rule_why(role, because or hit.reason),
            found_by=found_by,
        )
        self.rows.append(row)
        return row, True

    def _row_of(self, chunk_id: str) -> EvidenceRow | None:
        return next((r for r in self.rows if r.citation.chunk_id == chunk_id), None)

    def hit(self, row: EvidenceRow) -> Passage:
        return self.chunks[row.citation.chunk_id]


def _rule_why(role: EvidenceRole, because: str) -> str:
    what = {
        "covers": "what is covered",
        "limits": "what is excluded or capped",
        "defines": "a definition the evidence depends on",
        "condition": "a condition you must meet",
        "procedure": "what to do when claiming",
        "other": "related wording",
    }[role]
    return f"{what}: {because}"

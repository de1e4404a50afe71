"""The passage carrier: one chunk in play, with its document and its current score. Answering
carries candidates through fusion, selection and scoring; evidence mode's tools return the
same carrier, with the reason a tool found it. One class for both, so a passage reads the same
wherever it goes and becomes a ``Citation`` in one way."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice
from typing import Iterable

from policybot.core.clauses import cited_under, clause_starts, header_clauses
from policybot.core.quotes import ELLIPSIS, LIST_LOOK_BACK, in_opening_list, list_lead_in, opening_item
from policybot.core.rows import ChunkRow, DocumentRow
from policybot.schemas import Citation, page_range


@dataclass
class Passage:
    """A passage still in play: its chunk, its document and its current score."""

    chunk: ChunkRow
    doc: DocumentRow
    score: float
    # Why a tool returned it ("hybrid search", "clause 5.2", "definition of Basement"); "" in answering.
    reason: str = ""
    # The same passage in sibling documents (the same clause in three forms): cited once.
    siblings: list[Passage] = field(default_factory=list)

    def citation(self, n: int) -> Citation:
        """This passage as source [n] of an answer."""
        starts = self._clauses()
        return Citation(
            n=n,
            chunk_id=self.chunk.chunk_id,
            doc=self.doc.name,
            title=self.doc.title,
            section=self.chunk.section,
            page_start=self.chunk.page_start,
            page_end=self.chunk.page_end,
            text=self.chunk.text,
            score=round(self.score, 4),
            same_text_in=[f"{s.doc.name}, {page_range(s.chunk.page_start, s.chunk.page_end)}" for s in self.siblings],
            ocr_confidence=self.doc.ocr_confidence(self.chunk.page_start, self.chunk.page_end),
            clauses=starts,
            clause_section=cited_under(self.chunk.section, starts, 0),
        )

    def _clauses(self) -> list[tuple[int, str | None]]:
        """Where the passage's run-in clauses start (``core/clauses.py``)."""
        titles = header_clauses(self.chunk.index_text, self.doc.title, self.chunk.section)
        return clause_starts(self.chunk.text, titles) if titles else []


def lead_in_for(src: Citation, start: int) -> str | None:
    """The lead-in to show before a quote of ``src`` that starts at ``start``: the list's, when the
    quote is one of the items the passage opens with."""
    if src.lead_in and in_opening_list(src.text, body_start(src), start):
        return src.lead_in
    return None


def quote_as_read(src: Citation) -> str:
    """A source's quote as the reader sees it: after its list's lead-in when it needs one. Its line
    breaks are kept (a table row's quote is read by its lines: ``display/export.plain_quote``)."""
    quote = src.quote or ""
    lead = lead_in_for(src, src.quote_start) if quote.strip() and src.quote_start is not None else None
    return lead + ELLIPSIS + quote if lead else quote


def body_start(src: Citation) -> int:
    """Where the body starts when a chunk opens with its own section heading line."""
    return heading_end(src.section, src.text)


def opening_lead_in(section: str, text: str, before: Iterable[tuple[str, str]]) -> str | None:
    """The lead-in of the list a passage opens inside ("When the Home is Unoccupied, we will not
    cover loss or damage caused by:" over "(b) escape of oil;"), read from the passages before it:
    ``before`` gives (section, text), nearest first; at most ``LIST_LOOK_BACK`` are read, while in
    the passage's own section. None when the passage does not open inside a list, or its list began
    further back. The answer shows it (``answer/openings``); ingestion can index it."""
    item = opening_item(text, heading_end(section, text))
    if not item:
        return None
    bodies = []
    for prev_section, prev_text in islice(before, LIST_LOOK_BACK):
        if prev_section != section:
            break
        bodies.append(prev_text[heading_end(prev_section, prev_text) :])
    return list_lead_in(item, bodies) if bodies else None


def heading_end(section: str, text: str) -> int:
    """Where a chunk's body starts: after its first line when that line is its section's heading."""
    heading = section.split(" > ")[-1].strip() if section else ""
    first_line = text.split("\n", 1)[0].strip()
    if heading and first_line and " ".join(first_line.split()) == " ".join(heading.split()) and "\n" in text:
        title = _RUN_ON_TITLE.match(text)  # a heading in capitals that ran on into its text: the text is body
        return title.end() if title and text.index("\n") > title.end() else text.index("\n") + 1
    return 0


# A numbered title that ends with a full stop, then more words on its line: "10. LIMITATION ON
# LIABILITY. EXCEPT IN THE EVENT OF A" (its sentence goes on below). The words after the title are
# the clause's first sentence, never part of its heading.
_RUN_ON_TITLE = re.compile(r"[ \t]*(?:\d{1,3}(?:\.\d{1,3})*\.?|[A-Z]\.)[ \t]+[A-Z][^.\n]{1,80}\.[ \t]+(?=\S)")

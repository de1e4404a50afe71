"""The passage carrier: one chunk in play, with its document and its current score. Answering
carries candidates through fusion, selection and scoring; evidence mode's tools return the
same carrier, with the reason a tool found it. One class for both, so a passage reads the same
wherever it goes and becomes a ``Citation`` in one way."""

from __future__ import annotations

from dataclasses import dataclass, field

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
        )

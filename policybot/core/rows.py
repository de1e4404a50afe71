"""The library's records: a document's row and its chunks' rows, as the registry keeps them and
every stage reads them; chunk ids and the document each one belongs to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence


def chunk_id(doc_id: str, ord: int) -> str:
    """A chunk's id: its document's id and its position ("<doc_id>:00042")."""
    return f"{doc_id}:{ord:05d}"


def doc_of(chunk_id: str) -> str:
    """The document id inside a chunk id."""
    return chunk_id.split(":", 1)[0]


@dataclass
class DocumentRow:
    collection: str
    doc_id: str
    name: str
    sha256: str
    title: str
    pages: int
    chunks: int
    sections: int
    section_source: str
    tables: int
    empty_pages: list[int]
    embedding_model: str
    chunker: str
    stored_path: str
    source_path: str
    ingested_at: str
    ingest_seconds: float
    summary: str | None = None
    probes: str | None = None  # off-topic probe scores (JSON, see policybot.core.probes)
    ocr_pages: dict[int, float] = field(default_factory=dict)  # page -> OCR confidence (0-100)
    effective_date: str | None = None  # ISO date the edition takes effect
    effective_source: str | None = None  # "document" (read from it) or "user" (set by hand)
    family: str | None = None  # editions of one policy share it (the first edition's doc_id)
    family_status: str | None = None  # "proposed" (detected) or "confirmed" (by the user)

    def ocr_confidence(self, first: int, last: int) -> float | None:
        """The lowest OCR confidence among pages first..last, or None if none was OCR'd."""
        found = [c for page, c in self.ocr_pages.items() if first <= page <= last]
        return min(found) if found else None


@dataclass
class ChunkRow:
    chunk_id: str
    doc_id: str
    ord: int
    text: str
    index_text: str
    section: str
    page_start: int
    page_end: int
    kind: str


RowLookup = Callable[[Sequence[str]], dict[str, ChunkRow]]  # chunk ids -> their rows (missing ids left out)

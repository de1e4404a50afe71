"""What the registry keeps about a document beyond its chunks, worked out at ingestion: a short
summary for the expansion prompt, the edition date the document states, what the off-topic
probes score against it, and whether it looks like another edition of a library document."""

from __future__ import annotations

import logging
from typing import Callable, Sequence

import numpy as np

from policybot.core.editions import EditionMatch, effective_date, find_edition_of, mean_direction
from policybot.core.probes import encode_probes, probe_bank, probe_scores
from policybot.core.rows import DocumentRow
from policybot.ingestion.pdf import ParsedDocument
from policybot.models.llm import ChatLLM, LLMUsage, load_prompt
from policybot.store.registry import Registry

log = logging.getLogger(__name__)


def extractive_summary(parsed: ParsedDocument, max_chars: int = 400) -> str:
    """Title, top-level sections and the first sentence: what the expansion prompt is told
    about a document (made once at ingestion, no LLM needed)."""
    tops: list[str] = []
    for line in parsed.lines:
        top = line.section.split(" > ")[0] if line.section else ""
        if top and top not in tops:
            tops.append(top)
    body = " ".join(" ".join(ln.text.split()) for ln in parsed.lines[:40] if ln.kind == "text")
    first = body.split(". ")[0][:160] if body else ""
    text = f"{parsed.title}. Sections: {'; '.join(tops[:10])}." if tops else f"{parsed.title}."
    if first:
        text += f" Begins: {first}"
    return text[:max_chars]


class Summariser:
    """A short description for the expansion prompt: by the LLM when one is running, else
    extractive (title, sections, first sentence). Made once, kept in the registry."""

    def __init__(self, llm: Callable[[], ChatLLM | None]) -> None:
        self.llm = llm

    def run(self, parsed: ParsedDocument) -> str:
        fallback = extractive_summary(parsed)
        llm = self.llm()
        if llm is None:
            return fallback
        tops = fallback.split("Sections: ", 1)[-1].split(".", 1)[0] if "Sections: " in fallback else ""
        opening = " ".join(" ".join(ln.text.split()) for ln in parsed.lines[:30] if ln.kind == "text")[:1200]
        try:
            prompt = load_prompt("summary").format(title=parsed.title, sections=tops, opening=opening)
            text = " ".join(llm.complete(LLMUsage(), "summary", prompt, max_tokens=120).split())
        except Exception as exc:
            log.info("LLM summary failed (%s); using the extractive one", exc)
            return fallback
        return text[:600] if len(text) >= 20 else fallback


def effective_from(parsed: ParsedDocument) -> dict[str, str | None]:
    """The edition date the document states on its first pages, if any."""
    opening = [line.text for line in parsed.lines if line.page <= 2 and line.kind == "text"]
    found = effective_date(opening, parsed.title)
    return {"effective_date": found.isoformat(), "effective_source": "document"} if found else {}


class ProbeScorer:
    """What the off-topic probe questions score against this document (``core/probes.py``),
    kept with its row so a question's calibration never re-reads its vectors."""

    def __init__(self, probe_vectors: Callable[[], np.ndarray], model: str) -> None:
        self.probe_vectors = probe_vectors
        self.model = model

    def run(self, vectors: np.ndarray) -> str:
        return encode_probes(probe_bank()[0], self.model, probe_scores(vectors, self.probe_vectors()))


class EditionFinder:
    """Proposes a new document as another edition of a library document it matches (title and
    content alike); only the user's confirmation makes questions use one edition."""

    def __init__(self, registry: Registry, documents: Callable[[], Sequence[DocumentRow]]) -> None:
        self.registry = registry
        self.documents = documents

    def run(self, doc: DocumentRow, vectors: np.ndarray) -> list[str]:
        others = [d for d in self.documents() if d.doc_id != doc.doc_id and d.family_status != "proposed"]
        match = find_edition_of(doc.title, mean_direction(vectors), others, self._mean_of) if len(vectors) else None
        if match is None:
            return []
        self._propose(doc, match)
        return [
            f"looks like another edition of '{match.doc.name}' (title {match.title:.2f}, "
            f"content {match.content:.2f} alike); `policybot editions --confirm {doc.name}` "
            "makes questions use only the edition in force"
        ]

    def _mean_of(self, other: DocumentRow) -> np.ndarray | None:
        chunk_ids = [r.chunk_id for r in self.registry.chunks_of(other.collection, other.doc_id)]
        stored = [v for v in self.registry.vectors(other.collection, chunk_ids).values() if v is not None]
        return mean_direction(np.vstack(stored)) if stored else None

    def _propose(self, doc: DocumentRow, match: EditionMatch) -> None:
        family = match.doc.family or match.doc.doc_id
        if match.doc.family is None:  # a family of one: nothing changes for it
            self.registry.set_family(doc.collection, [match.doc.doc_id], family, "confirmed")
        self.registry.set_family(doc.collection, [doc.doc_id], family, "proposed")

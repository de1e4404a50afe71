"""The document library as a user manages it: what is in it, which documents a question
searches (one edition per confirmed family), editions and their dates, deletes, and the stored
pages shown beside a citation. Adding documents is ``ingestion.pipeline.IngestPipeline``."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Iterable, Sequence

from policybot.components import Components
from policybot.core.editions import current_editions, superseded
from policybot.core.roles import role_of
from policybot.core.rows import DocumentRow
from policybot.core.text import TITLE_NUMBER
from policybot.display.page_images import PageView, cached_label, cached_view
from policybot.errors import AlreadyDeleted, PolicyBotError
from policybot.models.profiles import EmbeddingModel, model_with_vector_id
from policybot.schemas import DeleteReport, DocumentInfo, DocumentList
from policybot.store.index import DocumentIndex

# Sections that are not a topic to ask about: definitions, contents, the preamble.
_NOT_A_TOPIC = re.compile(r"\b(?:definitions?|contents|glossary|index|introduction|preamble|schedule)\b", re.I)


def _plain_title(heading: str) -> str:
    """ "2.5 Escape of water" -> "escape of water"; acronyms and names keep their capitals."""
    title = TITLE_NUMBER.sub("", heading).strip().rstrip(".:")
    if not 3 <= len(title) <= 60 or not any(ch.isalpha() for ch in title):
        return ""
    words = title.split()
    sentence_case = not any(w[:1].isupper() for w in words[1:])
    if sentence_case and words[0][1:2].islower():  # "Escape of water" -> "escape of water"; not "NFIP", "Pair and Set"
        words[0] = words[0].lower()
    return " ".join(words)


class Library:
    """List, scope, edit and delete the documents of one data folder and embedding model."""

    def __init__(self, components: Components) -> None:
        self.components = components
        self.settings = components.settings

    # --- reading --------------------------------------------------------------------------
    def documents(self) -> DocumentList:
        c = self.components
        current = c.index.collection
        mine: list[DocumentInfo] = []
        others: list[DocumentInfo] = []
        rows = c.registry.documents()
        replaced = superseded([r for r in rows if r.collection == current])
        for row in rows:
            info = document_info(row, self.settings.ocr.confidence_floor)
            info.superseded_by = replaced.get(row.name) if row.collection == current else None
            (mine if row.collection == current else others).append(info)
        return DocumentList(
            profile=c.profile.name,
            embedding_model=c.profile.profile.embedding.vector_id,
            documents=mine,
            other_models=others,
        )

    def resolve_docs(self, names: Iterable[str] | None, as_of: date | None = None) -> list[DocumentRow]:
        """The documents a question searches: the named ones, else all of them with one edition per
        confirmed edition family (the one in force on ``as_of``, default today)."""
        docs = self.components.index.documents()
        if not docs:
            raise PolicyBotError(
                f"no documents are indexed for {self.components.profile.profile.embedding.name}; "
                "add some with `policybot ingest PATH` (e.g. `policybot ingest data/`)"
            )
        wanted = list(names or [])
        if not wanted:
            return current_editions(docs, as_of)
        by_name = {d.name: d for d in docs}
        missing = [n for n in wanted if n not in by_name]
        if missing:
            raise PolicyBotError(f"not indexed: {', '.join(missing)} (indexed: {', '.join(sorted(by_name))})")
        return [by_name[n] for n in wanted]

    def example_questions(self, names: Sequence[str], limit: int = 4) -> list[str]:
        """Questions a newcomer could ask, drawn from the documents' own section titles: one per
        top-level part, parts that cover, limit or set conditions first ("What does it say about
        escape of water?"). Definitions and contents pages are left out. Built once per library
        state (the empty chat asks on every rerun)."""
        key = "examples:" + "\n".join(names) + f":{limit}"
        return self.components._per_generation(key, lambda: self._example_questions(names, limit))

    def _example_questions(self, names: Sequence[str], limit: int) -> list[str]:
        registry, collection = self.components.registry, self.components.index.collection
        by_name = {d.name: d for d in self.components.index.documents()}
        parts: dict[str, str] = {}  # top-level part -> its first sub-section's title
        for name in names:
            if name not in by_name:
                continue
            for chunk in registry.chunks_of(collection, by_name[name].doc_id):
                path = [p.strip() for p in chunk.section.split(" > ") if p.strip()]
                if len(path) < 2 or any(_NOT_A_TOPIC.search(p) for p in path):
                    continue
                title = _plain_title(path[-1])
                if title and path[0] not in parts and title not in parts.values():
                    parts[path[0]] = title
        order = {"covers": 0, "limits": 1, "procedure": 2, "condition": 3}
        ranked = sorted(parts.items(), key=lambda kv: order.get(role_of(kv[0], ""), 4))
        subject = "does it" if len(names) == 1 else "do the documents"
        return [f"What {subject} say about {title}?" for _, title in ranked[:limit]]

    def stored_pdf(self, name: str) -> Path | None:
        """The library's copy of a document's PDF, if it is still stored."""
        row = self.components.registry.by_name(self.components.index.collection, name)
        path = Path(row.stored_path) if row is not None else None
        return path if path is not None and path.is_file() else None

    def page_view(
        self,
        name: str,
        page: int,
        quote: str | None = None,
        dpi: int = 110,
        crop: bool = True,
        passage: str | None = None,
        part: str = "",
        also: tuple[str, ...] = (),
    ) -> PageView:
        """One page of a document as a reviewer checks it: cropped to the quote where it is on the page,
        else to the passage's part of it (``part``: "start" or "end" of a passage over pages); the
        ``also`` quotes of the passage are highlighted too."""
        path = self.stored_pdf(name)
        if path is None:
            raise PolicyBotError(f"the PDF of {name} is not stored any more")
        try:
            return cached_view(str(path), page, quote, dpi, crop, passage, part, also)
        except ValueError as exc:
            raise PolicyBotError(str(exc)) from exc

    def printed_page(self, name: str, page: int) -> str | None:
        """The number printed on a page where it differs from the page's place in the PDF (None otherwise)."""
        path = self.stored_pdf(name)
        try:
            return cached_label(str(path), page) if path is not None else None
        except ValueError:
            return None

    # --- editions ---------------------------------------------------------------------------
    def confirm_edition(self, name: str, confirm: bool = True) -> DocumentInfo:
        """Confirm a proposed edition (questions then search the edition in force only), or
        take a document out of its family (``confirm=False``)."""
        c = self.components
        row = c.registry.by_name(c.index.collection, name)
        if row is None:
            raise PolicyBotError(f"not indexed: {name}")
        if confirm and not row.family:
            raise PolicyBotError(f"{name} is not in an edition family (no other edition was found when it was added)")
        c.registry.set_family(
            row.collection, [row.doc_id], row.family if confirm else None, "confirmed" if confirm else None
        )
        return next(d for d in self.documents().documents if d.name == name)

    def set_effective(self, name: str, when: date | None) -> DocumentInfo:
        """Set (or, with None, clear) the date a document's edition takes effect, by hand."""
        c = self.components
        row = c.registry.by_name(c.index.collection, name)
        if row is None:
            raise PolicyBotError(f"not indexed: {name}")
        c.registry.set_effective(
            row.collection, row.doc_id, when.isoformat() if when else None, "user" if when else None
        )
        updated = c.registry.by_name(c.index.collection, name)
        assert updated is not None
        return document_info(updated, self.settings.ocr.confidence_floor)

    # --- deleting ---------------------------------------------------------------------------
    def delete(self, name: str, sha256: str | None = None) -> DeleteReport:
        """Remove a document everywhere: vectors, BM25 entries, registry rows, stored file.

        ``sha256`` binds the delete to the document a user confirmed: if that one is gone
        (another session deleted it, or the name now holds other content), nothing is deleted.
        """
        c = self.components
        c.index  # opened (and a crash's leftovers cleaned) before the lock is taken
        with c.library_lock.hold():
            rows = [r for r in c.registry.documents() if r.name == name and (sha256 is None or r.sha256 == sha256)]
            if not rows and sha256 is not None:
                raise AlreadyDeleted(f"{name} was already deleted; nothing else was changed")
            if not rows:
                known = ", ".join(sorted({r.name for r in c.registry.documents()})) or "none"
                raise PolicyBotError(f"no document named '{name}' (indexed: {known})")
            for row in rows:
                if row.collection == c.index.collection:
                    c.index.delete(row)
                else:
                    DocumentIndex(self.settings, model_of(row), c.embedder, c.registry).delete(row)
            return DeleteReport(name=name, deleted=len(rows))


def document_info(row: DocumentRow, ocr_floor: float) -> DocumentInfo:
    return DocumentInfo(
        name=row.name,
        title=row.title,
        pages=row.pages,
        chunks=row.chunks,
        sections=row.sections,
        section_source=row.section_source,
        tables=row.tables,
        embedding_model=row.embedding_model,
        chunker=row.chunker,
        sha256=row.sha256,
        ingested_at=row.ingested_at,
        ingest_seconds=row.ingest_seconds,
        stored_path=row.stored_path,
        ocr_pages=row.ocr_pages,
        ocr_flagged=sorted(page for page, confidence in row.ocr_pages.items() if confidence < ocr_floor),
        effective_date=row.effective_date,
        effective_source=row.effective_source,
        edition_of=row.family,
        edition_status=row.family_status,
    )


def model_of(row: DocumentRow) -> EmbeddingModel:
    """The registered embedding model a document was indexed with."""
    model = model_with_vector_id(row.embedding_model)
    if model is not None:
        return model
    return EmbeddingModel(row.embedding_model, row.embedding_model, 512)

"""The document library: ingest (files, folders, uploads), list, delete, and show stored pages.

A document is ingested completely or not at all: it is read and chunked and embedded before
anything is written, then journalled, stored, indexed and registered (``DocumentIndex.add``).
One ingestion runs at a time (the library lock, across processes); questions go on meanwhile.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Literal

import numpy as np

from policybot.bands import encode_probes, probe_bank, probe_scores
from policybot.components import Components
from policybot.errors import AlreadyDeleted, IngestError, PolicyBotError
from policybot.index import DocumentIndex
from policybot.editions import current_editions, effective_date, find_edition_of, mean_direction, superseded
from policybot.ingest import OcrPlan, ParsedDocument, check_file, read_pdf, safe_upload_name, sha256_of
from policybot.llm import LLMUsage, load_prompt
from policybot.pages import cached_render
from policybot.profiles import EMBEDDING_MODELS, EmbeddingModel
from policybot.registry import ChunkRow, DocumentRow, chunk_id
from policybot.schemas import DeleteReport, DocumentInfo, DocumentList, IngestOutcome, IngestReport

log = logging.getLogger(__name__)


@dataclass
class Progress:
    """A step of long-running work, for progress bars."""

    file: str
    stage: Literal["read", "ocr", "chunk", "embed", "save", "done"]
    done: int
    total: int


ProgressFn = Callable[[Progress], None]


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; folders become the PDFs inside them (recursively, sorted)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf"))
        else:
            out.append(path)
    return out


@dataclass
class _Prepared:
    """A document read, chunked and embedded: everything but the writes."""

    path: Path
    name: str
    sha: str
    doc_id: str
    parsed: ParsedDocument
    rows: list[ChunkRow]
    vectors: np.ndarray
    started: float


class Library:
    """Ingest, list, delete and render the documents of one data folder and embedding model."""

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
        return DocumentList(profile=c.profile.name, embedding_model=c.profile.profile.embedding.hf_id, documents=mine, other_models=others)

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

    def stored_pdf(self, name: str) -> Path | None:
        """The library's copy of a document's PDF, if it is still stored."""
        row = self.components.registry.by_name(self.components.index.collection, name)
        path = Path(row.stored_path) if row is not None else None
        return path if path is not None and path.is_file() else None

    def page_image(self, name: str, page: int, quote: str | None = None, dpi: int = 110) -> bytes:
        """A PNG of one page of a document, with the quote highlighted when it is found there."""
        path = self.stored_pdf(name)
        if path is None:
            raise PolicyBotError(f"the PDF of {name} is not stored any more")
        try:
            return cached_render(str(path), page, quote, dpi)
        except ValueError as exc:  # a page number out of range
            raise PolicyBotError(str(exc)) from exc

    # --- writing --------------------------------------------------------------------------
    def ingest(self, paths: Iterable[str | Path], progress: ProgressFn | None = None) -> IngestReport:
        """Ingest files and folders; one file's failure never stops the others."""
        outcomes = [self.ingest_file(path, progress) for path in expand_paths(paths)]
        profile = self.components.profile
        return IngestReport(profile=profile.name, embedding_model=profile.profile.embedding.hf_id, chunker=self.settings.chunker, outcomes=outcomes)

    def ingest_file(self, path: Path, progress: ProgressFn | None = None, name: str | None = None) -> IngestOutcome:
        """Ingest one PDF completely, or not at all. ``name`` overrides the file name (uploads)."""
        started = time.perf_counter()
        name = name or path.name
        try:
            self.components.index  # opened (and a crash's leftovers cleaned) before the lock is taken
            with self.components.library_lock.hold():
                outcome = self._ingest(path, name, progress)
        except IngestError as err:
            outcome = IngestOutcome(file=str(path), name=name, status="failed", error_kind=err.kind, message=err.message, pages=err.pages)
        except Exception as exc:  # an index or model failure: report it, keep going
            log.exception("ingesting %s failed", path)
            outcome = IngestOutcome(file=str(path), name=name, status="failed", error_kind="index", message=f"{name}: {exc}")
        outcome.seconds = round(time.perf_counter() - started, 3)
        if progress:
            progress(Progress(name, "done", 1, 1))
        return outcome

    def _edition_note(self, doc: DocumentRow, vectors: np.ndarray) -> list[str]:
        """Propose the new document as another edition of a library document it matches."""
        c = self.components
        others = [d for d in c.index.documents() if d.doc_id != doc.doc_id and d.family_status != "proposed"]

        def mean_of(other: DocumentRow) -> np.ndarray | None:
            chunk_ids = [r.chunk_id for r in c.registry.chunks_of(other.collection, other.doc_id)]
            stored = [v for v in c.registry.vectors(other.collection, chunk_ids).values() if v is not None]
            return mean_direction(np.vstack(stored)) if stored else None

        match = find_edition_of(doc.title, mean_direction(vectors), others, mean_of) if len(vectors) else None
        if match is None:
            return []
        family = match.doc.family or match.doc.doc_id
        if match.doc.family is None:
            c.registry.set_family(doc.collection, [match.doc.doc_id], family, "confirmed")  # a family of one: nothing changes
        c.registry.set_family(doc.collection, [doc.doc_id], family, "proposed")
        return [
            f"looks like another edition of '{match.doc.name}' (title {match.title:.2f}, content {match.content:.2f} alike); "
            f"`policybot editions --confirm {doc.name}` makes questions use only the edition in force"
        ]

    def confirm_edition(self, name: str, confirm: bool = True) -> DocumentInfo:
        """Confirm a proposed edition (questions then search the edition in force only), or
        take a document out of its family (``confirm=False``)."""
        c = self.components
        row = c.registry.by_name(c.index.collection, name)
        if row is None:
            raise PolicyBotError(f"not indexed: {name}")
        if confirm and not row.family:
            raise PolicyBotError(f"{name} is not in an edition family (no other edition was found when it was added)")
        c.registry.set_family(row.collection, [row.doc_id], row.family if confirm else None, "confirmed" if confirm else None)
        return next(d for d in self.documents().documents if d.name == name)

    def set_effective(self, name: str, when: date | None) -> DocumentInfo:
        """Set (or, with None, clear) the date a document's edition takes effect, by hand."""
        c = self.components
        row = c.registry.by_name(c.index.collection, name)
        if row is None:
            raise PolicyBotError(f"not indexed: {name}")
        c.registry.set_effective(row.collection, row.doc_id, when.isoformat() if when else None, "user" if when else None)
        updated = c.registry.by_name(c.index.collection, name)
        assert updated is not None
        return document_info(updated, self.settings.ocr.confidence_floor)

    def ingest_upload(self, name: str, data: bytes, progress: ProgressFn | None = None) -> IngestOutcome:
        """Ingest a file received from a browser. Its name is reduced to a safe base name; the
        bytes are staged inside the data folder (never a shared temp folder) and removed
        whatever happens."""
        safe = safe_upload_name(name)
        staging = self.components.index.uploads_dir  # opening the index empties it after a crash
        staging.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="upload-", dir=staging))
        try:
            path = folder / safe  # messages name the file; the safe name has no path in it
            path.write_bytes(data)
            outcome = self.ingest_file(path, progress, name=safe)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        outcome.file = safe  # where it was staged is nobody's business
        return outcome

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

    # --- one ingestion, in steps ------------------------------------------------------------
    @property
    def chunking_signature(self) -> str:
        """What determines a document's chunks: a changed signature re-chunks it on ingest."""
        s, chunker = self.settings, self.components.chunker
        return (
            f"{chunker.signature}{chunker.scope_suffix}|hdr{int(s.contextual_header)}"
            # "run2": the stricter running-header filter (issue 8) keeps lines the first one
            # dropped, so documents indexed with it are re-read on their next ingest.
            f"|tbl{int(s.detect_tables)}|run{2 * int(s.strip_running_headers)}"
        )

    def _ingest(self, path: Path, name: str, progress: ProgressFn | None) -> IngestOutcome:
        c = self.components
        started = time.perf_counter()
        check_file(path, self.settings.max_file_mb)
        sha = sha256_of(path)
        doc_id = f"{sha[:16]}-{hashlib.sha1(self.chunking_signature.encode()).hexdigest()[:6]}"
        same_name = c.registry.by_name(c.index.collection, name)
        if same_name is not None and same_name.doc_id == doc_id:
            return _outcome(path, same_name, "unchanged", "already indexed, unchanged")
        same_content = c.registry.by_sha(c.index.collection, sha)
        if same_content is not None and same_content.name != name:
            return _outcome(path, same_content, "duplicate", f"same content as '{same_content.name}', already indexed", name=name)
        prepared = self._prepare(path, name, sha, doc_id, started, progress)
        doc = self._store(prepared, same_name, progress)
        notes = [f"replaced the earlier version of {name}"] if same_name is not None else []
        parsed = prepared.parsed
        empty = [page for page in parsed.empty_pages if page not in parsed.ocr_unread]  # those get their own note
        if empty:
            notes.append(f"{len(empty)} page(s) without text: {_page_list(empty)}")
        if parsed.stripped_lines:
            notes.append(f"{parsed.stripped_lines} running header/footer line(s) left out, e.g. '{parsed.stripped_example}'")
        unread_why = self.components.ocr_fix() if self.components.ocr_engine() is None else "OCR found no words on them (blank, or too faint or noisy to read)"
        notes.extend(ocr_notes(parsed, self.settings.ocr.confidence_floor, unread_why))
        notes.extend(self._edition_note(doc, prepared.vectors))
        return _outcome(path, doc, "replaced" if same_name is not None else "ingested", "; ".join(notes), parsed=parsed)

    def _prepare(self, path: Path, name: str, sha: str, doc_id: str, started: float, progress: ProgressFn | None) -> _Prepared:
        """Read, chunk and embed: the slow part, before anything is written."""
        s = self.settings

        def on_page(done: int, total: int) -> None:
            if progress:
                progress(Progress(name, "read", done, total))

        def on_ocr(done: int, total: int) -> None:
            if progress:
                progress(Progress(name, "ocr", done, total))

        engine = self.components.ocr_engine()
        plan = OcrPlan(engine, s.ocr, on_ocr, "" if engine else self.components.ocr_fix())
        parsed = read_pdf(
            path, detect_tables=s.detect_tables, strip_running_headers=s.strip_running_headers, max_mb=s.max_file_mb, progress=on_page, ocr=plan
        )
        header = _header_fn(parsed) if s.contextual_header else (lambda section: "")
        chunks = self.components.chunker.run(parsed, header)
        if not chunks:
            raise IngestError("scanned", f"{name}: no text to index on any of its {parsed.page_count} pages", parsed.page_count)
        if progress:
            progress(Progress(name, "chunk", len(chunks), len(chunks)))
        rows = [
            ChunkRow(
                chunk_id=chunk_id(doc_id, i),
                doc_id=doc_id,
                ord=i,
                text=ch.text,
                index_text=(f"{header(ch.section)}\n{ch.text}" if s.contextual_header else ch.text),
                section=ch.section,
                page_start=ch.page_start,
                page_end=ch.page_end,
                kind=ch.kind,
            )
            for i, ch in enumerate(chunks)
        ]
        vectors = self._embed(name, [r.index_text for r in rows], progress)
        return _Prepared(path, name, sha, doc_id, parsed, rows, vectors, started)

    def _embed(self, name: str, texts: list[str], progress: ProgressFn | None) -> np.ndarray:
        embedder = self.components.embedder
        step = max(self.settings.embed_batch_size * 2, 32)
        parts = []
        for start in range(0, len(texts), step):
            parts.append(embedder.embed(texts[start : start + step]))
            if progress:
                progress(Progress(name, "embed", min(start + step, len(texts)), len(texts)))
        return np.concatenate(parts) if parts else np.zeros((0, embedder.dimension), dtype=np.float32)

    def _store(self, p: _Prepared, replaces: DocumentRow | None, progress: ProgressFn | None) -> DocumentRow:
        """Journal, store the PDF, index and register: all of it, or none of it."""
        c = self.components
        index, registry = c.index, c.registry
        if progress:
            progress(Progress(p.name, "save", 0, 1))
        # Journal first: a crash from here on is undone at the next start (index.recover).
        registry.begin_pending(index.collection, p.doc_id, str(index.files_dir / f"{p.sha}.pdf"))
        try:
            stored, newly_stored = index.store_file(p.path, p.sha)
        except BaseException:
            registry.end_pending(index.collection, p.doc_id)
            raise
        doc = self._document_row(p, stored)
        try:
            index.add(doc, p.rows, p.vectors, replaces=replaces)
        except BaseException:
            if newly_stored and not registry.stored_file_in_use(str(stored)):
                stored.unlink(missing_ok=True)
            registry.end_pending(index.collection, p.doc_id)
            raise
        return doc

    def _document_row(self, p: _Prepared, stored: Path) -> DocumentRow:
        parsed = p.parsed
        return DocumentRow(
            collection=self.components.index.collection,
            doc_id=p.doc_id,
            name=p.name,
            sha256=p.sha,
            title=parsed.title,
            pages=parsed.page_count,
            chunks=len(p.rows),
            sections=parsed.sections_found,
            section_source=parsed.section_source,
            tables=parsed.tables,
            empty_pages=parsed.empty_pages,
            embedding_model=self.components.profile.profile.embedding.hf_id,
            chunker=self.chunking_signature,
            stored_path=str(stored),
            source_path=str(p.path.resolve()),
            ingested_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            ingest_seconds=round(time.perf_counter() - p.started, 3),
            summary=self._summary(parsed),
            probes=self._probes(p.vectors),
            ocr_pages=parsed.ocr_pages,
            **_effective_from(parsed),
        )

    def _probes(self, vectors: np.ndarray) -> str:
        """What the off-topic probe questions score against this document (``bands.py``)."""
        bank = probe_bank()[0]
        return encode_probes(bank, self.components.profile.profile.embedding.hf_id, probe_scores(vectors, self.components.probe_vectors))

    def _summary(self, parsed: ParsedDocument) -> str:
        """A short description for the expansion prompt: by the LLM when one is running,
        else extractive (title, sections, first sentence). Made once, kept in the registry."""
        fallback = extractive_summary(parsed)
        llm, _ = self.components.llm.get()
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


def _header_fn(parsed: ParsedDocument) -> Callable[[str], str]:
    """The contextual header a chunk is indexed under: the document title and its section."""
    return lambda section: f"{parsed.title} — {section}" if section else parsed.title


def _outcome(path: Path, doc: DocumentRow, status: str, message: str, parsed: ParsedDocument | None = None, name: str | None = None) -> IngestOutcome:
    return IngestOutcome(
        file=str(path),
        name=name or doc.name,
        status=status,  # type: ignore[arg-type]
        message=message,
        title=doc.title,
        pages=doc.pages,
        chunks=doc.chunks,
        sections=doc.sections,
        tables=doc.tables,
        empty_pages=parsed.empty_pages if parsed else doc.empty_pages,
        running_lines_removed=parsed.stripped_lines if parsed else 0,
        running_line_example=(parsed.stripped_example or None) if parsed else None,
        warnings=list(parsed.warnings) if parsed else [],
    )


def _page_list(pages: list[int]) -> str:
    shown = ", ".join(str(p) for p in pages[:10])
    return shown + (f" and {len(pages) - 10} more" if len(pages) > 10 else "")


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
    for model in EMBEDDING_MODELS.values():
        if model.hf_id == row.embedding_model:
            return model
    return EmbeddingModel(row.embedding_model, row.embedding_model, 512)


def _effective_from(parsed: ParsedDocument) -> dict[str, str | None]:
    """The edition date the document states on its first pages, if any."""
    opening = [line.text for line in parsed.lines if line.page <= 2 and line.kind == "text"]
    found = effective_date(opening, parsed.title)
    return {"effective_date": found.isoformat(), "effective_source": "document"} if found else {}


def ocr_notes(parsed: ParsedDocument, floor: float, fix: str) -> list[str]:
    """What the user should know about a document's scanned pages."""
    notes = []
    if parsed.ocr_pages:
        mean = sum(parsed.ocr_pages.values()) / len(parsed.ocr_pages)
        per_page = parsed.ocr_seconds / len(parsed.ocr_pages)
        notes.append(f"{len(parsed.ocr_pages)} scanned page(s) read by OCR (confidence {mean:.0f}% on average, {per_page:.1f} s a page)")
        low = parsed.low_confidence_pages(floor)
        if low:
            notes.append(f"low OCR confidence (under {floor:.0f}%) on page(s) {_page_list(low)}: answers citing them are marked; check them against the page images")
    if parsed.ocr_unread:
        notes.append(f"{len(parsed.ocr_unread)} scanned page(s) not read: {_page_list(parsed.ocr_unread)}; {fix}")
    return notes

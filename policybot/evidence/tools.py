"""The actions of evidence mode: ``Search`` (hybrid search of a scope, judged against what
off-topic questions reach there) and ``Lookup`` (a clause, a defined term or a section, answered
exactly).

An analyst's question is not "am I covered?" but "what does this library say about flood damage
in basements?": the cover, the exclusions that limit it, the definitions it depends on, the
conditions and the claim procedure, across documents. Two drivers use these tools: the
deterministic ``planner`` (no LLM, so an offline kiosk can run it) and the ReAct agent
(``react``: Zhang & Pope's ReAct for policy evidence, offline). The tools are built from the
answering pipeline's stages (hybrid retrieval, the clause and glossary look-ups of
``answer/references.py``); what they find goes into the ``table``.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

from policybot.answer.bands import Signals, decide
from policybot.answer.retrieval import HybridRetriever, ListKey
from policybot.core.glossary import Glossary
from policybot.core.passages import Passage
from policybot.core.probes import Calibration
from policybot.core.rows import ChunkRow, DocumentRow, RowLookup
from policybot.core.text import TITLE_NUMBER, alnum
from policybot.evidence.quotes import content_words, singular

ClauseChunks = Callable[[str, str], list[str]]  # (doc_id, clause number) -> its chunk ids
SectionChunks = Callable[[str], list[tuple[str, str]]]  # doc_id -> (chunk id, section path) in order
GlossaryOf = Callable[[str], Glossary]


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
        self._text_index: dict[str, dict[str, list[ChunkRow]]] = {}
        self._shares: dict[tuple[str, str], float] = {}

    # Search ------------------------------------------------------------------------------
    def search(self, query: str, k: int = 5, within: set[str] | None = None) -> list[Passage]:
        """Hybrid search of the scope (or only of the chunks ``within``), best first, judged
        against what off-topic questions reach in the same documents (``core/probes.py``), in two steps:

        1. Is the library about this at all? Its best passage must beat what 95 % of the
           off-topic probes reach (with calibrated fusion: the fused score of a passage at the
           probes' 95th percentile on both retrievers; with RRF: not out of scope by the
           answering bands). If not, the search finds nothing and says so, instead of
           returning noise.
        2. Which passages belong? Those above the probes' mean (a fused z-score above 0): an
           issue is three words and BM25 scores grow with a query's length, so holding every
           passage to the 95th percentile of sentence-long probes would drop real evidence.
        """
        # Inside a section, look deeper: its chunks may rank low in the whole scope. No token match:
        # evidence collects every passage that belongs, not the best few, and with it the clause
        # recall was the same on every evidence set at 4x the time per issue
        # (eval/decisions/2026-11-28-token-match.md).
        depth = None if within is None else max(self.retriever.candidates, len(within) * 4)
        lists = self.retriever.lists(query, list(self.scope), candidates=depth, reorder=False)
        hybrid, dense = lists[ListKey("hybrid")], lists[ListKey("dense")]
        lexical = lists[ListKey("lexical")]
        if not hybrid:
            return []
        if self.retriever.mode == "calibrated":
            if hybrid[0][1] <= self._fused_floor():
                return []
            keep = lambda cid, score: score > 0.0  # noqa: E731
        else:  # RRF scores say nothing absolute: the answering bands and the dense floor decide
            signals = Signals(
                max((x for _, x in dense), default=0.0), max((x for _, x in lexical), default=0.0), False, False
            )
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
    def lookup(self, reference: str) -> list[Passage]:
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

    def definition(self, term: str) -> list[Passage]:
        """The definition of a term in each document of the scope that defines it."""
        wanted = singular(alnum(term))
        found = []
        for doc_id in self.scope:
            glossary = self.glossary_of(doc_id)
            for name, chunk_id in glossary.terms.items():
                if singular(alnum(name)) == wanted:
                    found.append((chunk_id, 1.0))
        return self._hits(found, f"definition of {term}")

    def section(self, title: str) -> list[Passage]:
        """The opening chunk of each section whose title, without its numbering ("Section 6",
        "VII.", "2.5"), is or starts with ``title``."""
        openings = [chunk_ids[0] for chunk_ids in self.sections_titled(title).values()]
        return self._hits([(chunk_id, 1.0) for chunk_id in openings[:6]], f"section {title}")

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
                last = TITLE_NUMBER.sub("", path.split(" > ")[-1]).strip()
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

    def aspect_sections(self, pattern: re.Pattern[str] | None = None) -> dict[str, set[str]]:
        """Per top-level section (whose title matches ``pattern``, when given: "Section 4 General
        Exclusions", "V. Exclusions"), the chunk ids under it. Top level only: a sub-clause titled
        "Disputes which are covered" is a part of its own topic, not where a policy keeps its
        cover. Two documents' sections of the same title are one part ("V. Exclusions" of each
        flood form)."""
        out: dict[str, set[str]] = {}
        for doc_id in self.scope:
            for chunk_id, path in self.sections_of(doc_id):
                top = path.split(" > ")[0]
                if top and (pattern is None or pattern.search(top)):
                    out.setdefault(top, set()).add(chunk_id)
        return out

    def sections_titled(self, title: str) -> dict[str, list[str]]:
        """Per section whose own title (numbering removed) is or starts with ``title``, in each
        document of the scope, the chunk ids under it in reading order (its sub-sections included;
        a chunk under two such sections is in both)."""
        wanted = alnum(TITLE_NUMBER.sub("", title))
        out: dict[str, list[str]] = {}
        if not wanted:
            return out
        for doc_id in self.scope:
            for chunk_id, path in self.sections_of(doc_id):
                parts = path.split(" > ")
                for depth, part in enumerate(parts):
                    if alnum(TITLE_NUMBER.sub("", part)).startswith(wanted):
                        key = f"{self.scope[doc_id].name}: {' > '.join(parts[: depth + 1])}"
                        out.setdefault(key, []).append(chunk_id)
        return out

    def term_share(self, doc_id: str, term: str) -> float:
        """The share of a document's chunks that use a term (as written)."""
        key = (doc_id, term)
        if key not in self._shares:
            texts = self._chunks_of(doc_id)
            pattern = re.compile(rf"(?<![\w-]){re.escape(term)}(?![\w-])")
            self._shares[key] = sum(1 for c in texts if pattern.search(c.text)) / max(len(texts), 1)
        return self._shares[key]

    def copies(self, hit: Passage, doc_ids: Iterable[str]) -> list[Passage]:
        """The passages of the documents ``doc_ids`` (other than ``hit``'s) whose text is exactly
        ``hit``'s: a sibling document's copy that no search returned, the table notes it all the same."""
        return [
            Passage(chunk, self.scope[doc_id], hit.score, hit.reason)
            for doc_id in doc_ids
            if doc_id != hit.doc.doc_id and doc_id in self.scope
            for chunk in self._by_text(doc_id).get(hit.chunk.text, [])
        ]

    def _by_text(self, doc_id: str) -> dict[str, list[ChunkRow]]:
        """A document's chunks by their text (read once per run, for ``copies``)."""
        if doc_id not in self._text_index:
            index: dict[str, list[ChunkRow]] = {}
            for chunk in self._chunks_of(doc_id):
                index.setdefault(chunk.text, []).append(chunk)
            self._text_index[doc_id] = index
        return self._text_index[doc_id]

    def _chunks_of(self, doc_id: str) -> list[ChunkRow]:
        if doc_id not in self._texts:
            self._texts[doc_id] = list(self.rows([cid for cid, _ in self.sections_of(doc_id)]).values())
        return self._texts[doc_id]

    def _hits(self, ranked: Sequence[tuple[str, float]], reason: str) -> list[Passage]:
        rows = self.rows([cid for cid, _ in ranked])
        return [
            Passage(rows[cid], self.scope[rows[cid].doc_id], score, reason)
            for cid, score in ranked
            if cid in rows and rows[cid].doc_id in self.scope
        ]

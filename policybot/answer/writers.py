"""Writing the answer: by the LLM from the numbered sources (streamed, then its citations
checked), or extractively, quoting the best sentences of the best passages (no LLM, or the
LLM failed mid-answer). Both start from the same draft: what retrieval decided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Generator, Literal, Sequence

import numpy as np

from policybot.answer.citations import CitationChecker
from policybot.answer.equivalents import without_set_phrases
from policybot.answer.missing import MISSING, missing
from policybot.answer.neighbours import WordNeighbours
from policybot.answer.query import (
    asks_meaning,
    asks_meaning_of_title,
    asks_quantity,
    clause_references,
    is_coverage_question,
    section_matches,
    split_item,
    terms_asked,
)
from policybot.answer.references import quantity_kinds
from policybot.answer.support import SupportChecker
from policybot.core.clauses import cited_under, role_section
from policybot.core.glossary import DEFINITION_ITEM, term_of_line
from policybot.core.passages import body_start, lead_in_for
from policybot.core.quotes import (
    ELLIPSIS,
    MAX_QUOTE_CHARS,
    Quote,
    choose_quote,
    clause_starts,
    is_heading_line,
    is_list_item,
    other_quote,
    quote_units,
    says_when,
)
from policybot.core.roles import CONDITION_WORDS, plain_label
from policybot.core.text import alnum, heading_title, in_definitions, names_phrase
from policybot.core.timing import Timings
from policybot.events import Event, StageEvent, TokenEvent
from policybot.models.llm import REFUSAL, ChatLLM, LLMUsage, load_prompt
from policybot.schemas import Answer, Citation, page_range
from policybot.settings import Settings
from policybot.store.lexical import Tokenizer

# Extractive answers quote the best passages, at most this many (each by ``core.quotes``).
EXTRACTIVE_SOURCES = 3
# The best passage is quoted twice when its other sentence speaks to the question at least half as
# closely as the first quote; the next passage when at least three quarters (record
# 2026-11-26-second-quote). Later passages are quoted once.
SECOND_QUOTE_SHARES = (0.5, 0.75)
# Other documents' wording of the best passage's clause quoted beside it (siblings that differ).
MAX_VARIANTS = 2
# A quote that another quoted passage holds word for word is shown once, with both citations; the
# passage that added nothing new gives its place to the next one, at most this many times.
MAX_SPARE = 2
# A word of the question that names its document counts half in choosing a quote: it says which
# document more than which sentence (record 2026-11-26-naming-words-in-quotes; at 0 a guide's
# sentence naming its scheme lost to one that does not).
NAMING_WORD_WEIGHT = 0.5
QuoteChoice = Literal["words", "meaning", "both"]
# What an answer says when the model's own words did not check out against the documents.
UNSUPPORTED_NOTICE = (
    "The written answer did not match your documents, so the passages that best match are quoted instead."
)
REMOVED_NOTICE = "{n} sentence{s} of the written answer that your documents do not back {verb} removed."
# The heading of an answer from the uncertain band: the passages are there, but not sure to answer.
# Said plainly (issue 22): the documents may not state it (a price or a phone number lives in the
# schedule or elsewhere), and what follows is the closest they come.
HEDGE = "Your documents may not say this directly. The closest passages — check them:"


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
    continued_documents: list[str] = field(default_factory=list)
    also_searched: list[str] = field(default_factory=list)
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
            continued_documents=self.continued_documents,
            also_searched=self.also_searched,
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
    """The best sentences of the top passages, quoted exactly, each with its citation.

    Which sentence or list item of a passage is quoted (``quote_choice``): the one sharing most
    of the question's words, or the passage's words for them (``neighbours``: "bicycle" for
    "bike") ("words"), the one closest in meaning ("meaning": "a slow leak under
    the sink" is closest to "water escaping gradually… such as a slow drip", which shares one
    word with it), or shared words with meaning as the tie-break ("both")."""

    def __init__(
        self,
        embed: Callable[[Sequence[str]], np.ndarray] | None = None,
        embed_query: Callable[[str], np.ndarray] | None = None,
        quote_choice: QuoteChoice = "both",
        neighbours: WordNeighbours | None = None,
    ) -> None:
        self.tokenizer = Tokenizer()
        self.embed, self.embed_query = embed, embed_query
        self.quote_choice = quote_choice
        self.neighbours = neighbours

    def run(
        self,
        draft: AnswerDraft,
        question: str,
        sources: list[Citation],
        notice: str | None = None,
        named: Sequence[str] = (),
        words: str | None = None,
    ) -> Answer:
        """``words``: the question without the words that name its documents, when it names some
        ("our endorsement deal with Geno Auriemma" says which document, and every party name in
        its signature block shares those words): those count ``NAMING_WORD_WEIGHT`` in choosing
        a passage's quote."""
        with draft.timings.measure("extractive"):
            q_terms = set(self.tokenizer(question))
            naming = q_terms - set(self.tokenizer(words)) if words else set()
            # The documents' words searched for the user's ("mudflow" for "mudslide") count as theirs.
            q_terms |= set(self.tokenizer(" ".join(draft.also_searched)))
            absent = missing(draft.question, [s.text for s in sources])  # what the user asked, in their words
            lines = [MISSING.format(what=absent)] if absent else [HEDGE] if draft.band == "uncertain" else []
            chosen, spare = self._to_quote(sources, named)
            closeness, cosine = self._closeness(question, q_terms, chosen + spare, naming)
            refs = [split_item(ref) for ref in clause_references(question)]
            asked = _Asked(question, closeness, cosine, refs, asks_meaning(question))
            quoted: dict[int, Citation] = {}
            items: list[Quoted] = []
            also: dict[str, list[int]] = {}  # a quote's words → the other sources that hold it word for word
            queue = list(chosen)
            while queue:
                src = queue.pop(0)
                new = self._quote(src, chosen, asked, quoted)
                fresh = False
                for item in new:
                    key = _said_as(_same_words(item[1]), also)
                    if key not in also:
                        also[key], fresh = [], True
                        items.append(item)
                    elif src.n not in also[key]:
                        also[key].append(src.n)
                if not fresh and not src.referenced_by and spare:  # said already: the next passage is read
                    queue.insert(sum(not s.referenced_by for s in queue), spare.pop(0))
            by_file = _file_labelled([quoted[n] for n in quoted])
            labels = {n: c.file_label if n in by_file else c.label for n, c in quoted.items()}
            for i, (src, shown, _) in enumerate(_turning_beside_pointer(_deciding_first(items, question), question), 1):
                pointer = src.referenced_by[0] if src.referenced_by else None
                note = f" (referenced by [{pointer}]: {src.reference})" if pointer in quoted else ""
                role = f"{src.role}: " if src.role else ""
                ns = [src.n, *also[_same_words(shown)]]
                # Two overlapping chunks of one clause: one place. Each quote is cited under its own clause.
                places = [src.file_label if src.n in by_file else src.label, *(labels[n] for n in ns[1:])]
                where = "; ".join(dict.fromkeys(_within(p, places[0]) if p != places[0] else p for p in places))
                lines.append(f'{i}. {role}"{shown}" {"".join(f"[{n}]" for n in ns)} — {where}{note}')
            conditions = _conditions(items, closeness, self.tokenizer)
            if conditions:
                lines += ["", DEPENDS_ON, *depends_on_lines(conditions)]
            for n, _, span in conditions:  # highlighted in the passage and on its page too
                quoted[n] = quoted[n].model_copy(update={"also_quoted": [*quoted[n].also_quoted, span]})
        citations = [quoted.get(s.n, s) for s in sources]
        return draft.answer("\n".join(lines), "extractive", citations, notice=notice)

    def _quote(self, src: Citation, chosen: list[Citation], asked: _Asked, quoted: dict[int, Citation]) -> list[Quoted]:
        """A passage's quote (two, see ``_second``), each as shown with its role and closeness; the
        passage as cited, with its quotes highlighted, goes into ``quoted``."""
        begin, closeness = body_start(src), asked.closeness
        score = _scorer(src, begin, closeness, asked.question if asked.meaning else None, asked.items_named)
        quote = choose_quote(src.text, score, begin)
        quote = _whole_definition(src, quote, asked.question) if asked.meaning else quote
        second = self._second(src, chosen, closeness, begin, quote) if score is closeness else None
        quotes = [quote] if second is None else [quote, second]  # the second: see ``_second``
        placed = [_placed(src, q) for q in quotes]
        quoted[src.n] = _with_quotes(src, quotes, placed[0][1])
        items = []
        for q, (shown, place) in zip(quotes, placed):
            close = _best_unit(asked.cosine or closeness, src.text, q.start, q.end)
            items.append((quoted[src.n].model_copy(update=place), shown, close))
        return items

    @staticmethod
    def _second(
        src: Citation, chosen: list[Citation], closeness: Callable[[str], float], begin: int, first: Quote
    ) -> Quote | None:
        """A second quote of one of the best passages: its other sentence or list item closest to
        the question, when that speaks to it nearly as closely as the first quote (see
        ``SECOND_QUOTE_SHARES``). A clause
        often holds the cover and the exclusion that decides it side by side ("We will cover food
        in a freezer… spoilt…" and "We will not pay where the supplier deliberately cut off the
        electricity supply"); one quote shows only one of them. A conditional sentence, or an
        item of a conditional list, is not taken: "Depends on:" lists those."""
        rank = next((i for i, c in enumerate(chosen[: len(SECOND_QUOTE_SHARES)]) if c is src), None)
        if rank is None or src.referenced_by:
            return None
        best = _best_unit(closeness, src.text, first.start, first.end)
        groups = [span for _, span, parts in _condition_units(src) if CONDITION_WORDS.search(_lead(parts))]
        conditional = {
            src.text[s:e] for s, e in quote_units(src.text, begin) if any(s < e2 and s2 < e for s2, e2 in groups)
        }
        other = other_quote(src.text, lambda unit: 0.0 if unit in conditional else closeness(unit), first, begin)
        if other is None or best <= 0 or other[1] <= 0 or other[1] < SECOND_QUOTE_SHARES[rank] * best:
            return None
        return other[0]

    @staticmethod
    def _to_quote(sources: list[Citation], named: Sequence[str]) -> tuple[list[Citation], list[Citation]]:
        """The best passages, what they point to, and (unless the question named its document)
        the same clause as other documents word it, so the answer says what each one says. When
        the question names documents and one of theirs leads, only theirs are quoted. Then the
        next passages, read in turn when one of these says only what another already said (two
        forms, or a guide's overview and its section, worded alike)."""
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
        spare = [s for s in retrieved if s not in chosen][:MAX_SPARE]
        return chosen + [s for s in sources if s.referenced_by], spare

    def _closeness(
        self, question: str, q_terms: set[str], chosen: list[Citation], naming: set[str]
    ) -> tuple[Callable[[str], float], Callable[[str], float] | None]:
        """How much a sentence or list item speaks to the question, to choose the quote of a
        passage (see ``quote_choice``), and its closeness in meaning alone (a cosine; none without
        an embedder), to compare quotes of different passages: shared-word counts favour long
        quotes and the passage's own vocabulary. The units of every quoted passage are embedded
        in one batch."""
        units = list(dict.fromkeys(src.text[s:e] for src in chosen for s, e in quote_units(src.text, body_start(src))))
        near = self.neighbours.run(question, units, skip=naming) if self.neighbours and units else {}

        def shared(unit: str) -> float:
            # "in excess of" in a unit does not share the "excess" asked about (``without_set_phrases``).
            terms = set(self.tokenizer(without_set_phrases(unit, question)))
            # A question word the unit does not use counts by its closest word the unit uses for it.
            similar = sum(
                max((c for s, c in m.items() if s in terms), default=0.0) for q, m in near.items() if q not in terms
            )
            return len((q_terms - naming) & terms) + NAMING_WORD_WEIGHT * len(naming & terms) + similar

        if self.embed is None or self.embed_query is None:
            return shared, None
        if not units:
            return shared, None
        cosines: dict[str, float] = dict(zip(units, (self.embed(units) @ self.embed_query(question)).tolist()))

        def meaning(unit: str) -> float:
            return cosines.get(unit, 0.0)

        if self.quote_choice == "words":
            return shared, meaning
        if self.quote_choice == "both":
            # Shared words first. Their ties are broken by the kind of answer asked for ("how long…?",
            # "what is the waiting period…?" is answered by a sentence that states a quantity; "away for
            # three months" turns on the sentence that states a period: "more than 60 consecutive
            # days"), then by meaning (a cosine): together under 1, so never above one more shared word.
            wants_quantity, stated = asks_quantity(question), quantity_kinds(question)

            def both(unit: str) -> float:
                kinds = unit_quantities(unit)
                quantity = 0.5 if (wants_quantity and kinds) or stated & kinds else 0.0
                return shared(unit) + quantity + 0.4 * meaning(unit)

            return both, meaning
        return meaning, meaning


# What decides a coverage question, before the cover itself, and how close to the question (a share
# of the best cover quote's closeness) it must be to lead. An exclusion answers "no" and leads at
# three quarters; a limit or a condition qualifies a "yes" (how much, on what terms) and leads only
# when at least as close as the cover: at three quarters a deductible, a claims condition or a
# subrogation clause led answers whose best passage was the one that answers
# (record 2026-11-27-deciding-first-bar).
DECIDING_SHARES = {"Not covered": 0.75, "Limit": 1.0, "Condition": 1.0}


# "Depends on:" lists what the quoted passages make the answer hold under, found by the condition
# words the *Condition* label uses (``core/roles.CONDITION_WORDS``).
DEPENDS_ON = "Depends on:"
# At most five conditions, each listed whole or not at all (a cut condition misstates what it asks),
# up to 600 characters: a limit with its list of items, a gov.uk lead-in with its bullets
# (2026-11-26-best-passage-conditions.md; provisional, set by reading and the per-set table there).
MAX_CONDITIONS = 5
MAX_CONDITION_CHARS = 600
# A quote cut at the length limit repeats the condition it begins when it holds at least this many
# of its letters and digits (a shorter cut says too little to tell).
MIN_BEGUN_CHARS = 80
# A condition of a passage other than the best one is listed when it speaks to the question at
# least half as closely as the best sentence or list item of the quoted passages.
CONDITION_SHARE = 0.5
Quoted = tuple[Citation, str, float]  # the source, its quote as shown, how close the quote is to the question


@dataclass(frozen=True)
class _Asked:
    """What a question asks, read once for the quotes of all its passages: how close a sentence
    is to it (``ExtractiveWriter._closeness``), the clause items it names ("2.5(c)"), and
    whether it asks what a term means."""

    question: str
    closeness: Callable[[str], float]
    cosine: Callable[[str], float] | None
    items_named: list[tuple[str, str | None]]
    meaning: bool


def _deciding_first(items: list[Quoted], question: str) -> list[Quoted]:
    """For a coverage question ("will you pay?", "am I eligible?"), a quote that excludes, limits
    or sets a condition comes before the cover it qualifies, when it speaks to the question nearly
    as closely as the best other quote (``DECIDING_SHARES``, by role): the passages were already
    judged relevant by retrieval, only their order changes. Supporting sources stay last."""
    if not is_coverage_question(question):
        return items
    retrieved = [item for item in items if not item[0].referenced_by]
    supporting = [item for item in items if item[0].referenced_by]
    best = max((score for src, _, score in retrieved if src.role not in DECIDING_SHARES), default=0.0)

    def leads(item: Quoted) -> bool:
        share = DECIDING_SHARES.get(item[0].role or "")
        return share is not None and item[2] >= share * best

    ordered = sorted(retrieved, key=lambda item: not leads(item))
    return _by_source(ordered) + supporting


def _turning_beside_pointer(items: list[Quoted], question: str) -> list[Quoted]:
    """A definition the question turns on, by the quantity it states ("only 3 weeks" and *Unoccupied*:
    "more than 60 consecutive days"), is read right after the clause that uses the term, not among the
    supporting sources at the end: it is what decides between that clause's two readings. Its place
    only changes; what is quoted does not."""
    stated = quantity_kinds(question)
    turning = [
        item
        for item in items
        if item[0].referenced_by
        and (item[0].reference or "").startswith("definition of ")
        and stated & unit_quantities(item[1])
    ]
    if not turning:
        return items
    ordered = [item for item in items if not any(item is t for t in turning)]
    for item in turning:
        pointer = item[0].referenced_by[0]
        at = max((i for i, (src, _, _) in enumerate(ordered) if src.n == pointer), default=len(ordered) - 1)
        ordered.insert(at + 1, item)
    return ordered


def _by_source(items: list[Quoted]) -> list[Quoted]:
    """Two quotes of one passage side by side, where the first of them stands."""
    first_at: dict[int, int] = {}
    for i, (src, _, _) in enumerate(items):
        first_at.setdefault(src.n, i)
    return sorted(items, key=lambda item: first_at[item[0].n])


_ITEM_MARKER = re.compile(r"^\s*\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})[.)]\s+", re.I)  # "2. ", "(c) ": not a quantity


def _within(label: str, first: str) -> str:
    """A second place a quote is found, without the document title the first place already named
    ("… · 3.3 Theft · p.7; 2.7 Theft or attempted theft · p.5")."""
    title = first.split(" · ", 1)[0]
    return label.removeprefix(f"{title} · ") if " · " in first else label


def _said_as(key: str, said: dict[str, list[int]]) -> str:
    """The words of a quote already said that ``key`` says too, where the two differ only by what
    one of them opens with (a heading that leads one chunk's quote of a clause, "Mediation and
    Arbitration 55. In the event…", and not the overlapping chunk's "55. In the event…"); else
    ``key``. Only a quote of at least ``MIN_BEGUN_CHARS`` letters and digits is matched so."""
    if key in said or len(key) < MIN_BEGUN_CHARS:
        return key
    return next((k for k in said if len(k) >= MIN_BEGUN_CHARS and (k.endswith(key) or key.endswith(k))), key)


def _same_words(shown: str) -> str:
    """What a quote says, to tell when two passages say it word for word ("A. When a loss is insured…"
    and "When a loss is insured…"): its letters and digits, without its list marker."""
    return alnum(_ITEM_MARKER.sub("", shown))


def _scorer(
    src: Citation,
    begin: int,
    closeness: Callable[[str], float],
    meaning: str | None,
    items_named: Sequence[tuple[str, str | None]],
) -> Callable[[str], float]:
    """How a passage's quote is chosen: the item the question names, where a definition defines
    the term a quoted clause uses, a definition's opening sentence (``meaning``: the question, when
    it asks what something means), or closeness to the question."""
    term = (src.reference or "").removeprefix("definition of ") if src.reference else ""
    item = _named_item(src, items_named)
    if item:  # "Explain 2.5(c)": the clause's item (c) is the quote
        return _item_marked(item)
    if term and term != src.reference:  # a definition a quoted clause uses: where it defines the term
        return _defining(src.text, begin, term)
    if meaning and _defines(src):
        return _defining_asked(src.text, begin, meaning) or _opening(src.text, begin)
    return closeness


def shown_quote(src: Citation, quote: Quote) -> str:
    """A quote as the reader sees it: with its list's lead-in from the passage before, when the
    passage opens inside that list and the quote is one of its items (see ``answer/openings``)."""
    shown = quote.text(src.text)
    lead = lead_in_for(src, quote.start) if quote.lead_in is None else None
    return lead + ELLIPSIS + shown if lead else shown


def _placed(src: Citation, quote: Quote) -> tuple[str, dict[str, str | None]]:
    """A quote as the reader sees it, and where it is cited: the run-in clause it stands in, and
    its role read from there (``core/clauses``)."""
    shown = shown_quote(src, quote)
    clause_section = cited_under(src.section, src.clauses, quote.start)
    return shown, {
        "clause_section": clause_section,
        "role": plain_label(role_section(src.section, clause_section), shown),
    }


def _with_quotes(src: Citation, quotes: Sequence[Quote], first_place: dict[str, str | None]) -> Citation:
    """The source as cited: its first quote's span (cited where ``first_place`` says), any other quote
    highlighted beside it."""
    first = quotes[0]
    return src.model_copy(
        update={
            **first_place,
            "cited": True,
            "quote": src.text[first.start : first.end],
            "quote_start": first.start,
            "quote_end": first.end,
            "verified": True,
            "also_quoted": [*src.also_quoted, *((q.start, q.end) for q in quotes[1:])],
        }
    )


def unit_quantities(unit: str) -> set[str]:
    """The kinds of quantity a unit states: a period, an amount of money, a share or an age ("14 days",
    "$750", "80 percent", "aged 21 or over"); a list item's own number or a clause number is not one."""
    return quantity_kinds(_ITEM_MARKER.sub("", unit))


def _file_labelled(sources: list[Citation]) -> set[int]:
    """The quoted sources labelled by file name, not title: where two quoted documents share a title
    (two editions, two forms titled alike), so the reader can tell them apart."""
    docs_of: dict[str, set[str]] = {}
    for src in sources:
        docs_of.setdefault(src.title or src.doc, set()).add(src.doc)
    return {src.n for src in sources if len(docs_of[src.title or src.doc]) > 1}


def _best_unit(score: Callable[[str], float], text: str, start: int, end: int) -> float:
    """How close a quote is: its closest sentence or list item (a quote may join a few)."""
    units = [(s, e) for s, e in quote_units(text) if start <= s and e <= end] or [(start, end)]
    return max(score(text[s:e]) for s, e in units)


def _defines(src: Citation) -> bool:
    return in_definitions(src.section)


def _opening(text: str, begin: int) -> Callable[[str], float]:
    """A definition is its opening sentence ("Means you, the policyholder…"): quote that, whatever
    words a later sentence of it shares with the question ("An Insured Person also includes…")."""
    units = quote_units(text, begin)
    first = text[units[0][0] : units[0][1]] if units else ""
    return lambda unit: 1.0 if unit == first else 0.0


def _whole_definition(src: Citation, quote: Quote, question: str) -> Quote:
    """Asked what a term means, its definition is quoted whole, up to ``MAX_QUOTE_CHARS``: "… for more
    than 60 consecutive days. The Home is lived in only when someone sleeps there regularly; visiting
    … does not count as living in it." says what *Unoccupied* means, its first sentence alone half of
    it. Only the definition asked about: a passage titled with the term, or the definition of it the
    quote opens ("5. Basement. …", "Flood, as used in this policy, means: …"), up to the next one."""
    if not _defines(src) or quote.cut:
        return quote
    term = _term_defined(src.text[quote.start : quote.end])
    asked = term is not None and names_phrase(question, term)
    if not asked and not asks_meaning_of_title(question, src.section):
        return quote
    limit = quote.start + MAX_QUOTE_CHARS
    following = next((s for s in _definition_starts(src.text) if s >= quote.end), len(src.text))
    # Up to the next definition; a longer one ("Insured Person": a list of people, then who else
    # counts) up to its last sentence or item that fits, never cut inside one.
    ends = [e for _, e in quote_units(src.text, quote.start) if quote.end <= e <= min(following, limit)]
    return Quote(quote.start, max(ends), quote.lead_in) if ends else quote


def _quoted_clauses(src: Citation) -> list[tuple[int, int]] | None:
    """The spans of the clauses a passage's quotes stand in, when it sets out several ("1. Looking after
    your car. …", "2. Telling us about changes. …"; "A2. We will pay…", "A3. If your car…"), the text
    before the first one a part of its own; None when it does not (see ``core.quotes.clause_starts``)."""
    if src.quote_start is None:
        return None
    starts = clause_starts(src.text, body_start(src))
    return _quoted_parts(src, [0, *starts] if starts and starts[0] > 0 else starts, len(starts))


def _quoted_definitions(src: Citation) -> list[tuple[int, int]] | None:
    """The spans of the definitions a quote of a Definitions passage lies in ("5. Basement. …" up to
    "6. Building. …"), when the passage holds several: what "Depends on:" takes from it as from the
    best passage; its other definitions must speak to the question, as another passage's sentences
    must ("17. Federal Policy Fee. … you must pay" does not beside "What does mudflow mean?";
    "“Control” … means" does beside a change-of-control question). None for any other passage."""
    starts = _definition_starts(src.text) if _defines(src) else []
    return _quoted_parts(src, starts, len(starts))


def _quoted_parts(src: Citation, starts: list[int], count: int) -> list[tuple[int, int]] | None:
    """The parts of a passage (from each of ``starts`` to the next) that its quotes stand in; None when
    it sets out fewer than two (``count``)."""
    if count < 2:
        return None
    quoted = [q for q in (src.quote_start, *(a for a, _ in src.also_quoted)) if q is not None]
    spans = zip(starts, [*starts[1:], len(src.text)])
    return [(a, b) for a, b in spans if any(a <= q < b for q in quoted)]


def _defining_asked(text: str, begin: int, question: str) -> Callable[[str], float] | None:
    """In a Definitions passage that holds several numbered definitions ("4. Building. … 5. Basement.
    Any area of the building…"), the one whose term the question asks about, read as the glossary's
    search reads it (``query.terms_asked``: "What does basement mean for building cover?" asks about
    *Basement*); none when no term of the passage is named (its opening sentence is quoted then)."""
    units = {u: term for s, e in quote_units(text, begin) if (term := _term_defined(u := text[s:e]))}
    gaps = terms_asked(question, set(units.values()))
    if not gaps:
        return None
    nearest = min(gaps.values())
    asked = next(u for u, term in units.items() if gaps.get(term) == nearest)
    return lambda unit: 1.0 if unit == asked else 0.0


# A definition that opens "Flood, as used in this flood insurance policy, means:" or "Subsidence means …"
# (after a list marker, if any), the way many wordings define without a run-in title.
_MEANS = r"\s+(?:means|is defined as|refers to)\b"  # how a wording says what a term means
_TERM_MEANS_OPENING = re.compile(
    r"^\s*(?:\(?[A-Za-z0-9]{1,3}[.)]\s+)?[“\"‘']?([A-Z][\w'’-]*(?:\s+[\w'’-]+){0,4}?)[”\"’']?"
    r"(?:,[^.:;]{0,80},)?" + _MEANS
)


def _definition_starts(text: str) -> list[int]:
    """Where each definition of a Definitions passage begins: a sentence or item that defines a term."""
    return [s for s, e in quote_units(text) if _term_defined(text[s:e])]


def _term_defined(unit: str) -> str | None:
    """The term a unit defines: a numbered run-in title ("5. Basement. …"), an opening "X means", or
    a term before a dash or a colon ("Close relative — your husband…", as the glossary reads it)."""
    found = DEFINITION_ITEM.match(unit) or _TERM_MEANS_OPENING.match(unit)
    return found.group(1).strip() if found else term_of_line(unit)


def _defining(text: str, begin: int, term: str) -> Callable[[str], float]:
    """A definition followed from a clause's use of ``term`` is quoted where it defines that term
    (a chunk of a Definitions section often holds several): the first sentence naming it, else
    the opening sentence."""
    units = [text[s:e] for s, e in quote_units(text, begin)]
    naming = next((u for u in units if term.lower() in u.lower()), units[0] if units else "")
    return lambda unit: 1.0 if unit == naming else 0.0


def _conditions(
    items: list[Quoted], closeness: Callable[[str], float], stems: Callable[[str], list[str]] | None = None
) -> list[tuple[int, str, tuple[int, int]]]:
    """The conditional sentences of the quoted passages that were not quoted already: what the
    answer holds under, each with its source and its span there. A conditional lead-in with its
    list ("When they died you must have been: • under State Pension age • living in the UK…") is a
    candidate too, quoted as the passage words it: the items are what the lead-in makes the answer
    depend on.

    The best passage's conditions are listed whatever words they share with the question: retrieval
    judged that passage the answer, so what it makes the answer depend on is what the reader must
    know ("under State Pension age" shares no word with "Do I qualify for Bereavement Support
    Payment?"). Its lead-ins with their lists come first, then its sentences and the other passages'
    conditions closest to the question first, those only when they speak to it at least
    ``CONDITION_SHARE`` as closely as the closest quote. Chosen conditions never overlap, and a
    sentence two passages hold (overlapping chunks, sibling documents) is listed once."""
    shown_of: dict[int, str] = {}
    sources: dict[int, Citation] = {}
    for src, shown, _ in items:
        if not src.referenced_by:  # a passage quoted twice is read once, against both quotes
            shown_of[src.n] = f"{shown_of.get(src.n, '')} {shown}"
            sources.setdefault(src.n, src)
    retrieved = [(src, shown_of[n], _condition_units(src)) for n, src in sources.items()]
    said = alnum(" ".join(shown for _, shown, _ in items))  # what any quote says already
    # A quote cut at the length limit says the start of its sentence: the sentence is not listed again.
    begun = [alnum(shown) for _, shown, _ in items if shown.rstrip().endswith("…")]
    # The closest single sentence or item of the quoted passages (a group's parts are units too).
    best = max((closeness(parts[-1]) for _, _, units in retrieved for _, _, parts in units), default=0.0)
    found: list[tuple[bool, float, int, int, str, tuple[int, int]]] = []
    for rank, (src, _, units) in enumerate(retrieved):
        within = _quoted_definitions(src) or _quoted_clauses(src)
        for text, (s, e), parts in units:
            # Another definition of the same Definitions passage, or another clause of a list of them
            # ("2. Telling us about changes." beside the quoted "3. Making a claim."), is read as another
            # passage would be.
            own = within is None or any(a <= s and e <= b for a, b in within)
            key = _same_words(text)
            repeats = key in said or any(len(b) >= MIN_BEGUN_CHARS and b in key for b in begun)
            if repeats or not CONDITION_WORDS.search(_lead(parts)) or len(text) > MAX_CONDITION_CHARS:
                continue
            score = max(closeness(part) for part in parts)
            if (rank == 0 and own) or (score > 0 and score >= CONDITION_SHARE * best):
                listed_under = any(is_list_item(part) for part in parts[1:])  # a lead-in with its list
                found.append((rank == 0 and listed_under, score, len(parts), src.n, text, (s, e)))
    found.sort(key=lambda f: (not f[0], -f[1], -f[2]))  # on a tie, the lead-in with its list
    chosen: list[tuple[int, str, tuple[int, int]]] = []
    listed: set[str] = set()
    for _, _, _, n, text, (s, e) in found:
        if any(n == m and s < e2 and s2 < e for m, _, (s2, e2) in chosen):
            continue
        # A sentence two passages hold word for word (overlapping chunks, sibling forms that number it
        # "17." and "18.") is listed once, citing both (``depends_on_lines``).
        key = _same_words(text)
        if key in listed or len(listed) < MAX_CONDITIONS:
            listed.add(key)
            chosen.append((n, text, (s, e)))
    return chosen + (_defining_sentences(retrieved, chosen, stems) if stems and chosen else [])


def depends_on_lines(conditions: Sequence[tuple[int, str, tuple[int, int]]]) -> list[str]:
    """The "Depends on:" list: each condition once, with every passage that holds it. A bullet item
    is listed without its bullet, which the list's own dash stands for ("- "Once matched, you…"", not
    "- "• Once matched…""); a numbered or lettered item keeps its marker, which cross-references name."""
    cited: dict[str, tuple[str, list[int]]] = {}
    for n, text, _ in conditions:
        _, ns = cited.setdefault(_same_words(text), (_BULLET.sub("", text), []))
        if n not in ns:
            ns.append(n)
    return [f'- "{text}" {"".join(f"[{n}]" for n in ns)}' for text, ns in cited.values()]


_BULLET = re.compile(r"^[•\-–]\s+")


# A sentence that says what a quoted term means: "… and ‘severe disablement’ means at least 60% disabled."
# (anywhere in it, the term in quotes; ``_TERM_MEANS_OPENING`` is the same verb at a definition's start).
_TERM_MEANS = re.compile(r"[‘'\"“]([^’'\"”\n]{3,40})[’'\"”]" + _MEANS)
MAX_DEFINITIONS = 2  # listed after the conditions, beyond MAX_CONDITIONS


def _defining_sentences(
    retrieved: list[tuple[Citation, str, list[tuple[str, tuple[int, int], list[str]]]]],
    chosen: list[tuple[int, str, tuple[int, int]]],
    stems: Callable[[str], list[str]],
) -> list[tuple[int, str, tuple[int, int]]]:
    """The quoted passages' sentences that define a term a listed condition uses ("you're severely
    disabled" and "‘severe disablement’ means at least 60% disabled"): what the condition turns on.
    A term matches a condition when every word stem of it is in the condition."""
    used = [set(stems(text)) for _, text, _ in chosen]
    out: list[tuple[int, str, tuple[int, int]]] = []
    for src, shown, units in retrieved:
        for text, (s, e), parts in units:
            term = _TERM_MEANS.search(text)
            words = set(stems(term.group(1))) if term and not any(is_list_item(p) for p in parts[1:]) else set()
            listed = text in " ".join(shown.split()) or any(text in c for _, c, _ in chosen + out)
            if words and not listed and any(words <= u for u in used):
                out.append((src.n, text, (s, e)))
            if len(out) == MAX_DEFINITIONS:
                return out
    return out


def _condition_units(src: Citation) -> list[tuple[str, tuple[int, int], list[str]]]:
    """A passage's candidate conditions: (text as shown, span, the units it is made of). Every
    sentence or list item is one; so is a lead-in ending in ":" with the list items after it. Each
    stands under the heading line before it when that heading says when it applies ("If you live in
    Scotland … You can apply…", "Benefits and tax credits you must get … You (or your partner) must
    get one or more of the following: • Income Support …"): the heading is part of what it says."""
    spans = quote_units(src.text, body_start(src))
    units = [src.text[s:e] for s, e in spans]
    heads = [is_heading_line(src.text, *span) for span in spans]
    out = []
    for i, unit in enumerate(units):
        if heads[i]:
            continue
        j = i + 1
        while unit.rstrip().endswith(":") and j < len(units) and is_list_item(units[j]):
            j += 1
        # Only a heading that says when: "What is covered" adds nothing to a condition.
        heading = i - 1 if i and says_when(src.text, *spans[i - 1]) else None
        out += [_condition(src.text, spans, i, end, heading) for end in ([i + 1, j] if j > i + 1 else [i + 1])]
    return out


def _condition(
    text: str, spans: list[tuple[int, int]], first: int, end: int, heading: int | None
) -> tuple[str, tuple[int, int], list[str]]:
    """The units ``first``..``end`` of a passage as one condition, after their heading line."""
    start, stop = spans[first][0], spans[end - 1][1]
    shown, parts = " ".join(text[start:stop].split()), [text[s:e] for s, e in spans[first:end]]
    if heading is None:
        return shown, (start, stop), parts
    s, e = spans[heading]
    return " ".join(text[s:e].split()) + ELLIPSIS + shown, (s, stop), [text[s:e], *parts]


def _lead(parts: list[str]) -> str:
    """What a condition says before its list items (its heading and lead-in; a unit alone: itself)."""
    items = [i for i, part in enumerate(parts) if i and is_list_item(part)]
    return " ".join(parts[: items[0]] if items else parts)


def _clause_heading(src: Citation) -> str:
    """The clause a passage belongs to, as its last heading says it, without numbering."""
    return alnum(heading_title(src.section)) if src.section else ""


def _named_item(src: Citation, named: Sequence[tuple[str, str | None]]) -> str | None:
    """The item a question names in this source's clause ("2.5(c)" against "… > 2.5 Escape of
    water"): its letter or number, when the passage holds that item."""
    for clause, item in named:
        if item and section_matches(src.section, [clause]):
            letter = item.strip("()").lower()
            if any(_item_marked(letter)(src.text[s:e]) for s, e in quote_units(src.text)):
                return letter
    return None


def _item_marked(letter: str) -> Callable[[str], float]:
    marker = re.compile(rf"^\s*\(?{re.escape(letter)}[.)]\s", re.IGNORECASE)
    return lambda unit: 1.0 if marker.match(unit) else 0.0


class LLMWriter:
    """The answer written by the LLM from the numbered sources, streamed token by token."""

    def __init__(self, llm: ChatLLM, settings: Settings, fallback: ExtractiveWriter) -> None:
        self.llm = llm
        self.settings = settings
        self.fallback = fallback
        self.checker = CitationChecker()
        self.support = SupportChecker()

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
                failed = f"The language model failed ({str(exc)[:120]}); showing the best passages instead."
                return self.fallback.run(draft, question, sources, failed)
        raw = "".join(parts).strip()
        with draft.timings.measure("citations"):
            if is_refusal(raw):
                return draft.refusal(sources, "the model found no answer in the sources")
            checked = self.checker.run(raw, sources)
            support = self.support.run(checked.text, checked.citations)
        if not support.any_supported:  # nothing it says is backed: the passages speak instead
            quoted = self.fallback.run(draft, question, sources, UNSUPPORTED_NOTICE)
            return quoted.model_copy(update={"unchecked_draft": raw})
        notice: str | None = checked.notice
        draft_text: str | None = None
        removed_markers = checked.removed_markers
        if support.unsupported:
            removed = len(support.unsupported)
            draft_text = raw
            checked = self.checker.run(support.without_unsupported(checked.text), sources)
            notice = REMOVED_NOTICE.format(
                n=removed, s="" if removed == 1 else "s", verb="was" if removed == 1 else "were"
            )
        return draft.answer(
            checked.text,
            "generated",
            checked.citations,
            removed_markers=removed_markers,
            notice=notice,
            unchecked_draft=draft_text,
        )

    def _system(self, sources: Sequence[Citation]) -> str:
        language = self.settings.answer_language
        return load_prompt("system").format(
            sources=source_blocks(sources),
            refusal=REFUSAL,
            language=language if language != "auto" else "the same language as the question",
        )


def source_blocks(sources: Sequence[Citation]) -> str:
    """The numbered sources as the answer prompt shows them: document, section, pages, text (after
    the lead-in of the list it opens inside, so "(f) Accidental Damage…" is read as excluded)."""
    blocks = []
    for src in sources:
        lead = f"(A list that begins before this passage: {src.lead_in})\n" if src.lead_in else ""
        blocks.append(
            f"[{src.n}] {src.title} — {src.section or 'no section'}, "
            f"{page_range(src.page_start, src.page_end)}\n{lead}{' '.join(src.text.split())}"
        )
    return "\n\n".join(blocks)


def is_refusal(text: str) -> bool:
    """Whether the model's reply is (mostly) the fixed refusal."""
    norm = " ".join(text.lower().split())
    return norm.startswith(REFUSAL.lower()[:40]) or (len(norm) < 200 and REFUSAL.lower()[:40] in norm)

"""The query planner: turning a user's question into search queries. Follow-ups are made
standalone (heuristically, or by the LLM), HyDE + rewrites come from one LLM call, skipped
when the first pass is already confident; clause references ("clause 5.2", "Section VII")
are read from the question.

Whatever the LLM returns (invalid JSON, a numbered list, nothing at all), the original
question is always searched: a failed rewrite never leaves the query list empty.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, replace
from typing import Callable, Generator, Iterable, Sequence

from pydantic import BaseModel, Field, ValidationError

from policybot.answer.conversation import Turn, history_text
from policybot.answer.token_match import FUNCTION_WORDS
from policybot.core.text import heading_title, names_phrase, phrase_at
from policybot.core.timing import Timings
from policybot.events import Event, StageEvent
from policybot.models.llm import ChatLLM, LLMUsage, load_prompt
from policybot.settings import Settings

log = logging.getLogger(__name__)


class Expansion(BaseModel):
    """What the expansion call must return."""

    standalone: str | None = Field(None, description="The follow-up rewritten as a standalone question")
    hyde: str = Field("", description="A short hypothetical passage written as policy text")
    rewrites: list[str] = Field(default_factory=list)


@dataclass
class QueryPlan:
    """The queries searched for one question, and how they were made."""

    standalone: str
    queries: list[str]
    expanded: bool = False
    expansion_error: str | None = None
    expansion: str = ""  # for the answer: "used", "skipped: <why>" or "failed: <why>"

    def status(self) -> str:
        return "used" if self.expanded else f"failed: {self.expansion_error}"


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$")


def parse_expansion(text: str, max_rewrites: int) -> Expansion:
    """Read the expansion reply, tolerating code fences, prose around the JSON, wrong
    field types and plain numbered lists. Raises ValueError when nothing usable is found."""
    match = _JSON_OBJECT.search(text or "")
    if match:
        try:
            raw = json.loads(match.group(0))
            if isinstance(raw, dict):
                rewrites = raw.get("rewrites") or raw.get("queries") or []
                if isinstance(rewrites, str):
                    rewrites = [r for r in re.split(r"[\n;]+", rewrites)]
                raw["rewrites"] = [str(r) for r in rewrites if isinstance(r, (str, int, float))]
                for key in ("hyde", "standalone"):
                    if raw.get(key) is not None and not isinstance(raw[key], str):
                        raw[key] = (
                            json.dumps(raw[key]) if not isinstance(raw[key], list) else " ".join(map(str, raw[key]))
                        )
                exp = Expansion.model_validate(
                    {k: raw.get(k) for k in ("standalone", "hyde", "rewrites") if raw.get(k) is not None}
                )
                return _clean(exp, max_rewrites)
        except (json.JSONDecodeError, ValidationError) as exc:
            log.info("expansion reply is not valid JSON (%s); trying a list", exc)
    items = [m.group(1).strip(" \"'") for line in (text or "").splitlines() if (m := _LIST_ITEM.match(line))]
    if items:
        return _clean(Expansion(rewrites=items), max_rewrites)
    raise ValueError("no JSON object or list of queries in the reply")


def _clean(exp: Expansion, max_rewrites: int) -> Expansion:
    seen: set[str] = set()
    rewrites = []
    for r in exp.rewrites:
        r = " ".join(r.split()).strip(" \"'")
        if len(r) >= 2 and any(ch.isalpha() for ch in r) and r.lower() not in seen:
            seen.add(r.lower())
            rewrites.append(r[:300])
    standalone = " ".join((exp.standalone or "").split()) or None
    return Expansion(standalone=standalone, hyde=" ".join(exp.hyde.split())[:1200], rewrites=rewrites[:max_rewrites])


def merge_queries(original: str, extra: Sequence[str]) -> list[str]:
    """Original first, then distinct extras (case-insensitive)."""
    out = [original]
    seen = {original.strip().lower()}
    for q in extra:
        key = q.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(q.strip())
    return out


def with_context(question: str, previous_questions: Sequence[str]) -> str:
    """The question joined to the user's previous question (never to what that one was searched as,
    so context never snowballs): "and what about a flood?" carries "deductible" from the turn
    before. Whether the question needs it is decided by the search (``pipeline._needs_context``):
    a pronoun alone is no evidence ("My son broke the TV, is that covered?" stands alone)."""
    if not previous_questions:
        return question
    return f"{previous_questions[-1].rstrip('?. ')}; {question}"


# A question that opens by carrying on from the turn before: "and if it was only 3 weeks?", "what
# about subsidence?", "but the cash that was in it?"; a conditional fragment completes the question
# before it: "only if the water actually reaches us?". Its own search agreeing with itself is then no
# sign that it stands alone (``pipeline._needs_context``): "and what about subsidence?" finds the
# Subsidence cover by both dense and BM25, yet asks about the deductible just discussed.
_CARRIES_ON = re.compile(
    r"^\W*(?:and|but|also|plus|or|what about|how about|only if|even if|unless|only when|even when)\b", re.IGNORECASE
)


def carries_on(question: str) -> bool:
    """Whether a question opens with words that carry on from the turn before it."""
    return bool(_CARRIES_ON.match(question))


# What makes a turn ask something: a question mark; a turn that opens with a question word, an
# inverted auxiliary or a request ("whats the most for one item", "tell me about the excess", "explain
# 2.5(c)"); a later clause that opens with one ("we cant live there, do you pay for a hotel"; not a
# relative "which", "who", "when" or "where": "the back door, which I'd forgotten to lock"); "whether".
_AUXILIARY = (
    r"(?:please\s+)?(?:what|whats|how|can|could|do|does|did|is|are|was|were|will|would|should|shall|may|am|have|has"
    r"|tell|explain|list|show|give|describe|define|summari[sz]e|compare|find)\b"
)
_ASKS = re.compile(
    rf"\?|^\W*(?:(?:which|who|when|where|why)\b|{_AUXILIARY})|[,;:.]\s*{_AUXILIARY}|\b(?:whether|wonder(?:ing)?)\b",
    re.IGNORECASE,
)


def adds_to_story(turn: str) -> bool:
    """Whether a later turn asks nothing of its own: "I only told the bank 2 days later", "They got in
    through the back door, which I'd forgotten to lock." It tells more of the story the question
    before it asked about, so it goes on from that question as a turn that opens with "and" does."""
    return not _ASKS.search(turn)


# A turn with fewer than this many words of its own cannot carry its topic alone: "does it cost
# anything", "how much would I have to pay myself?", "is that covered?". Every such turn of the
# conversations set is a follow-up (11 of 11; with three words, 20 of 21); of the other sets' 818
# single questions, 2 say this little (eval/decisions/2026-11-30-turns-that-say-little.md).
OWN_WORDS_TO_STAND = 3
_WORDS = re.compile(r"[^\W_]+")


def own_words(turn: str) -> list[str]:
    """A turn's words of its own: lower case, neither function words nor single letters ("does it
    cost anything" -> ["cost"])."""
    return [w for w in _WORDS.findall(turn.lower()) if len(w) > 1 and w not in FUNCTION_WORDS]


def says_little(turn: str) -> bool:
    """Whether a turn names too little of its own to be searched alone (``OWN_WORDS_TO_STAND``).
    Whether it may lean on the turn before at all is decided apart: it must be nearer the library
    than any off-topic question ("what time is it?" is not; ``pipeline._follows``)."""
    return len(own_words(turn)) < OWN_WORDS_TO_STAND


# A word used in at most this share of the passages searched names something a few of them are about
# ("subsidence", "cash", "shed"); one used all over a library ("pay", "cover", "policy", a travel
# wording's "trip") or nowhere in it picks out nothing (2026-11-30-h-turns-that-say-little-searched-joined).
SPECIFIC_WORD_SHARE = 0.1


def names_something(turn: str, share: Callable[[str], float]) -> bool:
    """Whether one of a turn's own words is specific to a few passages of the library (``share``: the
    share of the passages searched that use a word): "and what about subsidence?" is, "how much would
    I have to pay myself?" and "is there anything for that" are not."""
    return any(0.0 < share(word) <= SPECIFIC_WORD_SHARE for word in own_words(turn))


class QueryWriter:
    """The planner's LLM calls: condense a follow-up, or expand a question (with at most one call)."""

    def __init__(self, llm: ChatLLM, rewrites: int = 4, max_tokens: int = 160, hyde: bool = True) -> None:
        self.llm = llm
        self.rewrites = rewrites
        self.max_tokens = max_tokens
        self.hyde = hyde

    def condense(self, question: str, history: str, usage: LLMUsage) -> str:
        """One short call: the follow-up as a standalone question (the question itself on failure)."""
        try:
            prompt = load_prompt("condense").format(history=history, question=question)
            reply = self.llm.complete(usage, "condense", prompt, max_tokens=60)
        except Exception:
            return question
        line = next((ln.strip(" \"'") for ln in reply.splitlines() if ln.strip()), "")
        return line if len(line) >= 3 else question

    def expand(self, question: str, summary: str, usage: LLMUsage, history: str | None = None) -> QueryPlan:
        """HyDE passage + rewrites (and the standalone question for a follow-up) in one call."""
        prompt = load_prompt("expansion").format(
            summary=summary or "policy documents", question=question, n=self.rewrites
        )
        if history:
            prompt = (
                f"Conversation so far:\n{history}\n\n{prompt}\n"
                'Also add "standalone": the question rewritten to stand alone, with the details it needs from the '
                "conversation."
            )
        try:
            reply = self.llm.complete(usage, "expansion", prompt, max_tokens=self.max_tokens, json_mode=True)
            exp = parse_expansion(reply, self.rewrites)
        except Exception as exc:  # a failed call or an unusable reply: search the question alone
            return QueryPlan(question, [question], expansion_error=str(exc)[:200])
        standalone = exp.standalone if (history and exp.standalone) else question
        extra = list(exp.rewrites) + ([exp.hyde] if exp.hyde and self.hyde else [])
        return QueryPlan(standalone, merge_queries(standalone, extra), expanded=True)


def after_first_pass(request: PlanRequest, plan: QueryPlan) -> QueryPlan:
    """A model's plan searched after what the first pass searched (the question; a follow-up: with
    its context, and alone), never instead of it: a weak model's standalone question drops the
    conversation's topic ("and if it was only 3 weeks?") or changes it, and then counts only as far
    as its passages agree with the first pass's (``pipeline._settled``). Without a standalone from the
    model, the question is answered as the first pass searched it."""
    first = request.searched
    standalone = plan.standalone if plan.standalone.strip() != request.question.strip() else first[0]
    queries = merge_queries(first[0], [*first[1:], standalone, *plan.queries])
    return replace(plan, standalone=standalone, queries=queries)


@dataclass
class PlanRequest:
    """What the planner decides from: the question, its history and the first pass."""

    question: str
    history: Sequence[Turn]
    searched: list[str]  # what the first pass searched (a follow-up: with its context, and alone)
    confidence: float  # the first pass's confidence (0 when dense and BM25 disagree)
    summary: str  # what the documents are, for the expansion prompt


class QueryPlanner:
    """Decides what to search: the first pass's query as it is, a condensed follow-up, or the
    question expanded into HyDE + rewrites, with at most one LLM call."""

    def __init__(self, settings: Settings, llm: ChatLLM | None, confident_at: float) -> None:
        self.settings = settings
        self.llm = llm
        self.confident_at = confident_at

    @staticmethod
    def first_queries(question: str, history: Sequence[Turn]) -> list[str]:
        """What the first pass searches. A question that may lean on the previous one is searched
        with the previous user question ("the deductible for water damage; and if the leak was
        slow?") and on its own; the pipeline keeps the context only when it finds closer passages
        (a follow-up), and then fuses both: the context brings the topic, the question what is new."""
        joined = with_context(question, [t.question for t in history])
        return [joined] if joined == question else [joined, question]

    def run(self, request: PlanRequest, usage: LLMUsage, timings: Timings) -> Generator[Event, None, QueryPlan]:
        s = self.settings
        searched = request.searched[0]
        plan = QueryPlan(
            searched, list(request.searched), expansion="skipped: fast mode" if s.fast_mode else "skipped: no LLM"
        )
        if self.llm is None or s.fast_mode:
            return plan
        confident = s.adaptive_expansion and request.confidence >= self.confident_at
        skipped = f"skipped: first pass confident ({request.confidence:.2f})"
        writer = QueryWriter(self.llm, s.expansion_rewrites, s.expansion_max_tokens, s.expansion_hyde)
        if request.history:
            yield StageEvent("condensing")
            history = history_text(request.history, s.memory_turns, s.memory_chars)
            with timings.measure("condense"):
                if confident:  # one short call is enough: the first pass already found the passages
                    standalone = writer.condense(request.question, history, usage)
                    return after_first_pass(request, QueryPlan(standalone, [standalone], expansion=skipped))
                plan = writer.expand(request.question, request.summary, usage, history)
        elif confident:
            return QueryPlan(searched, list(request.searched), expansion=skipped)
        else:
            yield StageEvent("expanding")
            with timings.measure("expansion"):
                plan = writer.expand(request.question, request.summary, usage)
        plan.expansion = plan.status()
        return after_first_pass(request, plan)


_CLAUSE_REF = re.compile(
    r"\b(?:(clause|section|article|part|chapter|schedule|endorsement)\s+([0-9]+(?:\.[0-9]+)*[a-z]?|[IVXLC]+)\b"
    r"(\([a-z]{1,3}\))?)|(§\s*[0-9]+(?:\.[0-9]+)*)",
    re.IGNORECASE,
)
# A bare dotted clause number with its item, "2.5(c)", or a dotted number alone, "5.2", when it is
# no amount, percentage or version ("$5.2", "5.2%", "v5.2").
_BARE_REF = re.compile(
    r"(?<![\w$£€.,/])([0-9]{1,2}(?:\.[0-9]{1,2})+)(\([a-z]{1,3}\))?(?![\w%.,/]*[0-9%])", re.IGNORECASE
)


def clause_references(question: str) -> list[str]:
    """Clause/section numbers named in a question, with a list item when it names one:
    "clause 5.2" -> ["5.2"], "Section VII" -> ["VII"], "Explain 2.5(c)" -> ["2.5(c)"]."""
    refs = []
    for m in _CLAUSE_REF.finditer(question):
        ref = (m.group(2) + (m.group(3) or "").lower()) if m.group(2) else m.group(4).replace("§", "").strip()
        if ref and ref not in refs:
            refs.append(ref)
    named = {r.split("(")[0] for r in refs}
    for m in _BARE_REF.finditer(question):
        ref = m.group(1) + (m.group(2) or "").lower()
        if m.group(1) not in named and ref not in refs:
            refs.append(ref)
    return refs


def split_item(ref: str) -> tuple[str, str | None]:
    """ "2.5(c)" -> ("2.5", "(c)"): the clause a section heading carries, and the item within it."""
    number, _, item = ref.partition("(")
    return number, f"({item}" if item else None


def section_matches(section: str, refs: Sequence[str]) -> bool:
    """Whether a section path carries one of the references as a heading number."""
    for ref in refs:
        pattern = rf"(?:^|>\s*|\b(?:section|clause|article|part|chapter|schedule|§)\s*){re.escape(ref)}(?:[.\s)]|$)"
        if re.search(pattern, section, re.IGNORECASE):
            return True
    return False


# "Am I covered", "will you pay", "can I claim", "is X included", "can I get", "am I eligible":
# questions a clause decides (an exclusion, a limit, a condition), not only a cover clause.
_COVERAGE_QUESTION = re.compile(
    r"\b(?:am i|are (?:we|they|you)|is (?:it|this|that|my|the|there|[a-z]+)|will (?:you|they|it|the|i)|"
    r"would (?:you|it|i|the)|can (?:i|we|my)|could (?:i|we)|do (?:i|you|we)|does (?:it|the|my|this|that))\b"
    r"[^?.]*?\b(?:covered|cover|covers|pay|paid|pays|claim|included|include|eligible|entitled|get|qualify)\b",
    re.IGNORECASE,
)


def is_coverage_question(question: str) -> bool:
    """Whether a question asks if something is covered, paid, claimable or allowed."""
    return bool(_COVERAGE_QUESTION.search(question))


# The words of a bare ask to claim ("can I claim?", "can we claim for that?"): they say what kind of
# answer is wanted, not what about, and searched they match the library's claims procedure (how to
# claim, time limits, documents) instead of the story told before them. An ask in the words of cover
# or payment ("Am I covered?", "Will you pay?") is searched as it is: "we will cover" and "we will
# pay" are how the clauses that decide it are worded (record 2026-11-28-bare-asks).
_CLAIM_WORDS = frozenset("claim claims claiming".split())
_ASK_WORDS = _CLAIM_WORDS | frozenset(
    "pay paid pays payout reimburse reimbursed compensate compensated cover covered covers coverage insurance "
    "insurer insured policy include included eligible entitled qualify get compensation am are is be will "
    "would can could do does you i we me my it this that these those they them for on under anything still "
    "also then so please yes no or and the a an".split()
)
_SEGMENT = re.compile(r"[^.?!;,]+")


def without_ask(question: str) -> str:
    """The question without its bare asks to claim, when it tells something else: "my dog chewed the
    sofa, can i claim?" is searched as "my dog chewed the sofa". A segment (between commas, stops and
    semicolons) is a bare ask when each of its words is an ask word or a function word, one of them is
    "claim", and it reads as a coverage question ("can I claim", "can we claim for it"); so is the end
    of a segment, from where such a question starts, when a citizen writes on without a stop ("my dog
    chewed the sofa can i claim for it"). "Can I claim Carer's Allowance?" names what it asks for and
    is kept whole; so is "Can I claim?" alone, and "Is that covered?" or "Will you pay?" anywhere."""
    kept, dropped = [], False
    for m in _SEGMENT.finditer(question):
        segment = m.group()
        tail = _tail_ask(segment)
        if tail is not None:
            dropped, segment = True, segment[:tail]
        if re.search(r"[a-z]", segment, re.IGNORECASE):
            kept.append(segment.strip())
    return ", ".join(kept) if dropped and kept else question


# A question word: what comes after it is its question ("How late can I claim?", "What can I claim for?").
_WH = re.compile(r"\b(?:how|what|when|where|which|who|whom|whose|why)\b", re.IGNORECASE)


def _tail_ask(segment: str) -> int | None:
    """Where a segment's closing bare ask begins (0: the segment is one), after a statement of its own
    ("my dog chewed the sofa | can i claim for it"): the longest run of ask words at its end, when that
    is a bare ask and what comes before it asks nothing itself ("How late can I claim?" is a question
    of its own)."""
    words = list(re.finditer(r"[A-Za-z']+", segment))
    start = len(words)
    while start and words[start - 1].group().lower() in _ASK_WORDS:
        start -= 1
    if start == len(words):
        return None
    at = words[start].start()
    return at if not _WH.search(segment[:at]) and _bare_ask(segment[at:]) else None


def _bare_ask(text: str) -> bool:
    """Whether ``text`` only asks to claim: ask and function words, "claim" among them, read as a
    coverage question."""
    words = re.findall(r"[a-z']+", text.lower())
    return (
        bool(words)
        and all(w in _ASK_WORDS for w in words)
        and any(w in _CLAIM_WORDS for w in words)
        and bool(_COVERAGE_QUESTION.search(text))
    )


# A question that asks for an amount, a period or a date.
_ASKS_QUANTITY = re.compile(
    r"\b(?:how (?:much|long|many|soon|often|late)|by when|when (?:do|must|should|can|shall|will|would) (?:i|we)\b"
    r"|what percentage|which date|what (?:is|are) the "
    r"(?:\w+ ){0,3}(?:period|limit|limits|deductible|excess|amount|cost|price|percentage|fee|deadline|time limit))\b",
    re.IGNORECASE,
)


def asks_quantity(question: str) -> bool:
    """ "How long do I have…?", "What is the waiting period…?", "When do I have to tell you?": the
    answer is a quantity."""
    return bool(_ASKS_QUANTITY.search(question))


_MEANING = re.compile(r"\b(?:definition|define[ds]?|mean|means|meaning)\b", re.IGNORECASE)


def asks_meaning(question: str) -> bool:
    """ "What is the definition of…", "What does Unoccupied mean?"."""
    return bool(_MEANING.search(question))


def meaning_words(question: str) -> list[tuple[int, int]]:
    """Where the question asks what something means ("definition", "mean", "defined"): the term
    asked about is the one nearest these."""
    return [m.span() for m in _MEANING.finditer(question)]


def terms_asked(question: str, terms: Iterable[str]) -> dict[str, int]:
    """The terms the question names where it asks what something means, each with its distance in
    characters to the question's "mean" / "definition": the nearest is the one asked about ("What
    does 'flood' mean in my policy?" asks about *Flood*, not *Policy*). A term inside a longer
    named term is not one ("Escape of Water", not "Water"); none when the question does not ask
    what something means. The glossary's search and the quote of a definition both read it so."""
    marks = meaning_words(question)
    named = {t: m for t in terms if marks and (m := phrase_at(question, t)) is not None}
    return {
        term: min(max(start - m.end(), m.start() - end, 0) for start, end in marks)
        for term, m in named.items()
        if not any(other != term and names_phrase(other, term) for other in named)
    }


def asks_meaning_of_title(question: str, section: str) -> bool:
    """Whether the question asks what a clause's own title means: "What is the definition of an
    Insured Person?" with "Section 1 Definitions > 1.9 Insured Person" leading. The user pointed at
    that clause by its name, as "clause 1.9" would."""
    title = heading_title(section)
    if not asks_meaning(question) or not re.search(r"[^\W\d_]{2}", title):
        return False
    return names_phrase(question, title)

"""Whether each sentence of a generated answer is backed by a passage it cites.

Citation checks (``citations.py``) say whether a *source* is quoted faithfully. That is not
enough: a small model writes "The cost of this policy per month is $2.50 [1]" beside a real
quote, or "I'll make sure to pay for the damage" citing nothing, and the answer still reads as
the policy's. Here each sentence that says something (three or more content words) must be
backed by one passage it cites (its own markers, else its paragraph's):

- a quotation in it is found in that passage (a quotation found nowhere it cites sinks the
  sentence, whatever else it shares), or
- it shares a run of at least six consecutive words with the passage, or
- most of its content words (stemmed) are in the passage, and every number in it is too.

A page named in plain words ("see page 99", "[p. 12]") is checked like a citation: it must be a
page of a passage the sentence cites, however short the sentence.

A sentence with fewer content words ("Yes.", "It depends:") asks nothing of the sources. The
writer then shows only what is backed: an answer with unbacked sentences loses them, and an
answer with nothing backed is replaced by the extractive answer (``writers.LLMWriter``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from policybot.answer.citations import MARKER, MIN_RUN_WORDS, locate_quote
from policybot.core.text import longest_common_run, prose_sentences, words
from policybot.schemas import Citation
from policybot.store.lexical import Tokenizer

# Fewer content words than this: the sentence frames the answer, it states nothing to check.
MIN_CONTENT_WORDS = 3
# Share of a sentence's content words that one cited passage must hold.
MIN_COVERAGE = 0.6
_QUOTED = re.compile(r"[\"“]([^\"”\n]{8,600})[\"”]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PAGE_REF = re.compile(r"\b(?:pages?|pp?\.)\s*(\d{1,4})(?:\s*[-–]\s*(\d{1,4}))?", re.IGNORECASE)
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")  # "1. " or "- " opening a list item


@dataclass(frozen=True)
class SentenceCheck:
    """One sentence of the answer and whether a passage it cites backs it."""

    start: int
    end: int
    text: str
    cited: tuple[int, ...]
    supported: bool | None  # None: nothing to check (too few content words)
    reason: str


@dataclass(frozen=True)
class SupportReport:
    sentences: list[SentenceCheck]

    @property
    def unsupported(self) -> list[SentenceCheck]:
        return [s for s in self.sentences if s.supported is False]

    @property
    def any_supported(self) -> bool:
        return any(s.supported for s in self.sentences)

    def without_unsupported(self, text: str) -> str:
        """The answer with its unbacked sentences taken out, blank lines and spaces tidied."""
        out, cursor = [], 0
        for s in self.unsupported:
            out.append(text[cursor : s.start])
            cursor = s.end
        out.append(text[cursor:])
        kept = "".join(out)
        kept = re.sub(r"[ \t]+\n", "\n", kept)
        kept = re.sub(r"\n{3,}", "\n\n", kept)
        return re.sub(r"[ \t]{2,}", " ", kept).strip()


class SupportChecker:
    """Checks every sentence of an answer against the passages it cites."""

    def __init__(self) -> None:
        self.tokenizer = Tokenizer()

    def run(self, answer: str, citations: list[Citation]) -> SupportReport:
        quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(answer)]
        spans = prose_sentences(answer, quoted)
        checks = []
        for start, end in spans:
            sentence = answer[start:end]
            cited = _markers(sentence) or _markers(_paragraph(answer, start, end))
            checks.append(self._check(start, end, sentence, cited, citations))
        return SupportReport(checks)

    def _check(
        self, start: int, end: int, sentence: str, cited: tuple[int, ...], citations: list[Citation]
    ) -> SentenceCheck:
        plain = _LIST_MARK.sub("", MARKER.sub(" ", sentence))
        passages = [citations[k - 1] for k in cited if 1 <= k <= len(citations)]
        pages = _pages_named(plain)
        if pages and not passages:
            return SentenceCheck(start, end, sentence, cited, False, "names a page but cites no source")
        if any(not any(p.page_start <= page <= p.page_end for p in passages) for page in pages):
            return SentenceCheck(start, end, sentence, cited, False, "names a page its sources are not on")
        plain = _PAGE_REF.sub(" ", plain)  # checked: a page number is not a number the passage must hold
        content = set(self.tokenizer(plain))
        if len(content) < MIN_CONTENT_WORDS:
            return SentenceCheck(start, end, sentence, cited, None, "says nothing to check")
        if not passages:
            return SentenceCheck(start, end, sentence, cited, False, "cites no source")
        quotes = [m.group(1) for m in _QUOTED.finditer(plain) if len(m.group(1).split()) >= 3]
        for quote in quotes:
            if not any(locate_quote(quote, p.text) for p in passages):
                return SentenceCheck(start, end, sentence, cited, False, "a quotation is not in its sources")
        if quotes:
            return SentenceCheck(start, end, sentence, cited, True, "quotes its source")
        said = [w for w, _, _ in words(plain)]
        numbers = set(_NUMBER.findall(plain))
        for p in passages:
            if longest_common_run(said, [w for w, _, _ in words(p.text)]).matched >= MIN_RUN_WORDS:
                return SentenceCheck(start, end, sentence, cited, True, "shares a run of words with its source")
            held = content & set(self.tokenizer(p.text))
            if len(held) >= MIN_COVERAGE * len(content) and numbers <= set(_NUMBER.findall(p.text)):
                return SentenceCheck(start, end, sentence, cited, True, "its words and numbers are in its source")
        return SentenceCheck(start, end, sentence, cited, False, "not in the sources it cites")


def _pages_named(text: str) -> list[int]:
    """The pages a sentence names in words: "page 12", "p. 12", "pp. 4-5" (both ends)."""
    return [int(n) for m in _PAGE_REF.finditer(text) for n in m.groups() if n]


def _markers(text: str) -> tuple[int, ...]:
    return tuple(dict.fromkeys(int(k) for k in MARKER.findall(text)))


def _paragraph(text: str, start: int, end: int) -> str:
    """The paragraph (up to blank lines) around a sentence: a closing marker often cites it."""
    before = text.rfind("\n\n", 0, start)
    after = text.find("\n\n", end)
    return text[before + 1 if before >= 0 else 0 : after if after >= 0 else len(text)]

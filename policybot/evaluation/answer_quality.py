"""What a citizen actually reads, measured apart from the code that writes it.

- **Gold in the answer**: the answer text holds at least half of one of the question's gold
  passages as one unbroken run (letters and digits, case folded) — the same test retrieval
  uses for a relevant chunk, applied to the words shown.
- **Gold first**: the same test on what is read first, the answer's first numbered quote (an
  extractive answer) or its first sentence that cites a source: a citizen who reads one line
  reads this one.
- **Conditions stated**: of the condition sentences a set's gold answers carry, the share that
  the answers hold (same test).
- **Unsupported sentences**: sentences of a shown answer that no passage it cites backs. This
  is deliberately *not* the writer's guard (``answer/support.py``): a plain regex sentence split,
  no stemming, its own function-word list and a stricter share (70 % of the content words and
  every number in one cited passage), and an extractive answer's quotes checked letter for
  letter against their passages. A guard that is graded by itself grades nothing.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from policybot.core.text import alnum
from policybot.evaluation.datasets import Question, contains_half

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKER = re.compile(r"\[(\d+)\]")
_QUOTE = re.compile(r'"([^"\n]+)"\s*((?:\[\d+\])+)')
_TOKEN = re.compile(r"[a-z]+|\d+(?:[.,]\d+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_FUNCTION = frozenset(
    "a about after all also an and any are as at be been before but by can could did do does for from had has have "
    "he her his how i if in into is it its may me might must my no not of on or our shall she should so than that "
    "the their them then there these they this those to under up upon us was we were what when where which while "
    "who will with would you your yes".split()
)
MIN_WORDS = 4
SHARE = 0.7


def gold_in_answer(question: Question, text: str) -> bool:
    said = alnum(text)
    return any(contains_half(said, alnum(g.text)) for g in question.gold)


_NUMBERED = re.compile(r"^\s*1\.\s")


def first_read(text: str) -> str:
    """What is read first: the first numbered quote, else the first sentence citing a source,
    else the first line."""
    lines = text.splitlines()
    numbered = next((line for line in lines if _NUMBERED.match(line)), None)
    if numbered is not None:
        return numbered
    citing = next((s for s in _SENTENCE_END.split(text) if _MARKER.search(s)), None)
    return citing if citing is not None else next((line for line in lines if line.strip()), "")


def gold_first(question: Question, text: str) -> bool:
    return gold_in_answer(question, first_read(text))


def conditions_stated(question: Question, text: str) -> int:
    said = alnum(text)
    return sum(contains_half(said, alnum(c)) for c in question.conditions)


def unsupported_sentences(mode: str, text: str, passages: dict[int, str], cited: Sequence[int]) -> list[str]:
    """The sentences of a shown answer that no passage it cites backs (``passages``: source
    number -> text; ``cited``: the sources the answer cites)."""
    if mode == "refused":
        return []
    if mode == "extractive":
        return [
            quote
            for quote, markers in _QUOTE.findall(text)
            if not any(_holds(passages.get(int(k), ""), quote) for k in _MARKER.findall(markers))
        ]
    bad = []
    for sentence in _SENTENCE_END.split(text):
        own = [int(k) for k in _MARKER.findall(sentence)] or list(cited)
        plain = _MARKER.sub(" ", sentence).lower()
        content = {t for t in _TOKEN.findall(plain) if t not in _FUNCTION and (len(t) > 2 or t.isdigit())}
        if len(content) < MIN_WORDS:
            continue
        numbers = set(_NUMBER.findall(plain))
        if not any(_backs(passages.get(k, ""), content, numbers) for k in own):
            bad.append(sentence.strip())
    return bad


def _holds(passage: str, quote: str) -> bool:
    """Every part of a quote (parts joined by "…" were apart in the passage), in order, letter for
    letter and digit for digit: punctuation and spacing are how a passage is shown (a table row's
    "|Money|$750|" is read "Money · $750"), not what it says."""
    source, at = alnum(passage), 0
    for part in (alnum(p) for p in quote.rstrip("…").split("…")):
        if part:
            at = source.find(part, at)
            if at < 0:
                return False
            at += len(part)
    return True


def _backs(passage: str, content: set[str], numbers: set[str]) -> bool:
    tokens = set(_TOKEN.findall(passage.lower()))
    return len(content & tokens) >= SHARE * len(content) and numbers <= tokens


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Over a run's per-question rows: gold in the answer (answerable), conditions stated, and
    shown answers holding an unsupported sentence."""
    answerable = [r for r in rows if r["answerable"] and "gold_in_answer" in r]
    conditions = sum(r.get("conditions_total", 0) for r in answerable)
    shown = [r for r in rows if not r.get("refused") and "unsupported" in r]
    out: dict[str, Any] = {
        "gold_in_answer": round(sum(r["gold_in_answer"] for r in answerable) / len(answerable), 4)
        if answerable
        else None,
        "gold_first": round(sum(r.get("gold_first", False) for r in answerable) / len(answerable), 4)
        if answerable
        else None,
        "conditions": conditions,
        "conditions_stated": round(sum(r.get("conditions_stated", 0) for r in answerable) / conditions, 4)
        if conditions
        else None,
        "shown": len(shown),
        "with_unsupported": sum(bool(r["unsupported"]) for r in shown),
    }
    out["unsupported_rate"] = round(out["with_unsupported"] / len(shown), 4) if shown else None
    return out

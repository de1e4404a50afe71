"""Reading a passage for an issue: the words that carry a topic, the clause of a passage that
speaks most to it (the quote a row shows), and one line of it for an observation."""

from __future__ import annotations

from typing import Callable

from policybot.core.glossary import Glossary
from policybot.core.passages import Passage
from policybot.core.quotes import MAX_QUOTE_CHARS, choose_quote
from policybot.core.text import alnum, words

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
        out.add(singular(w))
    return out


def best_quote(text: str, topic: str, max_chars: int = MAX_QUOTE_CHARS) -> tuple[int, int]:
    """The span of ``text`` that speaks most to the topic: the sentence or whole list item
    (``core.quotes``) that shares most of the topic's words, earliest on a tie; the opening one
    when none does. A list item's lead-in is part of the span when it comes right before it."""
    wanted = content_words(topic)

    def score(unit: str) -> float:
        return len(wanted & content_words(unit)) + (0.5 if len(alnum(unit)) >= 30 else 0.0)

    quote = choose_quote(text, score, max_chars=max_chars)
    return quote.start, quote.end


def snippet(passage: Passage, topic: str, max_chars: int = 220) -> str:
    """The passage's sentences closest to the topic, on one line (for observations)."""
    s, e = best_quote(passage.chunk.text, topic, max_chars)
    return " ".join(passage.chunk.text[s:e].split())


def singular(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word

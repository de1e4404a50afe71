"""Text helpers every stage shares: one normaliser, one sentence splitter, one aligner.

PDF text and model output disagree in small ways (case, curly quotes, dashes, soft hyphens,
words hyphenated across a line break, runs of whitespace). Matching them is done in one
normalised form (``fold``), which keeps a map back to the original characters so that a
match can be reported, and highlighted, in the original text.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

# --- normalising ------------------------------------------------------------------------------

_CHARMAP = {
    **dict.fromkeys("‘’‚‛′`´", "'"),
    **dict.fromkeys("“”„‟″", '"'),
    **dict.fromkeys("‐‑‒–—―−﹘﹣－", "-"),
}
SOFT_HYPHEN = "\u00ad"
_INVISIBLE = set(SOFT_HYPHEN + "\u200b\u200c\u200d\u2060\ufeff")
# "state-\nment": a word hyphenated across a PDF line break is one word.
_BREAK_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u2010\u2011\u00ad][ \t]*\r?\n\s*(?=[^\W\d_])")
_NON_ALNUM = re.compile(r"[\W_]+")
WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
# The numbering in front of a heading: "Section 6 ", "VII. ", "2.5 ", "A. " (removed to read the title).
TITLE_NUMBER = re.compile(
    r"^\s*(?:(?:section|part|article|chapter)\s+)?(?:[\dIVXLC]+|[A-Z])?(?:\.[\dA-Za-z]+)*[.)]?\s+", re.IGNORECASE
)


@lru_cache(maxsize=512)
def fold(text: str) -> tuple[str, tuple[int, ...]]:
    """Text in matching form, and for each of its characters the index in ``text`` it came from.

    Lowercase (NFKC), one style of quotes and dashes, invisible characters and soft hyphens
    dropped, line-break hyphenation joined, whitespace runs collapsed to one space.
    """
    skip: set[int] = set()
    for m in _BREAK_HYPHEN.finditer(text):
        skip.update(range(m.start(), m.end()))
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if i in skip or ch in _INVISIBLE:
            continue
        mapped = _CHARMAP.get(ch) or unicodedata.normalize("NFKC", ch).lower()
        for c in mapped:
            if c.isspace():
                if out and out[-1] != " ":  # whitespace runs collapse; leading whitespace goes
                    out.append(" ")
                    index.append(i)
            else:
                out.append(c)
                index.append(i)
    return "".join(out), tuple(index)


# Quantities by kind: "3 weeks", "60 consecutive days" (a period), "$500" (money), "60%" (a share),
# "25 years old", "aged 21 or over", "under the age of 18" (an age: a line a person's age falls on,
# not a length of time; "my son is 23 years old" turns on "children under 25 years old", not on
# "more than 60 consecutive days").
# A number in digits or words, with the digits a contract repeats in brackets: "five (5) years",
# "thirty (30) days", "(30) days".
_SPELLED = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\s-]?(?:one|two|"
    r"three|four|five|six|seven|eight|nine))?|a|an"
)
_NUMBER_WORD = rf"(?:(?:\d+(?:[.,]\d+)?|{_SPELLED})(?:\s*\(\d+\))?|\(\d+\))"
_AGED = r"[\s-]+(?:old|of\s+age)\b"
_NOT_AGE = (
    r"(?:years?|days?|weeks?|months?|hours?|minutes?|times|feet|foot|inch(?:es)?|cm|kg|kilos?|stone|pounds?|"
    r"dollars?|euros?|rupees?|miles?|km|people|persons|children|kids|items?)"
)
# A person said to be a number, as a story tells an age: "my father is 72", "I'm 17", "she was 64";
# not when a unit follows the number ("he is 30 days late", "she is 5 feet tall").
_PERSON_IS = (
    r"\b(?:(?:i|he|she|they|we|you|father|mother|dad|mum|mom|son|daughter|wife|husband|child|kid|partner|"
    r"grandmother|grandfather|grandma|grandpa|parents?)(?:\s+(?:is|am|are|was|were|will\s+be)|['’](?:s|m))|im)"
)
QUANTITIES: dict[str, re.Pattern[str]] = {
    "period": re.compile(
        rf"\b{_NUMBER_WORD}(?:\s+(?:consecutive|full|calendar|working|clear))?\s+"
        rf"(?:hours?|days?|weeks?|fortnights?|months?|years?)\b(?!{_AGED})",
        re.I,
    ),
    "age": re.compile(
        rf"\b{_NUMBER_WORD}[\s-]+years?{_AGED}|\baged\s+\d+\b|\bages?\s+(?:of\s+)?\d+\b|\bturn(?:s|ed)?\s+\d+\b"
        rf"|{_PERSON_IS}\s+\d{{1,3}}\b(?![\s-]*(?:%|per\b|percent|{_NOT_AGE}\b))",
        re.I,
    ),
    "money": re.compile(r"[$£€]\s?\d[\d,.]*|\b\d[\d,.]*\s*(?:dollars|pounds|euros)\b", re.I),
    "share": re.compile(r"\b\d+(?:\.\d+)?\s*(?:%|per ?cent)", re.I),
}


def quantity_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` states an amount, a period or a share ("$500", "60 consecutive days", "80%")."""
    return sorted(m.span() for pattern in QUANTITIES.values() for m in pattern.finditer(text))


_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
_UNITS += "seventeen eighteen nineteen"
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {w: i for i, w in enumerate(_UNITS.split())}
NUMBER_WORDS |= {t: 20 + 10 * i for i, t in enumerate(_TENS)}
NUMBER_WORDS |= {t + u: 20 + 10 * i + NUMBER_WORDS[u] for i, t in enumerate(_TENS) for u in _UNITS.split()[1:10]}
NUMBER_WORDS |= {"hundred": 100, "thousand": 1000}


def number_value(word: str) -> float | None:
    """The number a word (as ``words`` gives it) stands for: "60" and "sixty" are 60; else None."""
    if word.isdigit():
        return float(word)
    return float(NUMBER_WORDS[word]) if word in NUMBER_WORDS else None


# A heading's own numbering: "1.9 ", "A. ", "IV) ", "2.5(c)" is not one (no space after it).
_HEADING_NUMBER = re.compile(r"^\s*(?:\d+(?:\.\d+)*|[A-Z]|[IVXLC]+)[.)]?\s+")


def heading_title(section: str) -> str:
    """The last heading of a section path without its numbering: "Section 1 Definitions > 1.9
    Insured Person" -> "Insured Person". One rule for the glossary's terms, the clause a passage
    belongs to, and a title the question names."""
    return _HEADING_NUMBER.sub("", section.split(" > ")[-1]).strip()


def in_definitions(section: str) -> bool:
    """Whether a section path lies in a Definitions section ("Section 1 Definitions > 1.9 Insured
    Person", "II. Definitions"): where the glossary's terms are read, and a passage defines."""
    return any("definition" in part.lower() for part in section.split(" > "))


def names_phrase(text: str, phrase: str) -> bool:
    """Whether the text uses the phrase as whole words, in any case: "an insured person" names
    "Insured Person"; "uninsured persons" and "Insured" alone do not."""
    return phrase_at(text, phrase) is not None


def phrase_at(text: str, phrase: str) -> re.Match[str] | None:
    """Where the text first uses the phrase as whole words, in any case (see ``names_phrase``)."""
    return re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text, re.IGNORECASE)


def alnum(text: str) -> str:
    """Lowercase letters and digits only (NFKC, soft hyphens dropped): for comparing headings,
    gold passages and words whose punctuation and spacing differ."""
    return _NON_ALNUM.sub("", unicodedata.normalize("NFKC", text).replace(SOFT_HYPHEN, "").lower())


def words(text: str) -> list[tuple[str, int, int]]:
    """The words of ``text`` in matching form (inner hyphens dropped), with their spans in ``text``."""
    norm, index = fold(text)
    return [(m.group(0).replace("-", ""), index[m.start()], index[m.end() - 1] + 1) for m in WORD.finditer(norm)]


def collapse_whitespace(text: str) -> tuple[str, list[int]]:
    """Text with whitespace runs collapsed to one space (case kept), and per character its
    index in ``text``: splitter output is found again in the text it came from this way."""
    chars: list[str] = []
    index: list[int] = []
    in_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not in_space and chars:
                chars.append(" ")
                index.append(i)
            in_space = True
        else:
            chars.append(ch)
            index.append(i)
            in_space = False
    return "".join(chars), index


# --- sentences --------------------------------------------------------------------------------

# Boundaries, each a regex whose match is the separator between two spans.
SENTENCE_BREAK = re.compile(r"(?<=[.?!])\s+")
# Clause-level: also after ";" and ":", and before a line that opens a list item ("(a)", "2.", "-").
CLAUSE_BREAK = re.compile(r"(?<=[.;:!?])\s+|\n(?=\s*(?:[a-z0-9]{1,3}[.)]|[-•]))")
PHRASE_BREAK = re.compile(r"(?<=[;:])\s+|\n+")
WORD_BREAK = re.compile(r"\s+")


def split_spans(text: str, boundary: re.Pattern[str], start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The spans of ``text[start:end]`` between the separators that ``boundary`` matches."""
    end = len(text) if end is None else end
    spans = []
    cursor = start
    for m in boundary.finditer(text, start, end):
        if m.start() > cursor:
            spans.append((cursor, m.start()))
        cursor = m.end()
    if cursor < end:
        spans.append((cursor, end))
    return spans


# A sentence of prose (an answer): the full stop, closing quotes or brackets and the [n]
# markers that follow it belong to the sentence; a line break always ends one.
_PROSE_END = re.compile(r"[.!?]+[\"'”’)\]*_]*(?:[ \t]*\[\d+\])*(?=\s|$)|\n")
_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs no nos sec secs art arts p pp para paras cf approx incl fig mr mrs ms dr st inc ltd co rs".split()
)


# Spelled numbers: contracts write amounts and periods twice, "thirty (30) days", and a line may
# break between the two; "(30)" then opens no list item.
_SPELLED_NUMBER_END = re.compile(
    r"(?:\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
    r"|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred"
    r"|thousand|million|billion)|percent|per cent)\s*$",
    re.IGNORECASE,
)


def ends_in_number_word(before: str) -> bool:
    """Whether ``before`` ends in a spelled number ("thirty", "forty-five", "one hundred"): the
    "(30)" after it repeats the number in digits."""
    return bool(_SPELLED_NUMBER_END.search(before[-40:]))


def ends_in_abbreviation(before: str) -> bool:
    """Whether ``before`` (text up to a full stop, with or without it) ends in an abbreviation:
    "e.g", "approx", "a.m." (dotted initials)."""
    words = before.split()
    word = words[-1].lstrip("(*").lower().rstrip(".") if words else ""
    return word in _ABBREVIATIONS or bool(re.fullmatch(r"(?:[a-z]\.)+[a-z]", word))


def _false_end(text: str, m: re.Match[str]) -> bool:
    """A period after an abbreviation ("e.g.") or a list number ("1.") ends no sentence."""
    if m.group(0) != ".":
        return False
    line_start = text.rfind("\n", 0, m.start()) + 1
    window = max(line_start, m.start() - 40)  # bounded look back: long lines stay linear
    before = text[window : m.start()].split()
    if ends_in_abbreviation(text[window : m.start()]):
        return True
    word = before[-1].lstrip("(*").lower() if before else ""
    # "1." or "a." opening a line is list numbering.
    return window == line_start and len(before) == 1 and bool(re.fullmatch(r"\d+|[a-z]", word))


def prose_sentences(text: str, unbreakable: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Sentence spans of prose. No sentence ends inside an ``unbreakable`` span (a quotation)
    unless the end closes that span too ('... proof of loss." [1]')."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _PROSE_END.finditer(text):
        if any(s < m.start() < e and m.end() < e for s, e in unbreakable):
            continue
        if _false_end(text, m):
            continue
        end = m.start() if m.group(0) == "\n" else m.end()
        if text[start:end].strip():
            spans.append((start, end))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


# --- aligning -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alignment:
    """A stretch of ``b`` that matches ``a``: ``b[b_start:b_end]``, with ``matched`` equal items."""

    a_start: int
    b_start: int
    b_end: int
    matched: int


def longest_common_run(a: Sequence[str], b: Sequence[str]) -> Alignment:
    """The longest run of consecutive items of ``a`` that is also consecutive in ``b``
    (earliest in ``a``, then in ``b``, on ties); ``matched`` is 0 when nothing is shared."""
    m = difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return Alignment(m.a, m.b, m.b + m.size, m.size)


# Local alignment scores: a matching item gains more than a skipped or different item costs,
# so a few differences (extraction quirks, a word the quote drops) do not break a long run.
_MATCH, _MISMATCH, _GAP = 2, -1, -1


def local_alignment(a: Sequence[str], b: Sequence[str]) -> Alignment | None:
    """The best-scoring stretch of ``b`` that matches ``a`` allowing small differences
    (Smith-Waterman, linear gaps); None when no item matches."""
    n = len(b)
    prev_score = [0] * (n + 1)
    prev_start = [0] * (n + 1)
    prev_hits = [0] * (n + 1)
    best: tuple[int, int, int, int] | None = None  # score, start, end, hits
    for item in a:
        score = [0] * (n + 1)
        start = [0] * (n + 1)
        hits = [0] * (n + 1)
        for j in range(1, n + 1):
            is_match = b[j - 1] == item
            # Diagonal: one item of each; a match may also start a new run here.
            if prev_score[j - 1] > 0:
                s, st, h = (
                    prev_score[j - 1] + (_MATCH if is_match else _MISMATCH),
                    prev_start[j - 1],
                    prev_hits[j - 1] + is_match,
                )
            elif is_match:
                s, st, h = _MATCH, j - 1, 1
            else:
                s, st, h = 0, 0, 0
            # Up: an item of ``a`` missing from ``b``; left: an extra item of ``b``.
            if prev_score[j] + _GAP > s:
                s, st, h = prev_score[j] + _GAP, prev_start[j], prev_hits[j]
            if score[j - 1] + _GAP > s:
                s, st, h = score[j - 1] + _GAP, start[j - 1], hits[j - 1]
            if s <= 0:
                s, st, h = 0, 0, 0
            score[j], start[j], hits[j] = s, st, h
            # A best cell always ends on a match (gaps only lower the score).
            if is_match and s > 0 and (best is None or s > best[0]):
                best = (s, st, j - 1, h)
        prev_score, prev_start, prev_hits = score, start, hits
    return None if best is None else Alignment(0, best[1], best[2] + 1, best[3])

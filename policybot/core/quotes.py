"""Choosing the quote a passage is shown by: a whole sentence or a whole list item, never a
fragment.

Both the answer (``answer/writers.py``) and evidence mode (``evidence/quotes.py``) quote
passages, and a citizen reads the quote, not the passage. Policy text is lists under lead-ins
("We will not cover: … (c) damage caused by water escaping gradually…"), so a quote that is the
best-matching clause alone is often unreadable: "(f) Accidental Damage under clauses 2.18 and
3.14.", "…from any condition: a.", "Flood, as used in this flood insurance policy, means: 1.".
The rules here:

- the units are sentences and list items; a bare item marker ("a.", "1.", "(c)") belongs to the
  item after it, never ends a quote; so does a numbered title ("21. National Flood Insurance
  Program (NFIP).", the run-in heading of a definition; a contract's "(h) Governing Law." with
  its text on the same line), which belongs to the text it heads;
- a bullet without a full stop (a guide's) ends where its line ends short with room for the next word,
  and so does a heading after it: "… the application process" / "Adoption Support Fund" / "You may be
  able to get funding…" are three units, not one run-on quote;
- the unit closest to the question wins (the caller scores), the earliest on a tie;
- a list item keeps its lead-in (the nearest line before it that ends in ":", or a short heading
  such as "What is not covered"): joined when they are next to each other, else shown as
  "lead-in … item";
- a lead-in chosen on its own brings its first item (a bullet is never taken for a heading); a short
  sentence brings the next; a sentence that reads on from the one before it ("If you still do not
  pay, …", "In this event, …") is quoted with it, whichever of the two is chosen;
- a unit longer than the limit is cut at its last clause break (";" or ","), marked "…"; so is a
  quote that breaks off where its passage was cut ("…tetanus and…");
- a second quote of the same passage (``other_quote``) never overlaps the first;
- a passage that opens inside a list (a chunk that starts at its third item) takes the list's
  lead-in from the passage before it (``list_lead_in``): "When the Home is Unoccupied, we will not
  cover loss or damage caused by: … (f) Accidental Damage under clauses 2.18 and 3.14.", not the
  item alone, which reads as if it were covered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from policybot.core.roles import CONDITION_WORDS, heads_a_list_by_role
from policybot.core.text import ends_in_abbreviation, ends_in_number_word, split_spans

MAX_QUOTE_CHARS = 500
SHORT_QUOTE_CHARS = 120
# A line that ends with room for the next word, within this share of the passage's width, ended
# there on purpose (``_short_line_end``); the spare share allows for letters of unequal width.
FIT_SHARE = 0.85
# The longest line read as a heading over the sentence below it (a guide's "Time limits on making a
# claim", "If you have a UK Visas and Immigration account").
HEADING_LINE_CHARS = 60
ELLIPSIS = " … "
# Sentence ends, and line breaks before a list item ("1.", "a)", "(c)", "-").
# A blank line stands around a line the reader took for a heading ("Inheritance Tax"): a break too.
_UNIT_BREAK = re.compile(r"(?<=[.;:!?])\s+|\n[ \t]*\n\s*|\n(?=\s*(?:\(?(?:[a-z]|[0-9]{1,3}|[ivx]{1,4})[.)]|[-•]))")
_BLANK_LINE_AFTER = re.compile(r"[ \t]*\n[ \t]*\n")
# A line that starts with a capital and ends in ":" after an unpunctuated list item opens a new list
# ("•  died because of an accident at work" then "When they died you must have been:").
_NEW_LIST = re.compile(r"\n(?=[A-Z][^\n]{0,120}:[ \t]*(?:\n|$))")
# A line that introduces what follows: ends in ":" or is a short heading without punctuation.
_LEAD_IN = re.compile(r"(?::|^[^.;!?\n]{3,60}[A-Za-z)])$")
# A clause numbered by its section's letter: "A1.", "C3.", "B2.1" (a wording whose sections are lettered).
_LETTERED = r"[A-Z]\d{1,2}(?:\.\d{1,2})*"
_BARE_MARKER = re.compile(r"^\(?(?:[a-z]|[0-9]{1,3}|[ivx]{1,4})[.)]$|^(?-i:" + _LETTERED + r")\.?$", re.IGNORECASE)
# A numbered title standing alone as a sentence: "8. Condominium.", "21. National Flood Insurance Program (NFIP).",
# "C3. Driving other cars."
_TITLE_UNIT = re.compile(r"^(?:\d{1,3}|[A-Z]|" + _LETTERED + r")\.\s+[A-Z][\w'’()&/-]*(?:\s+[\w'’()&/-]+){0,7}\.$")
# A unit that opens a numbered clause or item ("4.3 Reimbursement Claims. The claim…", "7) Maternity…", "A4. We…").
_NUMBERED = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}[.)]|" + _LETTERED + r"\.?)\s")
# A contract's run-in heading: "(h) Governing Law." with its text on the same line after it.
_RUN_IN_TITLE = re.compile(r"^\((?:[a-z]|[0-9]{1,3}|[ivx]{1,4})\)\s+[A-Z][\w'’&/-]*(?:\s+[\w'’&/-]+){0,5}\.$")
# A sentence that refers back to the one before it: it opens with a word that points there ("This",
# "Such", "Otherwise", "If so", "In this event") or its first clause holds "still" or "otherwise"
# ("If you still do not pay, …"). English function words, not any library's wording.
_SELF_NAMED = r"policy|policies|agreement|contract|section|part|schedule|clause|guide|form|document"
_REFERS_BACK = re.compile(
    r"(?:(?:this|these|that|those|such|they|otherwise|however|then)\b"
    r"(?!\s+(?:" + _SELF_NAMED + r")\b)"
    r"|if (?:so|not)\b|in (?:that|this|such|either|both|which) (?:cases?|events?|circumstances?|situations?)\b"
    r"|[^,;:.\n]*\b(?:still|otherwise)\b)",
    re.IGNORECASE,
)
_DIGITS_IN_BRACKETS = re.compile(r"^\(\d{1,3}(?:,\d{3})*(?:\.\d+)?%?\)")
_ITEM = re.compile(r"^(?:\(?(?:[a-z]|[0-9]{1,3}|[ivx]{1,4})[.)]|[-•])\s", re.IGNORECASE)
# A Markdown table row, as ingestion writes tables ("|Money|$750|"), and its separator row ("|---|---|").
_TABLE_ROW = re.compile(r"^[ \t]*\|[^\n]*\|[ \t]*$", re.MULTILINE)
_SEPARATOR_ROW = re.compile(r"^[ \t]*\|(?:[ \t:-]*\|)+[ \t]*$")


@dataclass(frozen=True)
class Quote:
    """The highlighted span of a passage (contiguous), and the lead-in shown before it when
    the two are apart."""

    start: int
    end: int
    lead_in: tuple[int, int] | None = None
    cut: bool = False  # the unit went on past the limit

    def text(self, source: str) -> str:
        body = as_read(source[self.start : self.end]) + ("…" if self.cut else "")
        if self.lead_in is None:
            return body
        return as_read(source[self.lead_in[0] : self.lead_in[1]]) + ELLIPSIS + body


def as_read(span: str) -> str:
    """A span of a passage as a sentence reads: its lines joined; a table row ("|Money|$750|") as its
    cells joined by " · ", rows by "; ", separator rows left out, line breaks in a cell ("<br>", as
    older indexes wrote them) as spaces."""
    out, last_row = "", False
    for line in span.replace("<br>", " ").splitlines():
        row = bool(_TABLE_ROW.match(line))
        cells = [" ".join(c.split()) for c in line.strip().strip("|").split("|")] if row else [" ".join(line.split())]
        part = " · ".join(c for c in cells if c)
        if part and not _SEPARATOR_ROW.match(line):
            out += ("; " if row and last_row else " ") + part if out else part
            last_row = row
    return out


def quote_units(text: str, begin: int = 0) -> list[tuple[int, int]]:
    """The sentences and list items of ``text[begin:]``, trimmed, bare markers joined to their item;
    each row of a Markdown table is a unit of its own (its separator row none)."""
    units: list[tuple[int, int]] = []
    cursor, width = begin, _line_width(text)
    for row in _TABLE_ROW.finditer(text, begin):
        units += _prose_units(text, cursor, row.start(), width)
        if not _SEPARATOR_ROW.match(row.group()):
            units.append(_trim(text, *row.span()))
        cursor = row.end()
    return units + _prose_units(text, cursor, len(text), width)


def _prose_units(text: str, begin: int, end: int, width: int) -> list[tuple[int, int]]:
    """``quote_units`` of ``text[begin:end]``, a stretch without table rows; ``width``: the passage's
    (``_line_width``)."""
    units: list[tuple[int, int]] = []
    pending: int | None = None
    for s, e in _past_abbreviations(text, split_spans(text, _UNIT_BREAK, begin, end)):
        s, e = _trim(text, s, e)
        if s >= e:
            continue
        start = pending if pending is not None else s
        if _BARE_MARKER.match(text[s:e]) or _TITLE_UNIT.match(text[start:e]) or _run_in_title(text, start, e):
            pending = start
            continue
        units += _heading_apart(text, start, e, width)
        pending = None
    if pending is not None and units:  # a marker with nothing after it belongs to the last unit
        units[-1] = (units[-1][0], len(text[:end].rstrip()))
    return [piece for unit in units for piece in _new_list(text, *unit, width=width)]


def _heading_apart(text: str, s: int, e: int, width: int) -> list[tuple[int, int]]:
    """A sentence whose first line is a heading of its own, set apart from it: a guide's "If you live
    in Scotland" over "You can apply for a Funeral Support Payment." has no full stop, so the two
    ran on as one sentence. The heading is a unit (``is_heading_line``), quoted only before its
    sentence. A list item or a numbered title is never cut so ("4.3 Claims" heads its own text)."""
    line_end = text.find("\n", s, e)
    if line_end < 0 or _ITEM.match(text[s:e]) or _NUMBERED.match(text[s:e]):
        return [(s, e)]
    if not _heading_line(text, s, line_end, width):
        return [(s, e)]
    return [_trim(text, s, line_end), *_heading_apart(text, *_trim(text, line_end, e), width)]


def _heading_line(text: str, s: int, e: int, width: int) -> bool:
    """Whether ``text[s:e]`` is a short whole line standing alone as a heading: no stop or comma at its end,
    at most ``HEADING_LINE_CHARS`` long, and the capitalised word that opens the next line would have
    fitted on it (so the line did not wrap there)."""
    line = text[s:e].strip()
    if not line or "\n" in line or len(line) > HEADING_LINE_CHARS or line[-1] in ".;:!?,":
        return False
    if text[text.rfind("\n", 0, s) + 1 : s].strip():  # it starts mid-line: the end of a wrapped sentence's line
        return False
    if _BARE_MARKER.match(line) or _ITEM.match(line) or line in ("-", "•") or _TABLE_ROW.match(line):
        return False
    if line.split()[-1].lower() in _NEVER_LAST:  # "…EXCEPT IN THE EVENT OF A": its sentence goes on
        return False
    after = text[e:].lstrip(" \t")
    if not after.startswith("\n"):
        return False
    word = (after.split(maxsplit=1) or [""])[0]
    return word[:1].isupper() and _would_fit(line, word, width)


def _would_fit(line: str, word: str, width: int) -> bool:
    """Whether ``word`` would have fitted at the end of ``line`` (within ``FIT_SHARE`` of the
    passage's ``width``): a line that ends before such a word ended there on purpose."""
    return len(line) + 1 + len(word) <= FIT_SHARE * width


def is_heading_line(text: str, s: int, e: int) -> bool:
    """Whether the unit ``text[s:e]`` is a heading line set apart from the sentence under it
    (``_heading_apart``)."""
    return _heading_line(text, s, e, _line_width(text))


def says_when(text: str, s: int, e: int) -> bool:
    """Whether the unit ``text[s:e]`` is a heading line that says when the sentence under it applies
    ("If you live in Scotland", "Benefits and tax credits you must get": the words a condition uses),
    not only what it is about ("Time limits on making a claim"). Shown before its sentence's quote
    and leading it under "Depends on:"."""
    return is_heading_line(text, s, e) and bool(CONDITION_WORDS.search(text[s:e]))


def _past_abbreviations(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans rejoined where a break followed an abbreviation and the next one goes on in lowercase or
    with a number ("…will expire at 12:01 a.m. on the last day…", "up to Rs. 2,000 per
    hospitalisation", "under Sec. 4"), not at a list item ("b. If…", "2. The…"); and where a line
    broke between a spelled number and its digits ("no less than thirty\n(30) days before…")."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        after = text[s:e].strip()
        before = text[out[-1][0] : out[-1][1]] if out else ""
        if out and (
            _goes_on_after_abbreviation(before, after) or _repeats_number(before, after) or _numbers(before, after)
        ):
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _goes_on_after_abbreviation(before: str, after: str) -> bool:
    return (
        (after[:1].islower() or after[:1].isdigit())
        and not (_ITEM.match(after) or _BARE_MARKER.match(after))
        and ends_in_abbreviation(before)
    )


# A word that a clause's or a page's number follows: "…held in accordance with clause" then "5." on the
# next line is that sentence's number and its end, not a list item of its own.
_NUMBERED_BY = re.compile(
    r"\b(?:clauses?|sections?|paragraphs?|articles?|schedules?|parts?|conditions?|items?|pages?|notes?)$", re.I
)


def _numbers(before: str, after: str) -> bool:
    """ "…in accordance with clause" then "5.": the number a sentence ended on, after a line break."""
    return bool(_NUMBERED_BY.search(before.rstrip())) and bool(re.fullmatch(r"\(?\d{1,3}(?:\.\d{1,3})*[.)]", after))


def _repeats_number(before: str, after: str) -> bool:
    """ "thirty" then "(30) days…": the digits in brackets repeat the spelled number before them."""
    return bool(_DIGITS_IN_BRACKETS.match(after)) and ends_in_number_word(before)


def _run_in_title(text: str, s: int, e: int) -> bool:
    """ "(h) Governing Law." followed on its line by the text it heads."""
    line_end = text.find("\n", e)
    return bool(_RUN_IN_TITLE.match(text[s:e])) and bool(text[e : len(text) if line_end < 0 else line_end].strip())


def _new_list(text: str, s: int, e: int, width: int = 0, ended: bool = False) -> list[tuple[int, int]]:
    """A list item, cut where a new list's lead-in starts inside it (see ``_NEW_LIST``). A bullet is
    also cut where one of its lines ends short (``_short_line_end``): a guide's bullets carry no full
    stop, so the heading and the sentence after the last one ran on in it ("… before you begin the
    application process Adoption Support Fund You may be able to…"). What follows such an end is cut
    the same way (``ended``): the heading apart from its sentence."""
    if not (ended or _ITEM.match(text[s:e])):
        return [(s, e)]
    cut = _NEW_LIST.search(text, s, e)
    short = _short_line_end(text, s, e if cut is None else cut.start(), width)
    if short is not None and (ended or _family(text[s:e]) == "bullet"):
        return [_trim(text, s, short), *_new_list(text, *_trim(text, short, e), width=width, ended=True)]
    if cut is None:
        return [(s, e)]
    return [_trim(text, s, cut.start()), *_new_list(text, *_trim(text, cut.end(), e), width=width)]


@lru_cache(maxsize=256)  # read for every unit of a passage (``is_heading_line``)
def _line_width(text: str) -> int:
    """How wide a passage's lines run, in characters: its longest line (table rows aside)."""
    return max((len(line.strip()) for line in text.splitlines() if not _TABLE_ROW.match(line)), default=0)


def _short_line_end(text: str, s: int, e: int, width: int) -> int | None:
    """The first line break in ``text[s:e]`` that ends a line short, not where it wrapped: the line
    has no stop or comma at its end, the next opens with a capital, and that capitalised word would have
    fitted on the line (within ``FIT_SHARE`` of the passage's width: letters are not all as wide). A
    marker alone on its line ("•", "(a)") is not an end: its item follows on the next line. A line
    that did fill the width ends short too where the next line is a heading line of its own
    (``_heading_line``), unless it ends on a word no sentence ends on ("…the Isle of" / "Man")."""
    for m in re.finditer(r"\n", text[s:e]):
        at = s + m.start()
        line = text[max(s, text.rfind("\n", s, at) + 1) : at].strip()
        word = (text[at:e].split(maxsplit=1) or [""])[0]
        alone = bool(_BARE_MARKER.match(line)) or line in ("-", "•")
        if line and not alone and line[-1] not in ".;:!?," and word[:1].isupper():
            if _would_fit(line, word, width):
                return at
            next_end = text.find("\n", at + 1, e)
            if (
                next_end > 0
                and line.split()[-1].lower() not in _NEVER_LAST
                and _heading_line(text, at + 1, next_end, width)
            ):
                return at  # "…for Postgraduate loans" / "Pensions" / "Make pension deductions…": a heading
    return None


def is_list_item(unit: str) -> bool:
    """A unit that opens with a list marker ("(c) ", "2. ", "• ")."""
    return bool(_ITEM.match(unit))


def _is_heading_unit(text: str, s: int, e: int) -> bool:
    """A unit that is a heading (no sentence end, and a blank line after it, or in capitals: a
    contract's "ARTICLE VII LIMITATION ON LIABILITY AND INDEMNIFICATION"): it can lead in a list,
    never be quoted for itself."""
    if text[e - 1 : e] in ".;:!?":
        return False
    unit = text[s:e]
    words = len(unit.split()) > 1 and not _ITEM.match(unit)  # "•  CHAPS" is a list item, not a heading
    capitals = words and not any(c.islower() for c in unit) and any(c.isalpha() for c in unit)
    return capitals or bool(_BLANK_LINE_AFTER.match(text, e)) or is_heading_line(text, s, e)


def choose_quote(
    text: str, score: Callable[[str], float], begin: int = 0, max_chars: int = MAX_QUOTE_CHARS, at: int | None = None
) -> Quote:
    """The quote of ``text`` that ``score`` rates best (see the module's rules); ``at``: the start of
    the unit to quote, already chosen (``score`` still chooses the item a lead-in brings)."""
    units = quote_units(text, begin) or [_trim(text, 0, len(text))]
    quotable = [i for i, (s, e) in enumerate(units) if not _is_heading_unit(text, s, e)] or list(range(len(units)))
    chosen = [i for i in quotable if units[i][0] == at]
    best = chosen[0] if chosen else max(quotable, key=lambda i: (score(text[units[i][0] : units[i][1]]), -i))
    start, end = units[best]
    lead_in = None
    if _TABLE_ROW.match(text, start):  # a table row: under its table's header row
        header = _header_row(text, start)
        if header is not None and header[0] != start:
            lead_in = header
        elif header is not None and best + 1 < len(units) and _TABLE_ROW.match(text, units[best + 1][0]):
            end = units[best + 1][1]  # the header chosen: with its first row
    elif _introduces(text[start:end].rstrip()) and best + 1 < len(units):  # a lead-in: bring its item
        item = _closest_item(text, units, best, score)
        back = _pointed_to(text, units, best)
        if item != best + 1:  # "…the reasonable cost of: … (c) cleaning, where…"
            lead_in, (start, end) = (start if back is None else back, end), units[item]
        else:  # its first item, and the sentence it points back to
            end = units[best + 1][1]
            start = back if back is not None and end - back <= max_chars else start
    elif _ITEM.match(text[start:end]):
        j = _lead_in(text, units, best)
        if j is not None and j == best - 1 and end - units[j][0] <= max_chars:
            start = units[j][0]
        elif j is not None:
            lead_in = units[j]
        back = _pointed_to(text, units, j) if j is not None else None
        if j is not None and back is not None and start == units[j][0] and end - back <= max_chars:
            start = back  # "We may ask for evidence. This may include: (a) a claim form"
        elif j is not None and back is not None and lead_in == units[j]:
            lead_in = (back, units[j][1])
    elif best > 0 and _reads_on(text, units, best) and end - units[best - 1][0] <= max_chars:
        start = units[best - 1][0]
    elif best + 1 < len(units) and _reads_on(text, units, best + 1) and units[best + 1][1] - start <= max_chars:
        end = units[best + 1][1]
    elif end - start < SHORT_QUOTE_CHARS and best + 1 < len(units) and units[best + 1][1] - start <= max_chars:
        after = text[units[best + 1][0] : units[best + 1][1]].rstrip()
        if not _ITEM.match(after) and not _NUMBERED.match(after) and not _LEAD_IN.search(after):  # not a new clause
            end = units[best + 1][1]
    if lead_in is None and start == units[best][0] and best > 0 and _names_term(text, units, best):
        start = units[best - 1][0] if end - units[best - 1][0] <= max_chars else start  # "Market value: The cost…"
    if lead_in is None and start == units[best][0] and _under_conditional_heading(text, units, best):
        lead_in = units[best - 1]  # "If you live in Scotland … You can apply for a Funeral Support Payment."
    following = next((i for i, (s, _) in enumerate(units) if s >= end), len(units))
    while following < len(units) and text[start:end].rstrip().endswith(":"):  # never end on a lead-in
        if units[following][1] - start > max_chars:
            break
        end, following = units[following][1], following + 1
    if end - start <= max_chars:
        return Quote(start, end, lead_in, cut=_runs_on(text, end))
    return Quote(start, _cut(text, start, start + max_chars), lead_in, cut=True)


# How much closer to the question than a list's first item another item must be to be brought with its
# lead-in instead: a word more of the question's (the closeness that quotes are chosen by counts shared
# words whole and meaning and quantities as fractions under one), never a cosine's nudge alone.
ITEM_MARGIN = 0.5


def _closest_item(text: str, units: list[tuple[int, int]], lead: int, score: Callable[[str], float]) -> int:
    """The item of the list ``units[lead]`` leads in that ``score`` rates best: one of its first item's
    kind ("a." beside "b.", never the lead-in's own next sibling "7." after "6. Special Limits…:").
    Its first item unless the best is ``ITEM_MARGIN`` closer, or when that item leads a list of its own
    ("1. … from: a. … b. …"): a nested list is read as before, whole from its start."""
    first = lead + 1
    first_unit = text[units[first][0] : units[first][1]].rstrip()
    if not _ITEM.match(first_unit) or first_unit.endswith(":"):
        return first
    own, kind = _family(text[units[lead][0] : units[lead][1]]), _family(first_unit)
    items: list[int] = []
    for j in range(first, len(units)):
        unit = text[units[j][0] : units[j][1]]
        if not _ITEM.match(unit) or (own and _family(unit) == own):
            break
        if _family(unit) == kind:
            items.append(j)
    if not items:  # the next unit is the lead-in's own sibling ("1. Definitions:" then "2. Term…")
        return first
    scores = [score(text[units[j][0] : units[j][1]]) for j in items]
    best = scores.index(max(scores))
    return items[best] if scores[best] >= scores[0] + ITEM_MARGIN else first


def _under_conditional_heading(text: str, units: list[tuple[int, int]], i: int) -> bool:
    """Whether ``units[i]`` stands under a heading line that says when it applies ("If you live in
    Scotland", "If you have a UK Visas and Immigration account"): the heading is then shown before its
    quote, as a lead-in is. A heading that only names the topic ("Inheritance Tax", "Time limits on
    making a claim") is not: the citation's section names it."""
    return i > 0 and not _ITEM.match(text[units[i][0] : units[i][1]]) and says_when(text, *units[i - 1])


def _runs_on(text: str, end: int) -> bool:
    """Whether a quote that ends where its passage ends breaks off mid-sentence: the passage was cut
    there, and its last word is one a sentence never ends on ("…against DTP (diphtheria, tetanus and",
    "…insurance available under the"). Shown with "…", as a quote cut at the length limit is. A
    list item's "; or" ends the item, not the sentence."""
    if text[end:].strip():
        return False
    words = text[:end].split()
    last = words[-1].lower() if words else ""
    item_ends = last in ("and", "or") and len(words) > 1 and words[-2].endswith(";")
    return last in _NEVER_LAST and not item_ends


# English words a sentence never ends on: articles, prepositions, conjunctions, possessives ("…bought
# during it, but" where a definition was cut).
_NEVER_LAST = frozenset(
    "a an the and or nor but of to in on at by for from with under into upon as than that which whose its their "
    "your our if unless because whether although whereas including".split()
)


def _introduces(unit: str) -> bool:
    """A lead-in: a unit ending in ":", or a short heading; a bullet is never a heading ("•  childcare")."""
    return bool(_LEAD_IN.search(unit)) and (unit.endswith(":") or _family(unit) != "bullet")


def _header_row(text: str, at: int) -> tuple[int, int] | None:
    """The header row of the table whose row starts at ``at``: its first row, when a separator row
    follows it."""
    line_start = text.rfind("\n", 0, at) + 1
    first = line_start
    while first > 0:
        previous = text.rfind("\n", 0, first - 1) + 1
        if not _TABLE_ROW.match(text[previous : first - 1]):
            break
        first = previous
    first_end = text.find("\n", first)
    first_end = len(text) if first_end < 0 else first_end
    after_end = text.find("\n", first_end + 1)
    separator = text[first_end + 1 : len(text) if after_end < 0 else after_end]
    return _trim(text, first, first_end) if first_end < len(text) and _SEPARATOR_ROW.match(separator) else None


# A list's lead-in that points back to the sentence before it: "This may include:", "They repay:",
# "It should include information about:". English pronouns, not any library's wording.
_POINTS_BACK = re.compile(r"^(?:it|this|these|they|such)\b(?!\s+(?:" + _SELF_NAMED + r")\b)", re.IGNORECASE)
POINTED_TO_CHARS = 300  # the sentence pointed to is shown when no longer than this


def _pointed_to(text: str, units: list[tuple[int, int]], j: int) -> int | None:
    """Where the sentence that the lead-in ``units[j]`` points back to starts, when it does (a short
    lead-in opening with a pronoun, after a plain sentence of at most ``POINTED_TO_CHARS``)."""
    lead = text[units[j][0] : units[j][1]]
    if j == 0 or not _POINTS_BACK.match(lead) or len(lead.split()) > 8:
        return None
    s, e = units[j - 1]
    before = text[s:e].rstrip()
    plain = not _ITEM.match(before) and before.endswith((".", "!", "?")) and not _TITLE_UNIT.match(before)
    return s if plain and e - s <= POINTED_TO_CHARS and not _is_heading_unit(text, s, e) else None


# A clause of its own within a passage: one that opens with its number and a short title ending in "."
# ("1. Looking after your car. You must keep…", "10. LIMITATION ON LIABILITY. EXCEPT…"), or with a
# number only a clause has, never a list item ("4.2 We will…", "A3. If your car…"). A general-conditions
# list sets its clauses so; "1. you must be over 18;" is an item of one condition.
_CLAUSE_START = re.compile(
    r"^(?:(?:\d{1,3}(?:\.\d{1,3})*|" + _LETTERED + r")[.)]?\s+[A-Z][\w'’()&/-]*(?:\s+[\w'’()&/-]+){0,7}\.\s+\S"
    r"|(?:\d{1,3}(?:\.\d{1,3})+|" + _LETTERED + r")\.?\s+[A-Z])"
)


def clause_starts(text: str, begin: int = 0) -> list[int]:
    """Where each clause of ``text[begin:]`` starts (see ``_CLAUSE_START``)."""
    return [s for s, e in quote_units(text, begin) if _CLAUSE_START.match(text[s:e])]


TERM_WORDS = 5  # "Named driver:", "Market value:": a defined term before its definition, on its line


def _names_term(text: str, units: list[tuple[int, int]], i: int) -> bool:
    """Whether ``units[i]`` is a definition after its term on the same line ("Market value: The cost
    of…"), as a glossary sets them: the term is quoted with it, or the definition says what of nothing."""
    s, e = units[i - 1]
    term = text[s:e]
    on_line = "\n" not in text[s : units[i][0]]
    return on_line and term.endswith(":") and len(term.split()) <= TERM_WORDS and term[:1].isupper()


def _reads_on(text: str, units: list[tuple[int, int]], i: int) -> bool:
    """Whether the sentence ``units[i]`` reads on from the sentence before it, so that the two
    are quoted together: "If you still do not pay, we may cancel your policy" says nothing without
    "If you miss an instalment we will write to you and give you at least 7 days to pay.", nor
    "…either may demand an appraisal" without "In this event, you and we will each choose a
    competent and impartial appraiser within 20 days". Two plain sentences only, never a list
    item, a lead-in or a heading."""
    before = text[units[i - 1][0] : units[i - 1][1]].rstrip()
    unit = text[units[i][0] : units[i][1]]
    plain = not _ITEM.match(unit) and not _ITEM.match(before) and before.endswith((".", "!", "?"))
    return plain and not _TITLE_UNIT.match(before) and bool(_REFERS_BACK.match(unit))


def other_quote(text: str, score: Callable[[str], float], first: Quote, begin: int = 0) -> tuple[Quote, float] | None:
    """The passage's best quote apart from ``first`` (by the same rules), with the score of its
    best unit; none when every unit is inside ``first`` or the quote would overlap it."""
    units = [
        (s, e)
        for s, e in quote_units(text, begin)
        if (e <= first.start or s >= first.end) and not _is_heading_unit(text, s, e)
    ]
    if not units:
        return None
    start, end = max(units, key=lambda u: (score(text[u[0] : u[1]]), -u[0]))
    quote = choose_quote(text, score, begin, at=start)
    if quote.start < first.end and first.start < quote.end:
        return None
    return quote, score(text[start:end])


def opening_item(text: str, begin: int = 0) -> str | None:
    """The list item ``text[begin:]`` opens with (a chunk that starts inside a list), if it does."""
    units = quote_units(text, begin)
    first = text[units[0][0] : units[0][1]] if units else ""
    return first if is_list_item(first) else None


def in_opening_list(text: str, begin: int, start: int) -> bool:
    """Whether the unit at ``start`` is an item of the list ``text[begin:]`` opens with: every unit
    before it is an item of that list (or a bare "and" / "or" between them)."""
    units = quote_units(text, begin)
    if not units or not is_list_item(text[units[0][0] : units[0][1]]):
        return False
    family = _family(text[units[0][0] : units[0][1]])
    for s, e in units:
        unit = text[s:e]
        if s >= start:
            return s == start and _family(unit) == family
        if not _CONJUNCTION.match(unit.strip()) and _family(unit) != family:
            return False
    return False


LIST_LOOK_BACK = 3  # chunks: a list begun further back than this keeps no lead-in


def list_lead_in(item: str, before: Sequence[str]) -> str | None:
    """The lead-in of the list an opening ``item`` belongs to, from the passages before it
    (``before``: bodies, nearest first): walking back over the list's items, the first other unit
    when it introduces them by ending in ":", else none. A short heading without a colon is taken from
    another passage only when it says what the list is ("What is not covered", "Exclusions":
    ``roles.heads_a_list_by_role``); a contract's "Liability" over numbered lines is not a list's
    lead-in. A list that began more than ``len(before)`` passages back gives none."""
    family, said = _family(item), " ".join(item.split())
    for text in before:
        units = quote_units(text)
        # Passages overlap: where the one before holds the item itself, its list goes back from there.
        held = [j for j, (s, e) in enumerate(units) if " ".join(text[s:e].split()) == said]
        for j in range(held[-1] - 1 if held else len(units) - 1, -1, -1):
            unit = text[units[j][0] : units[j][1]].rstrip()
            if _CONJUNCTION.match(unit) or (_ITEM.match(unit) and _family(unit) == family):
                continue
            return " ".join(unit.split()) if unit.endswith(":") or heads_a_list_by_role(unit) else None
    return None


def _lead_in(text: str, units: list[tuple[int, int]], item: int) -> int | None:
    """The unit that introduces a list item: the nearest earlier one ending in ":", passing only
    over the item's siblings (and a bare "and" / "or" between them). An item of an outer list
    can be the lead-in ("8. Special Limits. We will pay no more than $2,500 for … the following:"
    over "a. Artwork…"): numbered items introduce lettered ones, and the other way round."""
    family = _family(text[units[item][0] : units[item][1]])
    for j in range(item - 1, -1, -1):
        unit = text[units[j][0] : units[j][1]].rstrip()
        if _CONJUNCTION.match(unit):
            continue
        if _LEAD_IN.search(unit) and (not _ITEM.match(unit) or _family(unit) != family):
            return j
        if not _ITEM.match(unit):
            return None
    return None


_CONJUNCTION = re.compile(r"^(?:and|or|and/or)$", re.IGNORECASE)


def _family(unit: str) -> str:
    """A list marker's kind (numbers, letters and roman numerals, which share letters, bullets) and
    style ("(a)" against "a."): "b. Second item:" leads in "(i)"."""
    marker = _ITEM.match(unit)
    if marker is None:
        return ""
    found = marker.group().strip()
    kind = "number" if any(c.isdigit() for c in found) else "bullet" if any(c in "-•" for c in found) else "letter"
    return kind + ("()" if found.startswith("(") else "")


def _cut(text: str, start: int, limit: int) -> int:
    """Where a long unit is cut: its last "; " or ", " before the limit, else its last space."""
    for mark in (";", ","):
        at = text.rfind(mark, start + SHORT_QUOTE_CHARS, limit)
        if at > start:
            return at
    at = text.rfind(" ", start, limit)
    return at if at > start else limit


def _trim(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e

"""Which section or clause each line of a document belongs to.

Two sources, best first: the PDF outline (bookmarks), matched to the heading lines on
their pages; else heading patterns common in policies and laws ("Section 4", "Clause 5",
"§3.2", "Article 12", "III. PROPERTY INSURED", "A. Definitions", "4.2.1 ..."), taken
only from lines styled as headings (bold, larger, or all capitals) so list items and
sentences that happen to start with a number are not mistaken for headings; a number set alone on
its line with its styled title on the next ("12." / "TERM AND TERMINATION", two tab stops) is one
heading where the document numbers at least three so. Contracts and
many real wordings set their headings in body type, run into the clause ("2. Term. Unless
earlier terminated…", "18) Maternity (Code-Excl18): Medical treatment…"): such a numbered
Title Case title counts only where the document numbers at least three of them. That reading
is off by default (``run_in_headings``): measured on real contracts, it made more, smaller
chunks and cost retrieval (eval/decisions/2026-11-25-run-in-headings.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, Sequence

from policybot.core.roles import CONDITION_WORDS
from policybot.core.text import alnum

SEPARATOR = " > "
MAX_HEADING_CHARS = 110
MAX_HEADING_WORDS = 14


class HeadingLine(Protocol):
    """What section detection needs to know about a line."""

    text: str
    page: int
    bold: bool
    size: float


# "Section 4", "Part II", "Schedule 3A", and a capital letter as the designator: "Section A: Loss of or
# damage to your car", "Part B", "Appendix C" (a lowercase "section a of…" is a sentence's words).
_KEYWORD = re.compile(
    r"^(part|chapter|section|article|clause|schedule|appendix|annex|endorsement)\s+"
    r"([0-9]+[0-9.]*[a-z]?|[ivxlc]+|(?-i:[A-Z]))\b[.:]?\s*(.*)$",
    re.IGNORECASE,
)
_PARAGRAPH_SIGN = re.compile(r"^§\s*(\d+(?:\.\d+)*)\.?\s*(.*)$")
_ROMAN = re.compile(r"^([IVXLC]+)\.\s+(\S.*)$")
_LETTER = re.compile(r"^([A-Z])\.?\s+([A-Z].*)$")
_DOTTED = re.compile(r"^(\d+(?:\.\d+)+)\.?\s+(\S.*)$")
_NUMBER = re.compile(r"^(\d+)[.)]\s+([A-Z].*)$")
# A run-in heading: a numbered title that ends in "." or ":" with its clause on the same line, as
# contracts and many real wordings set them in body type ("2. Term. Unless earlier terminated…",
# "18) Maternity (Code-Excl18): Medical treatment…", "4. CLOTHING IDENTIFICATION. Consolidated…").
_RUN_IN = re.compile(r"^(\d{1,3}(?:\.\d{1,3})*)(?:[.)]|\.\))?\s+([A-Z\"“(][^.:;!?]{1,70}?)[.:](?:\s+(\S.*))?$")
_SMALL_WORDS = frozenset("a an and as at by for from in into of on or per the to under upon with".split())
_NOT_TITLES = frozenset("mr mrs ms dr no nos st inc ltd co corp llc jr sr vs".split())
# A table-of-contents entry: a title, dot leaders, its page ("ARTICLE XI MISCELLANEOUS....... 29"). It
# names a section without starting one.
_CONTENTS_ENTRY = re.compile(r"(?:\.\s*){4,}\d{1,4}$|…+\s*\d{1,4}$")
MAX_RUN_IN_WORDS = 8
MIN_RUN_IN_HEADINGS = 3  # a numbering the document really uses, not one sentence that looks like it


def heading_kind(text: str) -> tuple[str, str] | None:
    """The numbering kind of a heading-like line (e.g. ``('dotted2', '4.2 Escape of water')``)."""
    text = text.strip()
    if not text or len(text) > MAX_HEADING_CHARS or len(text.split()) > MAX_HEADING_WORDS:
        return None
    if text[-1] in ",;" or _CONTENTS_ENTRY.search(text):
        return None
    if m := _KEYWORD.match(text):
        return m.group(1).lower(), text
    if m := _PARAGRAPH_SIGN.match(text):
        return f"para{m.group(1).count('.') + 1}", text
    if m := _ROMAN.match(text):
        return "roman", text
    if m := _DOTTED.match(text):
        return f"dotted{m.group(1).count('.') + 1}", text
    if m := _LETTER.match(text):
        # "A. Definitions" but not "A claim must be made" (needs the dot or a short title).
        if text[1] == "." or len(text.split()) <= 5:
            return "letter", text
        return None
    if m := _NUMBER.match(text):
        return "number", text
    return None


def run_in_heading(text: str) -> tuple[str, str] | None:
    """The numbering kind and title of a run-in heading (``('number', '2. Term')``): a number, a
    title of at most 8 words in Title Case or capitals, then "." or ":" and the clause itself."""
    m = _RUN_IN.match(text.strip())
    if not m or _CONTENTS_ENTRY.search(text.strip()):
        return None
    number, title = m.group(1), m.group(2).strip()
    words = title.split()
    if not words or len(words) > MAX_RUN_IN_WORDS or alnum(title) in _NOT_TITLES:
        return None
    for word in words:
        letters = word.lstrip("\"“(‘'")
        if letters[:1].islower() and word.lower() not in _SMALL_WORDS:
            return None
    depth = number.count(".") + 1  # the same kinds as headings on lines of their own, so levels agree
    printed = m.group(0)[: m.start(2)].split()[0]  # the number as the document prints it: "18)", "19.4."
    return ("number" if depth == 1 else f"dotted{depth}"), f"{printed} {title}"


# An unnumbered heading ("Making a claim", "What is not covered", "Information we collect"): a short
# line that starts in capitals, ends in no sentence punctuation, and is set apart by type: larger than
# the body, or bold and a text block of its own (a bold term that opens its definition shares the
# definition's block). Kept only where the document sets at least three lines so.
MAX_PLAIN_HEADING_WORDS = 10
MIN_PLAIN_HEADINGS = 3


def plain_heading(line: HeadingLine, body_size: float, alone: bool) -> bool:
    """Whether a line without numbering reads as a heading (``alone``: the line is a text block of
    its own, nothing before or after it in the same block)."""
    text = line.text.strip()
    words = text.split()
    if not words or len(words) > MAX_PLAIN_HEADING_WORDS or len(text) > MAX_HEADING_CHARS:
        return False
    if not text[0].isupper() or text[-1] in ".,;:-–—" or _CONTENTS_ENTRY.search(text) or heading_kind(text):
        return False
    if sum(c.isalpha() for c in text) < 3:
        return False
    return line.size >= body_size + 0.9 or (line.bold and alone)


def plain_heading_lines(lines: Sequence[HeadingLine], body_size: float) -> set[int]:
    """The lines read as unnumbered headings, when the document sets at least three of them."""
    found = set()
    for i, line in enumerate(lines):
        alone = getattr(line, "block", -1) >= 0 and not any(
            _same_block(line, lines[j]) for j in (i - 1, i + 1) if 0 <= j < len(lines)
        )
        if plain_heading(line, body_size, alone):
            found.add(i)
    return found if len(found) >= MIN_PLAIN_HEADINGS else set()


def _same_block(a: HeadingLine, b: HeadingLine) -> bool:
    """Whether two lines come from one PyMuPDF text block (lines without one never do)."""
    block = getattr(a, "block", -1)
    return block >= 0 and block == getattr(b, "block", -1) and a.page == b.page


Style = tuple[float, bool]  # a line's type: size (rounded), bold


def _style(line: HeadingLine) -> Style:
    return round(line.size, 1), bool(line.bold)


_DESIGNATION = re.compile(r"\b(?:\d+(?:\.\d+)*|[A-Z]|[IVXLC]+)\.?$")


def _goes_on(first: HeadingLine, second: HeadingLine) -> bool:
    """Whether a heading line is continued by the next one: wrapped in the same text block, or a
    bare designation ("EXHIBIT A", "Schedule 2") whose title is set on the next line."""
    return _same_block(first, second) or bool(_DESIGNATION.search(first.text.strip()))


def plain_starts(
    lines: Sequence[HeadingLine], candidates: set[int], numbered: dict[int, tuple[int, str]], body: float
) -> list[tuple[int, float, str]]:
    """Unnumbered headings as section starts (line, level, title). ``candidates``: the lines read as
    unnumbered headings (``plain_heading_lines``); ``numbered``: the numbered headings found (line ->
    level, title); ``body``: the body's font size.

    Where a document numbers its headings, an unnumbered one counts in the type of a numbered one,
    and takes its level ("General conditions" and "Making a claim" after "Section 6 - Personal
    liability"). Before the first numbered heading it counts only once the body has begun
    (``body_begun``): a wording's "DEFINITIONS" and "IMPORTANT INFORMATION" after its opening
    paragraph do, a contract's cover lines ("Exhibit 10.3", its title, "Between", a party's name)
    do not. A smaller type is a sub-heading inside its section (gov.uk's sub-headings stay in their
    chapter). Without numbered headings, a type counts where the document sets at least three
    headings in it, and the larger type ranks higher."""
    kept = _plain_titles(lines, candidates, numbered)
    kind_level: dict[Style, int] = {}
    for i, (kind, _) in sorted(numbered.items()):
        kind_level[_style(lines[i])] = min(kind, kind_level.get(_style(lines[i]), kind))
    styles = [_style(lines[i]) for i in kept]
    first_numbered = min(numbered, default=-1)
    begun = body_begun(lines, min(candidates | set(numbered)), body) if numbered else len(lines)
    starts: list[tuple[int, float, str]] = []
    for i, title in sorted(kept.items()):
        style = _style(lines[i])
        level: float
        if kind_level:
            if style not in kind_level or i < min(first_numbered, begun):
                continue
            level = kind_level[style]
        elif styles.count(style) >= MIN_PLAIN_HEADINGS:
            level = -style[0] / 1000 - (0.0001 if style[1] else 0)  # the larger type ranks higher
        else:
            continue
        starts.append((i, level, _clean_title(title)))
    return starts


# A line of running text: body type, not bold, at least this many words, not set in capitals (a
# contract's cover note "[***] INDICATES MATERIAL THAT HAS BEEN OMITTED…" is not its body).
MIN_RUNNING_WORDS = 8


def body_begun(lines: Sequence[HeadingLine], first_heading: int, body: float) -> int:
    """The first line after a line of running text that stands below the document's first heading
    line (its title): where the cover ends and the body begins (``len(lines)`` when it never does).
    A redaction note above a contract's title is no body; the paragraph under a wording's title is.
    ``body``: the body's font size."""
    for j in range(first_heading + 1, len(lines)):
        line = lines[j]
        letters = [c for c in line.text if c.isalpha()]
        capitals = bool(letters) and sum(c.isupper() for c in letters) > 0.8 * len(letters)
        running = not line.bold and abs(line.size - body) < 0.5 and len(line.text.split()) >= MIN_RUNNING_WORDS
        if running and not capitals:
            return j + 1
    return len(lines)


def _plain_titles(
    lines: Sequence[HeadingLine], candidates: set[int], numbered: dict[int, tuple[int, str]]
) -> dict[int, str]:
    """The unnumbered headings' lines and titles. A title wrapped onto a second line, or a
    designation and its title set on two ("EXHIBIT A" / "PRICES"), is one heading; a line that a
    numbered heading took as its title ("ARTICLE I" / "DEFINITIONS") starts nothing of its own."""
    found = [
        i
        for i in sorted(candidates - set(numbered))
        if not (i - 1 in numbered and alnum(lines[i].text) in alnum(numbered[i - 1][1]))
    ]
    heads = {*found, *numbered}
    titles: dict[int, str] = {}
    for i in found:
        if i - 1 in heads and _style(lines[i - 1]) == _style(lines[i]) and _goes_on(lines[i - 1], lines[i]):
            if i - 1 in titles:
                titles[i - 1] = f"{titles[i - 1]} {lines[i].text.strip()}"
                titles[i] = ""
            continue  # also the rest of a numbered title
        titles.setdefault(i, lines[i].text.strip())
    return {i: t for i, t in titles.items() if t}


def _styled_as_heading(line: HeadingLine, body_size: float, text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    all_caps = len(letters) >= 4 and all(c.isupper() for c in letters)
    return line.bold or line.size >= body_size + 0.9 or all_caps


def body_font_size(lines: Sequence[HeadingLine]) -> float:
    weights: dict[float, int] = {}
    for line in lines:
        size = round(line.size, 1)
        weights[size] = weights.get(size, 0) + len(line.text)
    return max(weights, key=weights.__getitem__) if weights else 10.0


@dataclass
class SectionResult:
    paths: list[str]  # one per input line
    headings: int  # section headings found
    source: str  # "outline", "patterns" or "none"
    outline_title: str | None = None
    heading_lines: frozenset[int] = frozenset()  # lines read as unnumbered headings, when asked for


def _clean_title(title: str) -> str:
    return re.sub(r"\s+", " ", title).strip()


def _outline_entries(toc: Sequence[Sequence]) -> tuple[list[tuple[int, str, int]], str | None]:
    """Outline entries as (level, title, page); a single root that wraps everything is the
    document's title, not a section, and is dropped from the paths."""
    entries = [(int(e[0]), _clean_title(str(e[1])), int(e[2])) for e in toc if _clean_title(str(e[1]))]
    roots = [e for e in entries if e[0] == 1]
    if len(roots) == 1 and len(entries) > 1 and entries[0][0] == 1:
        root_title = roots[0][1]
        return [(lvl - 1, title, page) for lvl, title, page in entries[1:]], root_title
    return entries, None


def _matches(line_text: str, title: str) -> bool:
    line_n, title_n = alnum(line_text), alnum(title)
    if not line_n or not title_n:
        return False
    if line_n.startswith(title_n[:40]):
        return True
    # Headings wrapped over two lines: the first line is a prefix of the title.
    return len(line_n) >= 6 and title_n.startswith(line_n)


def from_outline(lines: Sequence[HeadingLine], toc: Sequence[Sequence]) -> SectionResult:
    entries, root_title = _outline_entries(toc)
    # Where each entry starts: the first matching line on its page, else the page's first line.
    starts: list[tuple[int, int, str]] = []  # (line index, level, title)
    first_line_of_page: dict[int, int] = {}
    for i, line in enumerate(lines):
        first_line_of_page.setdefault(line.page, i)
    cursor = 0
    for level, title, page in entries:
        if page < 1:
            continue
        found = None
        for i in range(cursor, len(lines)):
            if lines[i].page > page:
                break
            if lines[i].page == page and _matches(lines[i].text, title):
                found = i
                break
        if found is None:
            found = max(cursor, first_line_of_page.get(page, cursor))
            if found >= len(lines):
                continue
        starts.append((found, level, title))
        cursor = found
    return SectionResult(_paths_from_starts(len(lines), starts), len(starts), "outline", root_title)


def _run_in_headings(lines: Sequence[HeadingLine]) -> dict[int, tuple[str, str]]:
    """Run-in headings by line, kept only where the document numbers at least three of them at
    one depth with different numbers (a sentence that happens to look like one is not kept)."""
    return _numbered_enough({i: h for i, line in enumerate(lines) if (h := run_in_heading(line.text))})


def _numbered_enough(found: dict[int, tuple[str, str]]) -> dict[int, tuple[str, str]]:
    """The titles (kind, title) of a numbering kind the text uses at least three times with
    different numbers (the number is the title's first word that starts with a digit)."""
    numbers: dict[str, set[str]] = {}
    for kind, title in found.values():
        numbers.setdefault(kind, set()).add(next(w for w in title.split() if w[0].isdigit()))
    return {i: (kind, title) for i, (kind, title) in found.items() if len(numbers[kind]) >= MIN_RUN_IN_HEADINGS}


_BARE_NUMBER = re.compile(r"^(?:(?:section|article|clause)\s+)?\d{1,3}(?:\.\d{1,3})*[.)]?$", re.IGNORECASE)
_KEYWORD_PREFIX = re.compile(r"^(section|article|clause)\s+(?=\d)", re.IGNORECASE)


def clause_title(text: str, next_text: str = "") -> tuple[str, str] | None:
    """A run-in clause title on this line (``('dotted2', '12.2 Assignment')``), also where the
    number stands alone on its line and the title opens the next one ("12.2" / "Assignment.
    Except as…"), or follows a keyword ("Section 11.5. Parties in Interest.")."""
    text = text.strip()
    if _BARE_NUMBER.match(text) and next_text.strip():
        text = f"{text} {next_text.strip()}"
    keyword = _KEYWORD_PREFIX.match(text)
    found = run_in_heading(text[keyword.end() :] if keyword else text)
    if not found or not keyword:
        return found
    return found[0], f"{keyword.group(1)} {found[1]}"


def clause_titles(texts: Sequence[str]) -> list[str | None]:
    """The clause title each line opens, if any, kept only where the text numbers at least three
    titles at one depth with different numbers (as for run-in headings)."""
    found = {i: h for i, t in enumerate(texts) if (h := clause_title(t, texts[i + 1] if i + 1 < len(texts) else ""))}
    kept = _numbered_enough(found)
    return [kept[i][1] if i in kept else None for i in range(len(texts))]


def from_patterns(
    lines: Sequence[HeadingLine], run_in_headings: bool = True, plain_headings: bool = False, marks: bool = False
) -> SectionResult:
    """Sections from numbered headings (and run-in or unnumbered ones when asked); ``marks``: also
    report which lines read as unnumbered headings (``SectionResult.heading_lines``). A heading that
    opens with a condition ("If you get benefits", "Unless you opt out") is the lead-in of the text
    under it, not a title set apart from it, and is not reported: it stays run into its sentence,
    where a quote or an answer's "Depends on:" keeps it."""
    body = body_font_size(lines)
    level_of_kind: dict[str, int] = {}
    starts: list[tuple[int, float, str]] = []
    run_in = _run_in_headings(lines) if run_in_headings else {}
    bare = bare_number_headings(lines, body)
    for i, line in enumerate(lines):
        found = bare.get(i) or heading_kind(line.text)
        if not found or (i not in bare and not _styled_as_heading(line, body, line.text)):
            if i in run_in:
                kind, title = run_in[i]
                starts.append((i, level_of_kind.setdefault(kind, len(level_of_kind) + 1), title))
            continue
        kind, title = found
        # A bare number ("Article 12") whose title is on the next heading-styled line.
        if _KEYWORD.match(title) and not _KEYWORD.match(title).group(3) and i + 1 < len(lines):  # type: ignore[union-attr]
            nxt = lines[i + 1]
            if nxt.page == line.page and _styled_as_heading(nxt, body, nxt.text) and not heading_kind(nxt.text):
                title = f"{title} {nxt.text.strip()}"
        level = level_of_kind.setdefault(kind, len(level_of_kind) + 1)
        starts.append((i, level, _clean_title(title)))
    candidates = plain_heading_lines(lines, body) if plain_headings or marks else set()
    if plain_headings:
        starts += plain_starts(lines, candidates, {i: (int(level), title) for i, level, title in starts}, body)
    source = "patterns" if starts else "none"
    marked = (
        frozenset(i for i in candidates if not CONDITION_WORDS.match(lines[i].text.strip())) if marks else frozenset()
    )
    return SectionResult(_paths_from_starts(len(lines), starts), len(starts), source, None, marked)


_BARE_HEADING_NUMBER = re.compile(r"^(\d{1,3})[.)]$")


def bare_number_headings(lines: Sequence[HeadingLine], body: float) -> dict[int, tuple[str, str]]:
    """Numbered headings whose number stands alone on its line and whose title, set as a heading
    (bold, larger or in capitals), is the next line: "12." / "TERM AND TERMINATION AND TRANSITION",
    as PDFs set a number and its title at two tab stops. Kept only where the document numbers at
    least three so with different numbers, as for run-in headings."""
    found: dict[int, tuple[str, str]] = {}
    for i in range(len(lines) - 1):
        m = _BARE_HEADING_NUMBER.match(lines[i].text.strip())
        title = lines[i + 1].text.strip()
        if not m or lines[i + 1].page != lines[i].page or heading_kind(title) or _BARE_NUMBER.match(title):
            continue
        if len(title) > MAX_HEADING_CHARS or len(title.split()) > MAX_HEADING_WORDS or title[-1] in ",;.":
            continue
        if sum(c.isalpha() for c in title) >= 3 and _styled_as_heading(lines[i + 1], body, title):
            found[i] = ("number", f"{lines[i].text.strip()} {_clean_title(title)}")
    return _numbered_enough(found)


def _paths_from_starts(n_lines: int, starts: Sequence[tuple[int, float, str]]) -> list[str]:
    paths = [""] * n_lines
    stack: list[tuple[float, str]] = []
    boundaries = sorted(starts, key=lambda s: s[0])
    b = 0
    current = ""
    for i in range(n_lines):
        while b < len(boundaries) and boundaries[b][0] == i:
            _, level, title = boundaries[b]
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            current = SEPARATOR.join(t for _, t in stack)
            b += 1
        paths[i] = current
    return paths


def detect_sections(
    lines: Sequence[HeadingLine],
    toc: Sequence[Sequence],
    run_in: bool = False,
    plain: bool = False,
    marks: bool = False,
) -> SectionResult:
    """Section path for every line: outline first, heading patterns otherwise (``run_in``: run-in
    headings in body type too; ``plain``: unnumbered headings set apart by type too; ``marks``: the
    unnumbered heading lines reported, where the patterns are read)."""
    if len(toc) >= 2:
        result = from_outline(lines, toc)
        if result.headings:
            return result
    return from_patterns(lines, run_in, plain, marks)

"""Post-generation citation checks: clean the answer's [n] markers and verify quotes.

The model is given numbered sources ([1], [2], ...) and told to cite them and to prefer
short direct quotes. Its output is messy: "[1, 2]", "[Source 1]", "[S1]", "[1-3]",
markers for sources it was never given, quotes that drift from the text. This module
turns that into canonical "[1][2]" markers, drops the invalid ones, and checks every
quote (or, failing a quote, the citing sentence) against the source it cites, recording
the exact span of the source text so the UI can highlight it.

Matching is normalised the way PDF text needs: case, whitespace runs (line breaks
mid-sentence), curly vs straight quotes, dash variants, soft hyphens and words hyphenated
across a line break are all ignored. Spans are always reported in the ORIGINAL text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from policybot.core.clauses import cited_under
from policybot.core.text import WORD, fold, longest_common_run, prose_sentences, words
from policybot.schemas import Answer, Citation

# Quotes shorter than this are terms ("flood"), not evidence: they verify nothing alone.
MIN_QUOTE_WORDS = 3
# The sentence fallback needs this many consecutive source words to count as support.
MIN_RUN_WORDS = 6
# "[1-300]" is a typo, not a citation of 300 sources: wider ranges keep their endpoints only.
MAX_RANGE = 20

# ---------------------------------------------------------------------------
# Markers
# ---------------------------------------------------------------------------

_LABEL = r"(?:sources?|refs?|docs?|s)\s*#?\s*"
_NUM = rf"(?:{_LABEL})?\d+"
_ITEM = rf"{_NUM}(?:\s*(?:-|–|—|to)\s*{_NUM})?"
_SEP = r"\s*(?:,|;|&|\band\b)\s*"
_GROUP = rf"\[\s*\^?{_ITEM}(?:{_SEP}{_ITEM})*\s*\]"
# Adjacent groups ("[1] [2]", "[1], [2]") become one run so they render as "[1][2]".
_RUN = re.compile(rf"{_GROUP}(?:[ \t]*[,;]?[ \t]*{_GROUP})*", re.IGNORECASE)
_GROUP_RE = re.compile(_GROUP, re.IGNORECASE)
_RANGE = re.compile(rf"(\d+)(?:\s*(?:-|–|—|to)\s*(?:{_LABEL})?(\d+))?", re.IGNORECASE)

MARKER = re.compile(r"\[(\d+)\]")
# A run of canonical markers with the horizontal whitespace around it.
_MARKER_RUN = re.compile(r"(?P<pre>[ \t]*)(?P<run>\[\d+\](?:[ \t]*\[\d+\])*)(?P<post>[ \t]*)")
_CLOSERS = set(".,;:!?)]}\"'”’")


def _group_numbers(group: str) -> list[int]:
    """The source numbers in one bracket group, ranges expanded."""
    numbers: list[int] = []
    for m in _RANGE.finditer(group):
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if lo <= hi and hi - lo <= MAX_RANGE:
            numbers.extend(range(lo, hi + 1))
        else:
            numbers.extend([lo, hi])
    return numbers


def _dedupe(numbers: list[int]) -> list[int]:
    """Unique numbers, first appearance order."""
    return list(dict.fromkeys(numbers))


def normalize_markers(answer: str) -> str:
    """Rewrite bracketed citation variants as canonical adjacent markers: "[1][2]".

    Handles "[1, 2]", "[1,2]", "[1; 2]", "[1][2]", "[1] [2]", "[1-3]", "[Source 1]",
    "[Sources 1 and 2]", "[S1]", "[^1]". Parentheses are left alone: "(1)" and "(a)"
    are clause numbers in policy text far more often than citations.
    """

    def render(run: re.Match[str]) -> str:
        numbers = [n for g in _GROUP_RE.finditer(run.group(0)) for n in _group_numbers(g.group(0))]
        return "".join(f"[{n}]" for n in _dedupe(numbers))

    return _RUN.sub(render, answer)


def _tidy_removed(text: str, m: re.Match[str]) -> str:
    """What replaces a marker run whose markers were all removed, so no gap or stray space is left."""
    pre, post = m.group("pre"), m.group("post")
    before = text[m.start() - 1] if m.start() > 0 else "\n"
    after = text[m.end()] if m.end() < len(text) else "\n"
    if before == "\n":  # marker opened the line: keep the indentation, drop the gap after it
        return pre
    if after == "\n" or after in _CLOSERS:  # "covered [7]." -> "covered."
        return ""
    if pre or post or (before.isalnum() and after.isalnum()):
        return " "
    return ""


def check_markers(answer: str, n_sources: int) -> tuple[str, list[int], int]:
    """Drop markers [k] with k outside 1..n_sources; expects canonical markers (normalize_markers).

    Returns (cleaned answer, sorted valid source numbers cited, number of markers removed).
    Only numeric markers are touched: "Section [A]" stays.
    """
    cited: set[int] = set()
    removed = 0

    def clean(m: re.Match[str]) -> str:
        nonlocal removed
        numbers = [int(k) for k in MARKER.findall(m.group("run"))]
        valid = [k for k in numbers if 1 <= k <= n_sources]
        removed += len(numbers) - len(valid)
        cited.update(valid)
        if len(valid) == len(numbers):
            return m.group(0)
        if valid:
            return m.group("pre") + "".join(f"[{k}]" for k in _dedupe(valid)) + m.group("post")
        return _tidy_removed(m.string, m)

    cleaned = _MARKER_RUN.sub(clean, answer)
    return cleaned, sorted(cited), removed


# ---------------------------------------------------------------------------
# Normalised matching
# ---------------------------------------------------------------------------

_STRIP = " .,;:!?'\"-*_…"
_ELLIPSIS = re.compile(r"\s*(?:\[\s*(?:\.\s?){2}\.\s*\]|(?:\.\s?){2}\.)\s*")


def _part_pattern(part: str, prefix: str = "", suffix: str = "") -> re.Pattern[str]:
    """Regex for one normalised quote fragment: whole words, hyphens inside words optional.

    Optional hyphens let "flood-related" match "flood-\\nrelated", which normalises to
    "floodrelated" when the hyphen fell at a line break. The punctuation stripped from the
    quote's ends (``prefix``, ``suffix``) is matched where the source has it too, so a
    quoted "'insured location'" highlights the source's closing quote as well.
    """
    body = "-?".join(re.escape(p) for p in re.split(r"(?<=\w)-(?=\w)", part))
    head = r"(?<!\w)" if part[0].isalnum() else ""
    tail = r"(?!\w)" if part[-1].isalnum() else ""
    before = after = ""
    for c in prefix:  # innermost group is the character next to the body
        before = f"(?:{before}{re.escape(c)})?"
    for c in reversed(suffix):
        after = f"(?:{re.escape(c)}{after})?"
    return re.compile(before + head + body + tail + after)


def _quote_parts(quote: str) -> tuple[list[str], str, str]:
    """The normalised fragments of a quote, split at ellipses ("...", "…", "[...]"),
    and the punctuation stripped before the first and after the last."""
    norm, _ = fold(quote)
    raw = _ELLIPSIS.split(norm)
    parts = [p.strip(_STRIP) for p in raw]
    prefix = raw[0][: len(raw[0]) - len(raw[0].lstrip(_STRIP))] if parts[0] else ""
    suffix = raw[-1][len(raw[-1].rstrip(_STRIP)) :] if parts[-1] else ""
    # Spaces and markdown emphasis at the ends are never part of the quoted text.
    prefix, suffix = (re.sub(r"[\s*_]", "", x) for x in (prefix, suffix))
    return [p for p in parts if p], prefix, suffix


def locate_quote(quote: str, text: str) -> tuple[int, int] | None:
    """The (start, end) span of ``quote`` in the original ``text``, matched normalised; else None.

    Case, whitespace runs, quote and dash styles, soft hyphens, line-break hyphenation and
    the quote's leading/trailing punctuation are ignored. An ellipsis marks omitted text:
    each part must be found, in order; the span runs from the first part to the last.
    """
    parts, prefix, suffix = _quote_parts(quote)
    if not parts:
        return None
    norm, index = fold(text)
    pos = 0
    spans: list[tuple[int, int]] = []
    for i, part in enumerate(parts):
        pattern = _part_pattern(part, prefix if i == 0 else "", suffix if i == len(parts) - 1 else "")
        m = pattern.search(norm, pos)
        if m is None:
            return None
        spans.append((m.start(), m.end()))
        pos = m.end()
    return index[spans[0][0]], index[spans[-1][1] - 1] + 1


# ---------------------------------------------------------------------------
# Quotes and sentences in the answer
# ---------------------------------------------------------------------------

_DOUBLE_STYLE = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"'})
# A quoted span never crosses a blank line: an unmatched quote must not swallow paragraphs.
# Bounded lengths keep unmatched quote marks from making the scan quadratic.
_DOUBLE = re.compile(r'"((?:[^"\n]|\n(?![ \t]*\n)){1,2000}?)"')
# Single quotes open after a non-word and close before one, so "insurer's" is no quote.
_SINGLE = re.compile(r"(?<!\w)['‘](?=\S)((?:(?!\n[ \t]*\n)[^\n]|\n){1,600}?)(?<=\S)['’](?!\w)")
_MARKDOWN = re.compile(r"\*\*|__|`|^\s*(?:#+|[-*+•]|\d+[.)])\s+", re.MULTILINE)


@dataclass(frozen=True)
class _Quote:
    text: str
    start: int  # span in the answer, quote marks included
    end: int
    markers: tuple[int, ...]  # attributed sources, best first
    sentence_markers: tuple[int, ...]


def _quote_spans(answer: str) -> list[tuple[int, int, str]]:
    """(start, end, inner text) of each quoted span, in order."""
    found = [(m.start(), m.end(), m.group(1)) for m in _DOUBLE.finditer(answer.translate(_DOUBLE_STYLE))]
    for m in _SINGLE.finditer(answer):
        inside_double = any(s <= m.start() < e for s, e, _ in found)
        if not inside_double and len(m.group(1).split()) > 3:
            found.append((m.start(), m.end(), m.group(1)))
    return sorted(found)


def _markers_in(text: str) -> list[int]:
    return _dedupe([int(k) for k in MARKER.findall(text)])


def _clean_quote(inner: str) -> str:
    """Quote text without markers or markdown emphasis, whitespace collapsed."""
    text = MARKER.sub(" ", inner)
    text = re.sub(r"\*\*|__|`|\*", "", text)
    return " ".join(text.split())


def _quotes(answer: str) -> tuple[list[_Quote], list[tuple[int, int]]]:
    """The answer's quotes with their attributions, and its sentence spans."""
    spans = _quote_spans(answer)
    sentences = prose_sentences(answer, [(s, e) for s, e, _ in spans])
    quotes: list[_Quote] = []
    for i, (qs, qe, inner) in enumerate(spans):
        ss, se = next(((s, e) for s, e in sentences if s <= qs < e), (qs, qe))
        next_quote = next((s for s, _, _ in spans[i + 1 :] if s < se), se)
        following = _markers_in(inner) + _markers_in(answer[qe : max(next_quote, qe)])
        sentence = _markers_in(answer[ss : max(se, qe)])
        quotes.append(_Quote(_clean_quote(inner), qs, qe, tuple(_dedupe(following) or sentence), tuple(sentence)))
    return quotes, sentences


def extract_quotes(answer: str) -> list[tuple[str, list[int]]]:
    """Quoted spans of the answer with the source numbers each is attributed to.

    Double quotes (straight or curly) always count; single quotes only around more than
    three words, so apostrophes ("insurer's") and scare quotes are not quotes. A quote is
    attributed to the markers after it in its sentence (before the next quote), else to
    all markers of its sentence.
    """
    quotes, _ = _quotes(normalize_markers(answer))
    return [(q.text, list(q.markers)) for q in quotes]


# ---------------------------------------------------------------------------
# Verification
# ---------------------------------------------------------------------------


def _word_count(quote: str) -> int:
    return sum(len(WORD.findall(p)) for p in _quote_parts(quote)[0])


def _set_quote(citation: Citation, span: tuple[int, int]) -> None:
    """Record a verified span; the quote is the exact source slice so the UI can highlight it."""
    citation.quote = citation.text[span[0] : span[1]]
    citation.quote_start, citation.quote_end = span
    citation.verified = True
    citation.clause_section = cited_under(citation.section, citation.clauses, span[0])


def _verify_quotes(quotes: list[_Quote], citations: list[Citation]) -> set[int]:
    """Verify quotes against their sources; returns the sources whose attributed quote was found nowhere."""
    failed: set[int] = set()
    n = len(citations)
    for quote in quotes:
        if _word_count(quote.text) < MIN_QUOTE_WORDS:
            continue
        attributed = [k for k in quote.markers if 1 <= k <= n]
        # A misattributed quote may still be in another source the same sentence cites,
        # never in an uncited one: that would be crediting the model with a source it did not use.
        others = [k for k in quote.sentence_markers if 1 <= k <= n and k not in attributed]
        found = False
        for group in (attributed, others):
            for k in group:
                citation = citations[k - 1]
                span = locate_quote(quote.text, citation.text)
                if span is not None:
                    found = True
                    if not citation.verified:  # the first verified quote of a source wins
                        _set_quote(citation, span)
            if found:
                break
        if not found:
            failed.update(attributed)
    return failed


def _verify_sentences(answer: str, sentences: list[tuple[int, int]], citation: Citation, k: int) -> None:
    """Fallback: the longest run of >= MIN_RUN_WORDS sentence words found in the source."""
    source = words(citation.text)
    source_words = [w for w, _, _ in source]
    best = None
    for s, e in sentences:
        sentence = answer[s:e]
        if k not in _markers_in(sentence):
            continue
        run = longest_common_run([w for w, _, _ in words(_MARKDOWN.sub(" ", MARKER.sub(" ", sentence)))], source_words)
        if best is None or run.matched > best.matched:
            best = run
    if best is not None and best.matched >= MIN_RUN_WORDS:
        _set_quote(citation, (source[best.b_start][1], source[best.b_end - 1][2]))


def verify(answer: str, sources: list[Citation]) -> tuple[str, list[Citation], int]:
    """Check an answer against its numbered sources (source i is ``sources[i - 1]``).

    Normalises and validates markers, marks cited sources, verifies attributed quotes
    (trying the sentence's other cited sources when misattributed), and for cited sources
    without a verified quote falls back to the citing sentence's words. A source whose
    attributed quote was found nowhere stays unverified: a made-up quote is not rescued by
    a paraphrase. Returns (cleaned answer, updated copies of ``sources``, markers removed).
    """
    text = normalize_markers(answer)
    text, cited, removed = check_markers(text, len(sources))
    citations = [
        s.model_copy(update=dict(cited=False, quote=None, quote_start=None, quote_end=None, verified=False))
        for s in sources
    ]
    for k in cited:
        citations[k - 1].cited = True
    quotes, sentences = _quotes(text)
    failed = _verify_quotes(quotes, citations)
    for k in cited:
        citation = citations[k - 1]
        if not citation.verified and k not in failed:
            _verify_sentences(text, sentences, citation, k)
    return text, citations, removed


@dataclass(frozen=True)
class CheckedAnswer:
    """A generated answer after its citations were checked."""

    text: str
    citations: list[Citation]
    removed_markers: int
    notice: str | None


class CitationChecker:
    """Cleans an answer's [n] markers, verifies its quotes, and says when it cites nothing
    (or nothing that checks out), so the user knows to read the sources."""

    def run(self, answer: str, sources: list[Citation]) -> CheckedAnswer:
        text, checked, removed = verify(answer, sources)
        notice = None
        if not any(c.cited for c in checked):
            notice = "The answer cites no source: check it against the passages listed with it."
        elif not any(c.verified for c in checked if c.cited):
            notice = "No quote or sentence of the answer was found in its cited sources: check it against them."
        return CheckedAnswer(text, checked, removed, notice)


# ---------------------------------------------------------------------------
# Numbering as shown
# ---------------------------------------------------------------------------

_CANONICAL = re.compile(r"\[(\d+)\]")


def renumbered(answer: Answer) -> Answer:
    """The answer with its sources numbered 1..n in the order a reader meets them: the sources
    shown with it first, in the order the text cites them, then the others. The markers in the
    text follow, so a reader never sees a gap ("[1] [2] [3] [7]"). A source shown because a
    source that is not shown points to it keeps that pointer (a number above the shown ones);
    the app says "referenced by" only when the pointer is shown."""
    shown = {c.n for c in answer.shown_citations}
    first_use = {int(m.group(1)): m.start() for m in reversed(list(_CANONICAL.finditer(answer.answer)))}
    order = sorted(
        answer.citations, key=lambda c: (c.n not in shown, first_use.get(c.n, len(answer.answer) + c.n), c.n)
    )
    new = {c.n: i for i, c in enumerate(order, 1)}
    if all(old == n for old, n in new.items()):
        return answer
    citations = [
        c.model_copy(update={"n": new[c.n], "referenced_by": [new.get(r, r) for r in c.referenced_by]}) for c in order
    ]

    def swap(m: re.Match[str]) -> str:
        number = int(m.group(1))
        return f"[{new.get(number, number)}]"

    def swapped(text: str | None) -> str | None:
        return _CANONICAL.sub(swap, text) if text else text

    earlier = answer.earlier_edition
    if earlier is not None:
        earlier = earlier.model_copy(
            update={
                "reference": swapped(earlier.reference),
                "referenced_by": [new.get(r, r) for r in earlier.referenced_by],
            }
        )
    return answer.model_copy(
        update={
            "answer": swapped(answer.answer),
            "citations": citations,
            "unchecked_draft": swapped(answer.unchecked_draft),
            "edition_note": swapped(answer.edition_note),
            "earlier_edition": earlier,
        }
    )

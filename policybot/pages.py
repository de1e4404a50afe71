"""Showing where a citation comes from: the quote located on its PDF page, the page
rendered as a PNG with the quote highlighted, and the chunk text with the quote marked.

A quote is chunk text as extracted, so its line breaks, spacing and hyphenation rarely
match the page's. PyMuPDF's ``search_for`` matches across line breaks (1.28 treats them
as spaces) but not across a word hyphenated at a line end, nor across extraction quirks;
for those, the quote is aligned word by word with the page's words instead.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pymupdf

from policybot.markup import literal_html

# The share of the quote's words that must be found, in order, for a word-level match.
MIN_WORD_SHARE = 0.6
# Local alignment scores: a matching word gains more than a skipped or different word
# costs, so a few extraction differences do not break a long run.
_MATCH, _MISMATCH, _GAP = 2, -1, -1
HIGHLIGHT_COLOR = (1.0, 0.85, 0.0)
HIGHLIGHT_OPACITY = 0.5
RENDER_CACHE_SIZE = 64

_SOFT_HYPHEN = "\u00ad"
_HYPHENS = ("-", "\u2010", "\u2011", _SOFT_HYPHEN)
_NON_WORD = re.compile(r"[\W_]+")


@dataclass
class _Token:
    """A normalised word and the raw page words (indices) it was made from."""

    text: str
    first: int
    last: int


def _norm(word: str) -> str:
    """Lowercase letters and digits only: ligatures unfolded, hyphens and punctuation gone."""
    return _NON_WORD.sub("", unicodedata.normalize("NFKC", word).replace(_SOFT_HYPHEN, "").lower())


def _quote_tokens(quote: str) -> list[str]:
    """The quote's normalised words; a word broken with a hyphen is joined again."""
    out: list[str] = []
    joining = False
    for raw in quote.split():
        word = _norm(raw)
        if not word:
            continue
        if joining and out:
            out[-1] += word
        else:
            out.append(word)
        joining = raw.endswith(_HYPHENS)
    return out


def _page_tokens(words: list[tuple]) -> list[_Token]:
    """The page's normalised words; a word hyphenated at a line end is joined with the
    first word of the next line (the quote may have it whole)."""
    out: list[_Token] = []
    i = 0
    while i < len(words):
        text = _norm(words[i][4])
        last = i
        line_end = i + 1 < len(words) and words[i + 1][5:7] != words[i][5:7]
        if text and line_end and words[i][4].endswith(_HYPHENS):
            text += _norm(words[i + 1][4])
            last = i + 1
        if text:
            out.append(_Token(text, i, last))
        i = last + 1
    return out


def _align(quote: list[str], page: list[str]) -> tuple[int, int, int] | None:
    """Best local alignment of the quote's words with a contiguous run of page words:
    (first page token, last page token, matched words), or None when nothing matches."""
    n = len(page)
    prev_score = [0] * (n + 1)
    prev_start = [0] * (n + 1)
    prev_hits = [0] * (n + 1)
    best: tuple[int, int, int, int] | None = None  # score, start, end, hits
    for q in quote:
        score = [0] * (n + 1)
        start = [0] * (n + 1)
        hits = [0] * (n + 1)
        for j in range(1, n + 1):
            is_match = page[j - 1] == q
            # Diagonal: a word of each; a match may also start a new run here.
            if prev_score[j - 1] > 0:
                s, st, h = prev_score[j - 1] + (_MATCH if is_match else _MISMATCH), prev_start[j - 1], prev_hits[j - 1] + is_match
            elif is_match:
                s, st, h = _MATCH, j - 1, 1
            else:
                s, st, h = 0, 0, 0
            # Up: a quote word missing from the page; left: an extra page word.
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
    return None if best is None else (best[1], best[2], best[3])


def _line_rects(words: list[tuple], first: int, last: int) -> list[pymupdf.Rect]:
    """One rectangle per text line over the raw words first..last."""
    lines: dict[tuple[int, int], pymupdf.Rect] = {}
    for w in words[first : last + 1]:
        key = (w[5], w[6])
        rect = pymupdf.Rect(w[:4])
        lines[key] = lines[key] | rect if key in lines else rect
    return list(lines.values())


def _word_rects(page: pymupdf.Page, quote: str) -> list[pymupdf.Rect]:
    """Locate the quote by aligning its words with the page's words."""
    q = _quote_tokens(quote)
    words = page.get_text("words")
    tokens = _page_tokens(words)
    if not q or not tokens:
        return []
    found = _align(q, [t.text for t in tokens])
    if found is None:
        return []
    first, last, hits = found
    if hits < math.ceil(MIN_WORD_SHARE * len(q)):
        return []
    return _line_rects(words, tokens[first].first, tokens[last].last)


def highlight_rects(page: pymupdf.Page, quote: str) -> list[pymupdf.Rect]:
    """Rectangles (one per line piece) covering the quote on the page; [] if not found."""
    needle = " ".join(quote.split())
    if not needle:
        return []
    rects = page.search_for(needle)
    return list(rects) if rects else _word_rects(page, quote)


def _page(doc: pymupdf.Document, page_number: int) -> pymupdf.Page:
    if not 1 <= page_number <= doc.page_count:
        raise ValueError(f"page {page_number} is out of range: the PDF has {doc.page_count} page(s), numbered from 1")
    return doc[page_number - 1]


def render_page(pdf_path: str | Path, page_number: int, quote: str | None = None, dpi: int = 110) -> bytes:
    """PNG of the 1-based page, with the quote (if given and found) highlighted."""
    if dpi <= 0:
        raise ValueError(f"dpi must be positive, got {dpi}")
    with pymupdf.open(pdf_path) as doc:
        page = _page(doc, page_number)
        rects = highlight_rects(page, quote) if quote else []
        if rects:
            # The annotation lives only in this in-memory Document, which is never saved:
            # the file on disk is untouched. Highlights blend (multiply) so text stays legible.
            annot = page.add_highlight_annot(rects)
            annot.set_colors(stroke=HIGHLIGHT_COLOR)
            annot.set_opacity(HIGHLIGHT_OPACITY)
            annot.update()
        return page.get_pixmap(dpi=dpi, annots=True).tobytes("png")


@lru_cache(maxsize=RENDER_CACHE_SIZE)
def cached_render(pdf_path: str, page_number: int, quote: str | None, dpi: int) -> bytes:
    """``render_page`` memoised: stored PDFs are named by their hash, so a path's
    content never changes under the cache."""
    return render_page(pdf_path, page_number, quote, dpi)


def highlight_html(text: str, start: int | None, end: int | None) -> str:
    """The text as literal, whitespace-preserving HTML, with text[start:end] in <mark>.

    Every punctuation mark and newline is a character reference (``markup.literal_html``), so
    the fragment is one line of raw HTML in which neither tags nor Markdown can appear.
    """
    if start is None or end is None:
        body = literal_html(text)
    else:
        lo, hi = max(0, min(start, len(text))), max(0, min(end, len(text)))
        # Offsets index the raw text, so each part is escaped on its own.
        body = literal_html(text[:lo])
        if hi > lo:
            body += f"<mark>{literal_html(text[lo:hi])}</mark>"
        body += literal_html(text[max(lo, hi) :])
    return f'<div style="white-space: pre-wrap">{body}</div>'

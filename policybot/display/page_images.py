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
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pymupdf

from policybot.core.text import SOFT_HYPHEN, alnum, local_alignment

# The share of the quote's words that must be found, in order, for a word-level match.
MIN_WORD_SHARE = 0.6
HIGHLIGHT_COLOR = (1.0, 0.85, 0.0)
HIGHLIGHT_OPACITY = 0.5
RENDER_CACHE_SIZE = 64
# A crop to the quote keeps this much of the page above and below it (points; 72 to an inch),
# and is at least this tall, so the clause's heading or the sentence before it is usually in view.
CROP_MARGIN = 60
MIN_CROP_HEIGHT = 220
SIDE_MARGIN = 24
# A printed page number in a running footer or header: "PAGE 19 OF 30", "Page 4", "- 7 -".
_PRINTED = re.compile(r"^\s*(?:page\s+(\d{1,4})(?:\s+of\s+\d{1,4})?|[-–]\s*(\d{1,4})\s*[-–])\s*$", re.I)

_HYPHENS = ("-", "\u2010", "\u2011", SOFT_HYPHEN)


@dataclass
class _Token:
    """A normalised word and the raw page words (indices) it was made from."""

    text: str
    first: int
    last: int


def _quote_tokens(quote: str) -> list[str]:
    """The quote's normalised words; a word broken with a hyphen is joined again."""
    out: list[str] = []
    joining = False
    for raw in quote.split():
        word = alnum(raw)
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
        text = alnum(words[i][4])
        last = i
        line_end = i + 1 < len(words) and words[i + 1][5:7] != words[i][5:7]
        if text and line_end and words[i][4].endswith(_HYPHENS):
            text += alnum(words[i + 1][4])
            last = i + 1
        if text:
            out.append(_Token(text, i, last))
        i = last + 1
    return out


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
    found = local_alignment(q, [t.text for t in tokens])
    if found is None or found.matched < math.ceil(MIN_WORD_SHARE * len(q)):
        return []
    return _line_rects(words, tokens[found.b_start].first, tokens[found.b_end - 1].last)


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


@dataclass(frozen=True)
class PageView:
    """A page as a reviewer sees it: the PNG, whether the quote is marked on it, and whether it is
    cropped to the mark (the whole page is ``render_page``)."""

    png: bytes
    marked: bool
    cropped: bool


def render_view(
    pdf_path: str | Path,
    page_number: int,
    quote: str | None = None,
    dpi: int = 110,
    crop: bool = True,
    passage: str | None = None,
    part: str = "",
    also: tuple[str, ...] = (),
) -> PageView:
    """The page with the quote (and the ``also`` quotes of the same passage) highlighted and, with
    ``crop``, cut to a band around them: the quotes' lines and ``CROP_MARGIN`` above and below. On a
    page of a longer ``passage`` without a quote, the band is the passage's own part of the page:
    from its first words down (``part`` "start"), or from the top to its last words ("end"); else
    the whole page."""
    if dpi <= 0:
        raise ValueError(f"dpi must be positive, got {dpi}")
    with pymupdf.open(pdf_path) as doc:
        page = _page(doc, page_number)
        rects = [r for q in (quote, *also) if q for r in highlight_rects(page, q)]
        clip = None
        if rects:
            annot = page.add_highlight_annot(rects)  # in memory only, never saved
            annot.set_colors(stroke=HIGHLIGHT_COLOR)
            annot.set_opacity(HIGHLIGHT_OPACITY)
            annot.update()
            if crop:
                clip = _band(page.rect, rects)
        elif crop and passage and part in ("start", "end"):
            clip = _passage_band(page, passage, part)
        png = page.get_pixmap(dpi=dpi, annots=True, clip=clip).tobytes("png")
        return PageView(png, bool(rects), clip is not None)


# Words of a passage's first or last stretch looked for on a page it spans.
EDGE_WORDS = 12


def _passage_band(page: pymupdf.Page, passage: str, part: str) -> pymupdf.Rect | None:
    """Where a passage that runs over pages sits on one of them: from its first words to the foot of
    the page, or from the top of the page to its last words; None when they are not found."""
    words = passage.split()
    edge = " ".join(words[:EDGE_WORDS] if part == "start" else words[-EDGE_WORDS:])
    found = highlight_rects(page, edge)
    if not found:
        return None
    area = page.rect
    if part == "start":
        rects = [pymupdf.Rect(area.x0, min(r.y0 for r in found), area.x1, area.y1 - CROP_MARGIN)]
    else:
        rects = [pymupdf.Rect(area.x0, area.y0 + CROP_MARGIN, area.x1, max(r.y1 for r in found))]
    return _band(area, rects)


def _band(page: pymupdf.Rect, rects: list[pymupdf.Rect]) -> pymupdf.Rect | None:
    """The quote's lines with margins: ``CROP_MARGIN`` above and below (at least ``MIN_CROP_HEIGHT``
    tall) and a little either side of its text column; None when that is most of the page."""
    top = min(r.y0 for r in rects) - CROP_MARGIN
    bottom = max(r.y1 for r in rects) + CROP_MARGIN
    missing = MIN_CROP_HEIGHT - (bottom - top)
    if missing > 0:
        top, bottom = top - missing / 2, bottom + missing / 2
    top, bottom = max(page.y0, top), min(page.y1, bottom)
    if bottom - top > 0.8 * page.height:
        return None
    left = max(page.x0, min(r.x0 for r in rects) - SIDE_MARGIN)
    right = min(page.x1, max(r.x1 for r in rects) + SIDE_MARGIN)
    if right - left < 0.5 * page.width:  # a short line: keep the page's width, for its context
        left, right = page.x0, page.x1
    return pymupdf.Rect(left, top, right, bottom)


def printed_page_label(pdf_path: str | Path, page_number: int) -> str | None:
    """The page's own number where it differs from its place in the file: the PDF's page label,
    else a "Page 19 of 30" line at the top or bottom of the page. None when they agree or it has none."""
    with pymupdf.open(pdf_path) as doc:
        page = _page(doc, page_number)
        label = _hex_text(page.get_label() or "").strip()
        if not label:
            lines = [line.strip() for line in page.get_text().splitlines() if line.strip()]
            for line in lines[:3] + lines[-3:]:
                match = _PRINTED.match(line)
                if match:
                    label = match.group(1) or match.group(2)
                    break
    return label if label and label != str(page_number) else None


def _hex_text(label: str) -> str:
    """A label prefix some PDFs store as UTF-16 hex (``<FEFF0043>1``: "C1"), read as text."""

    def text(match: re.Match[str]) -> str:
        try:
            return bytes.fromhex(match.group(1)).decode("utf-16-be")
        except ValueError:
            return ""

    return re.sub(r"<FEFF((?:[0-9A-Fa-f]{4})*)>", text, label)


@lru_cache(maxsize=RENDER_CACHE_SIZE)
def cached_view(
    pdf_path: str,
    page_number: int,
    quote: str | None,
    dpi: int,
    crop: bool,
    passage: str | None,
    part: str,
    also: tuple[str, ...] = (),
) -> PageView:
    """``render_view`` memoised (stored PDFs are named by their hash: a path's content never changes)."""
    return render_view(pdf_path, page_number, quote, dpi, crop, passage, part, also)


@lru_cache(maxsize=RENDER_CACHE_SIZE)
def cached_label(pdf_path: str, page_number: int) -> str | None:
    return printed_page_label(pdf_path, page_number)


@lru_cache(maxsize=RENDER_CACHE_SIZE)
def cached_render(pdf_path: str, page_number: int, quote: str | None, dpi: int) -> bytes:
    """``render_page`` memoised: stored PDFs are named by their hash, so a path's
    content never changes under the cache."""
    return render_page(pdf_path, page_number, quote, dpi)

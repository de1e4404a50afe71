"""Locating quotes on real PDF pages, rendering highlighted pages, marking chunk text."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pymupdf
import pytest

from policybot.display.page_images import cached_render, highlight_rects, render_page
from tests import pdfs

DEFINITION = (
    "Insured Person means you, your spouse or partner, and members of your family who permanently live "
    "in your home, including children under twenty-one years of age studying away from home."
)
# The same words as text extraction might give them: other line breaks and spacing.
DEFINITION_REFLOWED = (
    "Insured Person means you,  your spouse\nor partner, and members of your family\n"
    "who permanently live in your\thome, including children under\ntwenty-one years of age"
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def policy(tmp_path_factory) -> Path:
    return pdfs.sample_policy(tmp_path_factory.mktemp("pages") / "p.pdf")


@pytest.fixture
def page1(policy):
    with pymupdf.open(policy) as doc:
        yield doc[0]


def _text_in(page: pymupdf.Page, rects: list[pymupdf.Rect]) -> str:
    return " ".join(" ".join(page.get_textbox(r).split()) for r in rects)


def _inside(page: pymupdf.Page, rect: pymupdf.Rect) -> bool:
    return page.rect.contains(rect)


# --- highlight_rects -------------------------------------------------------------------


def test_multi_line_quote_is_found_on_every_line(page1):
    quote = "members of your family who permanently live in your home, including children"
    rects = highlight_rects(page1, quote)
    assert len({round(r.y0) for r in rects}) >= 2  # the quote wraps onto a second line
    assert all(_inside(page1, r) for r in rects)
    text = _text_in(page1, rects)
    assert text.startswith("members") and text.endswith("children")


def test_quote_with_other_whitespace_and_line_breaks(page1):
    rects = highlight_rects(page1, DEFINITION_REFLOWED)
    assert len({round(r.y0) for r in rects}) >= 2
    text = _text_in(page1, rects)
    assert text.startswith("Insured Person means")
    assert text.endswith("years of age")


def test_whole_paragraph_quote(page1):
    text = _text_in(page1, highlight_rects(page1, DEFINITION))
    assert text.startswith("Insured Person") and text.endswith("away from home.")


def test_text_not_on_page_is_not_found(page1):
    assert highlight_rects(page1, "Earthquake damage to the buildings is covered only when the schedule says so") == []
    assert highlight_rects(page1, "completely unrelated words about spaceships") == []
    assert highlight_rects(page1, "   \n ") == []


def test_hyphenated_line_break_falls_back_to_words(tmp_path):
    """A word split with a hyphen at a line end defeats search_for; the word match finds it."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "The policy covers accidental damage to insur-", fontsize=10)
    page.insert_text((72, 86), "ance property and twenty-one other things.", fontsize=10)
    quote = "accidental damage to insurance property and twenty-one"
    assert page.search_for(quote) == []
    rects = highlight_rects(page, quote)
    assert len(rects) == 2
    assert _text_in(page, rects) == "accidental damage to insur- ance property and twenty-one"


def test_word_match_tolerates_some_differing_words(page1):
    # Extraction noise: two words misspelt, one ("or") missing.
    quote = "Insured Persn means you, yuor spouse partner, and members of your family who"
    text = _text_in(page1, highlight_rects(page1, quote))
    assert text.startswith("Insured Person means") and text.endswith("family who")


def test_word_match_needs_most_words(page1):
    # Only 3 of 8 words are on the page in order: not a match.
    assert highlight_rects(page1, "Insured Person means aardvarks zebras giraffes lions tigers") == []


# --- render_page -----------------------------------------------------------------------


def _pixmap(png: bytes) -> pymupdf.Pixmap:
    return pymupdf.Pixmap(png)


def _changed_box(a: pymupdf.Pixmap, b: pymupdf.Pixmap) -> tuple[int, int, int, int] | None:
    """Bounding box (x0, y0, x1, y1) of pixels that differ between two same-size renders."""
    assert (a.width, a.height, a.n) == (b.width, b.height, b.n)
    row = a.width * a.n
    sa, sb = a.samples, b.samples
    ys = [y for y in range(a.height) if sa[y * row : (y + 1) * row] != sb[y * row : (y + 1) * row]]
    if not ys:
        return None
    xs = [
        x
        for y in ys
        for x in range(a.width)
        if sa[y * row + x * a.n : y * row + (x + 1) * a.n] != sb[y * row + x * a.n : y * row + (x + 1) * a.n]
    ]
    return min(xs), ys[0], max(xs), ys[-1]


def test_render_is_a_png_sized_by_dpi(policy):
    for dpi in (72, 110):
        pix = _pixmap(render_page(policy, 1, dpi=dpi))
        assert abs(pix.width - pdfs.PAGE_W * dpi / 72) <= 1
        assert abs(pix.height - pdfs.PAGE_H * dpi / 72) <= 1
    assert render_page(policy, 1).startswith(PNG_MAGIC)


def test_highlight_changes_only_the_quote_area(policy, page1):
    dpi = 72  # 1 px per point: pixel and PDF coordinates coincide
    plain = _pixmap(render_page(policy, 1, dpi=dpi))
    marked_png = render_page(policy, 1, DEFINITION_REFLOWED, dpi=dpi)
    assert marked_png.startswith(PNG_MAGIC)
    box = _changed_box(plain, _pixmap(marked_png))
    assert box is not None
    quote_area = pymupdf.Rect()
    for r in highlight_rects(page1, DEFINITION_REFLOWED):
        quote_area |= r
    x0, y0, x1, y1 = box
    # The definition is near the top of page 1; nothing else on the page changed.
    assert y1 < pdfs.PAGE_H / 3
    slack = 4
    assert quote_area.x0 - slack <= x0 and x1 <= quote_area.x1 + slack
    assert quote_area.y0 - slack <= y0 and y1 <= quote_area.y1 + slack
    # Yellow: red and green high, blue low, somewhere in the middle of the quote.
    marked = _pixmap(marked_png)
    centre = pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2)
    hits = [marked.pixel(int(centre.x) + dx, int(centre.y) + dy) for dx in range(-30, 31, 3) for dy in range(-3, 4)]
    assert any(r > 200 and g > 150 and b < 160 for r, g, b in hits)


def test_quote_not_on_page_renders_plain(policy):
    assert render_page(policy, 1, "words that are nowhere in the policy at all") == render_page(policy, 1)


def test_render_is_deterministic(policy):
    assert render_page(policy, 1, DEFINITION) == render_page(policy, 1, DEFINITION)


def test_page_out_of_range(policy):
    with pymupdf.open(policy) as doc:
        pages = doc.page_count
    for bad in (0, -1, pages + 1):
        with pytest.raises(ValueError, match="out of range"):
            render_page(policy, bad)
    assert render_page(policy, pages).startswith(PNG_MAGIC)


def test_source_file_is_never_modified(policy):
    before = hashlib.sha256(policy.read_bytes()).hexdigest()
    mtime = policy.stat().st_mtime_ns
    render_page(policy, 1, DEFINITION)
    render_page(policy, 2, "Earthquake damage to the buildings is covered")
    assert hashlib.sha256(policy.read_bytes()).hexdigest() == before
    assert policy.stat().st_mtime_ns == mtime


def test_cached_render_reuses_results(policy):
    cached_render.cache_clear()
    first = cached_render(str(policy), 1, DEFINITION, 72)
    second = cached_render(str(policy), 1, DEFINITION, 72)
    assert first is second and first == render_page(policy, 1, DEFINITION, 72)
    assert cached_render.cache_info().hits == 1


# --- the reviewer's view: cropped to the quote, printed page numbers ---------------------------


def test_a_view_is_cropped_to_the_quote_and_whole_on_request(policy):
    from policybot.display.page_images import render_view

    cropped = render_view(policy, 1, DEFINITION_REFLOWED, dpi=72)
    whole = render_view(policy, 1, DEFINITION_REFLOWED, dpi=72, crop=False)
    absent = render_view(policy, 1, "words that are nowhere in the policy at all", dpi=72)
    assert cropped.marked and cropped.cropped and whole.marked and not whole.cropped
    assert not absent.marked and not absent.cropped  # nothing to crop to: the whole page
    crop, full = _pixmap(cropped.png), _pixmap(whole.png)
    assert crop.width <= full.width and 200 <= crop.height < full.height / 2
    with pymupdf.open(policy) as doc:
        rects = highlight_rects(doc[0], DEFINITION_REFLOWED)
    assert whole.png == render_page(policy, 1, DEFINITION_REFLOWED, dpi=72)
    assert rects  # the band holds the highlight: the crop has the highlight colour in it
    assert any(crop.pixel(x, y)[:3] != (255, 255, 255) for x in range(0, crop.width, 7) for y in range(crop.height))


def test_the_printed_page_number_where_it_differs_from_the_pdf_page(tmp_path):
    from policybot.display.page_images import printed_page_label

    doc = pymupdf.open()
    for i, footer in enumerate(["", "PAGE 1 OF 3", "Page 3", "- 2 -"], 1):
        page = doc.new_page()
        page.insert_text((72, 100), f"Clause {i}. Some words of the policy.")
        if footer:
            page.insert_text((72, 800), footer)
    path = tmp_path / "footers.pdf"
    doc.save(path)
    assert [printed_page_label(path, n) for n in (1, 2, 3, 4)] == [None, "1", None, "2"]  # page 3 says 3: same
    labelled = tmp_path / "labelled.pdf"
    doc.set_page_labels([{"startpage": 0, "prefix": "C", "style": "D", "firstpagenum": 1}])
    doc.save(labelled)
    assert printed_page_label(labelled, 2) == "C2"


def test_a_page_of_a_passage_over_pages_is_cropped_to_its_part(tmp_path):
    from policybot.display.page_images import render_view

    start = "3.4 Accidental damage We will cover sudden and unforeseen damage to the Buildings caused by"
    end = "any person, provided that the damage was reported to us within thirty days of it happening."
    doc = pymupdf.open()
    first = doc.new_page()
    for i in range(30):
        first.insert_text((72, 72 + 20 * i), f"Earlier clause line {i} about something else entirely.")
    first.insert_text((72, 700), start)
    second = doc.new_page()
    second.insert_text((72, 90), end)
    for i in range(25):
        second.insert_text((72, 140 + 20 * i), f"Later clause line {i} about another matter.")
    path = tmp_path / "over-pages.pdf"
    doc.save(path)
    passage = f"{start} {end}"
    head = render_view(path, 1, None, dpi=72, passage=passage, part="start")
    tail = render_view(path, 2, None, dpi=72, passage=passage, part="end")
    whole = render_view(path, 2, None, dpi=72)
    assert head.cropped and tail.cropped and not whole.cropped and not head.marked
    full = _pixmap(whole.png).height
    assert _pixmap(head.png).height < full / 2 and _pixmap(tail.png).height < full / 2


def test_the_other_quotes_of_a_passage_are_highlighted_on_its_page(policy):
    from policybot.display.page_images import render_view

    only_also = render_view(policy, 1, "words that are nowhere in the policy at all", dpi=72, also=(DEFINITION,))
    assert only_also.marked and only_also.cropped
    both = render_view(policy, 1, DEFINITION, dpi=72, crop=False, also=(DEFINITION_REFLOWED,))
    assert both.marked and both.png != render_page(policy, 1, dpi=72)

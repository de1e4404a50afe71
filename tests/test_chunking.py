"""Chunkers keep pages and sections, never exceed the model window, and keep tables whole."""

import pytest

from policybot.ingestion.chunking import (
    TokenCounter,
    cap_span,
    locate,
    make_chunker,
    segments_of,
    split_table,
    without_bare_headings,
)
from policybot.ingestion.pdf import Line, read_pdf
from policybot.models.embeddings import get_embedder
from policybot.models.profiles import MINILM


@pytest.fixture(scope="module")
def embedder():
    import tempfile
    from pathlib import Path

    from tests.conftest import make_settings

    emb = get_embedder(MINILM, make_settings(Path(tempfile.mkdtemp())))
    emb.warm_up()
    return emb


def _chunks(settings, embedder, pdf, chunker, max_tokens=None, **overrides):
    s = settings.model_copy(update={"chunker": chunker, **overrides})
    doc = read_pdf(pdf)
    header = lambda section: f"{doc.title} — {section}"  # noqa: E731
    return doc, make_chunker(s, embedder, max_tokens or embedder.max_tokens).run(doc, header), header


@pytest.mark.parametrize("chunker", ["semantic", "structure", "recursive"])
def test_chunks_keep_section_and_pages(settings, embedder, policy_pdf, chunker):
    doc, chunks, _ = _chunks(settings, embedder, policy_pdf, chunker)
    insured = next(c for c in chunks if "Insured Person means" in c.text)
    assert insured.section == "Section 1 Definitions > 1.1 Insured Person"
    assert (insured.page_start, insured.page_end) == (1, 1)
    # Clause 2.2 starts at the foot of page 2 and ends on page 3.
    quake = [c for c in chunks if c.section.endswith("2.2 Earthquake damage")]
    assert quake[0].page_start == 2
    assert quake[-1].page_end == 3
    assert any("Richter" in c.text for c in quake)
    cooling = next(c for c in chunks if "fourteen days" in c.text)
    assert (cooling.page_start, cooling.page_end) == (5, 5)
    # Every chunk's text really is on the pages it names.
    import pymupdf

    with pymupdf.open(policy_pdf) as pdf:
        pages = [" ".join(p.get_text().split()) for p in pdf]
    for c in chunks:
        if c.kind == "text":
            first_words = " ".join(c.text.split()[:4])
            assert first_words in pages[c.page_start - 1], (c.page_start, first_words)


@pytest.mark.parametrize("chunker", ["semantic", "structure", "recursive"])
def test_no_chunk_exceeds_the_window(settings, embedder, policy_pdf, chunker):
    _, chunks, header = _chunks(settings, embedder, policy_pdf, chunker, max_tokens=60)
    counts = embedder.count_tokens([f"{header(c.section)}\n{c.text}" for c in chunks if c.kind == "text"])
    assert counts and max(counts) <= 60


def test_table_kept_whole(settings, embedder, policy_pdf):
    _, chunks, _ = _chunks(settings, embedder, policy_pdf, "semantic")
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) == 1
    assert tables[0].text.count("\n") == 4 and "$750" in tables[0].text
    assert tables[0].section == "Section 3 Deductibles" and tables[0].page_start == 3


def test_oversize_table_split_between_rows_with_header(embedder):
    rows = ["| Item | Limit |", "|---|---|"] + [
        f"| item number {i} with a long description | ${i}00 |" for i in range(40)
    ]
    count = TokenCounter(embedder.count_tokens)
    pieces = split_table("\n".join(rows), 80, count)
    assert len(pieces) > 1
    body = []
    for piece in pieces:
        lines = piece.splitlines()
        assert lines[:2] == rows[:2]  # every piece repeats the header
        assert count.one(piece) <= 80
        body.extend(lines[2:])
    assert body == rows[2:]  # no row lost, none cut


def test_cap_splits_at_sentence_boundaries(embedder):
    text = " ".join(f"Sentence number {i} says the cover applies." for i in range(30))
    count = TokenCounter(embedder.count_tokens)
    spans = cap_span(text, 0, len(text), 40, count)
    assert len(spans) > 1
    for s, e in spans:
        piece = text[s:e]
        assert count.one(piece) <= 40
        assert piece.endswith("applies.")
    assert " ".join(text[s:e] for s, e in spans) == text


def test_locate_finds_rejoined_sentences():
    text = "Clause one.\n  It has two\nlines.   Clause two is here."
    spans = locate(text, ["Clause one. It has two lines.", "Clause two is here."])
    assert [text[s:e] for s, e in spans] == ["Clause one.\n  It has two\nlines.", "Clause two is here."]


def test_segments_follow_sections_across_pages():
    lines = [
        Line("A heading", 1, section="A"),
        Line("text on one", 1, section="A"),
        Line("text on two", 2, section="A"),
        Line("|a|b|\n|---|---|\n|1|2|", 2, kind="table", section="A"),
        Line("soft hy\u00ad", 3, section="B", joins_next=True),
        Line("phen", 3, section="B"),
    ]
    segs = segments_of(lines)
    assert [s.section for s in segs] == ["A", "A", "B"]
    assert segs[0].page_at(0) == 1 and segs[0].page_at(segs[0].text.index("two")) == 2
    assert segs[1].kind == "table"
    assert "soft hyphen" in segs[2].text.replace("\u00ad", "")


def test_a_line_read_as_a_heading_stands_between_blank_lines():
    lines = [
        Line("1. Overview", 1, section="1. Overview"),
        Line("You don't usually pay tax on what you inherit.", 1, section="1. Overview"),
        Line("Inheritance Tax", 1, section="1. Overview", heading=True),
        Line("You may have to pay Inheritance Tax on money", 1, section="1. Overview"),
        Line("you inherit.", 1, section="1. Overview"),
    ]
    [segment] = segments_of(lines)
    assert segment.text == (
        "1. Overview\nYou don't usually pay tax on what you inherit.\n\nInheritance Tax\n\n"
        "You may have to pay Inheritance Tax on money\nyou inherit."
    )


def test_a_section_holding_only_its_heading_makes_no_segment_of_its_own():
    """ "Section 8 Claims" over its sub-sections, "Annexure II" over its table, or a heading in the type
    of its siblings ("Section 1 - Cancellation" then "What is covered") held only their own heading: a
    chunk of that says nothing, ranks high on its words and was quoted as a passage. Under it, its
    words are in the path; before a sibling, they lead the sibling's text; a document's last stays."""
    lines = [
        Line("Section 8 Claims", 1, section="Section 8 Claims"),
        Line("8.1 How to claim", 1, section="Section 8 Claims > 8.1 How to claim"),
        Line("Call us on 555-0100.", 1, section="Section 8 Claims > 8.1 How to claim"),
        Line("Annexure II: Packages", 2, section="Annexure II: Packages"),
        Line("|Code|Rate|\n|---|---|\n|OB002|12,000|", 2, kind="table", section="Annexure II: Packages"),
        Line("Section 1 - Cancellation", 2, section="Section 1 - Cancellation"),
        Line("What is covered", 3, section="What is covered"),
        Line("We pay your lost deposits.", 3, section="What is covered"),
        Line("Complaints", 3, section="Complaints"),
    ]
    segments = without_bare_headings(segments_of(lines))
    assert [(s.section, s.kind) for s in segments] == [
        ("Section 8 Claims > 8.1 How to claim", "text"),
        ("Annexure II: Packages", "table"),
        ("What is covered", "text"),
        ("Complaints", "text"),
    ]
    sibling = segments[2]
    assert sibling.text == "Section 1 - Cancellation\n\nWhat is covered\nWe pay your lost deposits."
    assert sibling.page_at(0) == 2 and sibling.page_at(sibling.text.index("We pay")) == 3
    kept = segments_of(lines)  # bare_headings = "keep": as before
    assert any(s.text == "Section 8 Claims" for s in kept)

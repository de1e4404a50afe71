"""Citation markers, quote location and post-generation verification, on PDF-like policy text."""

from __future__ import annotations

import pytest

from policybot.answer.citations import check_markers, extract_quotes, locate_quote, normalize_markers, verify
from policybot.schemas import Citation

# As PyMuPDF extracts them: line breaks mid-sentence, words hyphenated across lines.
PROOF_OF_LOSS = (
    "C. Proof of Loss\n"
    "Within 60 days after the loss, send us a proof of loss, which\n"
    "is your statement of the amount you are claim-\n"
    "ing under the policy signed and sworn to by you, and which\n"
    "furnishes us with the following information:\n"
    "1. The date and time of loss;\n"
    "2. A brief explanation of how the loss happened;"
)
FLOOD_DEFINITION = (
    "A. Flood, as used in this flood insurance policy, means:\n"
    "1. A general and temporary condition of partial or complete inun-\n"
    "dation of two or more acres of normally dry land area or of two or\n"
    "more properties (one of which is your property) from:\n"
    "a. Overflow of inland or tidal waters;"
)
# Typographic text: curly quotes, an em dash, a soft hyphen, a non-breaking space.
DEDUCTIBLE = (
    "SECTION I – CONDITIONS\n"
    "The deductible applies separately to each loss — including loss to the “dwelling” and to "
    "per\u00adsonal property at the ‘insured location’.\u00a0We will not pay more than $1,000 for "
    "flood-\nrelated damage to outbuildings."
)


def citation(n: int, text: str, **extra) -> Citation:
    return Citation(
        n=n,
        chunk_id=f"policy.pdf::{n}",
        doc="policy.pdf",
        section="Conditions",
        page_start=n,
        page_end=n,
        text=text,
        score=1.0 / n,
        **extra,
    )


@pytest.fixture
def sources() -> list[Citation]:
    return [citation(1, PROOF_OF_LOSS), citation(2, FLOOD_DEFINITION), citation(3, DEDUCTIBLE)]


# ---------------------------------------------------------------------------
# normalize_markers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("Covered [1, 2].", "Covered [1][2]."),
        ("Covered [1,2].", "Covered [1][2]."),
        ("Covered [1; 2].", "Covered [1][2]."),
        ("Covered [1][2].", "Covered [1][2]."),
        ("Covered [1] [2].", "Covered [1][2]."),
        ("Covered [1], [2].", "Covered [1][2]."),
        ("Covered [Source 1].", "Covered [1]."),
        ("Covered [source 1].", "Covered [1]."),
        ("Covered [SOURCE 1, Source 2].", "Covered [1][2]."),
        ("Covered [Sources 1 and 3].", "Covered [1][3]."),
        ("Covered [S1].", "Covered [1]."),
        ("Covered [S1, S2].", "Covered [1][2]."),
        ("Covered [1-3].", "Covered [1][2][3]."),
        ("Covered [1–3].", "Covered [1][2][3]."),
        ("Covered [S1-S3].", "Covered [1][2][3]."),
        ("Covered [1, 3-4].", "Covered [1][3][4]."),
        ("Covered [ 2 ].", "Covered [2]."),
        ("Covered [^1].", "Covered [1]."),
        ("Covered [1][1].", "Covered [1]."),
        ("Covered [1, 1, 2].", "Covered [1][2]."),
        ("Covered[2].", "Covered[2]."),
        ("[Source 1] Claims must be filed.", "[1] Claims must be filed."),
    ],
)
def test_normalize_markers_variants(answer, expected):
    assert normalize_markers(answer) == expected


@pytest.mark.parametrize(
    "answer",
    [
        "Under clause 4(1)(a) the insurer pays.",
        "See item (1) and item (b).",
        "Section [A] applies.",
        "[Coverage A] pays for the dwelling.",
        "Table [2.3] lists limits.",
        "Form [1a] is attached.",
        "No markers at all.",
        "",
    ],
)
def test_normalize_markers_leaves_non_markers_alone(answer):
    assert normalize_markers(answer) == answer


def test_normalize_markers_is_idempotent():
    once = normalize_markers("Flood [Source 1, 2] and fire [S3] [3] and wind [1-2].")
    assert once == "Flood [1][2] and fire [3] and wind [1][2]."
    assert normalize_markers(once) == once


def test_normalize_markers_absurd_range_keeps_endpoints():
    assert normalize_markers("Covered [1-100].") == "Covered [1][100]."


# ---------------------------------------------------------------------------
# check_markers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, n, expected, cited, removed",
    [
        ("Flood is covered [7].", 3, "Flood is covered.", [], 1),
        ("Flood is covered [1][7].", 3, "Flood is covered [1].", [1], 1),
        ("Flood is covered [7][1].", 3, "Flood is covered [1].", [1], 1),
        ("Flood is covered [7] [8], but not mold [2].", 3, "Flood is covered, but not mold [2].", [2], 2),
        ("Covered [0] and excluded [3] here [2]", 2, "Covered and excluded here [2]", [2], 2),
        ("Flood is covered[5] and mold is not.", 2, "Flood is covered and mold is not.", [], 1),
        ("[9] Claims must be filed [1].", 2, "Claims must be filed [1].", [1], 1),
        ("- Flood [4]\n- Fire [1]", 1, "- Flood\n- Fire [1]", [1], 1),
        ("Line one [4]\n  [4] indented", 3, "Line one\n  indented", [], 2),
        ("Section [A] applies [1].", 1, "Section [A] applies [1].", [1], 0),
        ("Covered [2][2] and [1].", 2, "Covered [2][2] and [1].", [1, 2], 0),
        ("No citations.", 2, "No citations.", [], 0),
        ("", 3, "", [], 0),
    ],
)
def test_check_markers(answer, n, expected, cited, removed):
    assert check_markers(answer, n) == (expected, cited, removed)


def test_check_markers_with_no_sources_removes_everything():
    text, cited, removed = check_markers("Covered [1][2].", 0)
    assert (text, cited, removed) == ("Covered.", [], 2)


# ---------------------------------------------------------------------------
# locate_quote
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "quote, text, expected_slice",
    [
        # whitespace runs: the quote crosses a PDF line break
        (
            "send us a proof of loss, which is your statement",
            PROOF_OF_LOSS,
            "send us a proof of loss, which\nis your statement",
        ),
        # a word hyphenated across the line break
        (
            "the amount you are claiming under the policy",
            PROOF_OF_LOSS,
            "the amount you are claim-\ning under the policy",
        ),
        ("complete inundation of two or more acres", FLOOD_DEFINITION, "complete inun-\ndation of two or more acres"),
        # case-insensitive, trailing punctuation of the quote ignored ("loss," in the source)
        ("WITHIN 60 DAYS AFTER THE LOSS.", PROOF_OF_LOSS, "Within 60 days after the loss"),
        ('"Within 60 days after the loss"', PROOF_OF_LOSS, "Within 60 days after the loss"),
        # straight quote in the model's quote, curly in the source; and the reverse
        ("the 'insured location'", DEDUCTIBLE, "the ‘insured location’"),
        ('loss to the "dwelling"', DEDUCTIBLE, "loss to the “dwelling”"),
        ('"dwelling" and to personal property', DEDUCTIBLE, "“dwelling” and to per\u00adsonal property"),
        # dash variants
        ("each loss - including loss", DEDUCTIBLE, "each loss — including loss"),
        ("SECTION I — CONDITIONS", DEDUCTIBLE, "SECTION I – CONDITIONS"),
        # soft hyphen inside a word, non-breaking space between sentences
        ("to personal property", DEDUCTIBLE, "to per\u00adsonal property"),
        ("location’. We will not pay", DEDUCTIBLE, "location’.\u00a0We will not pay"),
        # a real compound hyphen that fell at a line break
        ("$1,000 for flood-related damage", DEDUCTIBLE, "$1,000 for flood-\nrelated damage"),
        ("flood related damage", DEDUCTIBLE, None),
        # short quotes are still located
        ("Flood", FLOOD_DEFINITION, "Flood"),
    ],
)
def test_locate_quote_returns_span_of_original_text(quote, text, expected_slice):
    span = locate_quote(quote, text)
    if expected_slice is None:
        assert span is None
    else:
        assert span is not None
        assert text[span[0] : span[1]] == expected_slice


@pytest.mark.parametrize(
    "quote",
    [
        "Within 60 days ... proof of loss",
        "Within 60 days … proof of loss",
        "Within 60 days [...] proof of loss",
        "Within 60 days. . . proof of loss",
        "...Within 60 days ... proof of loss...",
    ],
)
def test_locate_quote_with_ellipsis_spans_first_to_last_part(quote):
    span = locate_quote(quote, PROOF_OF_LOSS)
    assert span is not None
    assert PROOF_OF_LOSS[span[0] : span[1]] == "Within 60 days after the loss, send us a proof of loss"


def test_locate_quote_ellipsis_parts_must_be_in_order():
    assert locate_quote("sworn to by you ... Within 60 days", PROOF_OF_LOSS) is None
    assert locate_quote("Within 60 days ... sworn statement of damages", PROOF_OF_LOSS) is None


@pytest.mark.parametrize(
    "quote, text",
    [
        ("within 30 days after the loss", PROOF_OF_LOSS),
        ("cover flood", "We discover flooding in the basement."),  # whole words only
        ("", PROOF_OF_LOSS),
        ("...", PROOF_OF_LOSS),
        ("send us a proof", ""),
    ],
)
def test_locate_quote_not_found(quote, text):
    assert locate_quote(quote, text) is None


# ---------------------------------------------------------------------------
# extract_quotes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, expected",
    [
        ('You must "send us a proof of loss" within 60 days [1].', [("send us a proof of loss", [1])]),
        ("You must “send us a proof of loss” within 60 days [1].", [("send us a proof of loss", [1])]),
        ('You must "send us a proof of loss." [1] Then wait [2].', [("send us a proof of loss.", [1])]),
        (
            'Flood means "a general and temporary condition" [2], and you must "send us a proof of loss" [1].',
            [("a general and temporary condition", [2]), ("send us a proof of loss", [1])],
        ),
        # no marker after the quote: the sentence's markers, wherever they are
        ('[3] The policy defines "flood" broadly.', [("flood", [3])]),
        ('Per [2], "flood" is defined; see "two or more acres".', [("flood", [2]), ("two or more acres", [2])]),
        # markers of another sentence do not count
        (
            'Flood is "a general and temporary condition". Claims are due [2].',
            [("a general and temporary condition", [])],
        ),
        # single quotes: only around more than three words
        ("Send ‘a proof of loss within 60 days’ [1].", [("a proof of loss within 60 days", [1])]),
        ("Send 'a proof of loss within 60 days' [1].", [("a proof of loss within 60 days", [1])]),
        ("The ‘insured location’ is covered [3].", []),
        # apostrophes are not quotes
        ("The insurer's duty and the policyholders' rights [1].", []),
        ("The insurer’s duty and the policyholders’ rights [1].", []),
        # a quote across a line break, and its sentence end inside the quote
        ('You must "send us a\nproof of loss. Sign it." [1]', [("send us a proof of loss. Sign it.", [1])]),
        # marker variants are normalised first
        ('"send us a proof of loss" [Source 1, 2]', [("send us a proof of loss", [1, 2])]),
        # "e.g." and list numbers end no sentence
        ('"Two or more acres" must flood, e.g. by overflow [2].', [("Two or more acres", [2])]),
        ('1. "Within 60 days after the loss" [1]', [("Within 60 days after the loss", [1])]),
        # an unmatched quote mark does not swallow the next paragraph
        ('He said "flood is covered.\n\nYou must "send us a proof of loss" [1].', [("send us a proof of loss", [1])]),
        ("", []),
        ("No quotes here [1].", []),
    ],
)
def test_extract_quotes(answer, expected):
    assert extract_quotes(answer) == expected


def test_extract_quotes_survives_unbalanced_quote_marks_quickly():
    # Thousands of unmatched openers: bounded scans, no quadratic blow-up or exception.
    assert extract_quotes("'a " * 3000) == []
    assert verify(". " * 5000 + '"a', [citation(1, PROOF_OF_LOSS)])[2] == 0


def test_extract_quotes_from_markdown_list():
    answer = (
        "**Deadlines**\n"
        '1. **Proof of loss:** "Within 60 days after the loss" [1]\n'
        "2. **Flood:** “two or more acres of normally dry land” [2]\n"
        "- e.g. flood from 'overflow of inland or tidal waters' [2]"
    )
    assert extract_quotes(answer) == [
        ("Within 60 days after the loss", [1]),
        ("two or more acres of normally dry land", [2]),
        ("overflow of inland or tidal waters", [2]),
    ]


def test_extract_quotes_strips_markers_and_emphasis_inside_the_quote():
    assert extract_quotes('You must "**send us** a proof of loss [1]" soon.') == [("send us a proof of loss", [1])]


# ---------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------


def by_n(citations: list[Citation]) -> dict[int, Citation]:
    return {c.n: c for c in citations}


def assert_span(c: Citation) -> None:
    """A verified citation's quote is exactly its span of the source text."""
    assert c.verified
    assert c.quote_start is not None and c.quote_end is not None
    assert c.text[c.quote_start : c.quote_end] == c.quote


def test_verify_removes_and_counts_invalid_markers(sources):
    answer = "Send a proof of loss within 60 days [1][5]. Earth movement is excluded [9]. Flood is covered [2, 7]."
    text, out, removed = verify(answer, sources)
    assert text == "Send a proof of loss within 60 days [1]. Earth movement is excluded. Flood is covered [2]."
    assert removed == 3
    assert [c.cited for c in out] == [True, True, False]


def test_verify_quote_across_line_breaks_and_curly_quotes(sources):
    answer = "You must “send us a proof of loss, which is your statement of the amount you are claiming” [1]."
    _, out, _ = verify(answer, sources)
    c = by_n(out)[1]
    assert c.cited
    assert_span(c)
    assert c.quote == "send us a proof of loss, which\nis your statement of the amount you are claim-\ning"


def test_verify_quote_not_in_source_is_unverified(sources):
    # The sentence shares "send us a proof of loss" with the source, but a made-up quote
    # must not be rescued by the sentence fallback.
    answer = 'You must "send us a proof of loss within 30 days of the flood" [1].'
    _, out, _ = verify(answer, sources)
    c = by_n(out)[1]
    assert c.cited and not c.verified
    assert c.quote is None and c.quote_start is None and c.quote_end is None


def test_verify_quote_with_ellipsis(sources):
    answer = 'The policy says "Within 60 days … send us a proof of loss" [1].'
    _, out, _ = verify(answer, sources)
    c = by_n(out)[1]
    assert_span(c)
    assert c.quote == "Within 60 days after the loss, send us a proof of loss"


def test_verify_misattributed_quote_found_in_other_source_of_sentence(sources):
    answer = (
        "As the policy explains [2], flood means "
        '"a general and temporary condition of partial or complete inundation" [1].'
    )
    _, out, _ = verify(answer, sources)
    c = by_n(out)
    assert c[1].cited and not c[1].verified
    assert c[2].cited
    assert_span(c[2])
    assert c[2].quote == "A general and temporary condition of partial or complete inun-\ndation"


def test_verify_never_moves_quote_to_uncited_source(sources):
    answer = 'Flood means "a general and temporary condition of partial or complete inundation" [1].'
    _, out, _ = verify(answer, sources)
    c = by_n(out)
    assert c[1].cited and not c[1].verified
    assert not c[2].cited and not c[2].verified and c[2].quote is None


def test_verify_quote_in_both_cited_sources(sources):
    overlap = citation(2, "overlapping chunk: Within 60 days after the loss, send us a proof of loss.")
    _, out, _ = verify('"Within 60 days after the loss" [1][2].', [sources[0], overlap])
    assert all(c.verified for c in out)
    for c in out:
        assert_span(c)


def test_verify_sentence_fallback(sources):
    answer = "You have 60 days: within 60 days after the loss you must send us a proof of loss [1]."
    _, out, _ = verify(answer, sources)
    c = by_n(out)[1]
    assert_span(c)
    # "within 60 days after the loss" (6 words) beats "send us a proof of loss" (6 words) by coming first;
    # the comma in the source is no obstacle at word level.
    assert c.quote == "Within 60 days after the loss"


def test_verify_sentence_fallback_prefers_longest_run(sources):
    answer = (
        "A claim needs paperwork: within 60 days after the loss, send us a proof of loss [1].\n"
        "It covers two or more acres of normally dry land [2]."
    )
    _, out, _ = verify(answer, sources)
    c = by_n(out)
    assert c[1].quote == "Within 60 days after the loss, send us a proof of loss"
    assert c[2].quote == "two or more acres of normally dry land"


def test_verify_sentence_fallback_needs_six_words(sources):
    _, out, _ = verify("A proof of loss is required [1].", sources)
    c = by_n(out)[1]
    assert c.cited and not c.verified and c.quote is None


def test_verify_short_quote_alone_does_not_verify(sources):
    # "flood" is in the source, but a one-word quote is a term, not evidence.
    _, out, _ = verify('The policy covers "flood" [2].', sources)
    c = by_n(out)[2]
    assert c.cited and not c.verified


def test_verify_paraphrase_without_overlap_is_unverified(sources):
    _, out, _ = verify("Earthquakes are never covered by this policy [3].", sources)
    c = by_n(out)[3]
    assert c.cited and not c.verified


def test_verify_empty_answer(sources):
    text, out, removed = verify("", sources)
    assert (text, removed) == ("", 0)
    assert all(not c.cited and not c.verified and c.quote is None for c in out)


def test_verify_with_no_sources():
    assert verify("Flood is covered [1].", []) == ("Flood is covered.", [], 1)


def test_verify_does_not_mutate_inputs(sources):
    stale_state = dict(cited=True, verified=True, quote="stale", quote_start=0, quote_end=5)
    stale = [s.model_copy(update=stale_state) for s in sources]
    before = [s.model_dump() for s in stale]
    _, out, _ = verify('You must "send us a proof of loss" [1].', stale)
    assert [s.model_dump() for s in stale] == before
    assert all(o is not s for o, s in zip(out, stale))
    # Stale verification state on the inputs is recomputed, not carried over.
    c = by_n(out)
    assert c[1].quote == "send us a proof of loss"
    assert not c[2].cited and not c[2].verified and c[2].quote is None
    assert not c[3].cited and c[3].quote_start is None


def test_verify_messy_llm_output(sources):
    answer = (
        "**Short answer:** yes, with conditions.\n\n"
        "1. **Deadline** - you must act “within 60 days after the loss”[Source 1].\n"
        "2. **What counts as flood**: a 'general and temporary condition of partial or complete\n"
        "inundation' of two or more acres [S2] [2][2].\n"
        "[1, 3] The deductible applies separately to each loss including loss to the dwelling.\n"
        "3. Mold is covered[4]."
    )
    text, out, removed = verify(answer, sources)
    assert removed == 1
    assert "[4]" not in text and "Mold is covered." in text
    assert "loss”[1]." in text and "acres [2]." in text and "\n[1][3] The deductible" in text
    c = by_n(out)
    assert all(x.cited for x in out)
    assert_span(c[1])
    assert c[1].quote == "within 60 days after the loss".capitalize()
    assert_span(c[2])
    assert c[2].quote == "general and temporary condition of partial or complete inun-\ndation"
    assert_span(c[3])  # sentence fallback across the em dash and curly quotes of the source
    assert c[3].quote.startswith("The deductible applies separately to each loss — including loss to the “dwelling")


def test_verify_keeps_citation_metadata(sources):
    _, out, _ = verify("Covered [2].", sources)
    for o, s in zip(out, sources):
        assert (o.n, o.chunk_id, o.doc, o.section, o.page_start, o.page_end, o.text, o.score) == (
            s.n,
            s.chunk_id,
            s.doc,
            s.section,
            s.page_start,
            s.page_end,
            s.text,
            s.score,
        )

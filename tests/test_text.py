"""The shared text helpers: the normaliser, the sentence splitters and the aligners."""

from __future__ import annotations

from policybot.core.text import (
    CLAUSE_BREAK,
    SENTENCE_BREAK,
    alnum,
    collapse_whitespace,
    fold,
    local_alignment,
    longest_common_run,
    prose_sentences,
    split_spans,
    words,
)


def test_fold_normalises_pdf_text_and_maps_back():
    text = "The “Insured” must re-\nport it — within\t 60 days\u00ad."
    norm, index = fold(text)
    assert norm == 'the "insured" must report it - within 60 days.'
    at = norm.index("report")
    assert text[index[at] : index[at + len("report") - 1] + 1] == "re-\nport"


def test_alnum_and_words():
    assert alnum("Section 4.2 — Escape of Water!") == "section42escapeofwater"
    assert alnum("ﬁre café") == "firecafé"  # ligatures unfolded, letters kept
    assert [w for w, _, _ in words("Flood-related loss, sub-\nsidence.")] == ["floodrelated", "loss", "subsidence"]


def test_collapse_whitespace_keeps_case_and_positions():
    collapsed, index = collapse_whitespace("  A  b\n\nC ")
    assert collapsed == "A b C "
    assert index == [2, 3, 5, 6, 8, 9]


def test_split_spans_at_sentences_and_clauses():
    text = "First one. Second: part; third.\n(a) an item"
    assert [text[s:e] for s, e in split_spans(text, SENTENCE_BREAK)] == [
        "First one.",
        "Second: part; third.",
        "(a) an item",
    ]
    assert [text[s:e] for s, e in split_spans(text, CLAUSE_BREAK)] == [
        "First one.",
        "Second:",
        "part;",
        "third.",
        "(a) an item",
    ]


def test_prose_sentences_know_abbreviations_markers_and_quotes():
    text = 'Cover applies, e.g. for floods [1]. It says "pay within 60 days. Then close." [2]\n1. A list item'
    quote = (text.index('"'), text.rindex('"') + 1)
    spans = [text[s:e] for s, e in prose_sentences(text, [quote])]
    assert spans == [
        "Cover applies, e.g. for floods [1].",
        ' It says "pay within 60 days. Then close." [2]',
        "1. A list item",
    ]


def test_longest_common_run_is_the_earliest_longest():
    run = longest_common_run(["a", "b", "c", "x", "b", "c"], ["b", "c", "z", "a", "b", "c"])
    assert (run.a_start, run.b_start, run.b_end, run.matched) == (0, 3, 6, 3)
    assert longest_common_run(["q"], ["r"]).matched == 0


def test_local_alignment_tolerates_small_differences():
    quote = "the insurer will pay the claim within sixty days".split()
    page = "header text the insurer shall pay the claim within 60 days of proof footer".split()
    found = local_alignment(quote, page)
    # "shall" for "will" and "60" for "sixty" cost less than the words matched around them.
    assert (
        found is not None
        and page[found.b_start : found.b_end] == "the insurer shall pay the claim within 60 days".split()
    )
    assert found.matched == 7
    assert local_alignment(["nothing"], page) is None


def test_quantities_in_words_with_their_digits_in_brackets():
    from policybot.core.text import QUANTITIES, quantity_spans

    text = "an initial term of five (5) years; notice of thirty (30) days; twenty-one days; 25 years old"
    periods = [m.group() for m in QUANTITIES["period"].finditer(text)]
    assert periods == ["five (5) years", "thirty (30) days", "twenty-one days"]
    assert [m.group() for m in QUANTITIES["age"].finditer(text)] == ["25 years old"]
    assert len(quantity_spans(text)) == 4


def test_a_person_said_to_be_a_number_is_an_age():
    from policybot.core.text import QUANTITIES

    def ages(text: str) -> list[str]:
        return [m.group() for m in QUANTITIES["age"].finditer(text)]

    assert ages("my father is 72 and we dont have a ration card") == ["father is 72"]
    assert ages("My daughter is 17, can she get help?") == ["daughter is 17"]
    assert ages("im 70") == ["im 70"]
    # A number with a unit, or not said of a person, is no age.
    assert ages("he is 30 days late; the excess is 50; we are 2 people; she is 5 feet tall") == []

"""Section and clause detection: heading patterns, levels, outline matching."""

from dataclasses import dataclass

import pytest

from policybot.ingestion.sections import (
    clause_title,
    clause_titles,
    detect_sections,
    from_outline,
    from_patterns,
    heading_kind,
    run_in_heading,
)


@dataclass
class L:
    text: str
    page: int = 1
    bold: bool = True
    size: float = 10.0


@pytest.mark.parametrize(
    "text, kind",
    [
        ("Section 4", "section"),
        ("Section 4 General Exclusions", "section"),
        ("Clause 5", "clause"),
        ("§3.2 Notice", "para2"),
        ("Article 12", "article"),
        ("III. PROPERTY INSURED", "roman"),
        ("A. Definitions", "letter"),
        ("4.2.1 Escape of water", "dotted3"),
        ("5.2 Escape of water deductible", "dotted2"),
        ("1. Debris Removal", "number"),
    ],
)
def test_heading_patterns_common_in_policies(text, kind):
    assert heading_kind(text)[0] == kind


@pytest.mark.parametrize(
    "text",
    [
        "We will pay for direct physical loss by or from flood to your insured property, provided that you",
        "a claim must be made within sixty days;",
        "ARTICLE XI MISCELLANEOUS.......................................... 29",  # a contents entry
        "Section 4. Exclusions . . . . . . . . 12",
        "",
        "The deductible applies,",
    ],
)
def test_sentences_are_not_headings(text):
    assert heading_kind(text) is None


def test_levels_follow_first_appearance_and_build_paths():
    lines = [
        L("Section 1 Definitions"),
        L("1.1 Insured Person"),
        L("Insured Person means you.", bold=False),
        L("1.2 Home"),
        L("Home means the private dwelling.", bold=False),
        L("Section 2 Cover"),
        L("2.1 Fire"),
        L("We cover fire.", bold=False),
    ]
    result = from_patterns(lines)
    assert result.source == "patterns"
    assert result.headings == 5
    assert result.paths[2] == "Section 1 Definitions > 1.1 Insured Person"
    assert result.paths[4] == "Section 1 Definitions > 1.2 Home"
    assert result.paths[7] == "Section 2 Cover > 2.1 Fire"


def test_unstyled_numbered_lines_are_list_items_not_headings():
    lines = [L("Section 1 Claims"), L("1. Tell us within 30 days.", bold=False), L("2. Send receipts.", bold=False)]
    result = from_patterns(lines)
    assert result.headings == 1
    assert set(result.paths) == {"Section 1 Claims"}


def test_all_caps_heading_needs_no_bold():
    lines = [L("III. PROPERTY INSURED", bold=False), L("We insure your dwelling.", bold=False)]
    assert from_patterns(lines).paths[1] == "III. PROPERTY INSURED"


def test_bare_article_number_takes_title_from_next_heading_line():
    lines = [L("Article 12"), L("Definitions"), L("In this policy words mean...", bold=False)]
    assert from_patterns(lines).paths[2] == "Article 12 Definitions"


def test_outline_single_root_is_the_title_not_a_section():
    lines = [
        L("Standard Flood Insurance Policy", page=1),
        L("I. Agreement", page=1),
        L("We agree to pay.", page=1, bold=False),
        L("More of the agreement.", page=2, bold=False),
        L("II. Definitions", page=2),
        L("A. Flood", page=2),
        L("Flood means...", page=2, bold=False),
    ]
    toc = [
        [1, "Standard Flood Insurance Policy", 1],
        [2, "I. Agreement", 1],
        [2, "II. Definitions", 2],
        [3, "A. Flood", 2],
    ]
    result = from_outline(lines, toc)
    assert result.outline_title == "Standard Flood Insurance Policy"
    assert result.paths[3] == "I. Agreement"  # continues across the page break
    assert result.paths[4] == "II. Definitions"  # starts at its heading line, not the page top
    assert result.paths[6] == "II. Definitions > A. Flood"


def test_outline_entry_not_found_on_its_page_starts_at_the_page():
    lines = [L("intro", page=1, bold=False), L("body text", page=2, bold=False), L("more", page=2, bold=False)]
    result = from_outline(lines, [[1, "Part One", 1], [1, "Part Two (renamed)", 2]])
    assert result.paths == ["Part One", "Part Two (renamed)", "Part Two (renamed)"]


def test_detect_prefers_outline_then_patterns():
    lines = [L("Section 1 Cover"), L("text", bold=False)]
    assert detect_sections(lines, []).source == "patterns"
    assert detect_sections(lines, [[1, "Section 1 Cover", 1], [1, "Other", 1]]).source == "outline"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2. Term. Unless earlier terminated in accordance with the provisions hereof, the", ("number", "2. Term")),
        ("3. Grant of Endorsement.", ("number", "3. Grant of Endorsement")),
        (
            "18) Maternity (Code-Excl18): Medical treatment expenses traceable to",
            ("number", "18) Maternity (Code-Excl18)"),
        ),
        ("4.    CLOTHING IDENTIFICATION. Consolidated Artists agrees to", ("number", "4. CLOTHING IDENTIFICATION")),
        (
            "19.4. Early Termination for Material Breach. If a party",
            ("dotted2", "19.4. Early Termination for Material Breach"),
        ),
        ("1. We will pay for the damage. Then", None),
        ("5. The Insured must notify us within 24 hours.", None),
        ("2. Mr. Smith shall sign", None),
        ("10 above, TPC agrees to pay", None),
        ("1.2 “Affiliate” means any entity.", None),
    ],
)
def test_run_in_headings_are_numbered_title_case_titles_before_their_clause(text, expected):
    assert run_in_heading(text) == expected


def test_run_in_headings_in_body_type_make_sections_only_when_the_document_numbers_several():
    clauses = [
        L("ENDORSEMENT AGREEMENT", bold=True, size=12),
        L("1. Definitions. In this agreement the following words have these meanings.", bold=False),
        L("the rest of the definitions, which run over a line.", bold=False),
        L("2. Term. Unless earlier terminated, the term of this agreement is three years.", bold=False),
        L("2.1 Renewal. The term renews for one year unless either party gives notice.", bold=False),
        L("2.2 Notice of Non-Renewal: Notice is given in writing ninety days before the term ends.", bold=False),
        L("3. Grant of Endorsement. The athlete grants the company the right to use his name.", bold=False),
        L("3.1 Use. The company may use the name in advertising.", bold=False),
    ]
    paths = from_patterns(clauses).paths
    assert paths[2] == "1. Definitions"
    assert paths[4] == "2. Term > 2.1 Renewal"
    assert paths[5] == "2. Term > 2.2 Notice of Non-Renewal"
    assert paths[6] == "3. Grant of Endorsement"
    assert paths[7] == "3. Grant of Endorsement > 3.1 Use"
    assert detect_sections(clauses, [], run_in=True).paths == paths
    assert set(detect_sections(clauses, []).paths) == {""}  # off by default (run_in_headings)
    lone = [L("A letter", bold=True, size=12), L("1. Payment. We pay within 30 days of the invoice.", bold=False)]
    assert from_patterns(lone).paths[1] == ""  # one numbered sentence is not a numbering


def test_clause_titles_stand_alone_numbers_and_section_keywords():
    assert clause_title("12.2", "Assignment. Except as otherwise provided") == ("dotted2", "12.2 Assignment")
    assert clause_title("Section 11.5. Parties in Interest.") == ("dotted2", "Section 11.5. Parties in Interest")
    assert clause_title("12.2", "the Parties agree that") is None  # a number before a sentence
    assert clause_title("3", "") is None
    assert clause_title("Section 11.5. Parties in Interest.................. 29") is None  # the contents


def test_clause_titles_count_only_where_the_text_numbers_several():
    lines = [
        "12.1",
        "Agency. Neither Party is an agent of the other.",
        "12.2",
        "Assignment. Neither Party may assign this Agreement.",
        "12.3 Notices. All notices are in writing.",
        "7.1 Term. The term is three years.",  # one title at its own depth still counts with its kind
    ]
    titles = clause_titles(lines)
    assert titles[:5] == ["12.1 Agency", None, "12.2 Assignment", None, "12.3 Notices"]
    assert titles[5] == "7.1 Term"
    assert clause_titles(["1. Payment. We pay within 30 days.", "Other text."]) == [None, None]

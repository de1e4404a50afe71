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
        ("Section A: Loss of or damage to your car", "section"),  # a section designated by a letter
        ("Part B", "part"),
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
        "section a of the Act applies",  # a lowercase letter is a sentence's word, not a designator
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


def test_a_number_alone_on_its_line_heads_the_title_set_under_it_where_the_document_numbers_several():
    # A supply agreement's layout: each number at one tab stop, its title in capitals at the next, so
    # PyMuPDF reads them as two lines ("12." / "TERM AND TERMINATION AND TRANSITION").
    body = [L("This Agreement shall remain in force for three years unless terminated.", bold=False)]
    contract = [
        L("1.", bold=False),
        L("DEFINITIONS", bold=False),
        *body,
        L("2.", bold=False),
        L("GENERAL, SCOPE", bold=False),
        *body,
        L("12.", bold=False),
        L("TERM AND TERMINATION AND TRANSITION", bold=False),
        L("12.1", bold=False),
        L("This Agreement shall come into force on the Effective Date.", bold=False),
    ]
    paths = detect_sections(contract, []).paths
    assert paths[2] == "1. DEFINITIONS"
    assert paths[5] == "2. GENERAL, SCOPE"
    assert paths[9] == "12. TERM AND TERMINATION AND TRANSITION"
    # One such pair is not a numbering; a title in body type, a sentence, or a second number is no title.
    assert set(detect_sections(contract[:3], []).paths) == {""}
    plain = [L(f"{n}.", bold=False) for n in (1, 2, 3)]
    for title in ("Definitions of the words used", "The Supplier shall deliver the goods.", "3."):
        lines = [line for number in plain for line in (number, L(title, bold=False), *body)]
        assert set(detect_sections(lines, []).paths) == {""}, title


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


# --- unnumbered headings ("Making a claim", "General conditions") ----------------------------------


@dataclass
class B:
    """A line with its type and its text block, as PyMuPDF reads them."""

    text: str
    size: float = 10.0
    bold: bool = False
    block: int = -1
    page: int = 1


def _travel_wording() -> list[B]:
    """A travel wording's shape: numbered sections and, in the same type, unnumbered ones; the
    claims condition under "Making a claim" must not be filed under "Section 6"."""
    head = dict(size=13.0, bold=True)
    return [
        B("TRAVEL INSURANCE POLICY WORDING", **head, block=0),
        B("Definitions", **head, block=1),
        B("Valuables means jewellery, watches and mobile phones.", block=2),
        B("Section 1 - Personal belongings", **head, block=3),
        B("We will not pay for theft unless reported to the local police within 24 hours.", block=4),
        B("Section 2 - Personal liability", **head, block=5),
        B("You must not admit liability without our written consent.", block=6),
        B("General conditions", **head, block=7),
        B("Cover ends on the date you change your country of residence.", block=8),
        B("Making a claim", **head, block=9),
        B("Tell us within 31 days of your return home.", block=10),
        B("Complaints", **head, block=11),
        B("Write to our Customer Relations Manager.", block=12),
        B("EXHIBIT A", **head, block=13),
        B("CLAIM FORM", **head, block=14),
        B("Your name:", block=15),
    ]


def test_unnumbered_headings_in_the_type_of_numbered_ones_start_sections():
    lines = _travel_wording()
    paths = from_patterns(lines, run_in_headings=False, plain_headings=True).paths
    assert paths[2] == "" and paths[4] == "Section 1 - Personal belongings"  # before the first: the cover
    assert paths[8] == "General conditions" and paths[10] == "Making a claim" and paths[12] == "Complaints"
    assert paths[15] == "EXHIBIT A CLAIM FORM"  # a designation and its title, set on two lines
    assert from_patterns(lines, run_in_headings=False).paths[10] == "Section 2 - Personal liability"  # switched off
    assert detect_sections(lines, [], plain=True).paths == paths


def test_smaller_sub_headings_and_cover_lines_cut_no_numbered_section():
    """gov.uk's sub-headings sit inside their numbered chapter; a contract's cover lines ("Between")
    in a larger type than its articles rank above nothing."""
    lines = [
        B("Between", size=16.0, bold=True, block=0),
        B("ACME LIMITED", size=16.0, bold=True, block=1),
        B("And", size=16.0, bold=True, block=2),
        B("1. Overview", size=14.0, bold=True, block=3),
        B("You must pay your employees through payroll.", block=4),
        B("Late reporting", size=12.0, bold=True, block=5),
        B("HMRC may charge you a penalty.", block=6),
        B("Statutory pay", size=12.0, bold=True, block=7),
        B("You may have to pay statutory sick pay.", block=8),
        B("Expenses", size=12.0, bold=True, block=9),
        B("2. Deductions", size=14.0, bold=True, block=10),
        B("You must deduct tax.", block=11),
    ]
    paths = from_patterns(lines, run_in_headings=False, plain_headings=True).paths
    assert paths == from_patterns(lines, run_in_headings=False).paths
    assert paths[6] == "1. Overview" and paths[11] == "2. Deductions" and paths[0] == ""


def test_unnumbered_headings_before_the_first_numbered_one_count_once_the_body_has_begun():
    """A travel wording's "DEFINITIONS" and "IMPORTANT INFORMATION" after its opening paragraph start
    sections (the glossary reads its terms there); a contract's cover lines above its first sentence,
    and a redaction note set above its title, start none."""
    wording = [
        B("SunWay Travel Insurance", size=18.0, bold=True, block=0),
        B("This policy wording and your schedule form your contract with us, so keep them safe.", block=1),
        B("IMPORTANT INFORMATION", size=13.0, bold=True, block=2),
        B("Annual cover is only available to travellers aged 74 or under.", block=3),
        B("DEFINITIONS", size=13.0, bold=True, block=4),
        B("Baggage — luggage, clothing and personal belongings.", block=5),
        B("SECTION 1 – CANCELLATION", size=13.0, bold=True, block=6),
        B("We will pay your share of travel costs you cannot get back.", block=7),
        B("MAKING A CLAIM", size=13.0, bold=True, block=8),
        B("You must tell us within 31 days of your return home.", block=9),
    ]
    paths = from_patterns(wording, run_in_headings=False, plain_headings=True).paths
    assert paths[:2] == ["", ""]  # the title and the opening paragraph: no section yet
    assert paths[3] == "IMPORTANT INFORMATION" and paths[5] == "DEFINITIONS"
    assert paths[7] == "SECTION 1 – CANCELLATION" and paths[9] == "MAKING A CLAIM"

    contract = [
        B("Certain identified information has been excluded from this exhibit because it is not material.", block=0),
        B("DEVELOPMENT AGREEMENT", size=12.0, bold=True, block=1),
        B("Between", size=12.0, bold=True, block=2),
        B("ACME LIMITED", size=12.0, bold=True, block=3),
        B("ARTICLE 1 DEFINITIONS", size=12.0, bold=True, block=4),
        B("Affiliate means any entity that controls a party.", block=5),
    ]
    paths = from_patterns(contract, run_in_headings=False, plain_headings=True).paths
    assert paths[:4] == ["", "", "", ""] and paths[5] == "ARTICLE 1 DEFINITIONS"


def test_without_numbering_the_larger_type_ranks_higher_and_a_lone_title_is_no_section():
    lines = [
        B("Acme Privacy Notice", size=20.0, bold=True, block=0),
        B("What we collect", size=14.0, bold=True, block=1),
        B("Account details", size=12.0, bold=True, block=2),
        B("Your name and email address.", block=3),
        B("Usage data", size=12.0, bold=True, block=4),
        B("Pages you visit.", block=5),
        B("How we use it", size=14.0, bold=True, block=6),
        B("To run the service.", block=7),
        B("Who we share it with", size=14.0, bold=True, block=8),
        B("Our payment processor.", block=9),
        B("Cookies", size=12.0, bold=True, block=10),
        B("Small files on your device.", block=11),
    ]
    paths = from_patterns(lines, run_in_headings=False, plain_headings=True).paths
    assert paths[0] == ""  # the document's title: a type used once is no level of sections
    assert paths[3] == "What we collect > Account details" and paths[5] == "What we collect > Usage data"
    assert paths[7] == "How we use it" and paths[11] == "Who we share it with > Cookies"
    assert from_patterns(lines[:8], run_in_headings=False, plain_headings=True).paths == [""] * 8  # two of each


def test_what_is_not_an_unnumbered_heading():
    """Body type, a sentence, a lead-in, a bold term that opens its definition in the same block, a
    title a numbered heading already took, and a document with fewer than three such lines."""
    lines = [
        B("Section 1 Cover", size=13.0, bold=True, block=0),
        B("We will pay for:", size=13.0, bold=True, block=1),  # a lead-in, not a heading
        B("Theft from the home.", size=13.0, bold=True, block=2),  # a sentence
        B("Home", bold=True, block=3),  # a bold term in its definition's block
        B("means the private dwelling.", block=3),
        B("just a line in body type", block=4),
        B("ARTICLE I", size=13.0, bold=True, block=5),
        B("DEFINITIONS", size=13.0, bold=True, block=6),  # the article's title, on the next line
        B("Terms used here.", block=7),
        B("Exclusions", size=13.0, bold=True, block=8),
        B("We do not cover wear and tear.", block=9),
    ]
    paths = from_patterns(lines, run_in_headings=False, plain_headings=True).paths
    assert paths[1:6] == ["Section 1 Cover"] * 5 and paths[8] == "Section 1 Cover > ARTICLE I DEFINITIONS"
    assert paths[10] == paths[8]  # "Exclusions" alone: an unnumbered heading counts only with two more
    few = [B("Section 1 Cover", size=13.0, bold=True, block=0), B("Exclusions", size=13.0, bold=True, block=1)]
    assert from_patterns(few, run_in_headings=False, plain_headings=True).paths == ["Section 1 Cover"] * 2

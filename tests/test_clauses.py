"""The run-in clause a quote stands under (core/clauses.py): read from the chunk's index header,
located in its text, and the section path a citation shows; end to end on a real contract PDF."""

from __future__ import annotations

import re

import pytest

from policybot.core.clauses import (
    MAX_CLAUSE_TITLES,
    cited_under,
    clause_at,
    clause_header,
    clause_starts,
    header_clauses,
    role_section,
    section_header,
    under_clause,
)
from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import make_settings


def test_the_header_s_clause_titles_are_read_back_as_ingestion_writes_them():
    header = section_header("Acme Supply Agreement", "1. DEFINITIONS.")
    index_text = f"{header}{clause_header(['2. TERM.', '3. EXCLUSIVITY.'])}\nbody text"
    assert header_clauses(index_text, "Acme Supply Agreement", "1. DEFINITIONS.") == ["2. TERM.", "3. EXCLUSIVITY."]
    assert header_clauses(f"{header}\nbody", "Acme Supply Agreement", "1. DEFINITIONS.") == []  # no titles
    untitled = f"{section_header('Acme', '')}{clause_header(['2. TERM.'])}\nbody"
    assert header_clauses(untitled, "Acme", "") == ["2. TERM."]  # a document without sections
    # Another title (the header was written for another document title) reads as no clauses.
    assert header_clauses(index_text, "Other Agreement", "1. DEFINITIONS.") == []
    assert header_clauses("no header at all\nbody", "Acme Supply Agreement", "1. DEFINITIONS.") == []


TEXT = (
    "shall have the meaning given above.\n"
    "3. EXCLUSIVITY. The Distributor shall not sell competing products\n"
    "during the Term.\n"
    "4.\nPAYMENT. Invoices are payable within 30 days.\n"
)


def test_each_clause_starts_where_its_title_opens_a_line_and_the_opened_clause_at_zero():
    starts = clause_starts(TEXT, ["2. TERM.", "3. EXCLUSIVITY.", "4. PAYMENT."])
    assert [title for _, title in starts] == ["2. TERM.", "3. EXCLUSIVITY.", "4. PAYMENT."]
    assert starts[0][0] == 0  # the chunk opens inside clause 2
    assert TEXT[starts[1][0] :].startswith("3. EXCLUSIVITY.")
    assert TEXT[starts[2][0] :].startswith("4.\nPAYMENT.")  # the number alone on its line
    assert clause_at(starts, TEXT.index("competing")) == "3. EXCLUSIVITY."
    assert clause_at(starts, TEXT.index("Invoices")) == "4. PAYMENT."
    assert clause_at(starts, 3) == "2. TERM."
    assert clause_at([], 10) is None


def test_after_a_full_header_the_next_number_starts_a_clause_nobody_listed():
    titles = ["1. Act.", "2. Actual Cash Value.", "3. Application.", "4. Base Flood."][:MAX_CLAUSE_TITLES]
    text = (
        "1. Act. The Act.\n2. Actual Cash Value. Cost.\n3. Application. Form.\n"
        "4. Base Flood. A flood.\n5. Basement. Any area.\n"
    )
    starts = clause_starts(text, titles)
    assert clause_at(starts, text.index("A flood")) == "4. Base Flood."
    assert clause_at(starts, text.index("Any area")) is None  # under "5. Basement.", which the header left out


def test_an_untitled_item_numbered_like_the_clause_ends_it():
    """A FEMA form's "6. Special Limits." is a run-in title; "7." and "9." after it are items of the
    same list with no title: a quote of item 9 is not cited under "6. Special Limits"."""
    text = (
        "6. Special Limits. We will pay no more than $2,500 for any loss to:\n"
        "a. Artwork, photographs, collectibles; and\n"
        "30 days after the loss the limit applies in full.\n"  # a wrapped line opening with a number
        "7. If you are a condominium unit owner, you may apply up to 10 percent.\n"
    )
    starts = clause_starts(text, ["6. Special Limits"])
    assert clause_at(starts, text.index("Artwork")) == "6. Special Limits"
    assert clause_at(starts, text.index("after the loss")) == "6. Special Limits"
    assert clause_at(starts, text.index("condominium")) is None
    # A chunk that opens at item 9, with "6. Special Limits" as the clause it opens inside.
    later = "9. If you are a condominium unit owner, you may apply up to 10 percent.\na. walls,\n"
    assert clause_at(clause_starts(later, ["6. Special Limits"]), later.index("walls")) is None


def test_a_contract_s_last_clause_ends_where_its_signatures_and_exhibits_begin():
    """A chunk that runs past the last clause into "IN WITNESS WHEREOF" and "EXHIBIT D" (after a page
    label, "C-1") does not cite the signature block under "6.20 Rights and Obligations"."""
    last = "6.20 Rights and Obligations. Each party shall act.\nIN WITNESS WHEREOF the parties sign.\nC-1 EXHIBIT D\n"
    starts = clause_starts(last, ["6.20 Rights and Obligations"])
    assert clause_at(starts, last.index("shall act")) == "6.20 Rights and Obligations"
    assert clause_at(starts, last.index("the parties sign")) is None
    # A chunk that opens inside the last clause and runs on past its signatures into a guaranty.
    later = "may be amended only in writing.\nAcme Corp\nBy: /s/ J. Smith\nGUARANTY I, the undersigned, agree.\n"
    starts = clause_starts(later, ["30. ENTIRE AGREEMENT"])
    assert clause_at(starts, 3) == "30. ENTIRE AGREEMENT"
    assert clause_at(starts, later.index("the undersigned")) is None


@pytest.mark.parametrize(
    ("section", "clause", "expected"),
    [
        ("1. DEFINITIONS.", "3. EXCLUSIVITY.", "3. EXCLUSIVITY."),  # siblings: numbered alike
        ("II. Definitions", "5. Basement.", "II. Definitions > 5. Basement."),  # under a roman heading
        ("ARTICLE 12 MISCELLANEOUS", "12.2 Assignment", "ARTICLE 12 MISCELLANEOUS > 12.2 Assignment"),
        ("Part A > 12.1 Agency", "12.2 Assignment", "Part A > 12.2 Assignment"),
        ("1. DEFINITIONS.", "1. DEFINITIONS", "1. DEFINITIONS."),  # the section itself
        # An item numbered otherwise than its section: "7)" in "Section 3.", not a sibling of it.
        ("Section 3. Exclusions", "7) Maternity (Code-Excl18)", "Section 3. Exclusions > 7) Maternity (Code-Excl18)"),
        ("Section 3. Exclusions", "Section 4. Claims", "Section 4. Claims"),
        ("", "3. Term.", "3. Term."),
        ("ARTICLE VIII", "Section 8.2. Notice\xa0and  Defense", "ARTICLE VIII > Section 8.2. Notice and Defense"),
        ("1. DEFINITIONS.", None, "1. DEFINITIONS."),
        # A heading in capitals that ran on into its text: its clause's title is cited instead.
        (
            "10. LIMITATION ON LIABILITY. EXCEPT IN THE EVENT OF A",
            "10. LIMITATION ON LIABILITY",
            "10. LIMITATION ON LIABILITY",
        ),
    ],
)
def test_a_clause_replaces_a_sibling_heading_and_goes_under_any_other(section, clause, expected):
    assert under_clause(section, clause) == expected


def test_a_role_is_read_from_the_clause_only_where_the_section_says_nothing_of_one():
    reformed = "VII. General Conditions > D. Insufficient Premium > 2. Reforming the Policy with Reduced Coverage"
    assert role_section("VII. General Conditions > D. Insufficient Premium", reformed).endswith("Premium")
    assert role_section("ARTICLE 7 TERM AND TERMINATION", "ARTICLE 7 TERM AND TERMINATION > 7.5 Remedies").endswith(
        "7.5 Remedies"
    )
    assert role_section("1. DEFINITIONS.", "3. EXCLUSIVITY") == "3. EXCLUSIVITY"  # the section was wrong
    assert role_section("1. DEFINITIONS.", None) == "1. DEFINITIONS."


def test_a_clause_that_changes_nothing_is_not_cited_apart():
    starts = [(0, "1. DEFINITIONS"), (40, "3. EXCLUSIVITY.")]
    assert cited_under("1. DEFINITIONS.", starts, 5) is None
    assert cited_under("1. DEFINITIONS.", starts, 50) == "3. EXCLUSIVITY."


def _distribution_agreement(path):
    """A contract as CUAD's are set: the first clause's title bold on its own line (the section
    finder's only heading), every later title run into its clause in body type."""
    b = pdfs.PdfBuilder()
    b.heading("Distribution Agreement", size=14)
    b.paragraph("This Distribution Agreement is made between Norland Foods Ltd and Harbour Trading LLC.")
    b.heading("1. DEFINITIONS.")
    b.paragraph('"Products" means the frozen foods listed in Schedule A. "Territory" means the State of Maine.')
    b.paragraph(
        "2. TERM. This Agreement starts on the Effective Date and continues for three years unless ended "
        "earlier under its terms."
    )
    b.paragraph(
        "3. EXCLUSIVITY. The Distributor shall not sell, market or promote any products that compete with "
        "the Products anywhere in the Territory during the Term."
    )
    b.paragraph("4. PAYMENT. The Distributor shall pay each invoice within thirty days of its date.")
    b.paragraph("5. NOTICES. Notices must be given in writing to the addresses above.")
    return b.save(path)


def test_a_contract_s_answer_cites_the_run_in_clause_its_quote_is_in(tmp_path):
    """Issue 20 §5: a contract's clause titles run into their clauses; the section finder filed
    clauses 2-5 under "1. DEFINITIONS.", and the answer cited an exclusivity clause as
    "1. DEFINITIONS." with the role *Definition*. It now cites "3. EXCLUSIVITY."."""
    bot = PolicyBot(make_settings(tmp_path / "home"))
    assert bot.ingest_file(_distribution_agreement(tmp_path / "norland-distribution.pdf")).status == "ingested"
    answer = bot.ask("Can the distributor sell products that compete with ours?", use_llm=False)
    [line] = [ln for ln in answer.answer.splitlines() if "shall not sell, market or promote" in ln]
    assert "· 3. EXCLUSIVITY · p.1" in line and "DEFINITIONS" not in line, line
    assert not re.match(r"\d+\. Definition:", line), line
    [cited] = [c for c in answer.citations if c.quote and "shall not sell" in c.quote]
    assert cited.section == "1. DEFINITIONS."  # the passage's own section is kept, for the record
    assert cited.cited_section == "3. EXCLUSIVITY" and "· 3. EXCLUSIVITY ·" in cited.label
    assert "clauses" not in cited.model_dump()  # offsets are working state, not part of the answer


@pytest.fixture(scope="module")
def health(tmp_path_factory):
    root = tmp_path_factory.mktemp("health")
    bot = PolicyBot(make_settings(root / "home"))
    assert bot.ingest_file(pdfs.health_policy_pdf(root / "arogya-shield-policy.pdf")).status == "ingested"
    return bot


def test_an_exclusion_numbered_7_inside_section_3_is_cited_under_it_and_not_covered(health):
    """A held-out layout: "3) Maternity (Code-Excl18):" inside the bold "Section 3. Waiting Periods and
    Exclusions". Numbered otherwise, it is an item of the section, not a sibling that replaces it: the
    quote reads *Not covered*, under "3) Maternity (Code-Excl18)"."""
    answer = health.ask("my wife is pregnant, will the policy pay for the delivery?", use_llm=False)
    [line] = [ln for ln in answer.answer.splitlines() if "traceable to childbirth" in ln]
    assert re.match(r'\d+\. Not covered: "3\) Maternity \(Code-Excl18\):', line), line
    assert line.endswith("· 3) Maternity (Code-Excl18) · p.1"), line
    [cited] = [c for c in answer.citations if c.quote and "childbirth" in c.quote]
    assert cited.cited_section == "Section 3. Waiting Periods and Exclusions > 3) Maternity (Code-Excl18)"


def test_an_amount_in_rupees_is_quoted_whole_and_a_price_never_asked_is_not_read_from_it(health):
    """ "up to Rs. 2,000" was cut at "Rs." and the answer said no amount was stated; once whole, it must
    not answer what the policy itself costs. The two-page footer never enters a quote."""
    ambulance = health.ask("how much do you pay for the ambulance?", use_llm=False)
    assert "up to Rs. 2,000 per hospitalisation." in ambulance.answer
    assert "do not seem to state" not in ambulance.answer
    price = health.ask("How much does this policy cost per month?", use_llm=False)
    assert price.answer.startswith("Your documents do not seem to state an amount for this.")
    assert not any("Page 1 of" in c.text for c in price.citations + ambulance.citations)

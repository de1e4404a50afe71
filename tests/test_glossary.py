"""A document's defined terms, what each means, and the meanings a clause is indexed under."""

from __future__ import annotations

from policybot.core.glossary import definition_text, glossary_of, term_glosses
from policybot.core.rows import ChunkRow


def chunk(n: int, section: str, text: str) -> ChunkRow:
    return ChunkRow(f"d:{n:05d}", "d", n, text, text, section, 1, 1, "text")


ESCAPE = chunk(
    0,
    "Section 1 Definitions > 1.6 Escape of Water",
    "1.6 Escape of Water\nWater escaping suddenly from any fixed water installation, including pipes which have "
    "frozen and burst.",
)
ITEMS = chunk(
    1,
    "II. Definitions",
    "5. Basement. Any area of a building below ground level on all sides.\n12. Deductible. The amount you pay.",
)


def test_what_a_term_means_is_its_body_or_its_numbered_item():
    assert definition_text("Escape of Water", ESCAPE).startswith("Water escaping suddenly")  # not its heading
    assert definition_text("Basement", ITEMS) == "Any area of a building below ground level on all sides."
    assert definition_text("Deductible", ITEMS) == "The amount you pay."  # the last item runs to the end
    assert definition_text("Flood", ITEMS) == ""


def test_a_clause_is_glossed_with_the_meaning_of_the_term_its_heading_names():
    clauses = [
        chunk(
            2,
            "Section 2 Cover > 2.5 Escape of water",
            "We will cover loss caused by Escape of Water, less the Deductible.",
        ),
        chunk(3, "Section 2 Cover > 2.6 Escape of oil", "Oil escaping into the Basement, less the Deductible."),
        chunk(4, "Section 5 > 5.1 Deductible", "The Deductible applies to each claim."),
    ]
    glosses = term_glosses([ESCAPE, ITEMS, *clauses], max_words=8)
    assert glosses[:2] == ["", ""]  # a definition is not glossed with itself or its neighbours
    # Only the term the heading names: not the Deductible 2.5 also uses, nor 2.6's Basement.
    assert glosses[2:] == [
        "Escape of Water: Water escaping suddenly from any fixed water installation, …",
        "",
        "Deductible: The amount you pay.",
    ]


def test_a_document_without_a_definitions_section_gets_no_glosses():
    rows = [chunk(n, "1. Overview", "You can claim Carer's Allowance if you care for someone.") for n in range(3)]
    assert glossary_of(rows).terms == {}
    assert term_glosses(rows, 40) == ["", "", ""]


def test_terms_set_before_a_dash_a_colon_or_means_are_defined_terms():
    """A travel wording's "Baggage — luggage…", a contract's '"Affiliate" means…': one term per line,
    its meaning running to the next term's line."""
    lines = chunk(
        5,
        "DEFINITIONS",
        "Wherever the following words appear in bold they have the meanings given below.\n"
        "Baggage — luggage, clothing and personal belongings taken on your trip, but\nnot Valuables.\n"
        "Close relative – your husband, wife, partner, parent or child.\n"
        "Unattended: when you are not in full view of your property.\n"
        "In this policy: the words below.\n"
        "“Affiliate” means any entity that controls a party.\n"
        "1.2 Section 4 - the baggage cover.",
    )
    assert list(glossary_of([lines]).terms) == ["Baggage", "Close relative", "Unattended", "Affiliate"]
    assert (
        definition_text("Baggage", lines)
        == "luggage, clothing and personal belongings taken on your trip, but\nnot Valuables."
    )
    assert definition_text("Unattended", lines) == "when you are not in full view of your property."
    assert definition_text("Affiliate", lines).startswith("any entity that controls")
    # Outside a Definitions section the same lines define nothing.
    assert glossary_of([chunk(6, "SECTION 4 – BAGGAGE", lines.text)]).terms == {}

"""The sample policy in data/: it ingests cleanly and search lands on the right clause and page."""

import pymupdf
import pytest

from policybot.service import PolicyBot
from tests.conftest import SAMPLE_POLICY, make_settings

# The in-domain questions of the behaviour set and the clause that answers each.
IN_DOMAIN = [
    ("What is the definition of an 'Insured Person'?", "1.9 Insured Person"),
    ("Is wear-and-tear covered under the policy?", "4.1 Wear and tear"),
    ("How does the deductible apply to water damage?", "Escape of water deductible"),
    ("What is the waiting period for accidental damage?", "6.2 Waiting period"),
    ("Are legal fees included in the coverage?", "Section 7 Legal Expenses"),
]


@pytest.fixture(scope="module")
def sample_bot(tmp_path_factory):
    bot = PolicyBot(make_settings(tmp_path_factory.mktemp("sample") / "home"))
    [outcome] = bot.ingest([SAMPLE_POLICY]).outcomes
    assert outcome.status == "ingested", outcome.message
    return bot


def _page_of_text(snippet: str) -> int:
    """The page a passage starts on, found independently with PyMuPDF's own text search."""
    words = " ".join(snippet.split()[:6])
    with pymupdf.open(SAMPLE_POLICY) as doc:
        for page in doc:
            if words in " ".join(page.get_text().split()):
                return page.number + 1
    raise AssertionError(f"not found in the PDF: {words!r}")


def test_sample_policy_is_realistic(sample_bot):
    [doc] = sample_bot.library.documents().documents
    assert doc.pages >= 15
    assert doc.section_source == "outline" and doc.sections >= 40
    assert doc.tables >= 1
    assert doc.title.startswith("HomeShield")


@pytest.mark.parametrize("question, clause", IN_DOMAIN)
def test_in_domain_questions_find_their_clause_and_page(sample_bot, question, clause):
    hits = sample_bot.search(question, k=3).hits
    match = next((h for h in hits if clause in h.section), None)
    assert match is not None, [h.section for h in hits]
    if match.kind == "text":
        assert match.page_start == _page_of_text(match.text)


@pytest.mark.parametrize(
    "query, section",
    [
        ("what does clause 5.2 say", "5.2 Escape of water deductible"),
        ("Explain 2.5(c)", "2.5 Escape of water"),
        ("What does Section 6.4 require?", "6.4 Security"),
        ("What does Unoccupied mean?", "1.18 Unoccupied"),  # a defined term points at its definition
    ],
)
def test_a_clause_named_in_a_search_comes_first_as_in_an_answer(sample_bot, query, section):
    assert sample_bot.search(query, k=3).hits[0].section.endswith(section)
    answer = sample_bot.ask(query, use_llm=False)
    assert answer.citations[0].section.endswith(section)


def test_a_named_list_item_is_the_quote_of_its_clause(sample_bot):
    """ "Explain 2.5(c)" quotes item (c) of 2.5, with its lead-in, not the clause's closest item by
    words ((e) names "clause 5.2"); an item named in another clause is quoted there."""
    answer = sample_bot.ask("Explain 2.5(c)", use_llm=False)
    first = answer.answer.splitlines()[0]
    assert first.startswith('1. Not covered: "What is not covered … (c) Damage caused by water escaping'), first
    other = sample_bot.ask("What does clause 6.3(c) say?", use_llm=False)
    assert "(c) theft or attempted theft;" in other.answer.splitlines()[0]

"""Evidence mode without an LLM: the tools, the table and the deterministic planner, over the
sample policy (real PDF, real Chroma, packaged MiniLM)."""

from __future__ import annotations

import pytest

from policybot.answer.openings import ListOpenings
from policybot.core.passages import quote_as_read
from policybot.core.roles import role_of
from policybot.display.export import evidence_records
from policybot.errors import PolicyBotError
from policybot.events import EvidenceDoneEvent, EvidenceStepEvent
from policybot.evidence.quotes import best_quote, content_words
from policybot.evidence.table import EvidenceTable
from policybot.options import EvidenceOptions
from policybot.schemas import EvidenceReport
from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import make_settings, sample_home


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    bot = PolicyBot(make_settings(sample_home(tmp_path_factory.mktemp("evidence") / "home"), llm_mode="off"))
    return bot


def _clause(row) -> str:
    """ "Section 2 Buildings Cover > 2.5 Escape of water" -> "2.5"."""
    return row.citation.section.split(" > ")[-1].split()[0]


def test_escape_of_water_table_has_cover_definition_deductible_and_unoccupancy(sample):
    report = sample.evidence("escape of water", use_llm=False)
    assert report.mode == "planner" and report.rows
    by_clause = {}
    for row in report.rows:
        by_clause.setdefault(_clause(row), []).append(row)
    for clause in ("2.5", "1.6", "5.2", "6.3"):
        assert clause in by_clause, f"clause {clause} missing: {sorted(by_clause)}"
        row = by_clause[clause][0]
        c = row.citation
        assert c.page_start >= 1 and c.verified
        assert c.text[c.quote_start : c.quote_end] == c.quote and c.quote.strip()
    assert by_clause["1.6"][0].role == "defines"
    assert by_clause["2.5"][0].role == "covers"
    assert by_clause["5.2"][0].role == "limits"
    assert {r.role for r in by_clause["6.3"]} & {"condition", "limits"}
    # The unoccupancy condition is reached from the cover clause's "(see clause 6.3)" or by the
    # conditions search, and the definition of Unoccupied from the cover clause's use of the term.
    assert any(_clause(r) == "1.18" for r in report.rows)
    assert report.stopped in {"nothing new to follow", "row limit (24) reached"}
    assert [s.step for s in report.trace] == list(range(1, len(report.trace) + 1))
    assert report.llm.calls == 0


def test_evidence_searches_without_token_match_s_second_look(sample, monkeypatch):
    """It collects every passage that belongs; the order of the best ten is not worth re-reading them."""
    retriever = sample.components.retriever
    assert retriever.token_match is not None  # on by default, for answers
    original, flags = retriever.lists, []

    def spy(*args, **kwargs):
        flags.append(kwargs.get("reorder", True))
        return original(*args, **kwargs)

    monkeypatch.setattr(retriever, "lists", spy)
    assert sample.evidence("escape of water", use_llm=False).rows
    assert flags and not any(flags)


def test_every_row_is_a_distinct_passage_with_a_located_quote(sample):
    report = sample.evidence("cancellation and refunds", use_llm=False)
    ids = [r.citation.chunk_id for r in report.rows]
    assert len(ids) == len(set(ids))
    assert all(r.citation.verified for r in report.rows)
    assert any("9." in r.citation.section for r in report.rows), [r.citation.section for r in report.rows]
    assert [r.n for r in report.rows] == list(range(1, len(report.rows) + 1))


def test_steps_stream_before_the_report(sample):
    events = list(sample.evidence_stream("theft from the home", use_llm=False))
    kinds = [type(e).__name__ for e in events]
    assert kinds[-1] == "EvidenceDoneEvent"
    steps = [e.step for e in events if isinstance(e, EvidenceStepEvent)]
    report = events[-1].report
    assert isinstance(events[-1], EvidenceDoneEvent) and steps == report.trace
    # Every row was announced by the step that added it.
    assert sorted(n for s in steps for n in s.new_rows) == [r.n for r in report.rows]


def test_single_search_baseline_keeps_k_rows(sample):
    report = sample.evidence("escape of water", single_k=3)
    assert report.mode == "single" and len(report.rows) <= 3 and len(report.trace) == 1


def test_off_topic_issue_finds_little_and_says_why(sample):
    report = sample.evidence("rules of cricket and the lbw law", use_llm=False)
    assert len(report.rows) <= 3
    assert report.stopped


def test_empty_issue_and_unknown_document_are_clear_errors(sample):
    with pytest.raises(PolicyBotError, match="empty"):
        sample.evidence("   ")
    with pytest.raises(PolicyBotError):
        sample.evidence("flood", options=EvidenceOptions(docs=["nope.pdf"]))


def test_lookup_answers_clauses_terms_and_sections_exactly(sample):
    tools = sample.components.evidence_tools(sample.library.resolve_docs(None))
    assert {h.chunk.section.split(" > ")[-1] for h in tools.lookup("clause 5.2")} == {"5.2 Escape of water deductible"}
    assert {h.chunk.section.split(" > ")[-1] for h in tools.lookup("2.5(c)")} == {"2.5 Escape of water"}
    assert [h.chunk.section.split(" > ")[-1] for h in tools.lookup("definition of Unoccupied")] == ["1.18 Unoccupied"]
    assert [h.chunk.section.split(" > ")[-1] for h in tools.lookup("Escape of Water")] == ["1.6 Escape of Water"]
    assert any("Conditions" in h.chunk.section for h in tools.lookup("Conditions"))
    assert tools.lookup("clause 99.9") == []
    assert tools.lookup("definition of Spaceship") == []


def test_sibling_documents_fold_into_one_row(tmp_path):
    twins = [pdfs.sample_policy(tmp_path / f"{name}.pdf") for name in ("acme-gold", "acme-silver")]
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off"))
    assert not bot.ingest(twins).failed
    # Alike as two editions would be: until someone says what they are, each keeps its rows.
    proposed = bot.evidence("escape of water", use_llm=False)
    assert {r.citation.doc for r in proposed.rows} == {"acme-gold.pdf", "acme-silver.pdf"}
    assert not [label for r in proposed.rows for label in r.citation.same_text_in]
    bot.library.confirm_edition("acme-silver.pdf", confirm=False)  # not an edition: a sibling policy
    report = bot.evidence("escape of water", use_llm=False)
    assert report.rows
    docs = {r.citation.doc for r in report.rows}
    assert len(docs) == 1  # every passage is in both documents: one row each, the twin noted
    assert all(r.citation.same_text_in for r in report.rows if r.found_by.startswith("Search"))
    assert any("acme-" in label for r in report.rows for label in r.citation.same_text_in)


def test_role_rules():
    assert role_of("Section 1 Definitions > 1.6 Escape of Water", "Water escaping suddenly") == "defines"
    assert (
        role_of(
            "Section 2 Buildings Cover > 2.5 Escape of water", "We will cover loss or damage caused by Escape of Water"
        )
        == "covers"
    )
    assert (
        role_of(
            "Section 2 Buildings Cover > 2.5 Escape of water", "We will not pay for loss while the Home is Unoccupied"
        )
        == "limits"
    )
    assert (
        role_of("Section 6 Conditions > 6.3 Unoccupancy", "You must tell us if the Home is going to be Unoccupied.")
        == "condition"
    )
    assert role_of("Section 8 Claims > 8.1 How to claim", "Phone us as soon as you can.") == "procedure"
    assert role_of("About this policy", "Thank you for choosing us.") == "other"


def test_best_quote_is_the_clause_about_the_topic():
    text = (
        "3.2 Insured events\nWe will cover your Contents against:\n(a) fire;\n(b) theft;\n(c) Escape of Water from "
        "a fixed installation;\n(d) storm."
    )
    s, e = best_quote(text, "escape of water")
    assert text[s:e] == "(c) Escape of Water from a fixed installation;"
    assert content_words("Flood damage in basements") == {"flood", "damage", "basement"}


def test_table_keeps_one_row_per_chunk(sample):
    tools = sample.components.evidence_tools(sample.library.resolve_docs(None))
    table = EvidenceTable("escape of water")
    hit = tools.lookup("clause 5.2")[0]
    row, added = table.add(hit, "Lookup[clause 5.2]")
    again, added_again = table.add(hit, "Search[escape of water]")
    assert added and not added_again and again is row and len(table.rows) == 1
    # An LLM's quote is used when it is really in the chunk; otherwise the rule's quote is.
    table2 = EvidenceTable("escape of water")
    row2, _ = table2.add(hit, "x", why="the deductible", quote="A higher Deductible of $750")
    assert row2.citation.quote == "A higher Deductible of $750" and row2.why == "the deductible"
    assert (
        row2.citation.verified
        and hit.chunk.text[row2.citation.quote_start : row2.citation.quote_end] == row2.citation.quote
    )
    # Words the LLM put in a clause's mouth are shown as given and marked unverified.
    table3 = EvidenceTable("escape of water")
    row3, _ = table3.add(hit, "x", quote="words that are not in the clause at all")
    assert row3.citation.quote == "words that are not in the clause at all"
    assert not row3.citation.verified and row3.citation.quote_start is None


def _guide(path):
    """A benefits guide in its own words: no Cover, Exclusions or Conditions sections."""
    b = pdfs.PdfBuilder()
    b.heading("1. Overview")
    for i in range(6):
        b.paragraph(
            f"Carer's Allowance is a weekly payment for people who look after someone. Example {i}: "
            "a parent, a partner or a friend who needs help with daily life may be cared for. " + pdfs.FILLER
        )
    b.heading("2. Eligibility")
    b.paragraph(pdfs.FILLER * 2)
    b.paragraph(
        "You can get Carer's Allowance only if you spend at least 35 hours a week caring for someone "
        "and you earn no more than 151 pounds a week after tax."
    )
    b.heading("3. Further information")
    b.paragraph(pdfs.FILLER * 2)
    return b.save(path)


@pytest.mark.parametrize("aspects", ["library", "insurance"])
def test_the_planner_searches_the_parts_a_document_names_itself(tmp_path, aspects):
    """Issue 21 §4: the planner's second look is inside each part of the documents as their own
    headings divide them, not only inside sections with insurance titles."""
    from policybot.settings import EvidenceSettings

    evidence = EvidenceSettings(issue_hits=2, aspects=aspects)
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off", evidence=evidence))
    assert not bot.ingest([_guide(tmp_path / "carers-guide.pdf")]).failed
    report = bot.evidence("carer's allowance", use_llm=False)
    found = any("35 hours a week" in row.citation.text for row in report.rows)
    searched_parts = [s.argument for s in report.trace if s.argument.startswith("carer's allowance (in ")]
    if aspects == "library":
        assert found and any("Eligibility" in p for p in searched_parts), searched_parts
    else:
        assert not any("Eligibility" in p for p in searched_parts)


def test_a_row_quoting_an_item_of_a_list_begun_in_the_passage_before_reads_it_with_its_lead_in(sample):
    """6.3 Unoccupancy's second chunk opens at "(b) escape of oil;": its items are exclusions only by
    the lead-in in the chunk before. The row's quote is read, shown and exported after that lead-in,
    and its role is *Not covered*; the highlighted span is still the item in its own passage."""
    tools = sample.components.evidence_tools(sample.library.resolve_docs(None))
    chunks = [h for h in tools.lookup("clause 6.3") if h.chunk.text.startswith("(")]
    assert chunks, [h.chunk.text[:40] for h in tools.lookup("clause 6.3")]
    table = EvidenceTable("riot, civil commotion or malicious people", openings=ListOpenings(tools.rows))
    row, _ = table.add(chunks[0], "Lookup[clause 6.3]")
    c = row.citation
    assert c.lead_in == "When the Home is Unoccupied, we will not cover loss or damage caused by:"
    assert c.quote.startswith("(d) riot") and c.text[c.quote_start : c.quote_end] == c.quote
    assert quote_as_read(c).startswith(c.lead_in + " … (d) riot")
    assert row.role == "limits" and c.role == "Not covered"
    assert evidence_records(EvidenceReport(issue="x", mode="planner", documents=[c.doc], rows=[row]))[0][
        "quote"
    ].startswith(c.lead_in)

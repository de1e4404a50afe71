"""Following what a passage points to: cross-referenced clauses and defined terms."""

from __future__ import annotations

import pytest

from policybot.answer.references import cross_references, glossary_of
from policybot.core.rows import ChunkRow
from policybot.service import PolicyBot
from tests.conftest import SAMPLE_POLICY, make_settings


def chunk(cid: str, section: str, text: str) -> ChunkRow:
    return ChunkRow(cid, "d", 0, text, text, section, 1, 1, "text")


def test_cross_references_are_read_in_order():
    text = (
        "(d) Loss while the Home is Unoccupied (see clause 6.3). (e) The deductible set out in clauses 5.2 and 5.3, "
        "and Section 7."
    )
    assert cross_references(text) == ["6.3", "5.2", "5.3"]  # "Section 7" is a part of the policy, not a clause
    assert cross_references("as explained in section 4.2 and condition 9") == ["4.2", "9"]
    assert cross_references("No references here, only 2.5 litres.") == []


def test_glossary_from_headings_and_numbered_items():
    glossary = glossary_of(
        [
            chunk(
                "d:1",
                "Section 1 Definitions > 1.6 Escape of Water",
                "Water escaping suddenly from any fixed installation.",
            ),
            chunk(
                "d:2",
                "II. Definitions",
                "5.  Basement. Any area of a building below ground.\n12. Deductible. The amount you pay.",
            ),
            chunk("d:3", "Section 2 Buildings Cover > 2.5 Escape of water", "We will cover Escape of Water."),
        ]
    )
    assert glossary.terms == {"Escape of Water": "d:1", "Basement": "d:2", "Deductible": "d:2"}
    text = "Basement walls are not covered. Escape of Water into a Basement room is, less the Deductible."
    assert glossary.used_in(text) == [
        "Escape of Water",
        "Basement",
        "Deductible",
    ]  # not the sentence-opening "Basement"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    bot = PolicyBot(make_settings(tmp_path_factory.mktemp("refs") / "home"))
    assert not bot.ingest([SAMPLE_POLICY]).failed
    return bot


def test_the_escape_of_water_cover_brings_its_unoccupancy_clause_and_deductible(sample):
    """Clause 2.5 says "(see clause 6.3)" and "set out in clause 5.2": both are followed."""
    follower = sample.components.references
    docs = {d.doc_id: d for d in sample.components.index.documents()}
    [cover] = [
        c
        for c in sample.search("escape of water cover what is not covered gradual leak", k=10).hits
        if c.section.endswith("2.5 Escape of water")
    ][:1]
    from policybot.schemas import Citation

    source = Citation(
        n=1,
        chunk_id=cover.chunk_id,
        doc=cover.doc,
        section=cover.section,
        page_start=cover.page_start,
        page_end=cover.page_end,
        text=cover.text,
        score=0.5,
    )
    supporting = follower.run("is a slow leak covered?", [source], docs)
    assert [s.reason for s in supporting] == ["clause 6.3", "clause 5.2"]
    assert supporting[0].chunk.section.endswith("6.3 Unoccupancy") and supporting[1].chunk.section.endswith(
        "5.2 Escape of water deductible"
    )
    assert all(s.referenced_by == 1 for s in supporting)


def test_a_defined_term_brings_its_definition(sample):
    follower = sample.components.references
    docs = {d.doc_id: d for d in sample.components.index.documents()}
    source_text = "We will not pay for damage caused while the property is Unoccupied for more than 60 days."
    from policybot.schemas import Citation

    doc = next(iter(docs.values()))
    source = Citation(
        n=2,
        chunk_id="x:00000",
        doc=doc.name,
        section="Section 2",
        page_start=1,
        page_end=1,
        text=source_text,
        score=0.5,
    )
    [definition] = follower.run("empty house", [source], docs)
    assert definition.reason == "definition of Unoccupied" and "Definitions" in definition.chunk.section

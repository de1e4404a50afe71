"""Following what a passage points to: cross-referenced clauses and defined terms."""

from __future__ import annotations

import pytest

from policybot.answer.references import cross_references
from policybot.core.glossary import glossary_of
from policybot.core.rows import ChunkRow
from policybot.service import PolicyBot
from tests.conftest import make_settings, sample_home


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
    bot = PolicyBot(make_settings(sample_home(tmp_path_factory.mktemp("refs") / "home")))
    return bot


def found_as_source(sample, query: str, keep):
    """The first search hit ``keep`` accepts, as the answer's source [1]."""
    from policybot.schemas import Citation

    hit = next(c for c in sample.search(query, k=10).hits if keep(c))
    return Citation(
        n=1,
        chunk_id=hit.chunk_id,
        doc=hit.doc,
        section=hit.section,
        page_start=hit.page_start,
        page_end=hit.page_end,
        text=hit.text,
        score=0.5,
    )


def test_the_escape_of_water_cover_brings_its_unoccupancy_clause_and_deductible(sample):
    """Clause 2.5 says "(see clause 6.3)" and "set out in clause 5.2": both are followed."""
    follower = sample.components.references
    docs = {d.doc_id: d for d in sample.components.index.documents()}
    source = found_as_source(
        sample,
        "escape of water cover what is not covered gradual leak",
        lambda c: c.section.endswith("2.5 Escape of water"),
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


def test_quantity_kinds_and_what_a_question_turns_on():
    from policybot.answer.references import quantity_kinds, turns_on

    unoccupied = "The Home has not been lived in by you for more than 60 consecutive days."
    assert quantity_kinds("and if it was only 3 weeks?") == {"period"}
    assert quantity_kinds("more than 60 consecutive days") == {"period"}
    assert quantity_kinds("a deductible of $750 or 25% of the loss") == {"money", "share"}
    assert quantity_kinds("what does the policy cover?") == set()
    # An age is a line a person's age falls on, not a length of time.
    assert quantity_kinds("my son is 23 years old and away at university") == {"age"}
    assert quantity_kinds("you're aged 21 or over") == quantity_kinds("under the age of 18") == {"age"}
    assert quantity_kinds("I've paid in for 15 years and I'm a 50-year-old") == {"period", "age"}
    insured = "An Insured Person also includes your children who are under 25 years old and away studying."
    assert turns_on("my son is 23 years old, is his laptop covered?", "Insured Person", insured)
    assert not turns_on("my son is 23 years old, is his laptop covered?", "Unoccupied", unoccupied)
    assert turns_on("and if it was only 3 weeks?", "Unoccupied", unoccupied)  # where the line is drawn
    assert turns_on("what counts as unoccupied?", "Unoccupied", unoccupied)  # the term named
    assert not turns_on("is my bike covered?", "Unoccupied", unoccupied)
    assert not turns_on("does it cost $50?", "Unoccupied", unoccupied)  # another kind of quantity


def test_a_definition_the_question_turns_on_comes_before_cross_references(sample):
    """6.3 points to clauses 2.18 and 3.14 and uses "Unoccupied": asked about "only 3 weeks", the
    definition (more than 60 consecutive days) is the one the answer needs, so it is followed first."""
    follower = sample.components.references
    docs = {d.doc_id: d for d in sample.components.index.documents()}
    source = found_as_source(
        sample,
        "unoccupied home tell us accidental damage clauses 2.18 and 3.14",
        lambda c: c.section.endswith("6.3 Unoccupancy") and "2.18" in c.text,
    )
    supporting = follower.run("the house was empty, and if it was only 3 weeks?", [source], docs)
    assert supporting[0].reason == "definition of Unoccupied"
    assert "60 consecutive days" in supporting[0].chunk.text
    plain = follower.run("is accidental damage covered when the house is empty?", [source], docs)
    assert plain[0].reason.startswith("clause ")  # no quantity asked: the cross-references first


def test_a_definition_retrieved_below_the_quoted_sources_is_raised(sample):
    """A definition already listed below the answer is returned (so the answer quotes it) only when
    the question turns on it; otherwise it stays where it was and nothing is duplicated."""
    from policybot.schemas import Citation

    follower = sample.components.references
    docs = {d.doc_id: d for d in sample.components.index.documents()}
    hits = sample.search("Unoccupied more than 60 consecutive days definition", k=10).hits
    [definition] = [c for c in hits if c.section.endswith("1.18 Unoccupied")][:1]
    doc = next(iter(docs.values()))

    def cite(n: int, text: str, chunk_id: str, section: str = "Section 6 Conditions") -> Citation:
        return Citation(
            n=n, chunk_id=chunk_id, doc=doc.name, section=section, page_start=1, page_end=1, text=text, score=0.5
        )

    sources = [
        cite(1, "We will not cover theft while the Home is Unoccupied.", "x:1"),
        cite(2, "Something else entirely.", "x:2"),
        cite(3, definition.text, definition.chunk_id, definition.section),
    ]
    raised = follower.run("and if it was only 3 weeks?", sources, docs, shown=2)
    assert [(s.chunk.chunk_id, s.reason) for s in raised][:1] == [(definition.chunk_id, "definition of Unoccupied")]
    assert not any(
        s.chunk.chunk_id == definition.chunk_id for s in follower.run("is theft covered?", sources, docs, shown=2)
    )


def test_what_an_unquoted_source_points_to_is_not_followed(sample):
    """Only the sources the answer quotes bring their clauses, and only definitions the question
    turns on are quoted with them: an overview listed below the answer
    that mentions "clause 4.1" brought 4.1 *Wear and tear* into the answer to "What is the
    definition of an Insured Person?", quoted alone. A definition the question turns on is still
    taken from any source."""
    from policybot.schemas import Citation

    follower = sample.components.references
    docs = {d.doc_id: d for d in sample.components.index.documents()}
    doc = next(iter(docs.values()))

    def cite(n: int, text: str) -> Citation:
        return Citation(
            n=n, chunk_id=f"x:{n}", doc=doc.name, section="Section 6", page_start=1, page_end=1, text=text, score=0.5
        )

    sources = [
        cite(1, "Something else entirely."),
        cite(2, "General exclusions are in clause 4.1. We will not cover theft while the property is Unoccupied."),
    ]
    assert [s.reason for s in follower.run("is my shed covered?", sources, docs)] == [
        "clause 4.1",
        "definition of Unoccupied",
    ]  # every source quoted
    assert follower.run("is my shed covered?", sources, docs, shown=1) == []  # source 2 is not quoted
    # Both quoted: its clause is followed, a definition the question does not turn on is not.
    assert [s.reason for s in follower.run("is my shed covered?", sources, docs, shown=2)] == ["clause 4.1"]
    [turns_on] = follower.run("and if it was only 3 weeks?", sources, docs, shown=1)
    assert turns_on.reason == "definition of Unoccupied" and turns_on.referenced_by == 2


def test_the_definition_of_a_term_the_question_asks_about_is_found_by_its_term(sample):
    """ "What does Unoccupied mean?" points at 1.18 *Unoccupied* by its term; of several terms named,
    the one nearest "mean" is asked about, the longest term named wins ("Escape of Water", not a
    shorter term inside it), and a question that does not ask what something means points at no
    definition."""
    follower = sample.components.references
    doc_ids = [d.doc_id for d in sample.components.index.documents()]

    def sections(question: str) -> list[str]:
        found = follower.definitions_asked(question, doc_ids)
        chunks = sample.components.registry.chunks(sample.components.index.collection, found)
        return [chunks[c].section.split(" > ")[-1] for c in found]

    assert sections("What does Unoccupied mean?") == ["1.18 Unoccupied"]
    assert sections("what is the definition of escape of water") == ["1.6 Escape of Water"]
    assert sections("What does Storm mean in my Home policy?") == ["1.14 Storm"]  # the term nearest "mean"
    assert sections("Is the home covered when it is unoccupied?") == []  # not asked what it means
    assert sections("What does 'unoccupancy' mean?") == []  # no term of that name

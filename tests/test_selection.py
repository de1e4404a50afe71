"""Selecting passages: top-p, the context budget, and one source for a clause repeated in
sibling documents."""

from __future__ import annotations

from policybot.answer.selection import group_siblings, same_text
from policybot.core.passages import Passage
from policybot.core.rows import ChunkRow, DocumentRow

PROOF = (
    "Within 60 days after the loss, send us a proof of loss, which is your statement of the amount "
    "you are claiming under the policy signed and sworn to by you."
)


def doc(doc_id: str) -> DocumentRow:
    return DocumentRow(
        "c", doc_id, f"{doc_id}.pdf", "sha", doc_id.title(), 1, 1, 1, "none", 0, [], "m", "ch", "p", "p", "t", 0.0
    )


def candidate(doc_id: str, text: str, page: int = 21, score: float = 0.5) -> Passage:
    return Passage(
        ChunkRow(
            f"{doc_id}:00001", doc_id, 1, text, text, "VII. General Conditions > G. Requirements", page, page, "text"
        ),
        doc(doc_id),
        score,
    )


def test_same_text_allows_line_breaks_and_a_changed_word_but_not_another_clause():
    assert same_text(PROOF, PROOF.replace(" the loss,", " the\nloss,").replace("statement", "statement,"))
    assert same_text(PROOF, PROOF.replace("60 days", "sixty days"))
    assert not same_text(
        PROOF, "Within 60 days after the loss, you must file a claim. Any other text follows here entirely different."
    )


DEDUCTIBLE = (
    "5.2 Escape of water deductible. A higher Deductible of $750 applies to each claim for Escape of Water, "
    "unless the water escapes from a washing machine that is less than 5 years old and was fitted by a professional."
)


def test_same_text_never_joins_a_different_amount_period_share_or_negation():
    assert not same_text(DEDUCTIBLE, DEDUCTIBLE.replace("$750", "$500"))
    assert not same_text(DEDUCTIBLE, DEDUCTIBLE.replace("5 years", "3 years"))
    assert not same_text(PROOF, PROOF.replace("60 days", "90 days"))
    assert not same_text(PROOF + " We pay 80% of the cost.", PROOF + " We pay 70% of the cost.")
    assert not same_text(DEDUCTIBLE, DEDUCTIBLE.replace("unless the water", "and the water"))
    assert not same_text(PROOF, PROOF.replace("signed and sworn", "not signed and sworn"))
    # What differs only where a chunk starts or ends, or in a clause number, is still the same text.
    assert same_text(DEDUCTIBLE, DEDUCTIBLE.replace("5.2 ", "6.4 "))
    assert same_text(PROOF + " Limit $250,000.", PROOF)
    assert same_text(PROOF, PROOF.replace("60 days", "sixty (60) days").replace(" (60)", ""))


def test_unconfirmed_editions_are_never_one_source():
    old, new = candidate("old", DEDUCTIBLE.replace("$750", "$500")), candidate("new", DEDUCTIBLE)
    same_old, same_new = candidate("old", PROOF), candidate("new", PROOF)
    for passage in (old, same_old):
        passage.doc.family, passage.doc.family_status = "old", "confirmed"
    for passage in (new, same_new):
        passage.doc.family, passage.doc.family_status = "old", "proposed"
    assert group_siblings([old, new]) == [old, new]  # different amounts: two sources in any case
    assert group_siblings([same_old, same_new]) == [same_old, same_new]  # alike, but which edition is in force?
    for passage in (same_old, same_new):
        passage.doc.family_status = "confirmed"
        passage.siblings.clear()
    assert group_siblings([same_old, same_new]) == [same_old]  # confirmed editions chosen together: one source


def test_siblings_become_one_source_labelled_with_the_others():
    dwelling = candidate("dwelling", PROOF, page=21, score=0.9)
    rcbap = candidate("rcbap", PROOF.replace("sworn to by you", "sworn to by you\n"), page=17, score=0.8)
    other = candidate("dwelling", "Coverage D pays up to $30,000 for increased cost of compliance.", score=0.7)
    general = candidate("general", PROOF, page=15, score=0.6)
    kept = group_siblings([dwelling, rcbap, other, general])
    assert kept == [dwelling, other]
    citation = kept[0].citation(1)
    assert citation.doc == "dwelling.pdf" and citation.same_text_in == ["rcbap.pdf, p.17", "general.pdf, p.15"]
    assert kept[1].citation(2).same_text_in == []


def test_the_same_document_is_never_its_own_sibling():
    a, b = candidate("dwelling", PROOF), candidate("dwelling", PROOF)
    assert group_siblings([a, b]) == [a, b]

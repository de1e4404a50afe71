"""Documents named in a question: by title, file name, form name or acronym, never by a word
the library's text uses everywhere."""

from __future__ import annotations

import pytest

from policybot.answer.naming import name_phrases, named_documents
from policybot.core.rows import DocumentRow


def doc(doc_id: str, name: str, title: str) -> DocumentRow:
    return DocumentRow("c", doc_id, name, "sha", title, 1, 1, 1, "none", 0, [], "m", "chunker", "p", "p", "t", 0.0)


FORMS = [
    doc("dw", "nfip-sfip-dwelling.pdf", "NFIP Dwelling Form, October 2021"),
    doc("gp", "nfip-sfip-general-property.pdf", "Standard Flood Insurance Policy - General Property Form"),
    doc(
        "rc",
        "nfip-sfip-rcbap.pdf",
        "Standard Flood Insurance Policy - Residential Condominium Building Association Policy",
    ),
    doc("zk", "zacks-com-privacy.pdf", "Privacy Policy"),
]
# Words the forms' text uses in more than one document (a "dwelling" is in all three).
COMMON = {"dwelling", "property", "building", "flood", "residential", "condominium", "association", "general"}


def used_elsewhere(word: str, doc_id: str) -> bool:
    return word in COMMON


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Under the Dwelling Form, how long do I have to send a proof of loss?", ["nfip-sfip-dwelling.pdf"]),
        ("Does the RCBAP cover the lobby carpet?", ["nfip-sfip-rcbap.pdf"]),
        ("what does the general property form say about debris", ["nfip-sfip-general-property.pdf"]),
        ("my condominium building association policy, is the roof covered", ["nfip-sfip-rcbap.pdf"]),
        ("What does Zacks do with my email address?", ["zacks-com-privacy.pdf"]),
        ("is my dwelling covered if the river floods?", []),  # a common word names no form
        ("Is general damage to my property covered?", []),
    ],
)
def test_named_documents(question, expected):
    phrases = name_phrases(FORMS, used_elsewhere)
    assert [n.doc.name for n in named_documents(question, FORMS, phrases)] == expected


def test_a_single_document_library_names_nothing():
    one = FORMS[:1]
    assert named_documents("Under the Dwelling Form?", one, name_phrases(one, used_elsewhere)) == []


def test_shared_title_words_name_no_document():
    phrases = name_phrases(FORMS, used_elsewhere)
    assert ("standard", "flood", "insurance", "policy") not in phrases["gp"] | phrases["rc"]
    assert ("rcbap",) in phrases["rc"] and ("dwelling", "form") in phrases["dw"]

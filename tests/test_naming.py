"""Documents named in a question: by title, file name, form name or acronym, never by a word
the library's text uses everywhere."""

from __future__ import annotations

import pytest

from policybot.answer.naming import (
    name_phrases,
    named_documents,
    names_it_lacks,
    names_it_writes,
    split_naming,
    without_naming,
)
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


GUIDES = [
    doc("co", "limited-companys-first-accounts.pdf", "Your limited company's first accounts and Company Tax Return"),
    doc("pay", "running-payroll.pdf", "Running payroll"),
    doc("ct", "corporation-tax-sell-business-assets.pdf", "Corporation Tax when you sell business assets"),
    doc(
        "visa", "report-change-circumstances-visa-brp.pdf", "Report a change of circumstances if you have a visa or BRP"
    ),
    doc("amag", "antares-amag-manufacturing-agreement.pdf", "Manufacturing Agreement"),
    doc("pinon", "sandridge-pinon-operations-maintenance.pdf", "Operations and Maintenance Agreement"),
    doc("cht", "ehave-cht-license-reseller-agreement.pdf", "License and Reseller Agreement"),
]
# What the guides' text uses in more than one document.
SHARED = {
    "limited",
    "company",
    "tax",
    "payroll",
    "corporation",
    "first",
    "accounts",
    "manufacturing",
    "report",
    "change",
}


@pytest.mark.parametrize(
    "question, expected",
    [
        # Common words that happen to be unique to one title are no designation of it.
        ("I started a limited company and employed 5 people. How do I run payroll?", []),
        ("I have a new employee who has a student loan.", []),  # "have a", from the visa guide's title
        ("We registered our company for corporation tax last year.", []),  # 1 of its 4 own title words
        # A designation: half of the title's own words, a word no other document uses, an acronym.
        ("When are my first accounts and tax return due?", ["limited-companys-first-accounts.pdf"]),
        (
            "What law governs our manufacturing agreement with AMAG Pharmaceuticals?",
            ["antares-amag-manufacturing-agreement.pdf"],
        ),
        (
            "Can we assign the operations agreement with Piñon Gathering?",
            ["sandridge-pinon-operations-maintenance.pdf"],
        ),
        ("I lost my BRP, what now?", ["report-change-circumstances-visa-brp.pdf"]),
        # An acronym spelled out: the file name's "cht" is "Companion Healthcare Technologies".
        (
            "Is there a non-compete in our agreement with Companion Healthcare Technologies?",
            ["ehave-cht-license-reseller-agreement.pdf"],
        ),
        ("Can Companion Healthcare end it?", []),  # two capitalised words spell nothing
        ("Does Her Majesty's Revenue and Customs close a PAYE scheme?", []),  # "hmr…" is no document's
    ],
)
def test_only_a_real_designation_names_a_document(question, expected):
    phrases = name_phrases(GUIDES, lambda word, doc_id: word in SHARED)
    assert [n.doc.name for n in named_documents(question, GUIDES, phrases)] == expected


WRITTEN = {  # what each document writes, as ``names_it_writes`` reads it
    "amag": "this manufacturing agreement is made between amag pharmaceuticals inc and antares pharma inc",
    "dw": "coverage a building property we insure against direct physical loss by or from flood",
}


def written(d: DocumentRow) -> str:
    return WRITTEN.get(d.doc_id, "")


def test_the_words_that_name_a_document_leave_the_question_it_ranks_passages_by():
    phrases = name_phrases(GUIDES, lambda word, doc_id: word in SHARED)
    question = "What law governs our manufacturing agreement with AMAG Pharmaceuticals?"
    named = names_it_writes(question, named_documents(question, GUIDES, phrases), written)
    unwritten = named_documents(question, GUIDES, phrases)  # without the document's text: no run is a name
    assert without_naming(question, unwritten) == "What law governs our with Pharmaceuticals?"
    assert without_naming(question, named) == "What law governs our with"  # the party's name taken whole
    assert without_naming("AMAG manufacturing agreement", named) == "AMAG manufacturing agreement"  # nothing left
    assert without_naming(question, []) == question
    assert (
        split_naming(question, named)[1] == "manufacturing agreement AMAG Pharmaceuticals?"
    )  # what the dense query turns from
    assert split_naming("AMAG manufacturing agreement", named)[1] == ""  # nothing else left: nothing to turn from
    assert split_naming(question, [])[1] == ""
    # A capitalised word beside a naming one is part of the name, not a capitalised question word.
    assert without_naming("Under the AMAG deal, What Law applies?", named) == "Under the deal, What Law applies?"
    spelled = "Is there a non-compete in our agreement with Companion Healthcare Technologies?"
    named = names_it_writes(spelled, named_documents(spelled, GUIDES, phrases), written)
    assert split_naming(spelled, named)[1] == "agreement Companion Healthcare Technologies?"


def test_capitalised_words_beside_a_name_stay_unless_the_document_writes_them_with_it():
    phrases = name_phrases(FORMS, used_elsewhere)
    question = "What does my Dwelling Form Coverage A pay for?"
    named = names_it_writes(question, named_documents(question, FORMS, phrases), written)
    assert [n.doc.doc_id for n in named] == ["dw"] and named[0].whole == frozenset()
    assert without_naming(question, named) == "What does my Coverage A pay for?"  # what it asks about stays


CONTRACTS = [
    doc("eq", "equifax-certegy-intellectual-property.pdf", "equifax certegy intellectual property"),
    doc("ph", "profound-philips-supply-agreement.pdf", "profound philips supply agreement"),
    doc("ie", "2themart-i-escrow-co-branding-agreement.pdf", "2themart i escrow co branding agreement"),
]
CONTRACT_TEXT = {
    "eq": "all intellectual property rights in the retail reach software shall be jointly owned by equifax and certegy",
    "ph": "philips hereby assigns all right title and interest in new technology to customer",
    "ie": "this co branding and advertising agreement is made between 2themart com inc and i escrow inc",
}
# Words that more than one contract uses: every contract has intellectual property, and another names Philips.
CONTRACT_SHARED = {"intellectual", "property", "philips", "supply", "co", "branding", "i"}


@pytest.mark.parametrize(
    "question, expected",
    [
        # "intellectual property" is what it asks about: the Equifax contract never writes "Philips".
        ("Who owns the intellectual property created under our supply agreement with Philips?", []),
        # The co-branding contract writes its party's name, so its title words still name it.
        ("Is there a limit on damages in our co-branding and advertising agreement with i-Escrow?", ["ie"]),
        ("Who keeps the intellectual property, and does Equifax?", ["eq"]),  # by a name: kept whatever it says
        ("Under the Intellectual Property agreement, who owns new software?", ["eq"]),  # its own title words
    ],
)
def test_title_words_name_no_document_that_never_writes_the_name_the_question_gives(question, expected):
    phrases = name_phrases(CONTRACTS, lambda word, doc_id: word in CONTRACT_SHARED)
    named = names_it_lacks(question, named_documents(question, CONTRACTS, phrases), lambda d: CONTRACT_TEXT[d.doc_id])
    assert [n.doc.doc_id for n in named] == expected
    assert {n.by_name for n in named_documents(question, CONTRACTS, phrases) if n.doc.doc_id == "eq"} <= {
        "Equifax" in question
    }


def test_a_capitalised_first_word_or_i_is_no_name():
    phrases = name_phrases(CONTRACTS, lambda word, doc_id: word in CONTRACT_SHARED)
    question = "Who owns the intellectual property? I think the other side does. Ask them."
    found = named_documents(question, CONTRACTS, phrases)
    assert [(n.doc.doc_id, n.by_name) for n in found] == [("eq", False)]
    assert names_it_lacks(question, found, lambda d: CONTRACT_TEXT[d.doc_id]) == found  # "I", "Ask": no names

"""Editions (issue 13, first part): the date an edition takes effect, read from the document where
it states one, or set by hand (`policybot ingest --effective`)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from policybot.core.editions import effective_date
from policybot.service import PolicyBot
from tests import conftest
from tests.conftest import SAMPLE_POLICY, make_settings


@pytest.mark.parametrize(
    "opening, expected",
    [
        (["Policy wording reference HM-HS-05 (edition 5, effective 1 January 2025)"], date(2025, 1, 1)),
        (
            [
                "National Flood Insurance Program",
                "Dwelling Form",
                "Standard Flood Insurance Policy",
                "F-122 / October 2021",
            ],
            date(2021, 10, 1),
        ),
        (["Effective Date: 2024-04-01"], date(2024, 4, 1)),
        (["This notice was last updated on July 10, 2014."], date(2014, 7, 10)),
        (["Edition: Sept. 2019"], date(2019, 9, 1)),
        # A date inside a clause is not the document's, nor is an impossible one.
        (["We will not pay for losses after 1 January 2020 unless"], None),
        (["Claims made on 31 February 2020 are void"], None),
        (["Effective 31 February 2020"], None),
    ],
)
def test_the_edition_date_is_read_only_where_the_document_states_it(opening, expected):
    assert effective_date(opening) == expected


def test_ingestion_records_the_stated_date_and_a_user_can_set_another(tmp_path):
    """The sample policy, as ingestion left it (the tests' shared copy), states its date."""
    bot = PolicyBot(make_settings(conftest.sample_home(tmp_path / "home"), llm_mode="off"))
    [doc] = bot.library.documents().documents
    assert (doc.effective_date, doc.effective_source) == ("2025-01-01", "document")
    info = bot.library.set_effective(doc.name, date(2025, 4, 1))
    assert (info.effective_date, info.effective_source) == ("2025-04-01", "user")
    assert bot.library.set_effective(doc.name, None).effective_date is None


def test_the_fema_form_states_its_edition_on_the_cover(tmp_path):
    bot = PolicyBot(make_settings(conftest.flood_home(tmp_path / "home"), llm_mode="off"))
    docs = {d.name: d for d in bot.library.documents().documents}
    assert docs["nfip-sfip-dwelling.pdf"].effective_date == "2021-10-01"


def test_cli_ingest_effective_sets_the_date_and_rejects_a_bad_one(tmp_path):
    from tests.test_cli import plain, run

    home = tmp_path / "home"
    result = run(home, "ingest", str(SAMPLE_POLICY), "--effective", "2024-04-01", "--json")
    assert result.exit_code == 0
    outcome = json.loads(result.stdout)["outcomes"][0]
    assert "effective 2024-04-01 (set by hand)" in outcome["message"]
    listing = json.loads(run(home, "docs", "--json").stdout)["documents"][0]
    assert (listing["effective_date"], listing["effective_source"]) == ("2024-04-01", "user")
    bad = run(home, "ingest", str(SAMPLE_POLICY), "--effective", "April 2024")
    assert bad.exit_code == 2 and "write it as YYYY-MM-DD" in plain(bad.output)


# --- two editions of the sample policy ------------------------------------------------------------------

WATER_DEDUCTIBLE = "How much is the escape of water deductible?"


def build_previous_edition(folder: Path) -> Path:
    """Edition 4 of the sample policy (2023: $500 water deductible, no subsidence clause, a
    voluntary excess clause), built by data/build_sample_policy.py; edition 5 is the sample itself."""
    import importlib.util
    import sys

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("build_sample_policy", root / "data" / "build_sample_policy.py")
    assert spec and spec.loader
    builder = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = builder  # its dataclasses look their module up
    spec.loader.exec_module(builder)
    source = folder / "homeshield-2023.md"
    source.write_text(
        builder.previous_edition((root / "data" / "source" / "homeshield-household-policy.md").read_text())
    )
    old = folder / "homeshield-2023.pdf"
    builder.build(source, old)
    return old


@pytest.fixture(scope="module")
def two_editions(tmp_path_factory):
    return build_previous_edition(tmp_path_factory.mktemp("editions")), SAMPLE_POLICY


def _quoted(answer) -> str:
    return " ".join(c.text for c in answer.shown_citations[:2])


def editions_bot(dest: Path, two_editions: tuple[Path, Path]) -> PolicyBot:
    """A library where the 2023 edition was ingested, then the 2025 one (not confirmed yet): ingested
    once for the module's tests, each test on its own copy."""
    home = conftest.shared_library("two-editions", list(two_editions), dest)
    return PolicyBot(make_settings(home, llm_mode="off"))


def test_a_new_edition_is_detected_confirmed_and_answers_by_date(tmp_path, two_editions):
    old, new = two_editions
    bot = editions_bot(tmp_path / "home", two_editions)
    said_of_old, said_of_new = conftest.ingest_messages("two-editions")
    assert "looks like another edition of 'homeshield-2023.pdf'" in said_of_new and "edition" not in said_of_old
    # Until the user confirms, both editions are searched.
    assert len(bot.library.resolve_docs(None)) == 2
    info = bot.library.confirm_edition(new.name)
    assert info.edition_status == "confirmed"
    listing = {d.name: d for d in bot.library.documents().documents}
    assert listing[old.name].superseded_by == new.name and listing[new.name].superseded_by is None
    assert [d.name for d in bot.library.resolve_docs(None)] == [new.name]

    today = bot.ask(WATER_DEDUCTIBLE, use_llm=False)
    assert {c.doc for c in today.shown_citations} == {new.name} and "$750" in _quoted(today)
    # The clause read differently in the 2023 edition: the answer says so, with that passage.
    assert today.edition_note and today.edition_note.startswith(f"The 2023 edition ({old.name}) said: “")
    assert "$500" in today.edition_note and today.edition_note.endswith(
        f"this answer uses the 2025 edition ({new.name})."
    )
    earlier = today.earlier_edition
    assert (
        earlier is not None and earlier.doc == old.name and earlier.section.endswith("5.2 Escape of water deductible")
    )
    before = bot.ask(WATER_DEDUCTIBLE, use_llm=False, as_of=date(2024, 6, 1))
    assert {c.doc for c in before.shown_citations} == {old.name} and "$500" in _quoted(before)
    assert before.edition_note is None  # nothing older than the 2023 edition
    same = bot.ask("What happens if I cancel during the cooling-off period?", use_llm=False)
    assert same.edition_note is None  # a clause both editions word alike gets no note

    # Deleting the new edition brings the old one back as the one in force.
    bot.delete(new.name)
    assert [d.name for d in bot.library.resolve_docs(None)] == [old.name]
    assert bot.library.documents().documents[0].superseded_by is None


def test_other_policies_are_not_taken_for_editions(tmp_path):
    """Three FEMA forms that share most of their wording, then a house policy: four policies, no
    editions (the forms' own ingestion, shared with the other flood tests, said so of each)."""
    bot = PolicyBot(make_settings(conftest.flood_home(tmp_path / "home"), llm_mode="off"))
    said = conftest.ingest_messages("flood")
    assert len(said) == 3 and not any("another edition" in message for message in said), said
    report = bot.ingest([SAMPLE_POLICY])
    assert not report.failed and not any("another edition" in o.message for o in report.outcomes)
    assert not any(d.edition_of for d in bot.library.documents().documents)


def test_cli_confirms_an_edition_and_asks_as_of_a_date(tmp_path, two_editions):
    from tests.test_cli import plain, run

    old, new = two_editions
    home = tmp_path / "home"
    assert run(home, "ingest", str(old)).exit_code == 0
    added = plain(run(home, "ingest", str(new)).output)
    assert f"editions --confirm {new.name}" in added
    listing = plain(run(home, "editions", "--confirm", new.name).output)
    assert (
        f"{old.name} effective 2023-01-01 superseded by {new.name}" in listing
        and f"{new.name} effective 2025-01-01 in force" in listing
    )
    now = json.loads(run(home, "ask", WATER_DEDUCTIBLE, "--no-llm", "--json").stdout)
    assert {c["doc"] for c in now["citations"]} == {new.name}
    then = json.loads(run(home, "ask", WATER_DEDUCTIBLE, "--no-llm", "--json", "--as-of", "2024-06-01").stdout)
    assert {c["doc"] for c in then["citations"]} == {old.name}
    assert "$500" in then["answer"] and "$750" in now["answer"]
    text = plain(run(home, "ask", WATER_DEDUCTIBLE, "--no-llm").output)
    assert f"The 2023 edition ({old.name}) said:" in text and "[earlier edition] homeshield-2023.pdf" in text


def test_unconfirmed_editions_are_separate_sources_with_a_note(tmp_path, two_editions):
    """Issue 23: before the new edition is confirmed, its $750 clause and the old $500 one are two
    sources, never "same text in" each other, and the answer says two editions may be in the library."""
    old, new = two_editions
    bot = editions_bot(tmp_path / "home", two_editions)
    answer = bot.ask(WATER_DEDUCTIBLE, use_llm=False)
    shown = answer.shown_citations
    deductibles = [c for c in shown if c.section.endswith("5.2 Escape of water deductible")]
    assert {c.doc for c in deductibles} == {old.name, new.name}, [(c.doc, c.section) for c in shown]
    said = {name: " ".join(c.text for c in deductibles if c.doc == name) for name in (old.name, new.name)}
    assert "$500" in said[old.name] and "$750" in said[new.name]
    assert not [
        label for c in answer.citations for label in c.same_text_in if label.split(",")[0] in {old.name, new.name}
    ]
    assert answer.edition_note and answer.edition_note.startswith("Two editions of one policy may be in the library (")
    assert old.name in answer.edition_note and new.name in answer.edition_note
    assert answer.earlier_edition is None

    bot.library.confirm_edition(new.name)  # once confirmed, the edition in force answers alone
    confirmed = bot.ask(WATER_DEDUCTIBLE, use_llm=False)
    assert {c.doc for c in confirmed.shown_citations} == {new.name}
    assert confirmed.edition_note and confirmed.edition_note.startswith("The 2023 edition")

"""Editions (issue 13, first part): the date an edition takes effect, read from the document where
it states one, or set by hand (`policybot ingest --effective`)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from policybot.editions import effective_date
from policybot.service import PolicyBot
from tests.conftest import SAMPLE_POLICY, make_settings, require_flood


@pytest.mark.parametrize(
    "opening, expected",
    [
        (["Policy wording reference HM-HS-05 (edition 5, effective 1 January 2025)"], date(2025, 1, 1)),
        (["National Flood Insurance Program", "Dwelling Form", "Standard Flood Insurance Policy", "F-122 / October 2021"], date(2021, 10, 1)),
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
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off"))
    assert not bot.ingest([SAMPLE_POLICY]).failed
    [doc] = bot.documents().documents
    assert (doc.effective_date, doc.effective_source) == ("2025-01-01", "document")
    info = bot.set_effective(doc.name, date(2025, 4, 1))
    assert (info.effective_date, info.effective_source) == ("2025-04-01", "user")
    assert bot.set_effective(doc.name, None).effective_date is None


def test_the_fema_form_states_its_edition_on_the_cover(tmp_path):
    flood = require_flood()
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off"))
    assert not bot.ingest([flood / "docs" / "nfip-sfip-dwelling.pdf"]).failed
    assert bot.documents().documents[0].effective_date == "2021-10-01"


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

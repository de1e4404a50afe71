"""Conversation export: a Markdown transcript with its sources, and versioned JSON; evidence tables as
CSV and Markdown, safe with hostile document text."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from policybot.display.export import (
    conversation_json,
    conversation_markdown,
    evidence_csv,
    evidence_markdown,
    spreadsheet_safe,
)
from policybot.display.markup import unescape_markdown
from policybot.schemas import DISCLAIMER, NOT_A_QUESTION, Answer
from policybot.service import PolicyBot
from tests import pdfs
from tests.answers import extractive, generated, refused
from tests.conftest import make_settings


def test_markdown_transcript_lists_sources_with_quotes():
    md = unescape_markdown(conversation_markdown([("Is my wife covered?", generated())]))
    assert md.startswith("# PolicyBot conversation")
    assert "Exported " in md and DISCLAIMER in md
    assert "**Q:** Is my wife covered?" in md
    assert "Searched as" not in md  # the question was already standalone
    assert "- [1] Acme Home Insurance Policy · 1.1 Insured Person · p.1 — verified" in md
    assert "- [2] Acme Home Insurance Policy · 2.2 Earthquake damage · pp.2-3 — unverified" in md
    # The quote as one blockquote line, whatever its line breaks in the PDF.
    assert "  > your spouse or partner, and members of your family who permanently live in your home" in md
    assert "  > covered only when the schedule shows" in md
    assert "[3]" not in md  # not cited: not a source of this answer


def test_markdown_refusal_lists_closest_passages():
    md = unescape_markdown(conversation_markdown([("Is my wife covered?", generated()), ("And my dog?", refused())]))
    refusal = md[md.index("And my dog?") :]
    assert "_Searched as:_ Is my dog an insured person?" in refusal
    assert "did not answer" in refusal and "below the threshold" in refusal
    assert "**Closest passages**" in refusal
    assert "- [1] Acme Home Insurance Policy · 1.1 Insured Person · p.1" in refusal
    assert "  > Insured Person means you, your spouse or partner" in refusal
    assert "**Sources**" not in refusal
    assert md.index("## Question 1") < md.index("## Question 2")


def test_a_kind_word_back_to_thanks_is_exported_without_a_refusal_note():
    thanks = Answer(
        question="thanks",
        standalone_question="thanks",
        answer="You're welcome. Ask another question about your documents whenever you like.",
        mode="refused",
        refused=True,
        refusal_reason=NOT_A_QUESTION,
        citations=[],
        profile="lite",
    )
    md = unescape_markdown(conversation_markdown([("Is my wife covered?", generated()), ("thanks", thanks)]))
    said = md[md.index("**Q:** thanks") :]
    assert "You're welcome." in said
    assert "did not answer" not in said and "Closest passages" not in said and "**Sources**" not in said


def test_markdown_extractive_note():
    md = conversation_markdown([("Who is insured?", extractive())])
    assert "Extractive answer" in md
    assert "language model is not running" in md
    assert "verified" not in md  # a copied quote is always in its passage: saying so tells nothing


def test_json_export_round_trips():
    items = [("Is my wife covered?", generated()), ("And my dog?", refused()), ("Who is insured?", extractive())]
    data = json.loads(conversation_json(items))
    assert data["schema_version"] == "1"
    assert data["exported_at"]
    assert [i["question"] for i in data["items"]] == [q for q, _ in items]
    for item, (_, answer) in zip(data["items"], items):
        assert Answer.model_validate(item["answer"]) == answer


def test_empty_conversation_exports():
    assert DISCLAIMER in conversation_markdown([])
    assert json.loads(conversation_json([]))["items"] == []


def test_a_kiosk_export_never_holds_the_models_unchecked_draft():
    answer = extractive().model_copy(update={"unchecked_draft": "The policy costs $2.50 a month [1]."})
    reviewer = json.loads(conversation_json([("What does it cost?", answer)]))
    visitor = json.loads(conversation_json([("What does it cost?", answer)], reviewer=False))
    assert reviewer["items"][0]["answer"]["unchecked_draft"] == "The policy costs $2.50 a month [1]."
    assert "unchecked_draft" not in visitor["items"][0]["answer"]
    assert "$2.50" not in json.dumps(visitor) and "$2.50" not in conversation_markdown([("What does it cost?", answer)])


# --- hostile documents (issue 23) ------------------------------------------------------------------

FORMULAS = ['=HYPERLINK("http://x.invalid","click")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3+cmd|' /C calc'!A0"]


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory):
    """The evidence table of a PDF whose heading and clauses start like spreadsheet formulas and
    hold a planted image and link."""
    folder = tmp_path_factory.mktemp("hostile")
    clauses = [f"{f} Water damage is covered when the pipe bursts suddenly." for f in FORMULAS]
    clauses.append("Water damage ![x](http://x.invalid/a.png) see [click here](http://x.invalid) <img src=x>.")
    pdf = pdfs.simple_pdf(folder / "hostile.pdf", clauses, heading=FORMULAS[0])
    bot = PolicyBot(make_settings(folder / "home", llm_mode="off"))
    assert not bot.ingest([pdf]).failed
    report = bot.evidence("water damage", use_llm=False)
    assert report.rows
    return report


def test_no_cell_of_an_evidence_csv_runs_as_a_formula(hostile_report):
    rows = list(csv.reader(io.StringIO(evidence_csv(hostile_report))))
    cells = [cell for row in rows[1:] for cell in row]
    assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@", "\t", "\r"))], cells
    # The text is kept, behind the apostrophe a spreadsheet shows as text.
    assert any(cell.startswith("'=HYPERLINK(") for cell in cells) or any(
        cell.startswith("'+cmd") or cell.startswith("'@SUM") for cell in cells
    ), cells
    assert spreadsheet_safe("-5") == "'-5" and spreadsheet_safe(5) == 5 and spreadsheet_safe("a=b") == "a=b"


def test_markdown_exports_keep_planted_links_and_images_as_text(hostile_report):
    table = evidence_markdown(hostile_report)
    transcript = conversation_markdown([("[click](http://x.invalid) is water covered?", planted_answer())])
    for md in (table, transcript):
        assert not re.search(r"(?<!\\)\]\(", md), md  # no live "[text](url)" or "![alt](url)"
        assert not re.search(r"(?<!\\)<img", md)  # an HTML tag only as escaped text
        assert "x.invalid" in unescape_markdown(md)  # the text is still there, shown as text


def planted_answer() -> Answer:
    answer = generated()
    answer.answer = "Yes ![x](http://x.invalid/a.png) [1]."
    answer.citations[0].quote = "see [click here](http://x.invalid) <img src=x>"
    return answer


def _pointing_answer() -> Answer:
    """Three cited sources: [2] pointed to by the listed [1], [3] by a source [7] that is not listed."""
    answer = generated()
    first, second, third = answer.citations
    return answer.model_copy(
        update={
            "citations": [
                first,
                second.model_copy(update={"referenced_by": [1], "reference": "clause 2.2"}),
                third.model_copy(
                    update={"cited": True, "referenced_by": [7], "reference": "definition of Wear and Tear"}
                ),
            ]
        }
    )


def test_a_source_says_what_points_to_it_only_when_that_source_is_listed():
    md = unescape_markdown(conversation_markdown([("Is my wife covered?", _pointing_answer())]))
    assert "referenced by [1] (clause 2.2)" in md
    assert "[7]" not in md and "definition of Wear and Tear" not in md  # no number without a source listed


def test_the_cli_says_what_points_to_a_source_only_when_that_source_is_listed(monkeypatch):
    from rich.console import Console

    from policybot import cli

    printed = Console(record=True, width=200)
    monkeypatch.setattr(cli, "out", printed)
    monkeypatch.setattr(cli, "err", printed)
    cli._print_answer(_pointing_answer())
    text = printed.export_text()
    assert "referenced by [1] (clause 2.2)" in text
    assert "[7]" not in text and "definition of Wear and Tear" not in text

"""Conversation export: a Markdown transcript with its sources, and versioned JSON."""

from __future__ import annotations

import json

from policybot.display.export import conversation_json, conversation_markdown
from policybot.schemas import DISCLAIMER, Answer
from tests.answers import extractive, generated, refused


def test_markdown_transcript_lists_sources_with_quotes():
    md = conversation_markdown([("Is my wife covered?", generated())])
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
    md = conversation_markdown([("Is my wife covered?", generated()), ("And my dog?", refused())])
    refusal = md[md.index("And my dog?") :]
    assert "_Searched as:_ Is my dog an insured person?" in refusal
    assert "did not answer" in refusal and "below the threshold" in refusal
    assert "**Closest passages**" in refusal
    assert "- [1] Acme Home Insurance Policy · 1.1 Insured Person · p.1" in refusal
    assert "  > Insured Person means you, your spouse or partner" in refusal
    assert "**Sources**" not in refusal
    assert md.index("## Question 1") < md.index("## Question 2")


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

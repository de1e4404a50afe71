"""Feedback storage (SQLite) and conversation export (Markdown, JSON)."""

from __future__ import annotations

import json
import threading

import pytest

from policybot.export import DISCLAIMER, conversation_json, conversation_markdown
from policybot.feedback import MAX_COMMENT_CHARS, FeedbackStore
from policybot.schemas import Answer, Citation

DEFINITION = (
    "Insured Person means you, your spouse or partner, and members of your family who permanently live\n"
    "in your home, including children under twenty-one years of age studying away from home."
)
EARTHQUAKE = (
    "Earthquake damage to the buildings is covered only when the schedule shows the earthquake extension."
)


def _citation(n: int, text: str, quote: str | None = None, cited: bool = True, verified: bool = True, **kw) -> Citation:
    start = text.index(quote) if quote else None
    values = dict(
        n=n,
        chunk_id=f"c{n}",
        doc="acme-home.pdf",
        title="Acme Home Insurance Policy",
        section="1.1 Insured Person",
        page_start=1,
        page_end=1,
        text=text,
        score=0.8,
        cited=cited,
        quote=quote,
        quote_start=start,
        quote_end=start + len(quote) if quote else None,
        verified=verified,
    )
    values.update(kw)
    return Citation(**values)


def generated() -> Answer:
    quote = "your spouse or partner, and members of your family who permanently live\nin your home"
    return Answer(
        question="Is my wife covered?",
        standalone_question="Is my wife covered?",
        answer='Yes: the insured person includes "your spouse or partner" [1]. Earthquakes need the extension [2].',
        mode="generated",
        refused=False,
        citations=[
            _citation(1, DEFINITION, quote),
            _citation(2, EARTHQUAKE, "covered only when the schedule shows", verified=False,
                      section="2.2 Earthquake damage", page_start=2, page_end=3),
            _citation(3, "Wear and Tear means the gradual loss of value.", cited=False, verified=False),
        ],
        profile="lite",
    )


def refused() -> Answer:
    return Answer(
        question="And my dog?",
        standalone_question="Is my dog an insured person?",
        answer="I could not find this in the documents.",
        mode="refused",
        refused=True,
        refusal_reason="best cosine score 0.21 is below the threshold 0.35",
        citations=[_citation(1, DEFINITION, cited=False, verified=False)],
        profile="lite",
    )


def extractive() -> Answer:
    quote = "Insured Person means you, your spouse or partner"
    return Answer(
        question="Who is insured?",
        standalone_question="Who is insured?",
        answer=f'1. "{quote}" [1] — acme-home.pdf (1.1 Insured Person), p.1',
        mode="extractive",
        refused=False,
        citations=[_citation(1, DEFINITION, quote)],
        profile="lite",
        notice="No generated summary is available: the language model is not running.",
    )


# --- FeedbackStore ---------------------------------------------------------------------


def test_feedback_round_trip_newest_first(tmp_path):
    store = FeedbackStore(tmp_path / "fb" / "feedback.db")
    assert store.count() == 0 and store.all() == []
    first = store.add("Is my wife covered?", generated(), "up", "clear answer", session="s1")
    second = store.add("And my dog?", refused(), "down", session="s2")
    assert second > first
    assert store.count() == 2
    rows = store.all()
    assert [r["id"] for r in rows] == [second, first]
    newest, oldest = rows
    assert newest["question"] == "And my dog?" and newest["rating"] == "down" and newest["mode"] == "refused"
    assert newest["comment"] == "" and newest["session"] == "s2"
    assert oldest["answer"] == generated().answer and oldest["comment"] == "clear answer"
    assert oldest["created_at"].endswith("+00:00")  # UTC ISO time
    assert Answer.model_validate_json(oldest["answer_json"]) == generated()
    store.close()


def test_invalid_rating_is_rejected(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.db")
    for bad in ("meh", "", "UP"):
        with pytest.raises(ValueError, match="rating"):
            store.add("q", generated(), bad)  # type: ignore[arg-type]
    assert store.count() == 0


def test_comment_is_capped(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.db")
    store.add("q", generated(), "down", "x" * (MAX_COMMENT_CHARS + 500))
    assert len(store.all()[0]["comment"]) == MAX_COMMENT_CHARS


def test_feedback_persists_across_reopen(tmp_path):
    path = tmp_path / "feedback.db"
    with FeedbackStore(path) as store:
        store.add("q1", generated(), "up")
    with FeedbackStore(path) as store:
        store.add("q2", extractive(), "down")
        assert store.count() == 2
        assert [r["question"] for r in store.all()] == ["q2", "q1"]


def test_feedback_from_many_threads(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.db")
    answer = generated()

    def rate(i: int) -> None:
        for _ in range(10):
            store.add(f"q{i}", answer, "up", session=str(i))

    threads = [threading.Thread(target=rate, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count() == 80


# --- export ----------------------------------------------------------------------------


def test_markdown_transcript_lists_sources_with_quotes():
    md = conversation_markdown([("Is my wife covered?", generated())])
    assert md.startswith("# PolicyBot conversation")
    assert "Exported " in md and DISCLAIMER in md
    assert "**Q:** Is my wife covered?" in md
    assert "Searched as" not in md  # the question was already standalone
    assert "- [1] acme-home.pdf (1.1 Insured Person), p.1 — verified" in md
    assert "- [2] acme-home.pdf (2.2 Earthquake damage), pp.2-3 — unverified" in md
    # The quote as one blockquote line, whatever its line breaks in the PDF.
    assert "  > your spouse or partner, and members of your family who permanently live in your home" in md
    assert "  > covered only when the schedule shows" in md
    assert "[3]" not in md  # not cited: not a source of this answer


def test_markdown_refusal_lists_closest_passages():
    md = conversation_markdown([("Is my wife covered?", generated()), ("And my dog?", refused())])
    refusal = md[md.index("And my dog?"):]
    assert "_Searched as:_ Is my dog an insured person?" in refusal
    assert "did not answer" in refusal and "below the threshold" in refusal
    assert "**Closest passages**" in refusal
    assert "- [1] acme-home.pdf (1.1 Insured Person), p.1" in refusal
    assert "  > Insured Person means you, your spouse or partner" in refusal
    assert "**Sources**" not in refusal
    assert md.index("## Question 1") < md.index("## Question 2")


def test_markdown_extractive_note():
    md = conversation_markdown([("Who is insured?", extractive())])
    assert "Extractive answer" in md
    assert "language model is not running" in md
    assert "— verified" in md


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

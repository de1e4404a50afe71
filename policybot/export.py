"""Exporting a conversation: a readable Markdown transcript with its sources, and JSON
with every answer in full (the ``Answer`` schema) for tools."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from policybot.schemas import DISCLAIMER, Answer, Citation

# The export's own format version: it changes only when the export layout does.
EXPORT_SCHEMA_VERSION = "1"
# Closest passages of a refusal are shown as excerpts, not whole chunks.
EXCERPT_CHARS = 300


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _one_line(text: str) -> str:
    """PDF text breaks lines mid-sentence; a blockquote reads better as one line."""
    return " ".join(text.split())


def _excerpt(text: str) -> str:
    flat = _one_line(text)
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 3].rstrip() + "..."


def _mode_note(answer: Answer) -> str | None:
    if answer.refused:
        reason = f" ({answer.refusal_reason})" if answer.refusal_reason else ""
        return f"_PolicyBot did not answer: the documents do not clearly cover this question{reason}._"
    if answer.mode == "extractive":
        return "_Extractive answer: passages quoted from the documents, not a generated summary._"
    return None


def _source_lines(c: Citation) -> list[str]:
    mark = "verified" if c.verified else "unverified"
    if c.referenced_by:
        mark += f"; referenced by [{c.referenced_by[0]}] ({c.reference})"
    if c.same_text_in:
        mark += f"; same text in: {'; '.join(c.same_text_in)}"
    lines = [f"- [{c.n}] {c.label} — {mark}"]
    if c.quote:
        lines.append(f"  > {_one_line(c.quote)}")
    return lines


def _closest_lines(c: Citation) -> list[str]:
    return [f"- [{c.n}] {c.label}", f"  > {_excerpt(c.text)}"]


def _item_markdown(i: int, question: str, answer: Answer) -> list[str]:
    # The question follows a label so a leading "#" or "-" in it is not read as Markdown.
    lines = [f"## Question {i}", "", f"**Q:** {question.strip()}", ""]
    if _one_line(answer.standalone_question) != _one_line(question):
        lines += [f"_Searched as:_ {answer.standalone_question.strip()}", ""]
    lines += ["**Answer**", "", answer.answer.strip(), ""]
    note = _mode_note(answer)
    if note:
        lines += [note, ""]
    if answer.notice:
        lines += [f"_Note: {answer.notice}_", ""]
    if answer.refused:
        if answer.citations:
            lines += ["**Closest passages**", ""]
            for c in answer.shown_citations:
                lines += _closest_lines(c)
            lines.append("")
        return lines
    lines += ["**Sources**", ""]
    if not any(c.cited for c in answer.citations):
        lines.append("_The answer cites no source; these are the passages it was given:_")
    for c in answer.shown_citations:
        lines += _source_lines(c)
    lines.append("")
    return lines


def conversation_markdown(items: list[tuple[str, Answer]]) -> str:
    """A readable transcript: each question, its answer and the sources it cites."""
    lines = ["# PolicyBot conversation", "", f"Exported {_now()} (UTC)", "", f"_{DISCLAIMER}_", ""]
    for i, (question, answer) in enumerate(items, 1):
        lines += _item_markdown(i, question, answer)
    return "\n".join(lines).rstrip() + "\n"


def conversation_json(items: list[tuple[str, Answer]]) -> str:
    """Every question with its full answer, as versioned JSON."""
    payload = {
        "schema_version": EXPORT_SCHEMA_VERSION,
        "exported_at": _now(),
        "disclaimer": DISCLAIMER,
        "items": [{"question": q, "answer": a.model_dump(mode="json")} for q, a in items],
    }
    return json.dumps(payload, ensure_ascii=False, indent=2)

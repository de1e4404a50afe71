"""Exporting a conversation: a readable Markdown transcript with its sources, and JSON
with every answer in full (the ``Answer`` schema) for tools; an evidence table as CSV and Markdown.

Exports carry document text, and a document may be hostile. In Markdown, document, question and
model text is escaped as the app shows it, so a planted image or link stays text. In CSV, a cell
that a spreadsheet would run as a formula (it starts with =, +, -, @, a tab or a carriage
return) is prefixed with an apostrophe, as OWASP advises.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone

from policybot.core.passages import quote_as_read
from policybot.core.quotes import as_read
from policybot.display.markup import escape_markdown
from policybot.schemas import DISCLAIMER, Answer, Citation, EvidenceReport, page_range

# The export's own format version: it changes only when the export layout does.
EXPORT_SCHEMA_VERSION = "1"
# Closest passages of a refusal are shown as excerpts, not whole chunks.
EXCERPT_CHARS = 300


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _one_line(text: str) -> str:
    """PDF text breaks lines mid-sentence; a blockquote reads better as one line."""
    return " ".join(text.split())


def _text(text: str) -> str:
    """Document, question or model text as Markdown that shows it literally, line by line."""
    return "\n".join(escape_markdown(line) for line in str(text).strip().splitlines())


def _excerpt(text: str) -> str:
    flat = _one_line(text)
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 3].rstrip() + "..."


def _mode_note(answer: Answer) -> str | None:
    if answer.social:  # "thanks": a kind word back, not a refusal
        return None
    if answer.refused:
        reason = f" ({answer.refusal_reason})" if answer.refusal_reason else ""
        return f"_PolicyBot did not answer: the documents do not clearly cover this question{reason}._"
    if answer.mode == "extractive":
        return "_Extractive answer: passages quoted from the documents, not a generated summary._"
    return None


def _source_lines(c: Citation, generated: bool, shown: int) -> list[str]:
    """A source as the export lists it. "verified" only for a written answer's quote: a quote
    copied from the passage is always found in it, so saying so would tell the reader nothing.
    "referenced by" only when the pointing source is listed too (``shown`` sources are)."""
    notes = [("verified" if c.verified else "unverified")] if generated else []
    note = c.referenced_note(shown)
    if note:
        notes.append(note)
    if c.same_text_in:
        notes.append(f"same text in: {'; '.join(c.same_text_in)}")
    lines = [f"- \\[{c.n}\\] " + _text(c.label + (f" — {'; '.join(notes)}" if notes else ""))]
    if c.quote:
        lines.append(f"  > {_text(_one_line(quote_as_read(c)))}")
    return lines


def _closest_lines(c: Citation) -> list[str]:
    return [f"- \\[{c.n}\\] {_text(c.label)}", f"  > {_text(_excerpt(c.text))}"]


def _item_markdown(i: int, question: str, answer: Answer) -> list[str]:
    # The question follows a label so a leading "#" or "-" in it is not read as Markdown.
    lines = [f"## Question {i}", "", f"**Q:** {_text(question)}", ""]
    if _one_line(answer.standalone_question) != _one_line(question):
        lines += [f"_Searched as:_ {_text(answer.standalone_question)}", ""]
    lines += ["**Answer**", "", _text(answer.answer), ""]
    note = _mode_note(answer)
    if note:
        lines += [note, ""]
    if answer.notice:
        lines += [f"_Note: {_text(answer.notice)}_", ""]
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
        lines += _source_lines(c, answer.mode == "generated", len(answer.shown_citations))
    lines.append("")
    return lines


def conversation_markdown(items: list[tuple[str, Answer]]) -> str:
    """A readable transcript: each question, its answer and the sources it cites."""
    lines = ["# PolicyBot conversation", "", f"Exported {_now()} (UTC)", "", f"_{DISCLAIMER}_", ""]
    for i, (question, answer) in enumerate(items, 1):
        lines += _item_markdown(i, question, answer)
    return "\n".join(lines).rstrip() + "\n"


def conversation_json(items: list[tuple[str, Answer]], reviewer: bool = True) -> str:
    """Every question with its full answer, as versioned JSON; without the model's unchecked
    drafts unless for a reviewer (a kiosk visitor never gets them)."""
    hidden = None if reviewer else {"unchecked_draft"}
    payload = {
        "schema_version": EXPORT_SCHEMA_VERSION,
        "exported_at": _now(),
        "disclaimer": DISCLAIMER,
        "items": [{"question": q, "answer": a.model_dump(mode="json", exclude=hidden)} for q, a in items],
    }
    return json.dumps(payload, ensure_ascii=False, indent=2)


# --- evidence tables ---------------------------------------------------------------------------
EVIDENCE_COLUMNS = [
    "n",
    "document",
    "section",
    "pages",
    "role",
    "quote",
    "quote_start",
    "quote_end",
    "verified",
    "why",
    "same_text_in",
    "found_by",
    "ocr_confidence",
]


def plain_quote(text: str) -> str:
    """A quote as a person reads it in a table cell: a Markdown table row ("|Cover|Standard<br>deductible|")
    as its cells joined by " · ", rows by "; ", separator rows dropped, line breaks as spaces (the
    answer's quotes read the same: ``core.quotes.as_read``)."""
    return as_read(text)


def evidence_records(report: EvidenceReport) -> list[dict[str, object]]:
    """One flat record per row (for CSV and the app's table)."""
    out: list[dict[str, object]] = []
    for row in report.rows:
        c = row.citation
        out.append(
            {
                "n": row.n,
                "document": c.doc,
                "section": c.cited_section,
                "pages": page_range(c.page_start, c.page_end),
                "role": row.role,
                "quote": _one_line(quote_as_read(c)),
                "quote_start": c.quote_start,
                "quote_end": c.quote_end,
                "verified": c.verified,
                "why": row.why,
                "same_text_in": "; ".join(c.same_text_in),
                "found_by": row.found_by,
                "ocr_confidence": c.ocr_confidence,
            }
        )
    return out


# What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """A CSV cell that no spreadsheet runs: text starting like a formula gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def evidence_csv(report: EvidenceReport) -> str:
    """The evidence table as CSV (UTF-8, one row per passage), every cell spreadsheet-safe."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EVIDENCE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: spreadsheet_safe(v) for k, v in record.items()} for record in evidence_records(report))
    return buffer.getvalue()


def _cell(value: object) -> str:
    """A Markdown table cell: one line that shows literally (pipes, links and images escaped)."""
    return escape_markdown(_one_line(str(value if value is not None else "")))


def evidence_markdown(report: EvidenceReport) -> str:
    """The evidence table as Markdown, with how it was collected and the trace."""
    how = {
        "react": f"ReAct agent ({report.llm_model})",
        "planner": "deterministic planner (no LLM)",
        "single": "one search",
    }[report.mode]
    lines = [
        f"# Evidence: {_cell(report.issue)}",
        "",
        f"Documents: {_cell(', '.join(report.documents))}  ",
        f"Collected by the {how} in {len(report.trace)} steps, {report.seconds:.1f} s; stopped: "
        f"{_cell(report.stopped)}.",
        "",
        "| # | Document | Section | Pages | Role | Quote | Why | Same text in |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in evidence_records(report):
        quote = f'"{_cell(r["quote"])}"{"" if r["verified"] else " (unverified)"}'
        lines.append(
            f"| {r['n']} | {_cell(r['document'])} | {_cell(r['section'])} | {r['pages']} | {r['role']} | {quote} | "
            f"{_cell(r['why'])} | {_cell(r['same_text_in'])} |"
        )
    if not report.rows:
        lines.append("| | | | | | Nothing found on this issue in these documents. | | |")
    lines += ["", "## Trace", ""]
    for step in report.trace:
        lines.append(f"{step.step}. **{step.action}[{_cell(step.argument)}]** — {_cell(step.thought)}")
        lines.append(f"   Observation: {_cell(step.observation)[:500]}")
    lines += ["", f"_{DISCLAIMER}_", ""]
    return "\n".join(lines)

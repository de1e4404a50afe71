"""The evidence page: everything the documents say on an issue, as a table of quotes (each with
its page), the panels of its sources, and how it was collected, step by step."""

from __future__ import annotations

import time

import streamlit as st

from app_pages.sources import render_citation, same_text_labels
from app_pages.state import PageContext, clear_evidence, context, key
from policybot.display.export import evidence_csv, evidence_markdown, evidence_records, plain_quote, quote_as_read
from policybot.display.markup import escape_markdown, literal_html
from policybot.errors import PolicyBotError
from policybot.events import EvidenceDoneEvent, EvidenceStepEvent
from policybot.options import EvidenceOptions
from policybot.schemas import EvidenceReport, EvidenceRow, TraceStep, source_label
from policybot.service import PolicyBot

# The evidence table's columns, from export.evidence_records' fields.
EVIDENCE_TABLE = {
    "#": "n",
    "document": "document",
    "section": "section",
    "pages": "pages",
    "role": "role",
    "quote": "quote",
    "why": "why",
    "same text in": "same_text_in",
}
HOW_COLLECTED = {
    "react": "the ReAct agent ({model})",
    "planner": "the deterministic planner (no LLM)",
    "single": "one search",
}


def page(ctx: PageContext) -> None:
    """Collect everything the documents say on an issue: a table of quotes, each with its page."""
    state = st.session_state
    if state.notice:
        st.info(escape_markdown(state.notice))
    if not ctx.scope:
        st.info("No documents yet: add PDFs to the library first.")
        return
    st.caption(
        escape_markdown(
            f"Collects every passage on an issue from: {ctx.scope_titles} (choose under “Search in” in the sidebar)."
        )
    )
    with st.form("evidence_form", border=False):
        help_text = "A topic, not a question: PolicyBot collects what covers, limits, defines and conditions it."
        issue = st.text_input("Issue", key=key("evidence_issue"), placeholder="e.g. escape of water", help=help_text)
        run = st.form_submit_button("Collect evidence", key="collect", type="primary")
    if run:
        state.last_active = time.time()
        state.notice = None
        if not issue.strip():
            st.warning("Type an issue first, for example “escape of water”.")
        else:
            report = collect_evidence(ctx.bot, issue, ctx.scope)
            if report is not None:
                clear_evidence()
                state.evidence = report
                st.rerun()
    if state.evidence is not None:
        render_evidence(ctx.bot, state.evidence)


def collect_evidence(bot: PolicyBot, issue: str, scope: list[str]) -> EvidenceReport | None:
    """One evidence run, shown step by step: a status line and one panel per step."""
    status = st.status("Collecting evidence…", expanded=False)
    steps = st.container()
    report: EvidenceReport | None = None
    try:
        for event in bot.evidence_stream(issue, EvidenceOptions(docs=scope)):
            if isinstance(event, EvidenceStepEvent):
                status.update(
                    label=escape_markdown(f"Step {event.step.step}: {event.step.action}[{event.step.argument}]")
                )
                with steps:
                    render_step(event.step)
            elif isinstance(event, EvidenceDoneEvent):
                report = event.report
    except PolicyBotError as exc:
        status.update(label="Could not collect evidence", state="error")
        st.error(escape_markdown(str(exc)))
        return None
    status.update(label="Done", state="complete")
    return report


def step_title(step: TraceStep) -> str:
    added = f" → rows {', '.join(map(str, step.new_rows))}" if step.new_rows else ""
    return escape_markdown(f"Step {step.step}: {step.action}[{step.argument}]{added}")


def render_step(step: TraceStep) -> None:
    """One Thought / Action / Observation step, every text shown literally."""
    parts = [
        ("Thought", step.thought),
        ("Action", f"{step.action}[{step.argument}]"),
        ("Observation", step.observation),
    ]
    body = "&#10;".join(f"<b>{name}:</b> {literal_html(text.strip() or '—')}" for name, text in parts)
    with st.expander(step_title(step)):
        st.markdown(f'<div style="white-space: pre-wrap">{body}</div>', unsafe_allow_html=True)


def evidence_summary(report: EvidenceReport) -> str:
    how = HOW_COLLECTED[report.mode].format(model=report.llm_model or "an LLM")
    found = f"{len(report.rows)} passages" if report.rows else "Nothing found on this issue in these documents"
    return (
        f"{found} on “{report.issue}”, collected by {how} in {len(report.trace)} steps, {report.seconds:.1f} s; "
        f"stopped: {report.stopped}."
    )


# On a narrow screen the table's rows become cards (a grid of eight columns is unreadable on a phone).
PHONE_CSS = """<style>
.st-key-evidence-cards { display: none; }
@media (max-width: 640px) {
  .st-key-evidence-cards { display: flex; }
  .st-key-evidence-grid { display: none; }
}
</style>"""


def render_evidence(bot: PolicyBot, report: EvidenceReport) -> None:
    """The report: what was done, downloads, the table (cards on a phone), the selected row's
    passage right under it, the other rows' passages, the trace."""
    st.markdown(escape_markdown(evidence_summary(report)))
    if report.notice:
        st.caption(escape_markdown(report.notice))
    buttons = st.container(horizontal=True)
    if report.rows:  # nothing to download from an empty table
        buttons.download_button(
            "Download CSV", evidence_csv(report), "policybot-evidence.csv", "text/csv", key="evidence-csv"
        )
        buttons.download_button(
            "Download Markdown", evidence_markdown(report), "policybot-evidence.md", "text/markdown", key="evidence-md"
        )
    if buttons.button("Clear", key="evidence-clear"):
        clear_evidence()
        st.rerun()
    if not report.rows:
        render_trace(report)
        return
    st.html(PHONE_CSS)
    with st.container(key="evidence-grid"):
        selected = evidence_table(report)
        st.caption("Select a row: its passage opens right below, with the quote on its page.")
    evidence_cards(report)
    order = sorted(report.rows, key=lambda row: row.n != selected)  # the selected row's panel first, in view
    for row in order:
        panel = f"ev{st.session_state.evidence_run}-{row.n}"
        render_citation(
            bot,
            row.citation,
            False,
            panel,
            expanded=row.n == selected,
            title=evidence_title(row),
            page_on_request=row.n != selected,
        )
    render_trace(report)


def render_trace(report: EvidenceReport) -> None:
    st.subheader("How it was collected")
    for step in report.trace:
        render_step(step)


def evidence_cards(report: EvidenceReport) -> None:
    """The rows as cards, shown instead of the table on a narrow screen."""
    with st.container(key="evidence-cards"):
        for row in report.rows:
            c = row.citation
            with st.container(border=True):
                st.markdown(evidence_title(row))
                st.markdown(literal_html(plain_quote(quote_as_read(c))), unsafe_allow_html=True)
                if row.why:
                    st.caption(escape_markdown(row.why))


def evidence_table(report: EvidenceReport) -> int | None:
    """The table (cells are plain text in the grid; quotes without Markdown, wrapped in tall rows);
    returns the selected row's number."""
    records = evidence_records(report)
    data = {column: [r[field] for r in records] for column, field in EVIDENCE_TABLE.items()}
    data["document"] = [context().shown_name(str(name)) for name in data["document"]]  # titles, as everywhere
    data["role"] = [r.citation.role or r.role for r in report.rows]
    data["quote"] = [plain_quote(quote_as_read(r.citation)) for r in report.rows]
    data["same text in"] = ["; ".join(same_text_labels(r.citation.same_text_in)) for r in report.rows]
    config = {
        "#": st.column_config.NumberColumn(width=40),
        "document": st.column_config.TextColumn(width=140),
        "section": st.column_config.TextColumn(width=160),
        "pages": st.column_config.TextColumn(width=60),
        "role": st.column_config.TextColumn(width=90),
        "quote": st.column_config.TextColumn(width=520),
        "why": st.column_config.TextColumn(width=200),
    }
    event = st.dataframe(
        data,
        hide_index=True,
        column_config=config,
        row_height=84,  # taller rows wrap a long quote over several lines
        key=f"evidence-table-{st.session_state.evidence_run}",
        on_select="rerun",
        selection_mode="single-row",
    )
    rows = event.selection.rows if report.rows else []
    return report.rows[rows[0]].n if rows and rows[0] < len(report.rows) else None


def evidence_title(row: EvidenceRow) -> str:
    """A row's panel label as the chat labels its sources: number, role, title, clause, pages; a
    warning only where the quote (an LLM's words) was not found in the passage."""
    c = row.citation
    role = f"{c.role} · " if c.role else ""
    mark = "" if c.verified else " · ⚠ quote not found in the passage"
    same = f" · same text in: {'; '.join(same_text_labels(c.same_text_in))}" if c.same_text_in else ""
    label = source_label(c.doc, c.cited_section, c.page_start, c.page_end, context().shown_name(c.doc))
    return escape_markdown(f"[{row.n}] {role}{label}{mark}{same}")


page(context())

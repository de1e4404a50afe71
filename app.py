"""PolicyBot's Streamlit app: renders the chat and calls the service facade (policybot.service).

Run with `make run` (or `streamlit run app.py`). Pipeline logic lives in the library; this
file only draws widgets, keeps per-session state, and forwards questions and uploads.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import date
from typing import Callable

from policybot.startup import configure_process

configure_process()  # before Streamlit and the model libraries load

import streamlit as st  # noqa: E402

from policybot.events import AnswerEvent, EvidenceDoneEvent, EvidenceStepEvent, PassagesEvent, StageEvent, StandaloneEvent, TokenEvent  # noqa: E402
from policybot.export import conversation_json, conversation_markdown, evidence_csv, evidence_markdown, evidence_records  # noqa: E402
from policybot.kiosk import PinGate, relock_reason  # noqa: E402
from policybot.markup import escape_markdown, highlight_html, literal_block, literal_html  # noqa: E402
from policybot.options import AskOptions, EvidenceOptions  # noqa: E402
from policybot.schemas import DISCLAIMER, Answer, Citation, DocumentInfo, DocumentList, EvidenceReport, EvidenceRow, TraceStep  # noqa: E402
from policybot.service import AlreadyDeleted, PolicyBot, PolicyBotError  # noqa: E402
from policybot.settings import Settings  # noqa: E402

STAGE_LABELS = {
    "condensing": "Understanding your follow-up…",
    "expanding": "Writing search queries…",
    "searching": "Searching the documents…",
    "reranking": "Ranking the passages…",
    "writing": "Writing the answer…",
}
PAGES = ["Chat", "Evidence"]
# The evidence table's columns, from export.evidence_records' fields.
EVIDENCE_TABLE = {"#": "n", "document": "document", "section": "section", "pages": "pages", "role": "role", "quote": "quote", "why": "why", "same text in": "same_text_in"}
HOW_COLLECTED = {"react": "the ReAct agent ({model})", "planner": "the deterministic planner (no LLM)", "single": "one search"}


@st.cache_resource(show_spinner=False)
def load_bot(settings_json: str) -> PolicyBot:
    """One service per process and settings. The models load in the background (once, not per
    question), so the page, the library and a loading status show at once."""
    bot = PolicyBot(Settings.model_validate_json(settings_json))
    bot.warm_up_in_background()
    return bot


@st.cache_resource
def load_pin_gate(home: str, pin: str | None, free_attempts: int) -> PinGate:
    """One PIN gate per library and process: wrong PINs count across every browser session."""
    return PinGate(pin, free_attempts=free_attempts)


def session() -> dict:
    """Per-browser-session state: each visitor has their own conversation."""
    state = st.session_state
    state.setdefault("session_id", uuid.uuid4().hex[:12])
    state.setdefault("history", [])  # list of (question, Answer)
    state.setdefault("last_active", time.time())
    state.setdefault("unlocked", False)
    state.setdefault("unlocked_at", None)
    state.setdefault("notice", None)
    state.setdefault("library_notice", None)
    state.setdefault("evidence", None)  # the last EvidenceReport of this session
    state.setdefault("evidence_run", 0)  # counts evidence runs: each table gets a fresh selection
    state.setdefault("page", PAGES[0])
    return state


def clear_conversation(reason: str | None = None) -> None:
    st.session_state.history = []
    st.session_state.notice = reason


def clear_evidence() -> None:
    st.session_state.evidence = None
    st.session_state.evidence_run += 1


def reset_for_next_visitor(settings: Settings) -> None:
    """Kiosk idle time: the conversation, the evidence table and the typed issue go, and the
    page goes back to the chat (widget values are set before the widgets are drawn)."""
    state = st.session_state
    if state.history and state.evidence is not None:
        what = "The conversation and the evidence table were"
    else:
        what = "The conversation was" if state.history else "The evidence table was"
    clear_conversation(f"{what} cleared after {settings.kiosk_idle_minutes:g} minutes without activity.")
    clear_evidence()
    state["evidence_issue"] = ""
    state["page"] = PAGES[0]


# --- sidebar ------------------------------------------------------------------------------


def sidebar_status(bot: PolicyBot, docs: DocumentList) -> str | None:
    """Profile, models, LLM and index; returns the extractive-mode notice, if any."""
    llm, notice = bot.llm()
    profile = bot.profile
    chunks = sum(d.chunks for d in docs.documents)
    with st.sidebar.expander("Status", expanded=False):
        st.markdown(f"**Profile:** {escape_markdown(profile.name)}  \n{escape_markdown(profile.reason)}")
        st.markdown(f"**Embeddings:** {escape_markdown(profile.profile.embedding.name)}")
        st.markdown(f"**Reranker:** {escape_markdown(profile.profile.reranker.name if profile.profile.reranker else 'none')}")
        if llm is not None:
            st.markdown(f"**Answers:** written by {escape_markdown(llm.name)} from the passages")
        else:
            st.markdown(f"**Answers:** quotes of the best passages. {escape_markdown(notice or '')}")
        st.markdown(f"**Index:** {len(docs.documents)} documents, {chunks} passages")
    return notice if llm is None else None


def sidebar_library(bot: PolicyBot, listing: DocumentList, can_edit: bool) -> list[str] | None:
    """The document list, the search scope, and (when allowed) upload, editions and delete.
    Returns the documents a question searches, or None for "the editions in force" (the library
    picks them for the date asked)."""
    st.sidebar.subheader("Documents")
    docs = listing.documents
    names = [d.name for d in docs]
    in_force = [d.name for d in docs if not d.superseded_by]
    if not docs:
        st.sidebar.info("No documents yet." + (" Upload PDFs below." if can_edit else ""))
    for d in docs:
        st.sidebar.caption(f"**{escape_markdown(d.name)}** — {d.pages} pages, {d.chunks} passages, {d.sections} sections, added {d.ingested_at[:10]}{edition_summary(d)}{ocr_summary(d)}")
    known = st.session_state.get("scope_library")
    if known != names:  # the library changed: keep the choice, add new documents (in force), drop deleted ones
        chosen = st.session_state.get("scope", in_force)
        st.session_state["scope"] = [n for n in names if n in chosen or (n not in (known or []) and n in in_force)]
        st.session_state["scope_library"] = names
    scope = st.sidebar.multiselect("Search in", names, key="scope", help="Which documents a question searches (superseded editions are left out unless chosen).")
    if can_edit:
        library_notice()
        upload_box(bot)
        editions_box(bot, docs)
        effective_box(bot, docs)
        delete_box(bot, docs)
    return None if not scope or set(scope) == set(in_force) else scope


def edition_summary(d: DocumentInfo) -> str:
    text = f" · effective {d.effective_date}" if d.effective_date else ""
    if d.superseded_by:
        text += f" · superseded by {d.superseded_by}"
    elif d.edition_status == "proposed":
        text += " · a new edition? (confirm under Editions)"
    return escape_markdown(text)


def editions_box(bot: PolicyBot, docs: list[DocumentInfo]) -> None:
    """Confirm detected editions; choose the date whose editions are searched."""
    proposed = [d for d in docs if d.edition_status == "proposed"]
    members = Counter(d.edition_of for d in docs if d.edition_of and d.edition_status == "confirmed")
    if not proposed and not any(n > 1 for n in members.values()):
        return
    with st.sidebar.expander("Editions", expanded=bool(proposed)):
        for d in proposed:
            st.button(f"Confirm {d.name} as a new edition", key=f"confirm-{d.sha256[:16]}", on_click=confirm_edition, args=(bot, d.name))
        st.date_input("Editions in force on", key="as_of", help="Questions use the edition of each policy in force on this day.")


def effective_box(bot: PolicyBot, docs: list[DocumentInfo]) -> None:
    """Set by hand the date a document's edition takes effect (when it does not say, or says wrong)."""
    if not docs:
        return
    with st.sidebar.expander("Edition date"):
        doc = pick_document(docs, "effective_doc")
        current = date.fromisoformat(doc.effective_date) if doc.effective_date else date.today()
        when = st.date_input("Takes effect on", value=current, key=f"effective_{doc.sha256[:16]}")
        st.button("Set the date", key="do_effective", on_click=set_effective, args=(bot, doc.name, when))


def set_effective(bot: PolicyBot, name: str, when: date) -> None:
    edition_change(lambda: f"{name} takes effect on {bot.set_effective(name, when).effective_date}.")


def confirm_edition(bot: PolicyBot, name: str) -> None:
    def change() -> str:
        bot.confirm_edition(name)
        return f"{name} is now an edition: questions use the edition in force."

    edition_change(change)


def edition_change(change: Callable[[], str]) -> None:
    """Run a change to dates or families, say what it did, and recompute the default scope:
    which editions are in force (and so searched) may have changed."""
    try:
        st.session_state.library_notice = ("success", change())
    except PolicyBotError as exc:
        st.session_state.library_notice = ("warning", str(exc))
    st.session_state.pop("scope_library", None)
    st.session_state.pop("scope", None)


def ocr_summary(d: DocumentInfo) -> str:
    """Which pages of a document were read by OCR, and which of them are flagged."""
    if not d.ocr_pages:
        return ""
    pages = sorted(d.ocr_pages)
    low = min(d.ocr_pages.values())
    text = f" · {len(pages)} scanned page(s) read by OCR ({page_span(pages)}), confidence {low:.0f}–{max(d.ocr_pages.values()):.0f}%"
    if d.ocr_flagged:
        text += f" · ⚠ low confidence on page(s) {page_span(d.ocr_flagged)}: check them against the page images"
    return escape_markdown(text)


def page_span(pages: list[int]) -> str:
    """1, 2, 3, 5 -> '1–3, 5'."""
    runs: list[list[int]] = []
    for page in pages:
        if runs and page == runs[-1][-1] + 1:
            runs[-1].append(page)
        else:
            runs.append([page])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def library_notice() -> None:
    """What the last library action (run in a callback) did."""
    notice = st.session_state.pop("library_notice", None)
    if notice:
        kind, text = notice
        (st.sidebar.success if kind == "success" else st.sidebar.warning)(escape_markdown(text))


def upload_box(bot: PolicyBot) -> None:
    files = st.sidebar.file_uploader("Add PDFs", type=["pdf"], accept_multiple_files=True, key="uploads")
    if not files or not st.sidebar.button("Add to library", key="do_upload"):
        return
    for file in files:
        bar = st.sidebar.progress(0.0, text="starting")

        def on_progress(event, bar=bar) -> None:
            fraction = event.done / event.total if event.total else 1.0
            label = {"read": "reading pages", "ocr": "reading scanned pages (OCR)", "chunk": "chunked", "embed": "embedding passages", "save": "saving", "done": "done"}[event.stage]
            bar.progress(min(fraction, 1.0), text=escape_markdown(f"{event.file}: {label} ({event.done}/{event.total})"))

        try:
            outcome = bot.ingest_upload(file.name, file.getvalue(), progress=on_progress)
        except OSError as exc:  # the staging copy could not be written (disk full, permissions)
            st.sidebar.error(escape_markdown(f"{file.name[:80]}: could not be saved for reading ({exc.strerror or exc})"))
            continue
        name = outcome.name
        if outcome.status == "failed":
            st.sidebar.error(escape_markdown(outcome.message))  # the message already names the file
        elif outcome.status in ("duplicate", "unchanged"):
            st.sidebar.warning(escape_markdown(f"{name}: {outcome.message}"))
        else:
            st.sidebar.success(escape_markdown(f"{name}: {outcome.pages} pages, {outcome.chunks} passages"))
        for warning in outcome.warnings:
            st.sidebar.warning(escape_markdown(f"{name}: {warning}"))


def pick_document(docs: list[DocumentInfo], key: str) -> DocumentInfo:
    """A select box of the library's documents, keyed by SHA-256 (a choice survives renames)."""
    by_sha = {d.sha256: d for d in docs}
    sha = st.selectbox("Document", list(by_sha), format_func=lambda value: by_sha[value].name, key=key)
    return by_sha[sha]


def delete_box(bot: PolicyBot, docs: list[DocumentInfo]) -> None:
    """Delete with a confirmation bound to one document: the click acts on the document that
    was shown and ticked (its SHA-256), never on whatever the list holds by then."""
    if not docs:
        return
    with st.sidebar.expander("Delete a document"):
        doc = pick_document(docs, "delete_doc")
        sure = st.checkbox(f"Yes, delete {escape_markdown(doc.name)} and its passages", key=f"delete_sure_{doc.sha256[:16]}")
        st.button("Delete", key="do_delete", disabled=not sure, on_click=delete_document, args=(bot, doc.name, doc.sha256))


def delete_document(bot: PolicyBot, name: str, sha256: str) -> None:
    """The Delete button's callback, with the document bound when the button was drawn."""
    try:
        bot.delete(name, sha256=sha256)
        st.session_state.library_notice = ("success", f"Deleted {name}.")
    except AlreadyDeleted as exc:
        st.session_state.library_notice = ("warning", str(exc))
    st.session_state.pop(f"delete_sure_{sha256[:16]}", None)


def sidebar_settings(bot: PolicyBot) -> AskOptions:
    """Per-session answer settings (they never change other sessions)."""
    s = bot.settings
    with st.sidebar.expander("Settings"):
        fast = st.toggle("Fast mode (no query rewriting)", value=s.fast_mode, key="fast")
        rerank = st.toggle("Rerank passages", value=s.rerank, key="rerank", disabled=bot.profile.profile.reranker is None)
        top_p = st.slider("Top-p (passage selection)", 0.5, 1.0, float(s.fusion_top_p), 0.05, key="top_p")
        rewrites = st.slider("Query rewrites", 0, 8, int(s.expansion_rewrites), key="rewrites")
        language = st.selectbox("Answer language", ["auto", "English", "Bahasa Melayu", "Français", "Español", "Deutsch", "हिन्दी"], key="language")
    return AskOptions(fast=fast, rerank=rerank, top_p=top_p, rewrites=rewrites, language=language)


def sidebar_kiosk(bot: PolicyBot) -> bool:
    """Kiosk lock: True when library and settings may be shown."""
    state = st.session_state
    settings = bot.settings
    if not settings.kiosk or state.unlocked:
        if settings.kiosk and st.sidebar.button("Lock admin", key="lock"):
            lock_admin(None)
            st.rerun()
        return True
    gate = load_pin_gate(str(settings.home.resolve()), settings.kiosk_pin, settings.kiosk_pin_attempts)
    with st.sidebar.expander("Admin"):
        if not settings.kiosk_pin:
            st.caption("Set POLICYBOT_KIOSK_PIN to allow unlocking on this kiosk.")
        pin = st.text_input("Admin PIN", type="password", key="pin")
        if st.button("Unlock", key="unlock"):
            verdict = gate.attempt(state.session_id, pin)
            if verdict.ok:
                state.unlocked = True
                state.unlocked_at = time.time()
                st.rerun()
            st.error(verdict.message)
    return False


def lock_admin(reason: str | None) -> None:
    st.session_state.unlocked = False
    st.session_state.unlocked_at = None
    if reason:
        st.session_state.notice = reason


def kiosk_guard(settings: Settings) -> bool:
    """Kiosk: after the idle time the conversation is cleared and the admin locked again; an
    unlocked admin also locks after its maximum time. True when something was reset."""
    if not settings.kiosk:
        return False
    state = st.session_state
    now = time.time()
    idle_s = settings.kiosk_idle_minutes * 60
    changed = False
    if (state.history or state.evidence is not None) and now - state.last_active > idle_s:
        reset_for_next_visitor(settings)
        changed = True
    reason = relock_reason(now, state.unlocked_at if state.unlocked else None, state.last_active, idle_s, settings.kiosk_unlock_minutes * 60)
    if reason:
        lock_admin(reason if not changed else f"{state.notice} {reason}")
        changed = True
    return changed


# --- answers ------------------------------------------------------------------------------


def citation_title(c: Citation, refused: bool) -> str:
    # Plain symbols (DejaVu has them): kiosk browsers often have no emoji font.
    mark = "" if refused or not c.cited else (" ✓ verified" if c.verified else " ⚠ unverified")
    extra = ""
    if c.referenced_by:
        extra += escape_markdown(f" · referenced by [{c.referenced_by[0]}] ({c.reference})")
    if c.same_text_in:
        extra += escape_markdown(f" · same text in: {'; '.join(c.same_text_in)}")
    if c.ocr_confidence is not None:
        extra += f" · OCR {c.ocr_confidence:.0f}%"
    score = "" if c.referenced_by else f" · score {c.score:.2f}"
    return f"{escape_markdown(f'[{c.n}] {c.label}')}{mark}{extra}{score}"


def ocr_note(c: Citation, floor: float) -> None:
    """A passage read from a scanned page says so: OCR can misread a figure or a word."""
    if c.ocr_confidence is None:
        return
    if c.ocr_confidence < floor:
        st.warning(f"Text read by OCR with low confidence ({c.ocr_confidence:.0f}%, under {floor:.0f}%): it may be misread. Check it against the page image before relying on it.")
    else:
        st.caption(f"Text read by OCR, confidence {c.ocr_confidence:.0f}% — compare with the page image.")


def render_citation(
    bot: PolicyBot, c: Citation, refused: bool, key: str, expanded: bool = False, title: str | None = None, page_on_request: bool = False
) -> None:
    """A source's panel: the chunk with the quote highlighted, the page image, the PDF.

    ``page_on_request``: the page image waits for a click. Streamlit redraws the whole history on
    every rerun, so images in earlier answers were rendered and sent again with each new question
    (turn 30 took 2.6 times as long as turn 10)."""
    with st.expander(title or citation_title(c, refused), expanded=expanded):
        ocr_note(c, bot.settings.ocr.confidence_floor)
        st.markdown(highlight_html(c.text, c.quote_start, c.quote_end), unsafe_allow_html=True)
        if page_on_request and not st.toggle(f"Show page {c.page_start}", key=f"page-{key}"):
            return
        try:
            image = bot.page_image(c.doc, c.page_start, c.quote)
        except PolicyBotError as exc:  # the document was deleted, or the page is gone
            st.caption(escape_markdown(f"{str(exc)[:1].upper()}{str(exc)[1:]}."))
            return
        st.image(image, caption=f"{c.doc}, page {c.page_start}" + (" — quote highlighted" if c.quote else ""))
        pdf = bot.stored_pdf(c.doc)
        if pdf is not None:
            st.download_button(
                escape_markdown(f"Download {c.doc} (see page {c.page_start})"),
                data=lambda: pdf.read_bytes(),  # read only when clicked, not on every rerun
                file_name=c.doc,
                mime="application/pdf",
                key=f"dl-{key}",
            )


def render_answer(bot: PolicyBot, answer: Answer, index: int, banner: str | None, latest: bool = True) -> None:
    if answer.standalone_question != answer.question:
        st.caption(escape_markdown(f"Searched as: {answer.standalone_question}"))
    if answer.named_documents:
        st.caption(escape_markdown(f"Searched only {', '.join(answer.named_documents)}: the question names it."))
    st.markdown(literal_block(answer.answer), unsafe_allow_html=True)  # document and model text, shown as text
    if answer.notice and answer.notice != banner:  # the banner already says it
        st.caption(f"ℹ️ {escape_markdown(answer.notice)}")
    if answer.refused:
        st.caption("Closest passages, for reading:")
    for c in answer.shown_citations:
        render_citation(bot, c, answer.refused, f"{index}-{c.n}", page_on_request=not latest)
    if answer.edition_note and answer.earlier_edition is not None:
        st.info(escape_markdown(answer.edition_note), icon="🗓️")
        earlier = answer.earlier_edition
        render_citation(bot, earlier, False, f"{index}-earlier", title=escape_markdown(f"Earlier edition: {earlier.label}"), page_on_request=True)
    cols = st.columns([1, 1, 3])
    with cols[0].popover("Copy answer"):
        st.code(answer.answer, language=None, wrap_lines=True)
    rating = cols[1].feedback("thumbs", key=f"rating-{index}")
    if rating is not None:
        with cols[2]:
            comment = st.text_input("Comment (optional)", key=f"comment-{index}")
            if st.button("Send feedback", key=f"send-{index}"):
                bot.record_feedback(answer, "up" if rating == 1 else "down", comment, st.session_state.session_id)
                st.toast("Thank you — saved on this machine.")


def ask(bot: PolicyBot, question: str, options: AskOptions) -> Answer | None:
    """Stream one answer: status line, first passages, then tokens."""
    history = [answer for _, answer in st.session_state.history]
    final: dict[str, Answer] = {}
    status = st.status("Searching the documents…", expanded=False)
    preview = st.empty()

    def tokens():
        for event in bot.ask_stream(question, history, options):
            if isinstance(event, StageEvent):
                status.update(label=STAGE_LABELS.get(event.name, event.name))
            elif isinstance(event, StandaloneEvent):
                status.write(escape_markdown(f"Searching as: {event.question}"))
            elif isinstance(event, PassagesEvent) and event.passages:
                lines = "\n".join(f"- {escape_markdown(c.label)}" for c in event.passages[:3])
                preview.markdown(f"**Closest passages so far:**\n{lines}")
            elif isinstance(event, TokenEvent):
                yield event.text
            elif isinstance(event, AnswerEvent):
                final["answer"] = event.answer

    try:
        st.write_stream(tokens())
    except PolicyBotError as exc:
        status.update(label="Could not answer", state="error")
        st.error(escape_markdown(str(exc)))
        return None
    status.update(label="Done", state="complete")
    preview.empty()
    return final.get("answer")


# --- evidence -----------------------------------------------------------------------------


def evidence_page(bot: PolicyBot, scope: list[str], llm_notice: str | None) -> None:
    """Collect everything the documents say on an issue: a table of quotes, each with its page."""
    state = st.session_state
    if not scope:
        st.info("No documents yet: add PDFs to the library first.")
        return
    st.caption(escape_markdown(f"Collects every passage on an issue from: {', '.join(scope)} (choose under “Search in” in the sidebar)."))
    if llm_notice:
        st.info(f"**Deterministic planner:** no LLM is running, so fixed rules collect the evidence. {escape_markdown(llm_notice)}", icon="ℹ️")
    with st.form("evidence_form", border=False):
        issue = st.text_input("Issue", key="evidence_issue", placeholder="e.g. escape of water", help="A topic, not a question: PolicyBot collects what covers, limits, defines and conditions it.")
        run = st.form_submit_button("Collect evidence", key="collect", type="primary")
    if run:
        state.last_active = time.time()
        state.notice = None
        if not issue.strip():
            st.warning("Type an issue first, for example “escape of water”.")
        else:
            report = collect_evidence(bot, issue, scope)
            if report is not None:
                clear_evidence()
                state.evidence = report
                st.rerun()
    if state.evidence is not None:
        render_evidence(bot, state.evidence, llm_notice)


def collect_evidence(bot: PolicyBot, issue: str, scope: list[str]) -> EvidenceReport | None:
    """One evidence run, shown step by step: a status line and one panel per step."""
    status = st.status("Collecting evidence…", expanded=False)
    steps = st.container()
    report: EvidenceReport | None = None
    try:
        for event in bot.evidence_stream(issue, EvidenceOptions(docs=scope)):
            if isinstance(event, EvidenceStepEvent):
                status.update(label=escape_markdown(f"Step {event.step.step}: {event.step.action}[{event.step.argument}]"))
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
    parts = [("Thought", step.thought), ("Action", f"{step.action}[{step.argument}]"), ("Observation", step.observation)]
    body = "&#10;".join(f"<b>{name}:</b> {literal_html(text.strip() or '—')}" for name, text in parts)
    with st.expander(step_title(step)):
        st.markdown(f'<div style="white-space: pre-wrap">{body}</div>', unsafe_allow_html=True)


def evidence_summary(report: EvidenceReport) -> str:
    how = HOW_COLLECTED[report.mode].format(model=report.llm_model or "an LLM")
    found = f"{len(report.rows)} passages" if report.rows else "Nothing found on this issue in these documents"
    return f"{found} on “{report.issue}”, collected by {how} in {len(report.trace)} steps, {report.seconds:.1f} s; stopped: {report.stopped}."


def render_evidence(bot: PolicyBot, report: EvidenceReport, banner: str | None) -> None:
    """The report: what was done, downloads, the table, one source panel per row, the trace."""
    st.markdown(escape_markdown(evidence_summary(report)))
    if report.notice and report.notice != banner:  # the banner already says it
        st.caption(f"ℹ️ {escape_markdown(f'No LLM was used: {report.notice}')}")
    buttons = st.container(horizontal=True)
    buttons.download_button("Download CSV", evidence_csv(report), "policybot-evidence.csv", "text/csv", key="evidence-csv")
    buttons.download_button("Download Markdown", evidence_markdown(report), "policybot-evidence.md", "text/markdown", key="evidence-md")
    if buttons.button("Clear", key="evidence-clear"):
        clear_evidence()
        st.rerun()
    selected = evidence_table(report)
    if report.rows:
        st.caption("Select a row to open its passage below; each panel shows the quote on its page.")
    for row in report.rows:
        key = f"ev{st.session_state.evidence_run}-{row.n}"
        render_citation(bot, row.citation, False, key, expanded=row.n == selected, title=evidence_title(row), page_on_request=row.n != selected)
    st.subheader("How it was collected")
    for step in report.trace:
        render_step(step)


def evidence_table(report: EvidenceReport) -> int | None:
    """The table (cells are plain text in the grid); returns the selected row's number."""
    records = evidence_records(report)
    data = {column: [r[field] for r in records] for column, field in EVIDENCE_TABLE.items()}
    config = {"#": st.column_config.NumberColumn(width="small"), "quote": st.column_config.TextColumn(width="large"), "why": st.column_config.TextColumn(width="medium")}
    event = st.dataframe(
        data, hide_index=True, column_config=config, key=f"evidence-table-{st.session_state.evidence_run}", on_select="rerun", selection_mode="single-row"
    )
    rows = event.selection.rows if report.rows else []
    return report.rows[rows[0]].n if rows and rows[0] < len(report.rows) else None


def evidence_title(row: EvidenceRow) -> str:
    c = row.citation
    mark = "✓ verified" if c.verified else "⚠ unverified"
    same = f" · same text in: {'; '.join(c.same_text_in)}" if c.same_text_in else ""
    return escape_markdown(f"[{row.n}] {c.label} · {row.role} · {mark}{same}")


# --- page ---------------------------------------------------------------------------------


def loading_watch(bot: PolicyBot) -> None:
    """While the models load: say so, and redraw the page once they are ready."""
    warmup = bot.warm_up_in_background()
    if warmup.state == "failed":
        st.error(escape_markdown(f"The models could not be loaded ({warmup.error}). Run `policybot doctor` for the fix."))
    if warmup.state != "loading":
        return
    st.info("Loading the models… You can look at the library now; a question asked meanwhile is answered as soon as they are ready.", icon="⏳")

    @st.fragment(run_every=1.0)
    def check() -> None:
        if warmup.state != "loading":
            st.rerun(scope="app")

    check()


def idle_watch(bot: PolicyBot) -> None:
    """Kiosk: clear the conversation and lock the admin after the idle time, even if nobody
    touches the screen (a fragment re-checks every 30 s without redrawing the page)."""
    settings = bot.settings
    if not settings.kiosk:
        return

    @st.fragment(run_every=min(30.0, settings.kiosk_idle_minutes * 60))
    def check() -> None:
        if kiosk_guard(settings):
            st.rerun()

    check()


def main() -> None:
    st.set_page_config(page_title="PolicyBot", page_icon="📄", layout="wide")
    state = session()
    settings = Settings().for_serving()
    bot = load_bot(settings.model_dump_json())

    # Kiosk: a conversation left idle is cleared, and the admin locked, before the next person
    # sees the page. Every full run is a visitor's action, so it counts as activity.
    kiosk_guard(settings)
    state.last_active = time.time()

    st.title("PolicyBot")
    st.caption(DISCLAIMER)
    loading_watch(bot)

    can_edit = sidebar_kiosk(bot)
    listing = bot.documents()
    extractive_notice = sidebar_status(bot, listing)
    chosen = sidebar_library(bot, listing, can_edit)
    as_of = st.session_state.get("as_of")
    options = (sidebar_settings(bot) if can_edit else AskOptions()).merged(docs=chosen, as_of=as_of if as_of != date.today() else None)
    scope = chosen or ([d.name for d in bot.resolve_docs(None, options.as_of)] if listing.documents else [])

    page = st.segmented_control("Page", PAGES, key="page", required=True, label_visibility="collapsed")
    if page == "Evidence":
        if state.notice:
            st.info(escape_markdown(state.notice))
        evidence_page(bot, scope, extractive_notice)
    else:
        chat_page(bot, options, extractive_notice)
    idle_watch(bot)


def chat_page(bot: PolicyBot, options: AskOptions, extractive_notice: str | None) -> None:
    """The conversation: banners, its answers so far, and the question box."""
    state = st.session_state
    if extractive_notice:
        st.info(f"**Extractive mode:** {escape_markdown(extractive_notice)}", icon="ℹ️")
    if state.notice:
        st.info(escape_markdown(state.notice))

    top = st.columns([1, 1, 1, 3])
    if top[0].button("New conversation", key="new"):
        clear_conversation()
        st.rerun()
    if state.history:
        top[1].download_button("Export Markdown", conversation_markdown(state.history), "policybot-conversation.md", "text/markdown", key="export-md")
        top[2].download_button("Export JSON", conversation_json(state.history), "policybot-conversation.json", "application/json", key="export-json")

    for i, (question, answer) in enumerate(state.history):
        with st.chat_message("user"):
            st.markdown(literal_block(question), unsafe_allow_html=True)
        with st.chat_message("assistant"):
            render_answer(bot, answer, i, extractive_notice, latest=i == len(state.history) - 1)

    question = st.chat_input("Ask a question about your policy documents")
    if question:
        state.last_active = time.time()
        state.notice = None
        with st.chat_message("user"):
            st.markdown(literal_block(question), unsafe_allow_html=True)
        with st.chat_message("assistant"):
            answer = ask(bot, question, options)
        if answer is not None:
            state.history.append((question, answer))
            st.rerun()

main()

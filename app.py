"""PolicyBot's Streamlit app: renders the chat and calls the service facade (policybot.service).

Run with `make run` (or `streamlit run app.py`). Pipeline logic lives in the library; this
file only draws widgets, keeps per-session state, and forwards questions and uploads.
"""

from __future__ import annotations

import time
import uuid

from policybot.startup import configure_process

configure_process()  # before Streamlit and the model libraries load

import streamlit as st  # noqa: E402

from policybot.events import AnswerEvent, PassagesEvent, StageEvent, StandaloneEvent, TokenEvent  # noqa: E402
from policybot.export import conversation_json, conversation_markdown  # noqa: E402
from policybot.kiosk import PinGate, relock_reason  # noqa: E402
from policybot.markup import escape_markdown, highlight_html, literal_block  # noqa: E402
from policybot.options import AskOptions  # noqa: E402
from policybot.schemas import DISCLAIMER, Answer, Citation, DocumentInfo, DocumentList  # noqa: E402
from policybot.service import AlreadyDeleted, PolicyBot, PolicyBotError  # noqa: E402
from policybot.settings import Settings  # noqa: E402

STAGE_LABELS = {
    "condensing": "Understanding your follow-up…",
    "expanding": "Writing search queries…",
    "searching": "Searching the documents…",
    "reranking": "Ranking the passages…",
    "writing": "Writing the answer…",
}


@st.cache_resource(show_spinner="Loading the models and the index (once)…")
def load_bot(settings_json: str) -> PolicyBot:
    """One service per process and settings: models and index load once, not per question."""
    bot = PolicyBot(Settings.model_validate_json(settings_json))
    bot.warm_up()
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
    return state


def clear_conversation(reason: str | None = None) -> None:
    st.session_state.history = []
    st.session_state.notice = reason


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


def sidebar_library(bot: PolicyBot, listing: DocumentList, can_edit: bool) -> list[str]:
    """The document list, the search scope, and (when allowed) upload and delete."""
    st.sidebar.subheader("Documents")
    docs = listing.documents
    names = [d.name for d in docs]
    if not docs:
        st.sidebar.info("No documents yet." + (" Upload PDFs below." if can_edit else ""))
    for d in docs:
        st.sidebar.caption(f"**{escape_markdown(d.name)}** — {d.pages} pages, {d.chunks} passages, {d.sections} sections, added {d.ingested_at[:10]}")
    known = st.session_state.get("scope_library")
    if known != names:  # the library changed: keep the choice, add new documents, drop deleted ones
        chosen = st.session_state.get("scope", names)
        st.session_state["scope"] = [n for n in names if n in chosen or n not in (known or [])]
        st.session_state["scope_library"] = names
    scope = st.sidebar.multiselect("Search in", names, key="scope", help="Which documents a question searches.")
    if can_edit:
        library_notice()
        upload_box(bot)
        delete_box(bot, docs)
    return scope or names


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
            label = {"read": "reading pages", "chunk": "chunked", "embed": "embedding passages", "save": "saving", "done": "done"}[event.stage]
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


def delete_box(bot: PolicyBot, docs: list[DocumentInfo]) -> None:
    """Delete with a confirmation bound to one document: the click acts on the document that
    was shown and ticked (its SHA-256), never on whatever the list holds by then."""
    if not docs:
        return
    by_sha = {d.sha256: d for d in docs}
    with st.sidebar.expander("Delete a document"):
        sha = st.selectbox("Document", list(by_sha), format_func=lambda key: by_sha[key].name, key="delete_doc")
        doc = by_sha[sha]
        sure = st.checkbox(f"Yes, delete {escape_markdown(doc.name)} and its passages", key=f"delete_sure_{sha[:16]}")
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
    if state.history and now - state.last_active > idle_s:
        clear_conversation(f"The conversation was cleared after {settings.kiosk_idle_minutes:g} minutes without activity.")
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
    score = "" if c.referenced_by else f" · score {c.score:.2f}"
    return f"{escape_markdown(f'[{c.n}] {c.label}')}{mark}{extra}{score}"


def render_citation(bot: PolicyBot, c: Citation, refused: bool, key: str) -> None:
    with st.expander(citation_title(c, refused)):
        st.markdown(highlight_html(c.text, c.quote_start, c.quote_end), unsafe_allow_html=True)
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


def render_answer(bot: PolicyBot, answer: Answer, index: int, banner: str | None) -> None:
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
        render_citation(bot, c, answer.refused, f"{index}-{c.n}")
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


# --- page ---------------------------------------------------------------------------------


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
    settings = Settings()
    bot = load_bot(settings.model_dump_json())

    # Kiosk: a conversation left idle is cleared, and the admin locked, before the next person
    # sees the page. Every full run is a visitor's action, so it counts as activity.
    kiosk_guard(settings)
    state.last_active = time.time()

    st.title("PolicyBot")
    st.caption(DISCLAIMER)

    can_edit = sidebar_kiosk(bot)
    listing = bot.documents()
    extractive_notice = sidebar_status(bot, listing)
    scope = sidebar_library(bot, listing, can_edit)
    options = (sidebar_settings(bot) if can_edit else AskOptions()).merged(docs=scope)

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
            render_answer(bot, answer, i, extractive_notice)

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
    idle_watch(bot)


main()

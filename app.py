"""PolicyBot's Streamlit app: renders the chat and calls the service facade (policybot.service).

Run with `make run` (or `streamlit run app.py`). Pipeline logic lives in the library; this
file only draws widgets, keeps per-session state, and forwards questions and uploads.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import streamlit as st  # noqa: E402

from policybot.chat import Conversation  # noqa: E402
from policybot.export import conversation_json, conversation_markdown  # noqa: E402
from policybot.feedback import FeedbackStore  # noqa: E402
from policybot.pages import cached_render, highlight_html  # noqa: E402
from policybot.schemas import Answer, Citation, DocumentList  # noqa: E402
from policybot.service import PolicyBot, PolicyBotError  # noqa: E402
from policybot.settings import Settings  # noqa: E402

DISCLAIMER = "PolicyBot is an assistive tool, not legal advice. Always check the cited source."
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
def load_feedback(path: str) -> FeedbackStore:
    return FeedbackStore(Path(path))


def session() -> dict:
    """Per-browser-session state: each visitor has their own conversation."""
    state = st.session_state
    state.setdefault("session_id", uuid.uuid4().hex[:12])
    state.setdefault("history", [])  # list of (question, Answer)
    state.setdefault("last_active", time.time())
    state.setdefault("unlocked", False)
    state.setdefault("notice", None)
    return state


def clear_conversation(reason: str | None = None) -> None:
    st.session_state.history = []
    st.session_state.notice = reason


def conversation_of(history: list[tuple[str, Answer]], max_turns: int) -> Conversation:
    convo = Conversation(max_turns)
    for _, answer in history:
        convo.add(answer)
    return convo


# --- sidebar ------------------------------------------------------------------------------


def sidebar_status(bot: PolicyBot, docs: DocumentList) -> str | None:
    """Profile, models, LLM and index; returns the extractive-mode notice, if any."""
    llm, notice = bot.llm()
    profile = bot.profile
    chunks = sum(d.chunks for d in docs.documents)
    with st.sidebar.expander("Status", expanded=False):
        st.markdown(f"**Profile:** {profile.name}  \n{profile.reason}")
        st.markdown(f"**Embeddings:** {profile.profile.embedding.name}")
        st.markdown(f"**Reranker:** {profile.profile.reranker.name if profile.profile.reranker else 'none'}")
        if llm is not None:
            st.markdown(f"**LLM:** {llm.name} (running)")
        else:
            st.markdown(f"**LLM:** not available — {notice}")
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
        st.sidebar.caption(f"**{d.name}** — {d.pages} pages, {d.chunks} passages, {d.sections} sections, added {d.ingested_at[:10]}")
    known = st.session_state.get("scope_library")
    if known != names:  # the library changed: keep the choice, add new documents, drop deleted ones
        chosen = st.session_state.get("scope", names)
        st.session_state["scope"] = [n for n in names if n in chosen or n not in (known or [])]
        st.session_state["scope_library"] = names
    scope = st.sidebar.multiselect("Search in", names, key="scope", help="Which documents a question searches.")
    if can_edit:
        upload_box(bot)
        delete_box(bot, names)
    return scope or names


def upload_box(bot: PolicyBot) -> None:
    files = st.sidebar.file_uploader("Add PDFs", type=["pdf"], accept_multiple_files=True, key="uploads")
    if not files or not st.sidebar.button("Add to library", key="do_upload"):
        return
    inbox = Path(tempfile.mkdtemp(prefix="policybot-upload-"))
    for file in files:
        path = inbox / Path(file.name).name
        path.write_bytes(file.getbuffer())
        bar = st.sidebar.progress(0.0, text=f"{file.name}: starting")

        def on_progress(event, bar=bar, name=file.name) -> None:
            fraction = event.done / event.total if event.total else 1.0
            label = {"read": "reading pages", "chunk": "chunked", "embed": "embedding passages", "save": "saving", "done": "done"}[event.stage]
            bar.progress(min(fraction, 1.0), text=f"{name}: {label} ({event.done}/{event.total})")

        outcome = bot.ingest_file(path, progress=on_progress, name=file.name)
        if outcome.status == "failed":
            st.sidebar.error(outcome.message)  # the message already names the file
        elif outcome.status in ("duplicate", "unchanged"):
            st.sidebar.warning(f"{file.name}: {outcome.message}")
        else:
            st.sidebar.success(f"{file.name}: {outcome.pages} pages, {outcome.chunks} passages")
    shutil.rmtree(inbox, ignore_errors=True)  # the library keeps its own copy


def delete_box(bot: PolicyBot, names: list[str]) -> None:
    if not names:
        return
    with st.sidebar.expander("Delete a document"):
        name = st.selectbox("Document", names, key="delete_name")
        sure = st.checkbox(f"Yes, delete {name} and its passages", key="delete_sure")
        if st.button("Delete", key="do_delete", disabled=not sure):
            bot.delete(name)
            st.session_state.pop("delete_sure", None)
            st.rerun()


def sidebar_settings(bot: PolicyBot) -> dict:
    """Per-session answer settings (they never change other sessions)."""
    s = bot.settings
    with st.sidebar.expander("Settings"):
        fast = st.toggle("Fast mode (no query rewriting)", value=s.fast_mode, key="fast")
        rerank = st.toggle("Rerank passages", value=s.rerank, key="rerank", disabled=bot.profile.profile.reranker is None)
        top_p = st.slider("Top-p (passage selection)", 0.5, 1.0, float(s.fusion_top_p), 0.05, key="top_p")
        rewrites = st.slider("Query rewrites", 0, 8, int(s.expansion_rewrites), key="rewrites")
        language = st.selectbox("Answer language", ["auto", "English", "Bahasa Melayu", "Français", "Español", "Deutsch", "हिन्दी"], key="language")
    return {"fast_mode": fast, "rerank": rerank, "fusion_top_p": top_p, "rerank_top_p": top_p, "expansion_rewrites": rewrites, "answer_language": language}


def sidebar_kiosk(bot: PolicyBot) -> bool:
    """Kiosk lock: True when library and settings may be shown."""
    state = st.session_state
    if not bot.settings.kiosk or state.unlocked:
        if bot.settings.kiosk and st.sidebar.button("Lock admin", key="lock"):
            state.unlocked = False
            st.rerun()
        return True
    with st.sidebar.expander("Admin"):
        if not bot.settings.kiosk_pin:
            st.caption("Set POLICYBOT_KIOSK_PIN to allow unlocking on this kiosk.")
        pin = st.text_input("Admin PIN", type="password", key="pin")
        if st.button("Unlock", key="unlock"):
            if bot.settings.kiosk_pin and pin == bot.settings.kiosk_pin:
                state.unlocked = True
                st.rerun()
            else:
                st.error("Wrong PIN.")
    return False


# --- answers ------------------------------------------------------------------------------


def citation_title(c: Citation, refused: bool) -> str:
    # Plain symbols (DejaVu has them): kiosk browsers often have no emoji font.
    mark = "" if refused or not c.cited else (" ✓ verified" if c.verified else " ⚠ unverified")
    return f"[{c.n}] {c.label}{mark} · score {c.score:.2f}"


def render_citation(c: Citation, stored: dict[str, str], refused: bool, key: str) -> None:
    with st.expander(citation_title(c, refused)):
        st.markdown(highlight_html(c.text, c.quote_start, c.quote_end), unsafe_allow_html=True)
        path = stored.get(c.doc)
        if not path or not Path(path).is_file():
            st.caption("The PDF of this document is not stored any more.")
            return
        try:
            image = cached_render(path, c.page_start, c.quote, 110)
            st.image(image, caption=f"{c.doc}, page {c.page_start}" + (" — quote highlighted" if c.quote else ""))
        except ValueError as exc:
            st.caption(str(exc))
        st.download_button(
            f"Download {c.doc} (see page {c.page_start})",
            data=lambda: Path(path).read_bytes(),  # read only when clicked, not on every rerun
            file_name=c.doc,
            mime="application/pdf",
            key=f"dl-{key}",
        )


def render_answer(answer: Answer, stored: dict[str, str], index: int, feedback: FeedbackStore, banner: str | None) -> None:
    if answer.standalone_question != answer.question:
        st.caption(f"Searched as: {answer.standalone_question}")
    st.markdown(answer.answer)
    if answer.notice and answer.notice != banner:  # the banner already says it
        st.caption(f"ℹ️ {answer.notice}")
    if answer.refused:
        st.caption("Closest passages, for reading:")
        shown = answer.citations
    else:
        cited = [c for c in answer.citations if c.cited]
        shown = cited or answer.citations
    for c in shown:
        render_citation(c, stored, answer.refused, f"{index}-{c.n}")
    cols = st.columns([1, 1, 3])
    with cols[0].popover("Copy answer"):
        st.code(answer.answer, language=None, wrap_lines=True)
    rating = cols[1].feedback("thumbs", key=f"rating-{index}")
    if rating is not None:
        with cols[2]:
            comment = st.text_input("Comment (optional)", key=f"comment-{index}")
            if st.button("Send feedback", key=f"send-{index}"):
                feedback.add(answer.question, answer, "up" if rating == 1 else "down", comment, st.session_state.session_id)
                st.toast("Thank you — saved on this machine.")


def ask(bot: PolicyBot, question: str, scope: list[str], overrides: dict, stored: dict[str, str]) -> Answer | None:
    """Stream one answer: status line, first passages, then tokens."""
    history = st.session_state.history
    convo = conversation_of(history, bot.settings.memory_turns)
    final: dict[str, Answer] = {}
    status = st.status("Searching the documents…", expanded=False)
    preview = st.empty()

    def tokens():
        for event in bot.ask_stream(question, convo.turns, scope, fast=overrides.get("fast_mode"), overrides=overrides):
            if event.kind == "stage":
                status.update(label=STAGE_LABELS.get(event.data, event.data))
            elif event.kind == "standalone":
                status.write(f"Searching as: {event.data}")
            elif event.kind == "passages":
                if event.data:
                    lines = "\n".join(f"- {c.label}" for c in event.data[:3])
                    preview.markdown(f"**Closest passages so far:**\n{lines}")
            elif event.kind == "token":
                yield event.data
            elif event.kind == "answer":
                final["answer"] = event.data

    try:
        st.write_stream(tokens())
    except PolicyBotError as exc:
        status.update(label="Could not answer", state="error")
        st.error(str(exc))
        return None
    status.update(label="Done", state="complete")
    preview.empty()
    return final.get("answer")


# --- page ---------------------------------------------------------------------------------


def idle_watch(bot: PolicyBot) -> None:
    """Kiosk: clear the conversation after the idle time, even if nobody touches the screen."""
    if not bot.settings.kiosk:
        return
    limit = bot.settings.kiosk_idle_minutes * 60

    @st.fragment(run_every=min(30.0, limit))
    def check() -> None:
        state = st.session_state
        if state.history and time.time() - state.last_active > limit:
            clear_conversation(f"The conversation was cleared after {bot.settings.kiosk_idle_minutes:g} minutes without activity.")
            st.rerun()

    check()


def main() -> None:
    st.set_page_config(page_title="PolicyBot", page_icon="📄", layout="wide")
    state = session()
    settings = Settings()
    bot = load_bot(settings.model_dump_json())
    feedback = load_feedback(str(settings.home / "feedback.sqlite"))

    # Kiosk: a conversation left idle is cleared before the next person sees it.
    if settings.kiosk and state.history and time.time() - state.last_active > settings.kiosk_idle_minutes * 60:
        clear_conversation(f"The conversation was cleared after {settings.kiosk_idle_minutes:g} minutes without activity.")

    st.title("PolicyBot")
    st.caption(DISCLAIMER)

    can_edit = sidebar_kiosk(bot)
    listing = bot.documents()
    extractive_notice = sidebar_status(bot, listing)
    scope = sidebar_library(bot, listing, can_edit)
    overrides = sidebar_settings(bot) if can_edit else {}
    stored = {d.name: d.stored_path for d in listing.documents}

    if extractive_notice:
        st.info(f"Extractive mode: answers quote the best passages. {extractive_notice}", icon="ℹ️")
    if state.notice:
        st.info(state.notice)

    top = st.columns([1, 1, 1, 3])
    if top[0].button("New conversation", key="new"):
        clear_conversation()
        st.rerun()
    if state.history:
        top[1].download_button("Export Markdown", conversation_markdown(state.history), "policybot-conversation.md", "text/markdown", key="export-md")
        top[2].download_button("Export JSON", conversation_json(state.history), "policybot-conversation.json", "application/json", key="export-json")

    for i, (question, answer) in enumerate(state.history):
        with st.chat_message("user"):
            st.markdown(question)
        with st.chat_message("assistant"):
            render_answer(answer, stored, i, feedback, extractive_notice)

    question = st.chat_input("Ask a question about your policy documents")
    if question:
        state.last_active = time.time()
        state.notice = None
        with st.chat_message("user"):
            st.markdown(question)
        with st.chat_message("assistant"):
            answer = ask(bot, question, scope, overrides, stored)
        if answer is not None:
            state.history.append((question, answer))
            st.rerun()
    idle_watch(bot)


main()

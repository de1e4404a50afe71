"""The sidebar, drawn on every page: what a question searches (documents, and the date whose
editions are in force), the answer settings, the status, the kept conversations, and the kiosk's
admin lock.

Controls that change what a question searches live here rather than on a page: Streamlit
forgets a widget's value on every run that does not draw it.
"""

from __future__ import annotations

import time
from collections import Counter

import streamlit as st

from app_pages.state import delete_conversation, key, load_pin_gate, lock_admin, open_conversation
from policybot.display.markup import escape_markdown
from policybot.options import AskOptions
from policybot.schemas import DocumentList, Status
from policybot.service import PolicyBot

LANGUAGES = ["auto", "English", "Bahasa Melayu", "Français", "Español", "Deutsch", "हिन्दी"]


def status_box(status: Status, listing: DocumentList) -> None:
    """Profile, models, LLM and index."""
    chunks = sum(d.chunks for d in listing.documents)
    with st.sidebar.expander("Status", expanded=False):
        st.markdown(f"**Profile:** {escape_markdown(status.profile)}  \n{escape_markdown(status.profile_reason)}")
        backend = f" ({status.embedding_backend})" if status.embedding_backend else ""
        st.markdown(f"**Embeddings:** {escape_markdown(status.embedding_model + backend)}")
        st.markdown(f"**Reranker:** {escape_markdown(status.reranker or 'none')}")
        if status.llm is not None:
            st.markdown(f"**Answers:** written by {escape_markdown(status.llm)} from the passages")
        else:
            st.markdown(f"**Answers:** quotes of the best passages. {escape_markdown(status.llm_notice or '')}")
        st.markdown(f"**Index:** {len(listing.documents)} documents, {chunks} passages")


def scope_box(listing: DocumentList, visitor: bool = False) -> list[str] | None:
    """The documents a question searches, and (when the library has editions) the day whose
    editions are in force. Returns the chosen documents, or None for "the editions in force"
    (the library picks them for the date asked). A kiosk visitor is offered the documents in
    force only (the date still picks an older edition)."""
    docs = listing.documents
    in_force = [d.name for d in docs if not d.superseded_by]
    names = in_force if visitor else [d.name for d in docs]
    known = st.session_state.get("scope_library")
    if known != names:  # the library changed: keep the choice, add new documents (in force), drop deleted ones
        chosen = st.session_state.get(key("scope"), in_force)
        st.session_state[key("scope")] = [n for n in names if n in chosen or (n not in (known or []) and n in in_force)]
        st.session_state["scope_library"] = names
    help_text = "Which documents a question searches (superseded editions are left out unless chosen)."
    offered = [d for d in docs if d.name in names]
    titles = Counter(d.title for d in offered if d.title)
    shown = {d.name: d.title if d.title and titles[d.title] == 1 else d.name for d in offered}  # editions: files
    scope = st.sidebar.multiselect("Search in", names, key=key("scope"), help=help_text, format_func=shown.__getitem__)
    families = Counter(d.edition_of for d in docs if d.edition_of and d.edition_status == "confirmed")
    if any(n > 1 for n in families.values()):
        st.sidebar.date_input(
            "Editions in force on",
            key=key("as_of"),
            help="Questions use the edition of each policy in force on this day.",
        )
    return None if not scope or set(scope) == set(in_force) else scope


def settings_box(bot: PolicyBot, status: Status) -> AskOptions:
    """Per-session answer settings (they never change other sessions)."""
    s = bot.settings
    with st.sidebar.expander("Settings"):
        fast = st.toggle("Fast mode (no query rewriting)", value=s.fast_mode, key=key("fast"))
        rerank = st.toggle("Rerank passages", value=s.rerank, key=key("rerank"), disabled=status.reranker is None)
        top_p = st.slider("Top-p (passage selection)", 0.5, 1.0, float(s.fusion_top_p), 0.05, key=key("top_p"))
        rewrites = st.slider("Query rewrites", 0, 8, int(s.expansion_rewrites), key=key("rewrites"))
        language = st.selectbox("Answer language", LANGUAGES, key=key("language"))
    return AskOptions(fast=fast, rerank=rerank, top_p=top_p, rewrites=rewrites, language=language)


def admin_box(bot: PolicyBot) -> bool:
    """Kiosk lock: True when the library and the settings may be changed."""
    state = st.session_state
    settings = bot.settings
    if not settings.kiosk or state.unlocked:
        if settings.kiosk and st.sidebar.button("Lock admin", key="lock"):
            lock_admin(None)
            st.rerun()
        return True
    if not settings.kiosk_pin:  # nothing to unlock; `policybot doctor` tells the admin how to set a PIN
        return False
    gate = load_pin_gate(str(settings.home.resolve()), settings.kiosk_pin, settings.kiosk_pin_attempts)
    with st.sidebar.expander("Admin"):
        pin = st.text_input("Admin PIN", type="password", key=key("pin"))
        if st.button("Unlock", key="unlock"):
            verdict = gate.attempt(state.session_id, pin)
            if verdict.ok:
                state.unlocked = True
                state.unlocked_at = time.time()
                st.rerun()
            st.error(verdict.message)
    return False


def conversations_box(bot: PolicyBot) -> None:
    """The conversations kept on this machine, the last first: open one, or delete it."""
    kept = bot.conversations.recent()
    if not kept:
        return
    with st.sidebar.expander("Conversations"):
        current = st.session_state.get("conversation_id")
        for conversation in kept:
            row = st.container(horizontal=True, vertical_alignment="center")
            title = conversation.title if len(conversation.title) <= 48 else conversation.title[:47] + "…"
            row.button(
                escape_markdown(title),
                key=f"open-conversation-{conversation.id}",
                on_click=open_conversation,
                args=(bot, conversation.id),
                disabled=conversation.id == current,
                help=escape_markdown(
                    f"{conversation.turns} question(s), last {conversation.updated_at[:16].replace('T', ' ')} UTC"
                ),
                width="stretch",
            )
            row.button(
                "Delete",
                key=f"delete-conversation-{conversation.id}",
                on_click=delete_conversation,
                args=(bot, conversation.id),
                type="tertiary",
            )

"""Per-session state, what the frame hands its pages, and the kiosk's rules.

Every browser session (every kiosk visitor) has its own conversation, evidence table and
choices; the service and the PIN gate are shared by the whole process.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import streamlit as st

from policybot.display.kiosk import PinGate, relock_reason
from policybot.display.markup import escape_markdown
from policybot.options import AskOptions
from policybot.schemas import DocumentList
from policybot.service import PolicyBot
from policybot.settings import Settings

# The pages, as files relative to app.py (st.navigation runs them; AppTest switches to them).
CHAT = "app_pages/chat.py"
EVIDENCE = "app_pages/evidence.py"
LIBRARY = "app_pages/library.py"


@dataclass
class PageContext:
    """What the frame worked out in this run, for the page it runs."""

    bot: PolicyBot
    listing: DocumentList  # the library as this run found it
    options: AskOptions  # the per-session answer settings, scope and date included
    scope: list[str]  # the names of the documents a question searches
    can_edit: bool  # not a locked kiosk: the library and the settings may change
    llm_notice: str | None  # why answers are extractive, when no LLM runs


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
    state.setdefault("go_to_chat", False)  # set by a kiosk reset: the next visitor starts at the chat
    return state


def set_context(context: PageContext) -> None:
    st.session_state["page_context"] = context


def context() -> PageContext:
    """What the frame worked out for the page now running."""
    return st.session_state["page_context"]


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
    state["go_to_chat"] = True


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
    reason = relock_reason(
        now,
        state.unlocked_at if state.unlocked else None,
        state.last_active,
        idle_s,
        settings.kiosk_unlock_minutes * 60,
    )
    if reason:
        lock_admin(reason if not changed else f"{state.notice} {reason}")
        changed = True
    return changed


def loading_watch(bot: PolicyBot) -> None:
    """While the models load: say so, and redraw the page once they are ready."""
    warmup = bot.warm_up_in_background()
    if warmup.state == "failed":
        st.error(
            escape_markdown(f"The models could not be loaded ({warmup.error}). Run `policybot doctor` for the fix.")
        )
    if warmup.state != "loading":
        return
    st.info(
        "Loading the models… You can look at the library now; a question asked meanwhile is answered as soon as they "
        "are ready."
    )  # no emoji icon: kiosk browsers often have no emoji font, and it shows as an empty box

    @st.fragment(run_every=1.0)
    def check() -> None:
        if warmup.state != "loading":
            st.rerun(scope="app")

    check()


def idle_watch(settings: Settings) -> None:
    """Kiosk: clear the conversation and lock the admin after the idle time, even if nobody
    touches the screen (a fragment re-checks every 30 s without redrawing the page)."""
    if not settings.kiosk:
        return

    @st.fragment(run_every=min(30.0, settings.kiosk_idle_minutes * 60))
    def check() -> None:
        if kiosk_guard(settings):
            st.rerun()

    check()

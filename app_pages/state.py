"""Per-session state, what the frame hands its pages, and the kiosk's rules.

Every browser session (every kiosk visitor) has its own conversation, evidence table and
choices; the service and the PIN gate are shared by the whole process.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from functools import cached_property

import streamlit as st

from policybot.display.kiosk import PinGate, relock_reason
from policybot.display.markup import escape_markdown
from policybot.options import AskOptions
from policybot.schemas import Answer, DocumentList
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

    @cached_property
    def _shown_names(self) -> dict[str, str]:
        return self.listing.shown_names()

    def shown_name(self, name: str) -> str:
        """A document as a person reads it: its title (the file name only for editions that share one)."""
        return self._shown_names.get(name, name)

    @property
    def scope_titles(self) -> str:
        """The searched documents as a person reads them."""
        return "; ".join(self.shown_name(name) for name in self.scope)


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
    state.setdefault("visit", 0)  # a kiosk's visitor count in this browser: every per-visitor widget key holds it
    state.setdefault("history", [])  # list of (question, Answer)
    state.setdefault("last_active", time.time())
    state.setdefault("unlocked", False)
    state.setdefault("unlocked_at", None)
    state.setdefault("notice", None)
    state.setdefault("library_notice", None)
    state.setdefault("evidence", None)  # the last EvidenceReport of this session
    state.setdefault("evidence_run", 0)  # counts evidence runs: each table gets a fresh selection
    state.setdefault("go_to_chat", False)  # set by a kiosk reset: the next visitor starts at the chat
    state.setdefault("conversation_id", uuid.uuid4().hex[:16])  # its name among the kept conversations
    return state


# --- conversations kept on this machine (never in a kiosk) ----------------------------------------
# The open conversation is named in the page's address (?c=…), so a reload reopens it.
CONVERSATION_PARAM = "c"


def restore_conversation(bot: PolicyBot, settings: Settings) -> None:
    """At a session's first run: reopen the conversation the address names (a reload, or a link
    kept). A kiosk keeps no conversation and reads no address."""
    state = st.session_state
    if settings.kiosk:
        st.query_params.pop(CONVERSATION_PARAM, None)
        return
    if state.get("restored"):
        return
    state.restored = True
    wanted = st.query_params.get(CONVERSATION_PARAM, "")
    if not (wanted.isalnum() and len(wanted) <= 32):
        return
    turns = bot.conversations.load(wanted)
    if turns:
        state.history, state.conversation_id = turns, wanted


def keep_turn(bot: PolicyBot, question: str, answer: Answer) -> None:
    """Keep the answer just added to the conversation (never in a kiosk) and name the conversation
    in the page's address."""
    if bot.settings.kiosk:
        return
    state = st.session_state
    bot.conversations.save_turn(state.conversation_id, len(state.history) - 1, question, answer)
    st.query_params[CONVERSATION_PARAM] = state.conversation_id


def open_conversation(bot: PolicyBot, conversation: str) -> None:
    """Reopen a kept conversation (the sidebar's list)."""
    state = st.session_state
    state.history = bot.conversations.load(conversation)
    state.conversation_id = conversation
    state.notice = None
    st.query_params[CONVERSATION_PARAM] = conversation


def delete_conversation(bot: PolicyBot, conversation: str) -> None:
    bot.conversations.delete(conversation)
    if st.session_state.get("conversation_id") == conversation:
        clear_conversation()


def answer_key(index: int) -> str:
    """The name of the answer at ``index`` of the open conversation: its feedback and its citations'
    marks are one record each under it, updated when given again. A new conversation (and a kiosk's
    next visitor) has a new id, so its first answer is never taken for an earlier conversation's."""
    return f"{st.session_state.conversation_id}/{index}"


def key(name: str) -> str:
    """A per-visitor widget key: ``name`` for the first visitor, then ``name~2``, ``name~3``…

    The browser keeps what is typed in a box that was never sent (a chat draft, an issue, a PIN)
    and gives it back to a widget drawn again under the same key. A kiosk reset starts a new
    visit, so every box the next visitor sees is a new widget: no draft survives, even one the
    server never saw."""
    visit = st.session_state.get("visit", 0)
    return f"{name}~{visit + 1}" if visit else name


def set_context(context: PageContext) -> None:
    st.session_state["page_context"] = context


def context() -> PageContext:
    """What the frame worked out for the page now running."""
    return st.session_state["page_context"]


def clear_conversation(reason: str | None = None) -> None:
    """Start a new conversation (the one before stays kept, outside a kiosk)."""
    st.session_state.history = []
    st.session_state.notice = reason
    st.session_state.conversation_id = uuid.uuid4().hex[:16]
    st.query_params.pop(CONVERSATION_PARAM, None)


def clear_evidence() -> None:
    st.session_state.evidence = None
    st.session_state.evidence_run += 1


# What a kiosk reset keeps: the browser session's id (the PIN back-off counts per session) and the
# visit count. Everything else is the last visitor's: the conversation, the evidence table, the
# scope, the date, the settings, feedback in progress, an unlocked admin, notices.
KEPT_ON_RESET = frozenset({"session_id", "visit"})


def reset_for_next_visitor() -> None:
    """Start a new visit: every per-session value goes, every input box is drawn anew (so no
    unsent draft survives), the admin locks, and the page goes back to the chat. The next visitor
    is greeted as the first was: nothing says what the last one did."""
    state = st.session_state
    visit = state.get("visit", 0) + 1
    evidence_run = state.get("evidence_run", 0) + 1  # a table drawn later never reuses a selection
    for name in [k for k in state.keys() if k not in KEPT_ON_RESET]:
        del state[name]
    state["visit"] = visit
    session()
    state["evidence_run"] = evidence_run
    state["go_to_chat"] = True
    state["last_reset"] = time.time()


def lock_admin(reason: str | None) -> None:
    st.session_state.unlocked = False
    st.session_state.unlocked_at = None
    if reason:
        st.session_state.notice = reason


def idle_seconds(now: float | None = None) -> float:
    """How long this session has been idle: since the visitor's last action, or since the last
    reset (a reset is not an action, and a page nobody touched is reset once, not again and again)."""
    state = st.session_state
    since = max(state.get("last_active", 0.0), state.get("last_reset", 0.0))
    return (now or time.time()) - since


def kiosk_guard(settings: Settings) -> bool:
    """Kiosk: after the idle time every session is reset for the next visitor, whatever it did
    (the server cannot see an unsent draft, so "nothing to clear" cannot be known); an unlocked
    admin also locks after its maximum time. True when something was reset."""
    if not settings.kiosk:
        return False
    state = st.session_state
    now = time.time()
    idle_s = settings.kiosk_idle_minutes * 60
    if idle_seconds(now) > idle_s:
        reset_for_next_visitor()
        return True
    reason = relock_reason(
        now,
        state.unlocked_at if state.unlocked else None,
        state.last_active,
        idle_s,
        settings.kiosk_unlock_minutes * 60,
    )
    if reason:
        lock_admin(reason)
        return True
    return False


def loading_notice(bot: PolicyBot) -> None:
    """While the models load, say so; if they failed, say how to fix it."""
    warmup = bot.warm_up_in_background()
    if warmup.state == "failed":
        st.error(
            escape_markdown(f"The models could not be loaded ({warmup.error}). Run `policybot doctor` for the fix.")
        )
    elif warmup.state == "loading":
        st.info(
            "Loading the models… You can look at the library now; a question asked meanwhile is answered as soon as "
            "they are ready."
        )  # no emoji icon: kiosk browsers often have no emoji font, and it shows as an empty box


def countdown_seconds(settings: Settings) -> float:
    """How long before a kiosk reset the page warns that it is coming: 30 s, or a quarter of a
    short idle time."""
    return min(30.0, settings.kiosk_idle_minutes * 60 / 4)


def still_here() -> None:
    st.session_state["last_active"] = time.time()


def watch_every(settings: Settings, loading: bool) -> float | None:
    """How often the page's timed check runs, in seconds (None: no check): every second while the
    models load, and in a kiosk often enough to count a short countdown down."""
    if loading:
        return 1.0
    if settings.kiosk:
        return max(1.0, min(5.0, countdown_seconds(settings) / 3))
    return None


def page_watch(bot: PolicyBot, settings: Settings) -> None:
    """The page's one timed check, drawn first on the page. While the models load, it redraws the
    page once they are ready. In a kiosk, it resets the session for the next visitor after the
    idle time, even if nobody touches the screen, after a short countdown that the visitor can
    stop with one click.

    Why one fragment, and first: a timed fragment writes to the place it had when it was drawn.
    Drawn below the page, its place moved whenever the page above it changed (the loading notice
    going away, a reset). On a loaded machine a tick from the old place then reached the browser
    after the page had shrunk, and the whole page went blank for good ("Bad delta path index" in
    the browser). First on the page, its place is the same in every run. Its countdown floats over
    the page (PAGE_CSS), so the visitor sees it wherever they have scrolled."""
    warmup = bot.warm_up_in_background()
    loading = warmup.state == "loading"
    every = watch_every(settings, loading)
    if every is None:
        return
    idle_s = settings.kiosk_idle_minutes * 60
    warn_s = countdown_seconds(settings)

    @st.fragment(run_every=every)
    def check() -> None:
        if loading and warmup.state != "loading":
            st.rerun(scope="app")  # the models are ready: the page drops its loading notice
        if kiosk_guard(settings):
            st.rerun(scope="app")
        left = idle_s - idle_seconds()
        if settings.kiosk and left <= warn_s:
            box = st.container(border=True, key=key("countdown"))
            box.warning(f"Still there? This page clears for the next visitor in {max(0, round(left))} s.")
            box.button("I'm still here", key=key("still-here"), on_click=still_here)

    check()

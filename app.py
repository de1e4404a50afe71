"""PolicyBot's Streamlit app: the frame. It sets up the page, the cached service and the sidebar,
then runs the page chosen with ``st.navigation``: Chat, Evidence or Library (``app_pages/``).

Run with `make run` (or `streamlit run app.py`). Pipeline logic lives in the library
(``policybot``); the app only draws widgets, keeps per-session state, and calls the facade.
"""

from __future__ import annotations

import sys
import time
from datetime import date
from pathlib import Path

from policybot.startup import configure_process

configure_process()  # before Streamlit and the model libraries load

import streamlit as st  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # app_pages/, however the app is started
from app_pages import sidebar, sources, state  # noqa: E402
from policybot.options import AskOptions  # noqa: E402
from policybot.schemas import DISCLAIMER  # noqa: E402
from policybot.settings import Settings  # noqa: E402


def main() -> None:
    st.set_page_config(page_title="PolicyBot", page_icon="📄", layout="wide")
    session = state.session()
    settings = Settings().for_serving()
    bot = state.load_bot(settings.model_dump_json())

    # Kiosk: a session left idle is reset, and the admin locked, before the next person sees the
    # page. Every full run is a visitor's action, so it counts as activity.
    state.kiosk_guard(settings)
    session.last_active = time.time()
    state.restore_conversation(bot, settings)  # a reload finds its conversation again (never in a kiosk)
    state.page_watch(bot, settings)  # first on the page: a timed check's place must never move

    st.html(sources.PAGE_CSS)
    st.title("PolicyBot")
    st.caption(DISCLAIMER)
    if settings.kiosk:  # the visitor leaving can clear the screen at once, without waiting for the idle reset
        st.button(
            "New visitor",
            key="new-visitor",
            on_click=state.reset_for_next_visitor,
            help="Clears this screen: the conversation, the evidence table, the choices made and any text typed.",
        )
    state.loading_notice(bot)

    can_edit = sidebar.admin_box(bot)
    listing = bot.library.documents()
    status = bot.status()
    if not settings.kiosk or session.unlocked:  # a visitor sees no machine details
        sidebar.status_box(status, listing)
    chosen = sidebar.scope_box(listing, visitor=not can_edit)
    if not settings.kiosk:
        sidebar.conversations_box(bot)
    as_of = session.get(state.key("as_of"))
    options = (sidebar.settings_box(bot, status) if can_edit else AskOptions()).merged(
        docs=chosen, as_of=as_of if as_of != date.today() else None
    )
    scope = chosen or ([d.name for d in bot.library.resolve_docs(None, options.as_of)] if listing.documents else [])
    state.set_context(state.PageContext(bot, listing, options, scope, can_edit, status.llm_notice))

    pages = [
        st.Page(state.CHAT, title="Chat", default=True),
        st.Page(state.EVIDENCE, title="Evidence"),
        st.Page(state.LIBRARY, title="Library"),
    ]
    current = st.navigation(pages, position="top")
    if session.go_to_chat:  # a kiosk reset: the next visitor starts at the chat
        session.go_to_chat = False
        if current.title != pages[0].title:
            st.switch_page(pages[0])
    try:
        current.run()
    finally:  # a kiosk's idle time counts from the page shown: a slow answer, table or upload is no idleness
        session.last_active = time.time()


main()

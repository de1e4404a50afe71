"""The chat page: the conversation so far, each answer with its source panels, and the
question box. An answer streams: a status line, the first passages, then the words."""

from __future__ import annotations

import time

import streamlit as st

from app_pages.sources import render_citation
from app_pages.state import PageContext, clear_conversation, context
from policybot.display.export import conversation_json, conversation_markdown
from policybot.display.markup import escape_markdown, literal_block
from policybot.errors import PolicyBotError
from policybot.events import ANSWER_STAGES, AnswerEvent, PassagesEvent, StageEvent, StandaloneEvent, TokenEvent
from policybot.options import AskOptions
from policybot.schemas import Answer
from policybot.service import PolicyBot


def render_answer(
    bot: PolicyBot, answer: Answer, index: int, banner: str | None, latest: bool = True, reviewer: bool = True
) -> None:
    """One answer with its sources. ``reviewer`` (not a locked kiosk): the model's unchecked draft,
    when it was not shown as the answer, can be opened."""
    if answer.standalone_question != answer.question:
        st.caption(escape_markdown(f"Searched as: {answer.standalone_question}"))
        if latest:  # one click searches the question as it was asked, without the conversation
            st.button("Search my question on its own", key=f"alone-{index}", on_click=search_alone)
    if answer.named_documents:
        names = ", ".join(answer.named_documents)
        st.caption(escape_markdown(f"Searched mainly in {names}: the question names it."))
    st.markdown(literal_block(answer.answer), unsafe_allow_html=True)  # document and model text, shown as text
    if answer.notice and answer.notice != banner:  # the banner already says it
        st.caption(f"ℹ️ {escape_markdown(answer.notice)}")
    if answer.unchecked_draft and reviewer:
        with st.expander("The model's unchecked draft (not the answer)", expanded=False):
            st.caption("Parts of it are not backed by the passages it cites. Shown for reviewers, never to visitors.")
            st.markdown(literal_block(answer.unchecked_draft), unsafe_allow_html=True)
    if answer.refused:
        st.caption("Closest passages, for reading:")
    for c in answer.shown_citations:
        render_citation(bot, c, answer.refused, f"{index}-{c.n}", page_on_request=not latest)
    if answer.edition_note and answer.earlier_edition is not None:
        st.info(escape_markdown(answer.edition_note), icon="🗓️")
        earlier = answer.earlier_edition
        title = escape_markdown(f"Earlier edition: {earlier.label}")
        render_citation(bot, earlier, False, f"{index}-earlier", title=title, page_on_request=True)
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


def search_alone() -> None:
    """Ask the last question again without the conversation before it (it replaces that turn)."""
    question, _ = st.session_state.history.pop()
    st.session_state["ask_alone"] = question


def ask(bot: PolicyBot, question: str, options: AskOptions, alone: bool = False) -> Answer | None:
    """Stream one answer: status line, first passages, then tokens."""
    history = [] if alone else [answer for _, answer in st.session_state.history]
    final: dict[str, Answer] = {}
    status = st.status(ANSWER_STAGES["searching"], expanded=False)
    preview = st.empty()

    def tokens():
        for event in bot.ask_stream(question, history, options):
            if isinstance(event, StageEvent):
                status.update(label=ANSWER_STAGES.get(event.name, event.name))
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


def page(ctx: PageContext) -> None:
    """The conversation: banners, its answers so far, and the question box."""
    state = st.session_state
    bot = ctx.bot
    if ctx.llm_notice:
        st.info(f"**Extractive mode:** {escape_markdown(ctx.llm_notice)}", icon="ℹ️")
    if state.notice:
        st.info(escape_markdown(state.notice))

    top = st.columns([1, 1, 1, 3])
    if top[0].button("New conversation", key="new"):
        clear_conversation()
        st.rerun()
    if state.history:
        top[1].download_button(
            "Export Markdown",
            conversation_markdown(state.history),
            "policybot-conversation.md",
            "text/markdown",
            key="export-md",
        )
        top[2].download_button(
            "Export JSON",
            conversation_json(state.history, reviewer=ctx.can_edit),
            "policybot-conversation.json",
            "application/json",
            key="export-json",
        )

    for i, (question, answer) in enumerate(state.history):
        with st.chat_message("user"):
            st.markdown(literal_block(question), unsafe_allow_html=True)
        with st.chat_message("assistant"):
            render_answer(bot, answer, i, ctx.llm_notice, latest=i == len(state.history) - 1, reviewer=ctx.can_edit)

    question = st.chat_input("Ask a question about your policy documents")
    alone = state.pop("ask_alone", None)
    question = question or alone
    if question:
        state.last_active = time.time()
        state.notice = None
        with st.chat_message("user"):
            st.markdown(literal_block(question), unsafe_allow_html=True)
        with st.chat_message("assistant"):
            answer = ask(bot, question, ctx.options, alone=question == alone)
        if answer is not None:
            state.history.append((question, answer))
            st.rerun()


page(context())

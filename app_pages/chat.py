"""The chat page: the conversation so far, each answer with its source panels, and the
question box. An answer streams: a status line, the first passages, then the words."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import streamlit as st

from app_pages.sources import render_citation
from app_pages.state import PageContext, answer_key, clear_conversation, context, keep_turn, key
from policybot.display.export import conversation_json, conversation_markdown
from policybot.display.markup import escape_markdown, literal_block
from policybot.errors import PolicyBotError
from policybot.events import ANSWER_STAGES, AnswerEvent, PassagesEvent, StageEvent, StandaloneEvent, TokenEvent
from policybot.options import AskOptions
from policybot.schemas import Answer
from policybot.service import PolicyBot

ANSWERS_QUOTE = "Answers quote your documents, with the page of each quote."
ANSWERS_WRITTEN = "Answers are written from your documents; every sentence is checked against the passage it cites."


def render_answer(
    bot: PolicyBot,
    answer: Answer,
    index: int,
    latest: bool = True,
    reviewer: bool = True,
    shared_titles: frozenset[str] = frozenset(),
    shown_name: Callable[[str], str] = str,
) -> None:
    """One answer with its sources. ``reviewer`` (not a locked kiosk): the model's unchecked draft,
    when it was not shown as the answer, can be opened. ``shown_name``: a document as a person reads
    it (its title), for the lines that say where the search kept to."""
    if answer.social:  # a kind word back to "thanks": nothing was searched, nothing to ask again, copy or rate
        with st.container(key=key(f"answered-{index}")):
            st.markdown(literal_block(answer.answer), unsafe_allow_html=True)
        return
    how_it_was_searched(answer, index, latest, shown_name)
    st.markdown(literal_block(answer.answer), unsafe_allow_html=True)  # document and model text, shown as text
    if answer.notice:
        st.caption(escape_markdown(answer.notice))
    if answer.unchecked_draft and reviewer:
        with st.expander("The model's unchecked draft (not the answer)", expanded=False):
            st.caption("Parts of it are not backed by the passages it cites. Shown for reviewers, never to visitors.")
            st.markdown(literal_block(answer.unchecked_draft), unsafe_allow_html=True)
    if answer.refused and answer.shown_citations:
        st.caption("Closest passages, for reading:")
    for c in answer.shown_citations:
        render_citation(
            bot,
            c,
            answer.refused,
            f"{index}-{c.n}",
            page_on_request=not latest,
            generated=answer.mode == "generated",
            reviewer=reviewer,
            shown=len(answer.shown_citations),
            by_file=(c.title or c.doc) in shared_titles,
            marked=(answer, answer_key(index)),
        )
    if answer.edition_note:
        st.info(escape_markdown(answer.edition_note))
    if answer.edition_note and answer.earlier_edition is not None:
        earlier = answer.earlier_edition
        title = escape_markdown(f"Earlier edition: {earlier.file_label}")
        render_citation(bot, earlier, False, f"{index}-earlier", title=title, page_on_request=True)
    with st.container(key=key(f"answered-{index}")):  # a finished answer (the browser tests wait for it)
        answer_actions(bot, answer, index, latest)


def how_it_was_searched(answer: Answer, index: int, latest: bool, shown_name: Callable[[str], str]) -> None:
    """The lines above an answer that say what was searched: the question as searched, the document
    it kept mainly to (by its title), the policy's own words searched beside the user's."""
    if answer.standalone_question != answer.question:
        st.caption(escape_markdown(f"Searched as: {answer.standalone_question}"))
        if latest:  # one click searches the question as it was asked, without the conversation
            st.button("Search my question on its own", key=key(f"alone-{index}"), on_click=search_alone)
    if answer.named_documents:
        names = ", ".join(shown_name(n) for n in answer.named_documents)
        st.caption(escape_markdown(f"Searched mainly in {names}: the question names it."))
    if answer.continued_documents:
        names = ", ".join(shown_name(n) for n in answer.continued_documents)
        st.caption(escape_markdown(f"Searched mainly in {names}: the answer before it came from there."))
    if answer.also_searched:
        quoted = [f"“{w}”" for w in answer.also_searched]
        words = " and ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)
        which = "the word your documents use" if len(quoted) == 1 else "the words your documents use"
        st.caption(escape_markdown(f"Also searched for {words}: {which} for yours."))


def answer_actions(bot: PolicyBot, answer: Answer, index: int, latest: bool) -> None:
    """Under an answer: ask the last question again or in other words, copy, rate."""
    if latest:  # the last question can be asked again, or in other words
        again = st.container(horizontal=True)
        again.button("Ask again", key=key(f"again-{index}"), on_click=ask_again)
        with again.popover("Edit question"):
            box = key(f"edit-{index}")
            st.text_input("Your question", value=answer.question, key=box)
            st.button("Ask", key=key(f"edit-ask-{index}"), on_click=ask_edited, args=(box,))
    cols = st.columns([1, 1, 3])
    if not bot.settings.kiosk:  # a kiosk's clipboard would keep one visitor's answer for the next
        with cols[0]:
            copy_button(answer.answer)
    rating = cols[1].feedback("thumbs", key=key(f"rating-{index}"))
    if rating is not None:
        with cols[2]:
            comment = st.text_input("Comment (optional)", key=key(f"comment-{index}"))
            if st.button("Send feedback", key=key(f"send-{index}")):
                bot.record_feedback(
                    answer,
                    "up" if rating == 1 else "down",
                    comment,
                    st.session_state.session_id,
                    answer_key=answer_key(index),
                )
                st.toast("Thank you — saved on this machine.")


# One click copies: a button in a small frame of the app's own (no network), writing to the
# clipboard, with the old select-and-copy way where the browser withholds the clipboard API (a
# kiosk or a LAN address served over plain http). The text travels as JSON, never as markup.
COPY_ALT = "Copy the answer"
_COPY_HTML = """<button id="b" type="button">Copy answer</button>
<style>
body {{ margin: 0; font-family: "Source Sans Pro", "Source Sans 3", "DejaVu Sans", sans-serif; }}
button {{ font: inherit; font-size: 14px; padding: 4px 12px; border-radius: 8px; cursor: pointer;
  border: 1px solid rgba(49, 51, 63, 0.2); background: #fff; color: rgb(49, 51, 63); white-space: nowrap; }}
button:hover {{ border-color: #ff4b4b; color: #ff4b4b; }}
</style>
<script>
const text = {text};
const b = document.getElementById("b");
function fallback() {{
  const area = document.createElement("textarea");
  area.value = text; document.body.appendChild(area); area.select();
  const ok = document.execCommand("copy"); area.remove(); return ok;
}}
b.onclick = async () => {{
  let ok = false;
  try {{ await navigator.clipboard.writeText(text); ok = true; }} catch (e) {{ ok = fallback(); }}
  b.textContent = ok ? "Copied" : "Select the text to copy";
  setTimeout(() => {{ b.textContent = "Copy answer"; }}, 2000);
}};
</script>"""


def copy_button(text: str) -> None:
    """A "Copy answer" button that copies ``text`` in one click."""
    literal = json.dumps(text).replace("<", "\\u003c").replace(">", "\\u003e")
    st.iframe(_COPY_HTML.format(text=literal), height=40, width=150, alt=COPY_ALT)


def greeting(ctx: PageContext) -> None:
    """The empty chat: what the library holds, by title, and a few questions drawn from its own
    sections to start with (a click asks one)."""
    titles = [d.title or d.name for d in ctx.listing.documents if d.name in ctx.scope]
    if not titles:
        st.info("No documents yet: add PDFs on the Library page, then ask about them here.")
        return
    st.markdown(escape_markdown("Ask about " + "; ".join(titles) + "."))
    examples = ctx.bot.library.example_questions(ctx.scope)
    if examples:
        st.caption("For example:")
        row = st.container(horizontal=True)
        for i, example in enumerate(examples):
            row.button(example, key=key(f"example-{i}"), on_click=ask_example, args=(example,))


def ask_example(question: str) -> None:
    st.session_state["ask_example"] = question


def ask_again(question: str | None = None) -> None:
    """Ask the last question again, or in new words (``question``), in the same conversation: the
    new answer takes the last one's place."""
    asked, _ = st.session_state.history.pop()
    st.session_state["ask_again"] = (question or "").strip() or asked


def ask_edited(box: str) -> None:
    """The Edit popover's Ask: what the box holds now (read here: a value bound when the button
    was drawn would be the text before the edit)."""
    ask_again(st.session_state.get(box))


def search_alone() -> None:
    """Ask the last question again without the conversation before it (it replaces that turn)."""
    question, _ = st.session_state.history.pop()
    st.session_state["ask_alone"] = question


# How often the status line counts the words being written (every N words).
WORDS_STEP = 10


def ask(bot: PolicyBot, question: str, options: AskOptions, alone: bool = False) -> Answer | None:
    """One answer: a status line, the first passages as soon as they are found, then the checked
    answer. A language model's words are counted in the status line but not shown as they come:
    every sentence is checked against the passage it cites first, and a draft that does not check
    out is never shown (issue 21)."""
    history = [] if alone else [answer for _, answer in st.session_state.history]
    final: dict[str, Answer] = {}
    status = st.status(ANSWER_STAGES["searching"], expanded=False)
    preview = st.empty()
    words = 0
    try:
        for event in bot.ask_stream(question, history, options):
            if isinstance(event, StageEvent):
                status.update(label=ANSWER_STAGES.get(event.name, event.name))
            elif isinstance(event, StandaloneEvent):
                status.write(escape_markdown(f"Searched as: {event.question}"))
            elif isinstance(event, PassagesEvent) and event.passages:
                lines = "\n".join(f"- {escape_markdown(c.label)}" for c in event.passages[:3])
                preview.markdown(f"**Closest passages so far:**\n{lines}")
            elif isinstance(event, TokenEvent):
                before, words = words, words + len(event.text.split())
                if words // WORDS_STEP > before // WORDS_STEP:
                    status.update(label=f"{ANSWER_STAGES['writing']} {words} words, checked before they are shown")
            elif isinstance(event, AnswerEvent):
                final["answer"] = event.answer
    except PolicyBotError as exc:
        status.update(label="Could not answer", state="error")
        st.error(escape_markdown(str(exc)))
        return None
    status.update(label="Done", state="complete")
    preview.empty()
    return final.get("answer")


def conversation_buttons(ctx: PageContext) -> None:
    """Above a conversation: start a new one, or export this one. Buttons at their natural width
    (columns cut "New conversation" short at 1280 px)."""
    state = st.session_state
    top = st.container(horizontal=True)
    if state.history and top.button("New conversation", key="new"):
        clear_conversation()
        st.rerun()
    if state.history:
        top.download_button(
            "Export Markdown",
            conversation_markdown(state.history),
            "policybot-conversation.md",
            "text/markdown",
            key="export-md",
        )
        top.download_button(
            "Export JSON",
            conversation_json(state.history, reviewer=ctx.can_edit),
            "policybot-conversation.json",
            "application/json",
            key="export-json",
        )


def page(ctx: PageContext) -> None:
    """The conversation: banners, its answers so far, and the question box."""
    state = st.session_state
    bot = ctx.bot
    # One plain line on what the answers are; the language model's state and how to start one
    # live in Status (and `policybot doctor`), never in the conversation.
    st.caption(ANSWERS_QUOTE if ctx.llm_notice else ANSWERS_WRITTEN)
    if state.notice:
        st.info(escape_markdown(state.notice))

    conversation_buttons(ctx)

    if not state.history:
        greeting(ctx)
    shared = ctx.listing.shared_titles()  # editions of one policy share a title
    for i, (question, answer) in enumerate(state.history):
        with st.chat_message("user"):
            st.markdown(literal_block(question), unsafe_allow_html=True)
        with st.chat_message("assistant"):
            render_answer(
                bot,
                answer,
                i,
                latest=i == len(state.history) - 1,
                reviewer=ctx.can_edit,
                shared_titles=shared,
                shown_name=ctx.shown_name,
            )

    question = st.chat_input("Ask a question about your policy documents", key=key("question"))
    if question is not None and not question.strip():
        question = None  # an empty or whitespace-only submit is ignored quietly: no bubble, no error
    alone = state.pop("ask_alone", None)
    question = question or alone or state.pop("ask_again", None) or state.pop("ask_example", None)
    if question:
        state.last_active = time.time()
        state.notice = None
        with st.chat_message("user"):
            st.markdown(literal_block(question), unsafe_allow_html=True)
        with st.chat_message("assistant"):
            answer = ask(bot, question, ctx.options, alone=question == alone)
        if answer is not None:
            state.history.append((question, answer))
            keep_turn(bot, question, answer)
            st.rerun()


page(context())

"""The Streamlit app, driven headless with streamlit.testing.v1.AppTest against real indexes.

Ollama is absent (NO_OLLAMA), so every answer is extractive: deterministic, no LLM needed.
One module-scoped home holds the ingested sample policy and is only read by the app; the
upload, delete and scope tests each build their own small home so they stay fast.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pymupdf
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.errors import AppTestError

from policybot.display.markup import plain_text
from policybot.display.markup import unescape_markdown as shown
from policybot.models.llm import REFUSAL
from policybot.service import PolicyBot
from tests import conftest, pdfs
from tests.conftest import NO_OLLAMA, SAMPLE_POLICY, make_settings

APP = Path(__file__).resolve().parents[1] / "app.py"
SAMPLE = SAMPLE_POLICY.name  # homeshield-household-policy.pdf
WATER = "How does the deductible apply to water damage?"
PDF = "application/pdf"


@pytest.fixture(autouse=True)
def _own_static_folder(monkeypatch, tmp_path):
    """The PDFs the app serves go to the test's own folder, never the project's ./static."""
    import app_pages.sources as sources

    monkeypatch.setattr(sources, "STATIC_PDFS", tmp_path / "static" / "pdf")


@pytest.fixture(scope="module")
def sample_home(tmp_path_factory) -> Path:
    """The sample policy ingested once for the whole module (the app only reads it)."""
    return conftest.sample_home(tmp_path_factory.mktemp("app-sample") / "home")


def small_home(root: Path, *docs: Path) -> Path:
    home = root / "home"
    bot = PolicyBot(make_settings(home))
    for doc in docs:
        outcome = bot.ingest_file(doc)
        assert outcome.status == "ingested", outcome.message
    return home


def use_home(monkeypatch, home: Path, **env: str) -> None:
    """What the app reads from the environment at each run (``Settings()``)."""
    monkeypatch.setenv("POLICYBOT_HOME", str(home))
    monkeypatch.setenv("POLICYBOT_MODELS_DIR", str(home / "models"))
    monkeypatch.setenv("POLICYBOT_PROFILE", "lite")
    monkeypatch.setenv("OLLAMA_HOST", NO_OLLAMA)
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def start() -> AppTest:
    """A fresh browser session on the app, after its first run."""
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def ask(at: AppTest, question: str) -> AppTest:
    """Ask on the chat page (opened first when another page is showing)."""
    if not at.chat_input:
        open_page(at, "chat")
    at.chat_input[0].set_value(question).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def messages(at: AppTest, who: str) -> list:
    return [m for m in at.chat_message if m.name == who]


def open_page(at: AppTest, page: str) -> AppTest:
    """Go to one of the app's pages (``app_pages/<page>.py``), as a click in its navigation does."""
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def state_of(at: AppTest) -> dict:
    """Everything in a session's state, widget values included (AppTest lists it only in its repr)."""
    return dict(at.session_state._state.filtered_state)


def sidebar_view(at: AppTest) -> dict[str, list[str]]:
    return {"expanders": [e.label for e in at.sidebar.expander], "buttons": [b.label for b in at.sidebar.button]}


def library_view(at: AppTest) -> dict[str, list[str]]:
    """The library page's controls (it is opened first)."""
    open_page(at, "library")
    return {
        "uploaders": [f.label for f in at.main.file_uploader],
        "expanders": [e.label for e in at.main.expander],
        "buttons": [b.label for b in at.main.button],
    }


def library_captions(at: AppTest) -> list[str]:
    """The documents as the library page lists them (it is opened first)."""
    open_page(at, "library")
    return [c.value for c in at.main.caption if c.value.startswith("**")]


# --- status and disclaimer ------------------------------------------------------------------


def test_plain_words_in_the_chat_and_set_up_commands_only_in_status(monkeypatch, sample_home):
    """Issue 22: the chat says in one plain line what the answers are; how to start a language
    model is in Status, never in the chat. The empty chat greets with the library's titles and
    questions drawn from its own sections."""
    use_home(monkeypatch, sample_home)
    at = start()
    main_text = " ".join(shown(e.value) for e in [*at.main.info, *at.main.caption, *at.main.markdown])
    assert "ollama" not in main_text.lower() and NO_OLLAMA not in main_text
    assert any(shown(c.value).startswith("Answers quote your documents") for c in at.main.caption)
    assert any("not legal advice" in c.value for c in at.main.caption)
    greeting = [shown(m.value) for m in at.main.markdown if shown(m.value).startswith("Ask about ")]
    assert greeting and "HomeShield" in greeting[0] and ".pdf" not in greeting[0]
    examples = [b for b in at.main.button if b.key and b.key.startswith("example-")]
    assert 2 <= len(examples) <= 4 and all(b.label.startswith("What does it say about ") for b in examples)
    assert at.title[0].value == "PolicyBot"
    status = next(e for e in at.sidebar.expander if e.label == "Status")
    status_text = " ".join(shown(m.value) for m in status.markdown)
    assert "Answers:** quotes of the best passages" in status_text and "1 documents" in status_text
    assert "ollama serve" in status_text and NO_OLLAMA in status_text  # the set-up command lives here
    assert "No generated summary" not in status_text
    # Nothing asked yet: no conversation, no export.
    assert not at.chat_message and not at.main.download_button
    assert library_captions(at) and shown(library_captions(at)[0]).startswith(f"**{SAMPLE}** — 19 pages")
    # A click on an example asks it.
    at = open_page(at, "chat")
    example = next(b for b in at.main.button if b.key == "example-0")
    asked = example.label
    example.click().run()
    assert [plain_text(m.markdown[0].value) for m in messages(at, "user")] == [asked]
    assert messages(at, "assistant") and not [b for b in at.main.button if b.key == "example-0"]


# --- answers with their citations -----------------------------------------------------------


def test_chat_shows_answer_with_verified_citation_panels_and_follow_up(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = ask(start(), WATER)

    [user] = messages(at, "user")
    [assistant] = messages(at, "assistant")
    assert plain_text(user.markdown[0].value) == WATER
    answer = plain_text(assistant.markdown[0].value)
    assert "$750" in answer and "[1]" in answer
    # The question was searched as asked: no "Searched as" line for a first question.
    assert not [c for c in assistant.caption if c.value.startswith("Searched as")]

    panels = assistant.expander
    assert panels, "no citation panels"
    first = panels[0]
    # Numbered as in the answer, labelled by what the quote does, then where it is.
    label = "[1] Limit · HomeShield Household Policy · 5.2 Escape of water deductible · p.11"
    assert shown(first.label) == label  # issue 22: role, title, clause, page; no score, no file name
    numbers = [int(shown(p.label)[1 : shown(p.label).index("]")]) for p in panels]
    assert numbers == list(range(1, len(panels) + 1))  # numbered as shown, no gaps
    for panel in panels:
        assert "verified" not in panel.label and "score" not in panel.label, panel.label  # a copied quote
    detail = [shown(c.value) for c in first.caption]
    assert any(d.startswith(f"{SAMPLE} · Section 5 Deductibles") and "relevance score" in d for d in detail)
    # The chunk with the quote highlighted, the page image, and the PDF download.
    marked = [m.value for m in first.markdown if "<mark>" in m.value]
    assert marked and "$750" in plain_text(marked[0].split("<mark>", 1)[1].split("</mark>", 1)[0])
    [image] = first.image
    assert image.value and image.value[0]
    assert "HomeShield Household Policy, page 11 — quote highlighted" in [shown(c.value) for c in first.caption]
    [download] = first.download_button
    assert shown(download.label) == f"Download {SAMPLE} (see page 11)"
    # Every page each passage spans, cropped to the quote where it is on the page.
    spans = [re.search(r"\bpp?\.(\d+)(?:-(\d+))?", shown(p.label)).groups() for p in panels]
    assert len(at.image) == sum(int(last or first) - int(first) + 1 for first, last in spans)
    assert any("not legal advice" in c.value for c in at.main.caption)

    # A follow-up is searched together with the conversation it follows.
    at = ask(at, "and what about subsidence?")
    assert [plain_text(m.markdown[0].value) for m in messages(at, "user")] == [WATER, "and what about subsidence?"]
    last = messages(at, "assistant")[-1]
    searched = [shown(c.value) for c in last.caption if c.value.startswith("Searched as")]
    assert len(searched) == 1 and "deductible" in searched[0].lower() and "subsidence" in searched[0]
    assert "$2,500" in plain_text(last.markdown[0].value)
    assert last.expander and "5.3 Subsidence deductible" in shown(last.expander[0].label)
    # Earlier answers draw their page images only on request, so a long conversation stays fast.
    earlier = messages(at, "assistant")[0]
    assert earlier.expander and not earlier.image and earlier.expander[0].toggle
    assert len(last.image) >= len(last.expander)
    earlier.expander[0].toggle[0].set_value(True).run()
    assert messages(at, "assistant")[0].expander[0].image


def test_a_source_that_opens_inside_a_list_says_which_list_it_continues(monkeypatch, sample_home):
    """6.3 Unoccupancy's second chunk opens at "(b) escape of oil;": the answer quotes its item after
    the list's lead-in, and the panel says which list the passage continues, above its text."""
    use_home(monkeypatch, sample_home)
    at = ask(start(), "I was in hospital for 2 months and the house was empty. Does that matter?")
    [assistant] = messages(at, "assistant")
    lead = "When the Home is Unoccupied, we will not cover loss or damage caused by:"
    assert f'Not covered: "{lead} … (' in plain_text(assistant.markdown[0].value)
    continuing = [p for p in assistant.expander if any("Continues the list under" in c.value for c in p.caption)]
    assert continuing and all("6.3 Unoccupancy" in shown(p.label) for p in continuing)
    [note] = [shown(c.value) for c in continuing[0].caption if "Continues the list under" in c.value]
    assert note == f"Continues the list under: “{lead}” (from the passage before)"


def test_an_answer_is_copied_in_one_click_and_travels_as_data(monkeypatch, sample_home):
    """Issue 22 §4: one button copies the whole answer; the answer's text is a JSON string in the
    button's frame (a quote holding "</script>" cannot end the script), never markup."""
    use_home(monkeypatch, sample_home)
    at = ask(start(), WATER)
    [assistant] = messages(at, "assistant")
    [frame] = assistant.get("iframe")
    assert frame.proto.alt == "Copy the answer"  # app_pages.chat.COPY_ALT (a page module runs on import)
    page = frame.proto.srcdoc
    assert ">Copy answer</button>" in page and "navigator.clipboard.writeText(text)" in page
    literal = page.split("const text = ", 1)[1].split(";\n", 1)[0]
    assert json.loads(literal) == at.session_state.history[-1][1].answer
    assert "<" not in literal and ">" not in literal


def test_a_reviewer_marks_sources_and_a_second_mark_updates_the_first(monkeypatch, tmp_path):
    home = small_home(tmp_path, SAMPLE_POLICY)
    use_home(monkeypatch, home)
    at = ask(start(), WATER)

    def panel(i: int):
        return messages(at, "assistant")[0].expander[i]

    def save(i: int) -> None:
        next(b for b in panel(i).button if b.label == "Save mark").click().run()

    panel(0).segmented_control[0].set_value("Right").run()
    save(0)
    panel(1).segmented_control[0].set_value("Wrong").run()
    panel(1).number_input[0].set_value(4).run()
    save(1)
    panel(1).number_input[0].set_value(5).run()  # changed mind: the same mark, updated
    save(1)
    assert not at.exception, [e.value for e in at.exception]
    marks = PolicyBot(make_settings(home)).components.feedback.marks()
    assert [(m["n"], m["verdict"], m["correct_page"]) for m in marks] == [(1, "right", None), (2, "wrong", 5)]
    assert len({m["answer_key"] for m in marks}) == 1
    assert marks[0]["question"] == WATER and marks[0]["page_start"] == 11


def test_a_source_s_label_names_the_page_printed_on_it_apart_from_its_pages(monkeypatch, tmp_path):
    """An extract whose first PDF page is printed "5": "· pp.1-3 (printed page 5)", never "pp.1-3(printed page 5)"."""
    doc = pymupdf.open()
    for i in (1, 2, 3):
        page = doc.new_page()
        page.insert_text((72, 100), f"Clause {i}. The insurer pays water damage claims within {10 * i} days.")
        page.insert_text((72, 800), f"PAGE {i + 4} OF 7")
    path = tmp_path / "extract.pdf"
    doc.save(path)
    use_home(monkeypatch, small_home(tmp_path, path))
    labels = [shown_label(e) for e in messages(ask(start(), "When are water claims paid?"), "assistant")[0].expander]
    printed = [label for label in labels if "printed page" in label]
    assert printed and all(re.search(r"pp?\.[\d-]+ \(printed page \d+\)", label) for label in printed), labels


def test_a_source_opens_its_pdf_at_the_page_served_by_the_app(monkeypatch, tmp_path):
    import app_pages.sources as sources

    home = small_home(tmp_path, SAMPLE_POLICY)
    use_home(monkeypatch, home)
    at = ask(start(), WATER)
    first = messages(at, "assistant")[0].expander[0]
    [opener] = [b for b in first.get("link_button") if "Open the PDF" in b.proto.label]
    assert opener.proto.label == "Open the PDF at page 11"
    address, _, page = opener.proto.url.partition("#")
    assert address.startswith("app/static/pdf/") and page == "page=11"
    served = tmp_path / "static" / "pdf" / address.rsplit("/", 1)[1]
    assert served.read_bytes() == SAMPLE_POLICY.read_bytes()
    sources.unpublish_removed(set())  # the document deleted: its PDF is no longer served
    assert not served.exists()


def test_a_conversation_is_kept_across_a_reload_and_can_be_reopened_or_deleted(monkeypatch, tmp_path):
    home = small_home(tmp_path, SAMPLE_POLICY)
    use_home(monkeypatch, home)
    at = ask(start(), WATER)
    conversation = at.query_params["c"][0] if isinstance(at.query_params["c"], list) else at.query_params["c"]
    kept = PolicyBot(make_settings(home)).conversations
    assert [q for q, _ in kept.load(conversation)] == [WATER]

    reloaded = AppTest.from_file(str(APP), default_timeout=120)
    reloaded.query_params["c"] = conversation
    reloaded.run()
    assert not reloaded.exception, [e.value for e in reloaded.exception]
    assert [plain_text(m.markdown[0].value) for m in messages(reloaded, "user")] == [WATER]
    assert "$750" in plain_text(messages(reloaded, "assistant")[0].markdown[0].value)

    reloaded.button(key="new").click().run()  # a new conversation; the first stays in the list
    assert not messages(reloaded, "user") and "c" not in reloaded.query_params
    [listed] = [b for b in reloaded.sidebar.button if b.key == f"open-conversation-{conversation}"]
    assert shown(listed.label) == WATER and not listed.disabled
    listed.click().run()
    assert [plain_text(m.markdown[0].value) for m in messages(reloaded, "user")] == [WATER]
    reloaded.sidebar.button(key=f"delete-conversation-{conversation}").click().run()
    assert kept.load(conversation) == [] and not messages(reloaded, "user")
    assert not [b for b in reloaded.sidebar.button if b.key.startswith("open-conversation-")]


def test_the_last_question_can_be_asked_again_or_in_other_words(monkeypatch, tmp_path):
    home = small_home(tmp_path, SAMPLE_POLICY)
    use_home(monkeypatch, home)
    at = ask(start(), WATER)
    at.button(key="again-0").click().run()
    assert [plain_text(m.markdown[0].value) for m in messages(at, "user")] == [WATER]  # replaced, not added
    at.text_input(key="edit-0").set_value("What is the subsidence deductible?")
    at.button(key="edit-ask-0").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [plain_text(m.markdown[0].value) for m in messages(at, "user")] == ["What is the subsidence deductible?"]
    assert "$2,500" in plain_text(messages(at, "assistant")[0].markdown[0].value)
    conversation = at.session_state["conversation_id"]
    kept = PolicyBot(make_settings(home)).conversations.load(conversation)
    assert [q for q, _ in kept] == ["What is the subsidence deductible?"]


def test_a_kiosk_keeps_no_conversation_and_opens_none_from_the_address(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = ask(start(), WATER)  # outside the kiosk: kept
    kept = at.session_state["conversation_id"]
    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="2468")
    visitor = AppTest.from_file(str(APP), default_timeout=120)
    visitor.query_params["c"] = kept
    visitor.run()
    assert not messages(visitor, "user")  # the address opens nothing in a kiosk
    assert not [e for e in visitor.sidebar.expander if e.label == "Conversations"]
    store = PolicyBot(make_settings(sample_home)).conversations
    before = len(store.recent())
    visitor = ask(visitor, "What is the subsidence deductible?")
    assert len(store.recent()) == before and "c" not in visitor.query_params


def test_the_first_answer_of_a_new_conversation_is_not_taken_for_the_last_ones(monkeypatch, tmp_path):
    home = small_home(tmp_path, SAMPLE_POLICY)
    use_home(monkeypatch, home)

    def mark_first(at: AppTest, verdict: str) -> None:
        panel = messages(at, "assistant")[0].expander[0]
        panel.segmented_control[0].set_value(verdict).run()
        next(b for b in messages(at, "assistant")[0].expander[0].button if b.label == "Save mark").click().run()

    at = ask(start(), WATER)
    mark_first(at, "Right")
    at.button(key="new").click().run()
    at = ask(at, WATER)
    mark_first(at, "Wrong")
    marks = PolicyBot(make_settings(home)).components.feedback.marks()
    assert [m["verdict"] for m in marks] == ["right", "wrong"]  # two answers, two marks: none overwritten
    assert len({m["answer_key"] for m in marks}) == 2


def test_a_kiosk_visitor_is_not_offered_source_marks(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="2468")
    at = ask(start(), WATER)
    [assistant] = messages(at, "assistant")
    assert assistant.expander and not any(e.segmented_control for e in assistant.expander)
    # No PDF opened in a new tab either: a kiosk browser has no tab bar to come back.
    assert not any("Open the PDF" in b.proto.label for e in assistant.expander for b in e.get("link_button"))
    # No Copy answer: the kiosk's clipboard would keep this visitor's answer for the next one.
    assert not assistant.get("iframe")


def searched_as(message) -> str | None:
    found = [shown(c.value) for c in message.caption if c.value.startswith("Searched as")]
    return found[0].removeprefix("Searched as: ") if found else None


def test_follow_ups_never_snowball_and_a_question_can_be_searched_on_its_own(monkeypatch, sample_home):
    """Issue 20's hospital conversation: a topic switch that ends in "that" stands alone, a true
    follow-up carries only the previous user question, and one click searches it on its own."""
    use_home(monkeypatch, sample_home)
    at = start()
    for question in (
        "Someone stole my bike from the garden. Am I covered?",
        "My son knocked the TV over and broke it, is that covered?",
        "I was in hospital for 2 months and the house was empty. Does that matter?",
    ):
        at = ask(at, question)
    hospital = messages(at, "assistant")[-1]
    assert "bike" not in (searched_as(hospital) or "").lower()  # never the conversation so far
    at = ask(at, "and if it was only 3 weeks?")
    follow_up = messages(at, "assistant")[-1]
    assert searched_as(follow_up) == (
        "I was in hospital for 2 months and the house was empty. Does that matter; and if it was only 3 weeks?"
    )
    at.button(key="alone-3").click().run()
    assert not at.exception
    assert len(at.session_state["history"]) == 4  # the turn was replaced, not added
    last_question, last_answer = at.session_state["history"][-1]
    assert last_question == "and if it was only 3 weeks?" and last_answer.standalone_question == last_question
    assert searched_as(messages(at, "assistant")[-1]) is None


def test_a_follow_up_says_it_kept_to_the_document_of_the_answer_before_it(monkeypatch, tmp_path):
    """In a library of the house policy and a flood form, "And if I'm still not happy after that?"
    after two turns about a complaint is searched mainly in the house policy, and says so; searched
    on its own (one click), it is searched across the library again."""
    use_home(monkeypatch, conftest.house_and_flood_home(tmp_path / "home"))
    at = start()
    for question in (
        "You turned down my claim and I think that's unfair. How do I complain?",
        "how long have they got to answer me?",
        "And if I'm still not happy after that?",
    ):
        at = ask(at, question)
    kept = "Searched mainly in HomeShield Household Policy: the answer before it came from there."  # its title
    follow_up = messages(at, "assistant")[-1]
    assert kept in [shown(c.value) for c in follow_up.caption]
    assert not any(kept in shown(c.value) for c in messages(at, "assistant")[0].caption)
    at.button(key="alone-2").click().run()
    assert not at.exception
    assert not any(kept in shown(c.value) for c in messages(at, "assistant")[-1].caption)


def test_a_made_up_answer_is_never_shown_and_its_draft_is_for_reviewers_only(monkeypatch, sample_home):
    """Issue 21: a model that writes what the documents do not say. The citizen reads the quoted
    passages; a reviewer can open the model's draft; a kiosk visitor never sees it."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from policybot.models.llm import fixed_llm
    from policybot.models.providers import LLMProvider

    made_up = "The cost of this policy per month is $2.50 [1]. I'll make sure to pay for the damage."
    fake = fixed_llm(FakeListChatModel(responses=[made_up]), name="fake")
    monkeypatch.setattr(LLMProvider, "get", lambda self: (fake, None))
    import streamlit

    def no_streaming(*args, **kwargs):  # the model's words, written to the page as they come
        raise AssertionError("the draft was streamed to the page before it was checked")

    monkeypatch.setattr(streamlit, "write_stream", no_streaming)
    for kiosk in ("0", "1"):
        use_home(monkeypatch, sample_home, POLICYBOT_KIOSK=kiosk)
        at = ask(start(), WATER)
        assert not at.exception, at.exception
        [assistant] = messages(at, "assistant")
        answer = at.session_state["history"][-1][1]
        assert answer.mode == "extractive" and answer.unchecked_draft == made_up
        shown = plain_text(assistant.markdown[0].value)  # the answer, as the citizen reads it
        assert "$2.50" not in shown and "$750" in shown
        drafts = [e for e in assistant.expander if "unchecked draft" in shown_label(e)]
        if kiosk == "0":
            assert drafts and "$2.50" in " ".join(plain_text(m.value) for m in drafts[0].markdown)
        else:
            assert not drafts
        # Nowhere else on the page either: the model's words are not shown as they are written.
        in_drafts = sum("$2.50" in plain_text(m.value) for d in drafts for m in d.markdown)
        assert sum("$2.50" in plain_text(m.value) for m in at.main.markdown) == in_drafts


def without_role(label: str) -> str:
    """A source panel's label without the role of its quote ("[1] Limit · policy.pdf" -> "[1] policy.pdf")."""
    return re.sub(r"^(\[\d+\] )(?:Covered|Not covered|Limit|Condition|Definition) · ", r"\1", label)


def shown_label(element) -> str:
    return shown(element.label)


def test_the_answer_says_when_the_documents_word_for_the_user_s_was_searched_too(monkeypatch, sample_home):
    """The sample policy never says "excess": the user reads that "deductible" was searched too."""
    use_home(monkeypatch, sample_home)
    [assistant] = messages(ask(start(), "burst pipe excess?"), "assistant")
    also = [shown(c.value) for c in assistant.caption if c.value.startswith("Also searched")]
    assert also == ["Also searched for “deductible”: the word your documents use for yours."], also
    [assistant] = messages(ask(start(), "someone nicked my van"), "assistant")
    also = [shown(c.value) for c in assistant.caption if c.value.startswith("Also searched")]
    assert also == ["Also searched for “stolen”, “theft” and “vehicle”: the words your documents use for yours."]


def test_out_of_scope_question_is_refused_with_closest_passages(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = ask(start(), "How do I cook a perfect nasi lemak?")
    [assistant] = messages(at, "assistant")
    assert plain_text(assistant.markdown[0].value) == REFUSAL
    assert "I cannot find a definitive answer in the provided policy documents." in REFUSAL
    assert any(c.value.startswith("Closest passages") for c in assistant.caption)
    labels = [shown(e.label) for e in assistant.expander]
    assert labels and all(label.startswith(("[1]", "[2]", "[3]")) for label in labels)
    assert not [label for label in labels if "verified" in label], labels


def test_thanks_gets_a_kind_word_and_no_passages(monkeypatch, sample_home):
    """A citizen who says thank you reads a kind word, not a refusal or passages to check."""
    use_home(monkeypatch, sample_home)
    at = ask(start(), "Thank you so much!")
    [assistant] = messages(at, "assistant")
    assert plain_text(assistant.markdown[0].value).startswith("You're welcome.")
    assert not assistant.expander
    assert not any(c.value.startswith(("Closest passages", "Searched as")) for c in assistant.caption)
    assert not assistant.button  # nothing to ask again, copy or rate


def test_an_empty_submit_is_ignored_quietly(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = ask(start(), "   \n  ")
    assert not at.chat_message and not at.main.error and not at.session_state["history"]


def test_new_conversation_clears_history_and_export_follows_history(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = start()
    assert not [b for b in at.main.button if not b.key.startswith("example-")]  # nothing to clear yet
    assert not at.main.download_button

    at = ask(at, WATER)
    assert len(at.session_state["history"]) == 1
    assert [b.label for b in at.main.button if b.key == "new"] == ["New conversation"]
    assert [d.label for d in at.main.download_button][:2] == ["Export Markdown", "Export JSON"]

    at.button(key="new").click().run()
    assert not at.exception
    assert at.session_state["history"] == []
    assert not at.chat_message
    assert not [d for d in at.main.download_button if d.label.startswith("Export")]
    assert [b for b in at.main.button if b.key.startswith("example-")]  # greeted again


# --- uploads --------------------------------------------------------------------------------


def test_upload_reports_each_bad_file_and_adds_the_good_one(monkeypatch, tmp_path):
    """AppTest 1.67 drives st.file_uploader (FileUploader.set_value) end to end."""
    home = small_home(tmp_path)
    use_home(monkeypatch, home)
    at = open_page(start(), "library")
    assert any(i.value.startswith("No documents yet.") for i in at.main.info)
    [uploader] = at.main.file_uploader
    assert uploader.label == "Add PDFs" and uploader.accept_multiple_files and uploader.allowed_type == [".pdf"]
    assert "Add to library" not in library_view(at)["buttons"]  # nothing chosen yet

    files = [
        ("broken.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 40, PDF),
        ("locked.pdf", pdfs.encrypted_pdf(tmp_path / "locked.pdf").read_bytes(), PDF),
        ("scan.pdf", pdfs.scanned_pdf(tmp_path / "scan.pdf").read_bytes(), PDF),
        ("acme-home.pdf", pdfs.sample_policy(tmp_path / "acme-home.pdf").read_bytes(), PDF),
    ]
    at.file_uploader[0].set_value(files).run()
    assert not at.exception
    at.button(key="do_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]

    errors = [shown(e.value) for e in at.main.error]
    assert len(errors) == 3, errors
    broken, locked, scan = errors
    assert broken.startswith("broken.pdf:") and "cannot be read as a PDF" in broken
    assert locked.startswith("locked.pdf:") and "password-protected" in locked
    assert scan.startswith("scan.pdf:") and "no extractable text" in scan
    [stored] = PolicyBot(make_settings(home)).library.documents().documents  # what the library now holds
    assert stored.name == "acme-home.pdf" and stored.pages == 5
    assert [shown(s.value) for s in at.main.success] == [f"acme-home.pdf: 5 pages, {stored.chunks} passages"]
    assert not at.main.warning
    # At once, in the same click: the list holds the new document and the uploader is empty again.
    [caption] = [c.value for c in at.main.caption if c.value.startswith("**")]
    assert shown(caption).startswith(f"**acme-home.pdf** — 5 pages, {stored.chunks} passages")
    [uploader] = at.main.file_uploader
    assert uploader.key == "uploads-1" and not uploader.value

    at.run()  # the report is said once
    assert not at.exception
    assert not at.main.success and not at.main.error
    [caption] = library_captions(at)
    assert shown(caption).startswith(f"**acme-home.pdf** — 5 pages, {stored.chunks} passages")


def test_upload_error_names_the_file_once(monkeypatch, tmp_path):
    use_home(monkeypatch, small_home(tmp_path))
    at = open_page(start(), "library")
    at.file_uploader[0].set_value(("locked.pdf", pdfs.encrypted_pdf(tmp_path / "locked.pdf").read_bytes(), PDF)).run()
    at.button(key="do_upload").click().run()
    [error] = [shown(e.value) for e in at.main.error]
    assert error.startswith("locked.pdf: the PDF is password-protected"), error


def test_uploaded_document_is_searched_by_default(monkeypatch, tmp_path):
    first = pdfs.simple_pdf(
        tmp_path / "bicycles.pdf", ["The excess for bicycles is fifty dollars per claim."], heading="Section 1 Bicycles"
    )
    use_home(monkeypatch, small_home(tmp_path, first))
    at = start()
    assert at.sidebar.multiselect(key="scope").value == ["bicycles.pdf"]
    acme = pdfs.sample_policy(tmp_path / "acme-home.pdf").read_bytes()
    open_page(at, "library").file_uploader[0].set_value([("acme-home.pdf", acme, PDF)]).run()
    at.button(key="do_upload").click().run()
    at = open_page(at, "chat")
    # Listed by title (a person reads them), chosen by file name.
    assert sorted(at.sidebar.multiselect(key="scope").options) == ["Acme Home Insurance Policy", "bicycles"]
    assert "acme-home.pdf" in at.sidebar.multiselect(key="scope").value
    at = ask(at, "Within how many days may I cancel during the cooling-off period?")
    labels = [shown(e.label) for e in messages(at, "assistant")[-1].expander]
    assert any("Acme Home Insurance Policy" in label for label in labels), labels


# --- kiosk ----------------------------------------------------------------------------------


def test_kiosk_hides_admin_until_the_right_pin(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="4321")
    at = start()
    locked, locked_library = sidebar_view(at), library_view(at)
    assert "Settings" not in locked["expanders"]
    assert "Admin" in locked["expanders"] and "Unlock" in locked["buttons"]
    assert locked_library["uploaders"] == [] and "Delete a document" not in locked_library["expanders"]
    listed = [shown(c.value) for c in open_page(at, "library").main.caption]
    assert "HomeShield Household Policy" in listed, "the document list stays visible to kiosk visitors, by title"
    assert not [c for c in listed if ".pdf" in c or "passages" in c], "no file names or chunk counts for visitors"

    at.sidebar.text_input(key="pin").input("1111")
    at.sidebar.button(key="unlock").click().run()
    assert [e.value for e in at.sidebar.error] == ["Wrong PIN."]
    assert sidebar_view(at) == locked and at.session_state["unlocked"] is False

    at.sidebar.text_input(key="pin").input("4321")
    at.sidebar.button(key="unlock").click().run()
    assert not at.exception and not at.sidebar.error
    unlocked = sidebar_view(at)
    assert "Settings" in unlocked["expanders"] and "Admin" not in unlocked["expanders"]
    assert "Lock admin" in unlocked["buttons"]
    unlocked_library = library_view(at)
    assert unlocked_library["uploaders"] == ["Add PDFs"] and "Delete a document" in unlocked_library["expanders"]

    # Unlocking is per browser session: another visitor's session is still locked.
    other = start()
    assert sidebar_view(other) == locked and library_view(other) == locked_library

    at.sidebar.button(key="lock").click().run()
    assert not at.exception
    assert sidebar_view(at) == locked and library_view(at) == locked_library
    assert at.sidebar.text_input(key="pin").value == ""  # the PIN is not left filled in


def test_no_url_or_query_parameter_unlocks_a_kiosk(monkeypatch, sample_home):
    """Issue 23: the admin unlocks only by the PIN box. Query parameters that name the state, and
    opening the Library page by its URL, leave uploads, deletes and settings hidden."""
    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="4321")
    at = AppTest.from_file(str(APP), default_timeout=120)
    for key, value in {"unlocked": "true", "pin": "4321", "admin": "1", "kiosk": "0", "unlock": "true"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    assert at.session_state["unlocked"] is False
    assert "Settings" not in sidebar_view(at)["expanders"]
    library = library_view(at)  # the Library page, as its URL opens it
    assert library["uploaders"] == [] and "Delete a document" not in library["expanders"]


def test_kiosk_without_pin_cannot_be_unlocked(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1")
    at = start()
    assert "Admin" not in sidebar_view(at)["expanders"] and not at.sidebar.button  # nothing to try a PIN on
    shown_text = " ".join(shown(e.value) for e in [*at.caption, *at.markdown, *at.info])
    assert "POLICYBOT_KIOSK_PIN" not in shown_text  # the set-up is for the admin, in `policybot doctor`
    assert library_view(at)["uploaders"] == []


def test_kiosk_idle_reset_and_separate_sessions(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_IDLE_MINUTES="1")
    at = ask(start(), WATER)
    assert [plain_text(m.markdown[0].value) for m in messages(at, "user")] == [WATER]

    # Another browser session has its own, empty conversation.
    other = start()
    assert not other.chat_message and other.session_state["history"] == []
    assert other.session_state["session_id"] != at.session_state["session_id"]

    # Still within the idle time: a rerun keeps the conversation.
    at.run()
    assert len(messages(at, "assistant")) == 1

    at.session_state["last_active"] = time.time() - 120
    at.run()
    assert not at.exception
    assert at.session_state["history"] == []
    assert not at.chat_message
    assert not at.main.info, "the next visitor is greeted as the first was, with no report about the last one"
    assert not [d for d in at.main.download_button if d.label.startswith("Export")]

    # The other session was not touched, and the notice goes with the next question.
    at = ask(at, "and what about subsidence?")
    assert [plain_text(m.markdown[0].value) for m in messages(at, "user")] == ["and what about subsidence?"]
    assert not [c for c in messages(at, "assistant")[0].caption if c.value.startswith("Searched as")]
    assert not [i for i in at.main.info if "cleared after" in i.value]


def test_a_kiosk_answer_slower_than_the_idle_time_is_shown_and_read_from_then(monkeypatch, sample_home):
    """A slow kiosk (a busy CPU, a model still loading) can take longer to answer than its idle time.
    The visitor who waited is not idle: the answer is shown, and the idle time counts from then."""
    from policybot.service import PolicyBot as Bot

    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_IDLE_MINUTES="0.02")  # 1.2 s
    answer_stream = Bot.ask_stream

    def slow(self, *args, **kwargs):
        yield from answer_stream(self, *args, **kwargs)
        time.sleep(1.5)  # the answer takes longer than the idle time

    monkeypatch.setattr(Bot, "ask_stream", slow)
    at = start()
    asked = time.time()
    at = ask(at, WATER)
    assert [plain_text(m.markdown[0].value) for m in messages(at, "user")] == [WATER]
    assert len(at.session_state["history"]) == 1 and "$750" in plain_text(
        messages(at, "assistant")[0].markdown[0].value
    )
    assert at.session_state["last_active"] > asked + 1.5  # read from the answer shown, not from the asking


# --- delete ---------------------------------------------------------------------------------


def test_delete_needs_confirmation_and_empties_the_library(monkeypatch, tmp_path):
    home = small_home(tmp_path, pdfs.sample_policy(tmp_path / "acme-home.pdf"))
    use_home(monkeypatch, home)
    at = start()
    [caption] = library_captions(at)
    assert shown(caption).startswith("**acme-home.pdf**")
    [doc] = PolicyBot(make_settings(home)).library.documents().documents
    assert at.selectbox(key="delete_doc").value == doc.sha256
    sure = at.checkbox(key=f"delete_sure_{doc.sha256[:16]}")
    assert shown(sure.label) == "Yes, delete acme-home.pdf and its passages" and sure.value is False
    assert at.button(key="do_delete").disabled

    with pytest.raises(AppTestError, match="disabled"):  # as in a browser: it cannot be pressed
        at.button(key="do_delete").click()

    at.checkbox(key=f"delete_sure_{doc.sha256[:16]}").check().run()
    assert not at.button(key="do_delete").disabled
    at.button(key="do_delete").click().run()
    assert not at.exception, [e.value for e in at.exception]

    assert library_captions(at) == []
    assert any(i.value.startswith("No documents yet.") for i in at.main.info)
    assert "Delete a document" not in library_view(at)["expanders"]
    assert PolicyBot(make_settings(home)).library.documents().documents == []
    assert not list((home / "files").glob("*.pdf"))


# --- hardening (issue 8) ----------------------------------------------------------------------


def _unescaped(value: str, syntax: str) -> bool:
    """Whether Markdown syntax appears in a string without its escaping backslash."""
    return re.search(r"(?<!\\)" + re.escape(syntax), value) is not None


def rendered_strings(at: AppTest) -> list[str]:
    """Every string the page would interpret as Markdown or HTML."""
    values = [m.value for m in at.markdown] + [c.value for c in at.caption]
    values += (
        [e.label for e in at.expander] + [b.label for b in at.button] + [d.label for d in at.get("download_button")]
    )
    values += [a.value for kind in ("info", "warning", "error", "success") for a in at.get(kind)]
    return values


def test_two_sessions_delete_acts_on_the_confirmed_document_only(monkeypatch, tmp_path):
    names = ["good.pdf", "política-ñ-测试.pdf", "prompt-injection.pdf"]
    home = tmp_path / "home"
    bot = PolicyBot(make_settings(home))
    for i, name in enumerate(names):
        bot.ingest_file(pdfs.simple_pdf(tmp_path / f"{i}.pdf", [f"Document {i} covers item {i}."]), name=name)
    target = next(d for d in bot.library.documents().documents if d.name == "prompt-injection.pdf")
    use_home(monkeypatch, home)

    a, b = open_page(start(), "library"), open_page(start(), "library")
    for session in (b, a):  # B confirms first, then A
        session.selectbox(key="delete_doc").select(target.sha256).run()
        session.checkbox(key=f"delete_sure_{target.sha256[:16]}").check().run()
    a.button(key="do_delete").click().run()
    assert not a.exception
    assert [shown(s.value) for s in a.main.success] == ["Deleted prompt-injection.pdf."]

    b.button(key="do_delete").click().run()  # B's list changed under it
    assert not b.exception
    assert [shown(w.value) for w in b.main.warning] == [
        "prompt-injection.pdf was already deleted; nothing else was changed"
    ]
    assert sorted(d.name for d in PolicyBot(make_settings(home)).library.documents().documents) == names[:2]
    # B's box now shows a remaining document, unconfirmed.
    assert b.selectbox(key="delete_doc").value != target.sha256
    assert not any(c.value for c in b.checkbox if c.key and c.key.startswith("delete_sure_"))


def test_document_markdown_and_html_are_shown_as_text(monkeypatch, tmp_path):
    home = small_home(tmp_path, pdfs.hostile_markdown_pdf(tmp_path / "ponds.pdf"))
    use_home(monkeypatch, home)
    at = ask(start(), "Are garden ponds covered for storm damage?")
    [assistant] = messages(at, "assistant")
    answer = plain_text(assistant.markdown[0].value)
    assert "![pixel](http://127.0.0.1:8999/track.png)" in answer.replace("\n", " ")  # quoted, as text
    for value in rendered_strings(at):
        for syntax in ("![", "](", "<script", "<img", "<a ", "javascript:", "http://", "https://", "www.", "$"):
            assert not _unescaped(value.replace("&#", ""), syntax), (syntax, value[:300])
    panels = [m.value for e in assistant.expander for m in e.markdown if "<mark>" in m.value or "<div" in m.value]
    assert panels, "no chunk panel"
    for html_block in panels:  # the app's only HTML: a div and the quote mark, nothing from the document
        assert set(re.findall(r"</?([a-z]+)", html_block)) <= {"div", "mark"}, html_block[:300]
        assert "\n" not in html_block
        assert "![pixel](http://127.0.0.1:8999/track.png)" in plain_text(html_block).replace("\n", " ")


def test_hostile_upload_names_are_made_safe_and_never_crash(monkeypatch, tmp_path):
    home = small_home(tmp_path)
    use_home(monkeypatch, home)
    at = open_page(start(), "library")
    policy = pdfs.sample_policy(tmp_path / "p.pdf").read_bytes()
    other = pdfs.simple_pdf(tmp_path / "o.pdf", ["Bicycles are covered away from home."]).read_bytes()
    third = pdfs.simple_pdf(tmp_path / "t.pdf", ["Garden sheds are covered for storm damage."]).read_bytes()
    files = [
        ("![x](http://127.0.0.1:8799/pixel-from-name.png) [y](javascript:alert(5)).pdf", policy, PDF),
        ("n" * 300 + ".pdf", other, PDF),  # used to crash the page with OSError: File name too long
        ("../../evil.pdf", third, PDF),
    ]
    at.file_uploader[0].set_value(files).run()
    at.button(key="do_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.main.error, [e.value for e in at.main.error]
    stored = sorted(d.name for d in PolicyBot(make_settings(home)).library.documents().documents)
    assert stored == sorted(["pixel-from-name.png y javascript alert 5.pdf", "n" * 116 + ".pdf", "evil.pdf"])
    at.run()
    captions = [shown(c) for c in library_captions(at)]
    assert sorted(c.split("** — ")[0].lstrip("*") for c in captions) == stored
    for value in rendered_strings(at):
        assert not _unescaped(value, "](") and not _unescaped(value, "!["), value
    assert not (home / "uploads").exists() or not list((home / "uploads").iterdir())
    assert not list(Path("/tmp").glob("policybot-upload-*"))


def test_a_kiosk_reset_leaves_nothing_of_the_last_visitor(monkeypatch, tmp_path):
    """Idle, or "New visitor": the conversation, the scope, the admin, every box typed in and every
    notice go; each box the next visitor sees is a new widget, so no unsent draft comes back."""
    bikes = pdfs.simple_pdf(
        tmp_path / "bicycles.pdf", ["The excess for bicycles is fifty dollars per claim."], heading="Section 1 Bicycles"
    )
    home = small_home(tmp_path, bikes, pdfs.sample_policy(tmp_path / "acme-home.pdf"))
    use_home(monkeypatch, home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="4321", POLICYBOT_KIOSK_IDLE_MINUTES="1")
    first = start()
    everything = sorted(first.sidebar.multiselect(key="scope").value)

    def visit(at: AppTest) -> AppTest:
        at.sidebar.multiselect(key=[m.key for m in at.sidebar.multiselect][0]).set_value(["bicycles.pdf"]).run()
        at = ask(at, "What is the excess for my stolen bicycle at 12 Elm St?")
        at.sidebar.text_input(key=[t.key for t in at.sidebar.text_input][0]).input("4321")
        at.sidebar.button(key="unlock").click().run()
        assert at.session_state["unlocked"] and at.session_state["history"]
        return at

    def nothing_left(at: AppTest, visit_no: int) -> None:
        assert not at.exception, [e.value for e in at.exception]
        state = at.session_state
        assert state["history"] == [] and state["evidence"] is None and state["unlocked"] is False
        assert state["visit"] == visit_no - 1
        [scope] = at.sidebar.multiselect
        assert scope.key == f"scope~{visit_no}" and sorted(scope.value) == everything
        assert at.chat_input[0].key == f"question~{visit_no}"
        assert not at.chat_message and not at.main.info
        seen = " ".join(str(v) for v in state_of(at).values())
        assert "12 Elm St" not in seen and "4321" not in seen
        # What is left is what any new session starts with, under the new visit's keys.
        renamed = {k.split("~")[0] for k in state_of(at)}
        fresh_keys = set(state_of(start()))  # a brand-new session, now that the models are loaded
        assert renamed <= fresh_keys | {"visit", "last_reset"}, renamed - fresh_keys
        assert "Settings" not in sidebar_view(at)["expanders"] and "Status" not in sidebar_view(at)["expanders"]

    at = visit(first)  # (the countdown before the reset runs between full runs: the browser test sees it)
    at.session_state["last_active"] = time.time() - 120  # the visitor walked away
    at.run()
    nothing_left(at, 2)

    at = visit(at)  # the second visitor presses "New visitor" when leaving
    at.button(key="new-visitor").click().run()
    nothing_left(at, 3)


def test_kiosk_admin_locks_again_when_idle_even_without_a_conversation(monkeypatch, sample_home):
    use_home(
        monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="4321", POLICYBOT_KIOSK_IDLE_MINUTES="1"
    )
    at = start()
    at.sidebar.text_input(key="pin").input("4321")
    at.sidebar.button(key="unlock").click().run()
    assert library_view(at)["uploaders"] == ["Add PDFs"] and not at.session_state["history"]
    at = open_page(at, "chat")
    at.session_state["last_active"] = time.time() - 120  # the admin walked away
    at.run()
    assert not at.exception
    assert at.session_state["unlocked"] is False
    assert not at.main.info  # the next person is not told about the last one
    assert library_view(at)["uploaders"] == []


def test_kiosk_admin_locks_again_after_its_maximum_time(monkeypatch, sample_home):
    use_home(
        monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="4321", POLICYBOT_KIOSK_UNLOCK_MINUTES="10"
    )
    at = start()
    at.sidebar.text_input(key="pin").input("4321")
    at.sidebar.button(key="unlock").click().run()
    assert at.session_state["unlocked"] is True
    at.session_state["unlocked_at"] = time.time() - 11 * 60  # busy, but unlocked for too long
    at.run()
    assert at.session_state["unlocked"] is False
    assert any("stays unlocked for at most 10 minutes" in shown(i.value) for i in at.main.info)
    assert library_view(at)["uploaders"] == []


def test_kiosk_pin_guesses_back_off_across_sessions(monkeypatch, tmp_path):
    """The gate's clock stands still: the back-off is checked by its rules, not by how fast this
    machine runs (on a loaded one, the 5 s wait had passed before the right PIN was typed)."""
    import app_pages.state as app_state
    from policybot.display.kiosk import PinGate

    monkeypatch.setattr(app_state, "PinGate", lambda pin, **kwargs: PinGate(pin, clock=lambda: 1000.0, **kwargs))
    use_home(monkeypatch, small_home(tmp_path), POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="4321")
    at = start()
    errors = []
    for guess in ("0000", "1111", "2222", "3333"):
        at.sidebar.text_input(key="pin").input(guess)
        at.sidebar.button(key="unlock").click().run()
        errors.append(shown(at.sidebar.error[0].value))
    assert errors[:3] == ["Wrong PIN."] * 3
    assert errors[3] == "Wrong PIN. Wait 5 s before trying again."
    at.sidebar.text_input(key="pin").input("4321")  # the right PIN, too soon
    at.sidebar.button(key="unlock").click().run()
    assert shown(at.sidebar.error[0].value).startswith("Too many wrong PINs. Try again in")
    assert at.session_state["unlocked"] is False
    # Fresh browser sessions share the global count: past ten wrong PINs in all, everyone waits.
    for i in range(7):
        other = start()
        other.sidebar.text_input(key="pin").input(f"9{i}99")
        other.sidebar.button(key="unlock").click().run()
    fresh = start()
    fresh.sidebar.text_input(key="pin").input("4321")
    fresh.sidebar.button(key="unlock").click().run()
    assert shown(fresh.sidebar.error[0].value).startswith("Too many wrong PINs. Try again in")
    assert fresh.session_state["unlocked"] is False


def test_streamlit_config_keeps_a_kiosk_offline_and_minimal():
    """`streamlit run app.py` without the Makefile's flags reads these from .streamlit/config.toml."""
    import subprocess
    import sys

    code = (
        "from streamlit import config; config.get_config_options(force_reparse=True); "
        "print([config.get_option(k) for k in ('client.toolbarMode', 'server.fileWatcherType', "
        "'browser.gatherUsageStats', 'server.headless', 'client.showErrorDetails')])"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=APP.parent, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "['minimal', 'none', False, True, 'none']", done.stderr[-500:]


# --- evidence page ----------------------------------------------------------------------------

ISSUE = "escape of water"


def open_evidence(at: AppTest) -> AppTest:
    return open_page(at, "evidence")


def collect(at: AppTest, issue: str) -> AppTest:
    at.text_input(key="evidence_issue").set_value(issue)
    at.button(key="collect").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def evidence_panels(at: AppTest) -> list:
    return [e for e in at.main.expander if re.match(r"\[\d+\] ", shown(e.label))]


def step_panels(at: AppTest) -> list:
    return [e for e in at.main.expander if shown(e.label).startswith("Step ")]


def test_evidence_page_collects_a_table_with_panels_trace_and_downloads(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = open_evidence(start())
    assert not at.chat_input  # the chat is not drawn here
    assert [b.label for b in at.main.button] == ["Collect evidence"] and not at.dataframe
    assert not any("ollama" in shown(e.value).lower() for e in [*at.main.info, *at.main.caption])
    assert any("HomeShield Household Policy" in shown(c.value) for c in at.main.caption)  # collected from, by title

    at = collect(at, ISSUE)
    [table] = at.dataframe
    df = table.value
    assert list(df.columns) == ["#", "document", "section", "pages", "role", "quote", "why", "same text in"]
    sections = list(df["section"])
    assert any("2.5 Escape of water" in s for s in sections), sections
    assert any("5.2 Escape of water deductible" in s for s in sections), sections
    assert list(df["#"]) == list(range(1, len(df) + 1))
    assert set(df["document"]) == {"HomeShield Household Policy"}  # titles, as everywhere a person reads
    deductible = df[df["section"].str.contains("5.2 Escape of water deductible")]
    assert (deductible["role"] == "Limit").all() and deductible["quote"].str.contains(r"\$750").any()
    assert not df["quote"].str.contains(r"\|---|<br>", regex=True).any()  # quotes without Markdown
    summary = shown(at.main.markdown[0].value)
    assert summary.startswith(f"{len(df)} passages on “{ISSUE}”, collected by the deterministic planner (no LLM)"), (
        summary
    )

    # One source panel per row, as in the chat: the chunk with the quote marked, and its page.
    panels = evidence_panels(at)
    assert len(panels) == len(df)
    second = shown(panels[1].label)
    # Labelled as the chat labels sources: number, role in plain words, title, clause, pages.
    assert re.match(r"\[2\] (Covered|Not covered) · HomeShield Household Policy · 2\.5 Escape of water · pp?\.", second)
    assert "verified" not in second  # a copied quote always is in its passage
    assert [m for m in panels[1].markdown if "<mark>" in m.value]
    # Page images are drawn on request (every rerun redraws every panel), or for the selected row.
    assert not panels[1].image
    panels[1].toggle[0].set_value(True).run()
    panels = evidence_panels(at)
    assert panels[1].image
    assert any(shown(c.value).startswith("HomeShield Household Policy, page 4") for c in panels[1].caption)
    assert not any(p.proto.expanded for p in panels)

    steps = step_panels(at)
    assert steps and shown(steps[0].label).startswith(f"Step 1: Search[{ISSUE}]")
    first_step = plain_text(steps[0].markdown[0].value)
    assert (
        first_step.startswith("Thought:")
        and "Action: Search[escape of water]" in first_step
        and "Observation:" in first_step
    )
    downloads = [d.label for d in at.main.download_button]
    assert downloads[:2] == ["Download CSV", "Download Markdown"]

    # Selecting a row opens its panel; the report survives reruns and a visit to the chat.
    at.session_state[table.key] = {"selection": {"rows": [2], "columns": [], "cells": []}}
    at.run()
    # The selected row's panel comes first, right under the table, open, with its page.
    assert [p.proto.expanded for p in evidence_panels(at)].index(True) == 0
    assert sum(p.proto.expanded for p in evidence_panels(at)) == 1
    assert shown(evidence_panels(at)[0].label).startswith("[3] ")
    assert evidence_panels(at)[0].image
    at = open_page(at, "chat")
    assert not at.dataframe and at.chat_input
    at = open_evidence(at)
    assert len(at.dataframe[0].value) == len(df)
    at.button(key="evidence-clear").click().run()
    assert not at.dataframe and at.session_state["evidence"] is None


def test_an_evidence_run_that_finds_nothing_offers_no_downloads(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = collect(open_evidence(start()), "xylophone zeppelin quasar")
    summary = shown(at.main.markdown[0].value)
    assert summary.startswith("Nothing found on this issue in these documents"), summary
    assert not at.dataframe and not at.main.download_button and not evidence_panels(at)
    assert [b.label for b in at.main.button if b.key == "evidence-clear"] == ["Clear"]


def test_evidence_rows_are_cards_on_a_phone(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = collect(open_evidence(start()), ISSUE)
    [table] = at.dataframe
    cards = [c for c in at.main.markdown if re.match(r"\[\d+\] ", shown(c.value))]
    assert len(cards) == len(table.value)  # one card per row, drawn for narrow screens
    css = "".join(h.value for h in at.get("html"))
    assert "@media (max-width: 640px)" in css and ".st-key-evidence-grid { display: none; }" in css


def test_evidence_page_with_an_empty_issue_says_so_in_one_line(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = collect(open_evidence(start()), "   ")
    assert [w.value for w in at.main.warning] == ["Type an issue first, for example “escape of water”."]
    assert not at.dataframe and not at.main.status and at.session_state["evidence"] is None


def test_evidence_rows_show_document_markdown_and_html_as_text(monkeypatch, tmp_path):
    home = small_home(tmp_path, pdfs.hostile_markdown_pdf(tmp_path / "ponds.pdf"))
    use_home(monkeypatch, home)
    at = collect(open_evidence(start()), "garden ponds storm damage [click](https://example.org) $5")
    df = at.dataframe[0].value
    [ponds] = PolicyBot(make_settings(home)).library.documents().documents
    assert len(df) >= 1 and (df["document"] == (ponds.title or ponds.name)).all()
    panels = evidence_panels(at)
    assert panels and step_panels(at)
    text = " ".join(plain_text(m.value) for e in panels for m in e.markdown)
    assert "![pixel](http://127.0.0.1:8999/track.png)" in text.replace("\n", " ")  # shown, as text
    for value in rendered_strings(at):
        for syntax in ("![", "](", "<script", "<img", "<a ", "javascript:", "http://", "https://", "www.", "$"):
            assert not _unescaped(value.replace("&#", ""), syntax), (syntax, value[:300])
    for e in [*panels, *step_panels(at)]:  # the app's only HTML: a div, the quote mark, the step labels
        for m in e.markdown:
            assert set(re.findall(r"</?([a-z]+)", m.value)) <= {"div", "mark", "b"}, m.value[:300]


def test_kiosk_evidence_for_visitors_and_cleared_when_idle(monkeypatch, sample_home):
    use_home(
        monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="4321", POLICYBOT_KIOSK_IDLE_MINUTES="1"
    )
    at = collect(open_evidence(start()), ISSUE)
    assert len(at.dataframe[0].value) > 3  # a read-only action: no PIN needed
    assert "Settings" not in sidebar_view(at)["expanders"]

    at.session_state["last_active"] = time.time() - 120
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["evidence"] is None and not at.dataframe
    assert at.chat_input and not at.dataframe  # the next visitor starts at the chat
    assert not at.main.info
    at = open_evidence(at)
    [issue] = [t for t in at.text_input if t.label == "Issue"]
    assert issue.value == "" and issue.key != "evidence_issue"  # a new box: the last visitor's issue is gone


def test_page_and_library_show_while_the_models_load(monkeypatch, tmp_path):
    """Cold start: the library and a loading status show at once; the status goes when loaded."""
    home = small_home(tmp_path, pdfs.sample_policy(tmp_path / "acme-home.pdf"))
    use_home(monkeypatch, home)
    release = threading.Event()
    real = PolicyBot.warm_up
    monkeypatch.setattr(PolicyBot, "warm_up", lambda self: release.wait(60) and real(self))
    at = start()
    loading = [i.value for i in at.info if "Loading the models" in i.value]
    assert loading, [i.value for i in at.info]
    assert at.sidebar.multiselect(key="scope").options == ["Acme Home Insurance Policy"], (
        "the library shows before the models"
    )
    release.set()
    deadline = time.time() + 60
    while time.time() < deadline:
        at.run()
        if not any("Loading the models" in i.value for i in at.info):
            break
        time.sleep(0.2)
    assert not any("Loading the models" in i.value for i in at.info)
    assert not at.exception


def test_the_page_s_timed_check_keeps_the_first_place_whatever_the_page_shows(monkeypatch, tmp_path):
    """The loading check and the kiosk's countdown are one timed fragment, first on the page, so
    its place is the same in every run: drawn below the page, a tick from a run before the loading
    notice went away wrote past the end of the shrunk page, and under load the browser's page went
    blank for good. Here the countdown is due while the models load and after."""
    import app_pages.state as state

    home = small_home(tmp_path, pdfs.sample_policy(tmp_path / "acme-home.pdf"))
    use_home(monkeypatch, home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_IDLE_MINUTES="1")  # 60 s idle, 15 s countdown
    monkeypatch.setattr(state, "idle_seconds", lambda now=None: 50.0)  # 10 s left: the countdown shows
    release = threading.Event()
    real = PolicyBot.warm_up
    monkeypatch.setattr(PolicyBot, "warm_up", lambda self: release.wait(60) and real(self))
    at = start()
    places = []
    for loading in (True, False):
        if not loading:
            release.set()
            deadline = time.time() + 60
            while time.time() < deadline and any("Loading the models" in i.value for i in at.info):
                time.sleep(0.2)
                at.run()
        assert any("Loading the models" in i.value for i in at.info) == loading
        first = at.main.children[0]
        assert [w.value for w in first.warning] == ["Still there? This page clears for the next visitor in 10 s."]
        assert [b.label for b in first.button] == ["I'm still here"]
        places.append([i for i, child in at.main.children.items() if child is first])
    assert places == [[0], [0]]
    assert not at.exception


# --- scanned documents (issue 13) -----------------------------------------------------------------


@pytest.mark.skipif(
    __import__("shutil").which("tesseract") is None, reason="tesseract is not installed (`make` installs it as root)"
)
def test_a_scanned_document_is_listed_with_its_ocr_pages_and_cited_with_a_note(monkeypatch, tmp_path):
    scan = pdfs.scan_of(pdfs.sample_policy(tmp_path / "acme.pdf"), tmp_path / "acme-scan.pdf")
    home = small_home(tmp_path, scan)
    use_home(monkeypatch, home, POLICYBOT_OCR__CONFIDENCE_FLOOR="99.9")  # every page under the floor
    at = start()
    [listing] = library_captions(at)
    assert "5 scanned page(s) read by OCR (1–5)" in shown(listing) and "low confidence on page(s) 1–5" in shown(listing)
    at = ask(at, "Who counts as an insured person?")
    [assistant] = messages(at, "assistant")
    first = assistant.expander[0]
    assert " · OCR " in first.label
    [warning] = first.warning
    assert warning.value.startswith("Text read by OCR with low confidence") and "under 100%" in warning.value

    monkeypatch.delenv("POLICYBOT_OCR__CONFIDENCE_FLOOR")  # the default floor: the same page is only noted
    at = ask(start(), "Who counts as an insured person?")
    first = messages(at, "assistant")[0].expander[0]
    assert not first.warning and any(c.value.startswith("Text read by OCR, confidence") for c in first.caption)


# --- editions (issue 13) ----------------------------------------------------------------------------------


def test_editions_are_confirmed_in_the_library_and_questions_follow_the_date(monkeypatch, tmp_path):
    from datetime import date

    from tests.test_editions import WATER_DEDUCTIBLE, build_previous_edition

    old = build_previous_edition(tmp_path)
    home = small_home(tmp_path, old, SAMPLE_POLICY)
    use_home(monkeypatch, home)
    at = start()
    captions = [shown(c) for c in library_captions(at)]
    assert any("a new edition? (confirm under Editions)" in c for c in captions), captions
    confirm = next(b for b in at.main.button if b.label.startswith(f"Confirm {SAMPLE}"))
    at = confirm.click().run()
    assert not at.exception
    captions = [shown(c) for c in library_captions(at)]
    assert any(c.startswith(f"**{old.name}**") and f"superseded by {SAMPLE}" in c for c in captions), captions
    assert at.sidebar.multiselect[0].value == [SAMPLE]  # the superseded edition is out of the default scope

    at = ask(at, WATER_DEDUCTIBLE)
    reply = messages(at, "assistant")[-1]
    first = reply.expander[0]
    assert without_role(shown(first.label)).startswith(f"[1] {SAMPLE}") and "$750" in plain_text(
        " ".join(m.value for m in first.markdown)
    )
    [note] = reply.info
    assert shown(note.value).startswith(f"The 2023 edition ({old.name}) said:") and "$500" in shown(note.value)
    assert shown(reply.expander[-1].label).startswith(f"Earlier edition: {old.name}")

    # The edition date set by hand in the library: the old edition's (read as 2023-01-01) moved.
    at = open_page(at, "library")
    at.selectbox(key="effective_doc").select(
        next(o for o in at.selectbox(key="effective_doc").options if "2023" in o)
    ).run()
    picker = next(d for d in at.main.date_input if d.label == "Takes effect on")
    assert picker.value == date(2023, 1, 1)
    picker.set_value(date(2023, 2, 1)).run()
    at = next(b for b in at.main.button if b.label == "Set the date").click().run()
    assert any("homeshield-2023.pdf takes effect on 2023-02-01" in shown(s.value) for s in at.main.success)

    at.sidebar.date_input(key="as_of").set_value(date(2024, 6, 1)).run()
    at = ask(at, WATER_DEDUCTIBLE)
    first = messages(at, "assistant")[-1].expander[0]
    assert without_role(shown(first.label)).startswith(f"[1] {old.name}") and "$500" in plain_text(
        " ".join(m.value for m in first.markdown)
    )


def test_same_text_in_another_document_is_named_by_its_title(monkeypatch, tmp_path):
    """Issue 23: a person reads titles; "same text in: general.pdf, p.1" becomes the form's title."""
    clause = (
        "Within 60 days after the loss, send us a proof of loss, which is your statement of the amount you are "
        "claiming under the policy signed and sworn to by you."
    )
    dwelling = pdfs.simple_pdf(tmp_path / "dwelling.pdf", [clause], heading="Dwelling Form Flood Policy")
    general = pdfs.simple_pdf(tmp_path / "general.pdf", [clause], heading="General Property Form Flood Policy")
    home = small_home(tmp_path, dwelling, general)
    use_home(monkeypatch, home, POLICYBOT_KIOSK="1")
    at = ask(start(), "How long do I have to send a proof of loss?")
    labels = [shown(e.label) for e in messages(at, "assistant")[-1].expander]
    same = [label for label in labels if "same text in:" in label]
    assert same, labels
    assert all(".pdf" not in label for label in labels), labels
    assert any("Form Flood Policy, p.1" in label.split("same text in:")[1] for label in same), same


def test_a_kiosk_visitor_is_offered_the_documents_in_force_by_title(monkeypatch, tmp_path):
    """Issue 23: visitors see only the titles of the documents in force, not superseded editions' files."""
    from tests.test_editions import build_previous_edition

    old = build_previous_edition(tmp_path)
    home = small_home(tmp_path, old, SAMPLE_POLICY)
    PolicyBot(make_settings(home)).library.confirm_edition(SAMPLE)
    use_home(monkeypatch, home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="4321")
    at = start()
    [scope] = at.sidebar.multiselect
    assert scope.options == ["HomeShield Household Policy"] and scope.value == [SAMPLE]
    listed = [shown(c.value) for c in open_page(at, "library").main.caption]
    assert "HomeShield Household Policy" in listed and not [c for c in listed if ".pdf" in c]


# --- glyphs ---------------------------------------------------------------------------------
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def test_the_apps_own_text_uses_only_glyphs_a_kiosk_font_has():
    """Issue 22: kiosk browsers often have no emoji font, and a missing glyph shows as an empty box.
    Every non-ASCII character in the text the app writes itself (its pages, the display helpers)
    is in DejaVu Sans, Debian's default; the language names of the answer settings (in their own
    scripts, for reviewers) and the browser tab's icon are the exceptions."""
    if not DEJAVU.is_file():
        pytest.skip("DejaVu Sans is not installed here (fonts-dejavu-core)")
    import ast

    import pymupdf

    from app_pages.sidebar import LANGUAGES

    font = pymupdf.Font(fontfile=str(DEJAVU))
    allowed = set("".join(LANGUAGES)) | {"📄"}  # the tab icon: no tab bar in a kiosk browser
    root = APP.parent
    files = [APP, *sorted((root / "app_pages").glob("*.py")), *sorted((root / "policybot" / "display").glob("*.py"))]
    missing = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for ch in node.value:
                    if ord(ch) > 127 and ch not in allowed and not font.has_glyph(ord(ch)):
                        missing.setdefault(ch, path.name)
    assert not missing, {f"U+{ord(ch):04X} {ch}": where for ch, where in missing.items()}

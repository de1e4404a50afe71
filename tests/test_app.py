"""The Streamlit app, driven headless with streamlit.testing.v1.AppTest against real indexes.

Ollama is absent (NO_OLLAMA), so every answer is extractive: deterministic, no LLM needed.
One module-scoped home holds the ingested sample policy and is only read by the app; the
upload, delete and scope tests each build their own small home so they stay fast.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.errors import AppTestError

from policybot.chat import REFUSAL
from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import NO_OLLAMA, SAMPLE_POLICY, make_settings

APP = Path(__file__).resolve().parents[1] / "app.py"
SAMPLE = SAMPLE_POLICY.name  # homeshield-household-policy.pdf
WATER = "How does the deductible apply to water damage?"
PDF = "application/pdf"


@pytest.fixture(scope="module")
def sample_home(tmp_path_factory) -> Path:
    """The sample policy ingested once for the whole module (the app only reads it)."""
    home = tmp_path_factory.mktemp("app-sample") / "home"
    [outcome] = PolicyBot(make_settings(home)).ingest([SAMPLE_POLICY]).outcomes
    assert outcome.status == "ingested", outcome.message
    return home


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
    at.chat_input[0].set_value(question).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def messages(at: AppTest, who: str) -> list:
    return [m for m in at.chat_message if m.name == who]


def sidebar_view(at: AppTest) -> dict[str, list[str]]:
    return {
        "uploaders": [f.label for f in at.sidebar.file_uploader],
        "expanders": [e.label for e in at.sidebar.expander],
        "buttons": [b.label for b in at.sidebar.button],
    }


def library_captions(at: AppTest) -> list[str]:
    return [c.value for c in at.sidebar.caption if c.value.startswith("**")]


# --- status and disclaimer ------------------------------------------------------------------


def test_extractive_mode_banner_and_disclaimer(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = start()
    banners = [i.value for i in at.main.info if "Extractive mode" in i.value]
    assert len(banners) == 1, [i.value for i in at.info]
    assert "ollama serve" in banners[0] and NO_OLLAMA in banners[0]
    assert any("not legal advice" in c.value for c in at.main.caption)
    assert at.title[0].value == "PolicyBot"
    status = next(e for e in at.sidebar.expander if e.label == "Status")
    status_text = " ".join(m.value for m in status.markdown)
    assert "**LLM:** not available" in status_text and "1 documents" in status_text
    assert library_captions(at) and library_captions(at)[0].startswith(f"**{SAMPLE}** — 19 pages")
    # Nothing asked yet: no conversation, no export.
    assert not at.chat_message and not at.main.download_button


# --- answers with their citations -----------------------------------------------------------


def test_chat_shows_answer_with_verified_citation_panels_and_follow_up(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = ask(start(), WATER)

    [user] = messages(at, "user")
    [assistant] = messages(at, "assistant")
    assert user.markdown[0].value == WATER
    answer = assistant.markdown[0].value
    assert "$750" in answer and "[1]" in answer
    # The question was searched as asked: no "Searched as" line for a first question.
    assert not [c for c in assistant.caption if c.value.startswith("Searched as:")]

    panels = assistant.expander
    assert panels, "no citation panels"
    first = panels[0]
    assert first.label.startswith(f"[1] {SAMPLE} (Section 5 Deductibles > 5.2 Escape of water deductible), p.11")
    for panel in panels:
        assert "✓ verified" in panel.label and "unverified" not in panel.label, panel.label
    # The chunk with the quote highlighted, the page image, and the PDF download.
    marked = [m.value for m in first.markdown if "<mark>" in m.value]
    assert marked and "$750" in marked[0].split("<mark>", 1)[1].split("</mark>", 1)[0]
    [image] = first.image
    assert image.captions == [f"{SAMPLE}, page 11 — quote highlighted"]
    assert image.value and image.value[0]
    [download] = first.download_button
    assert download.label == f"Download {SAMPLE} (see page 11)"
    assert len(at.image) == len(panels)  # one page image per panel
    assert any("not legal advice" in c.value for c in at.main.caption)

    # A follow-up is searched together with the conversation it follows.
    at = ask(at, "and what about subsidence?")
    assert [m.markdown[0].value for m in messages(at, "user")] == [WATER, "and what about subsidence?"]
    last = messages(at, "assistant")[-1]
    searched = [c.value for c in last.caption if c.value.startswith("Searched as:")]
    assert len(searched) == 1 and "deductible" in searched[0].lower() and "subsidence" in searched[0]
    assert "$2,500" in last.markdown[0].value
    assert last.expander and "Section 5 Deductibles" in last.expander[0].label


def test_out_of_scope_question_is_refused_with_closest_passages(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = ask(start(), "How do I cook a perfect nasi lemak?")
    [assistant] = messages(at, "assistant")
    assert assistant.markdown[0].value == REFUSAL
    assert "I cannot find a definitive answer in the provided policy documents." in REFUSAL
    assert any(c.value.startswith("Closest passages") for c in assistant.caption)
    labels = [e.label for e in assistant.expander]
    assert labels and all(label.startswith(("[1]", "[2]", "[3]")) for label in labels)
    assert not [label for label in labels if "verified" in label], labels


def test_new_conversation_clears_history_and_export_follows_history(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home)
    at = start()
    assert [b.label for b in at.main.button] == ["New conversation"]
    assert not at.main.download_button

    at = ask(at, WATER)
    assert len(at.session_state["history"]) == 1
    assert [d.label for d in at.main.download_button][:2] == ["Export Markdown", "Export JSON"]

    at.button(key="new").click().run()
    assert not at.exception
    assert at.session_state["history"] == []
    assert not at.chat_message
    assert not [d for d in at.main.download_button if d.label.startswith("Export")]


# --- uploads --------------------------------------------------------------------------------


def test_upload_reports_each_bad_file_and_adds_the_good_one(monkeypatch, tmp_path):
    """AppTest 1.67 drives st.file_uploader (FileUploader.set_value) end to end."""
    home = small_home(tmp_path)
    use_home(monkeypatch, home)
    at = start()
    assert any(i.value.startswith("No documents yet.") for i in at.sidebar.info)
    [uploader] = at.sidebar.file_uploader
    assert uploader.label == "Add PDFs" and uploader.accept_multiple_files and uploader.allowed_type == [".pdf"]
    assert "Add to library" not in sidebar_view(at)["buttons"]  # nothing chosen yet

    files = [
        ("broken.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 40, PDF),
        ("locked.pdf", pdfs.encrypted_pdf(tmp_path / "locked.pdf").read_bytes(), PDF),
        ("scan.pdf", pdfs.scanned_pdf(tmp_path / "scan.pdf").read_bytes(), PDF),
        ("acme-home.pdf", pdfs.sample_policy(tmp_path / "acme-home.pdf").read_bytes(), PDF),
    ]
    uploader.set_value(files).run()
    assert not at.exception
    at.sidebar.button(key="do_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]

    errors = [e.value for e in at.sidebar.error]
    assert len(errors) == 3, errors
    broken, locked, scan = errors
    assert broken.startswith("broken.pdf:") and "cannot be read as a PDF" in broken
    assert locked.startswith("locked.pdf:") and "password-protected" in locked
    assert scan.startswith("scan.pdf:") and "no extractable text" in scan
    [stored] = PolicyBot(make_settings(home)).documents().documents  # what the library now holds
    assert stored.name == "acme-home.pdf" and stored.pages == 5
    assert [s.value for s in at.sidebar.success] == [f"acme-home.pdf: 5 pages, {stored.chunks} passages"]
    assert not at.sidebar.warning

    at.run()  # the next run lists the new document; the button is not pressed again
    assert not at.exception
    assert not at.sidebar.success and not at.sidebar.error
    [caption] = library_captions(at)
    assert caption.startswith(f"**acme-home.pdf** — 5 pages, {stored.chunks} passages")


def test_upload_error_names_the_file_once(monkeypatch, tmp_path):
    use_home(monkeypatch, small_home(tmp_path))
    at = start()
    at.sidebar.file_uploader[0].set_value(("locked.pdf", pdfs.encrypted_pdf(tmp_path / "locked.pdf").read_bytes(), PDF)).run()
    at.sidebar.button(key="do_upload").click().run()
    [error] = [e.value for e in at.sidebar.error]
    assert error.startswith("locked.pdf: the PDF is password-protected"), error


def test_uploaded_document_is_searched_by_default(monkeypatch, tmp_path):
    first = pdfs.simple_pdf(tmp_path / "bicycles.pdf", ["The excess for bicycles is fifty dollars per claim."], heading="Section 1 Bicycles")
    use_home(monkeypatch, small_home(tmp_path, first))
    at = start()
    assert at.sidebar.multiselect(key="scope").value == ["bicycles.pdf"]
    acme = pdfs.sample_policy(tmp_path / "acme-home.pdf").read_bytes()
    at.sidebar.file_uploader[0].set_value([("acme-home.pdf", acme, PDF)]).run()
    at.sidebar.button(key="do_upload").click().run()
    at.run()
    assert not at.exception
    assert sorted(at.sidebar.multiselect(key="scope").options) == ["acme-home.pdf", "bicycles.pdf"]
    assert "acme-home.pdf" in at.sidebar.multiselect(key="scope").value
    at = ask(at, "Within how many days may I cancel during the cooling-off period?")
    labels = [e.label for e in messages(at, "assistant")[-1].expander]
    assert any("acme-home.pdf" in label for label in labels), labels


# --- kiosk ----------------------------------------------------------------------------------


def test_kiosk_hides_admin_until_the_right_pin(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_PIN="4321")
    at = start()
    locked = sidebar_view(at)
    assert locked["uploaders"] == []
    assert "Settings" not in locked["expanders"] and "Delete a document" not in locked["expanders"]
    assert "Admin" in locked["expanders"] and "Unlock" in locked["buttons"]
    assert library_captions(at), "the document list stays visible to kiosk visitors"

    at.sidebar.text_input(key="pin").input("1111")
    at.sidebar.button(key="unlock").click().run()
    assert [e.value for e in at.sidebar.error] == ["Wrong PIN."]
    assert sidebar_view(at) == locked and at.session_state["unlocked"] is False

    at.sidebar.text_input(key="pin").input("4321")
    at.sidebar.button(key="unlock").click().run()
    assert not at.exception and not at.sidebar.error
    unlocked = sidebar_view(at)
    assert unlocked["uploaders"] == ["Add PDFs"]
    assert {"Settings", "Delete a document"} <= set(unlocked["expanders"]) and "Admin" not in unlocked["expanders"]
    assert "Lock admin" in unlocked["buttons"]

    # Unlocking is per browser session: another visitor's session is still locked.
    other = start()
    assert sidebar_view(other) == locked

    at.sidebar.button(key="lock").click().run()
    assert not at.exception
    assert sidebar_view(at) == locked
    assert at.sidebar.text_input(key="pin").value == ""  # the PIN is not left filled in


def test_kiosk_without_pin_cannot_be_unlocked(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1")
    at = start()
    assert any("POLICYBOT_KIOSK_PIN" in c.value for c in at.sidebar.caption)
    at.sidebar.button(key="unlock").click().run()  # an empty PIN must not match a missing one
    assert [e.value for e in at.sidebar.error] == ["Wrong PIN."]
    assert sidebar_view(at)["uploaders"] == []


def test_kiosk_idle_reset_and_separate_sessions(monkeypatch, sample_home):
    use_home(monkeypatch, sample_home, POLICYBOT_KIOSK="1", POLICYBOT_KIOSK_IDLE_MINUTES="1")
    at = ask(start(), WATER)
    assert [m.markdown[0].value for m in messages(at, "user")] == [WATER]

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
    assert "The conversation was cleared after 1 minutes without activity." in [i.value for i in at.main.info]
    assert not [d for d in at.main.download_button if d.label.startswith("Export")]

    # The other session was not touched, and the notice goes with the next question.
    at = ask(at, "and what about subsidence?")
    assert [m.markdown[0].value for m in messages(at, "user")] == ["and what about subsidence?"]
    assert not [c for c in messages(at, "assistant")[0].caption if c.value.startswith("Searched as:")]
    assert not [i for i in at.main.info if "cleared after" in i.value]


# --- delete ---------------------------------------------------------------------------------


def test_delete_needs_confirmation_and_empties_the_library(monkeypatch, tmp_path):
    home = small_home(tmp_path, pdfs.sample_policy(tmp_path / "acme-home.pdf"))
    use_home(monkeypatch, home)
    at = start()
    [caption] = library_captions(at)
    assert caption.startswith("**acme-home.pdf**")
    assert at.sidebar.selectbox(key="delete_name").value == "acme-home.pdf"
    sure = at.sidebar.checkbox(key="delete_sure")
    assert sure.label == "Yes, delete acme-home.pdf and its passages" and sure.value is False
    assert at.sidebar.button(key="do_delete").disabled

    with pytest.raises(AppTestError, match="disabled"):  # as in a browser: it cannot be pressed
        at.sidebar.button(key="do_delete").click()

    at.sidebar.checkbox(key="delete_sure").check().run()
    assert not at.sidebar.button(key="do_delete").disabled
    at.sidebar.button(key="do_delete").click().run()
    assert not at.exception, [e.value for e in at.exception]

    assert library_captions(at) == []
    assert any(i.value.startswith("No documents yet.") for i in at.sidebar.info)
    assert "Delete a document" not in sidebar_view(at)["expanders"]
    assert PolicyBot(make_settings(home)).documents().documents == []
    assert not list((home / "files").glob("*.pdf"))

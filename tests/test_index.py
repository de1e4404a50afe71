"""POLICYBOT_CHROMA_URL: the same library on a Chroma server (HttpClient) instead of the
embedded store — the path for deployments that outgrow one machine. The server is the real
one shipped with chromadb (`chroma run`), on a free localhost port, stopped by its PID."""

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from policybot.doctor import run_checks
from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import make_settings


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def chroma_server(tmp_path):
    import sys

    exe = Path(sys.executable).parent / "chroma"
    if not exe.exists() and not shutil.which("chroma"):
        pytest.skip("the chroma server command (from chromadb) is not installed")
    port = _free_port()
    proc = subprocess.Popen(
        [
            str(exe if exe.exists() else shutil.which("chroma")),
            "run",
            "--path",
            str(tmp_path / "server"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("chroma server did not start within 30 s")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_library_on_a_chroma_server(tmp_path, chroma_server):
    bot = PolicyBot(make_settings(tmp_path / "home", chroma_url=chroma_server))
    assert not bot.ingest([pdfs.sample_policy(tmp_path / "acme-home.pdf")]).failed
    assert not (tmp_path / "home" / "chroma").exists()  # nothing in the embedded store
    hit = bot.search("What does Insured Person mean?", k=3).hits[0]
    assert hit.section.endswith("1.1 Insured Person") and hit.page_start == 1
    index = next(c for c in run_checks(bot).checks if c.name == "index")
    assert index.ok and chroma_server in index.detail
    bot.delete("acme-home.pdf")
    assert bot.components.index.store.count() == 0


def test_unreachable_server_is_reported_with_the_fix(tmp_path):
    bot = PolicyBot(make_settings(tmp_path / "home", chroma_url=f"http://127.0.0.1:{_free_port()}"))
    index = next(c for c in run_checks(bot).checks if c.name == "index")
    assert not index.ok and "chroma run" in index.fix
    outcome = bot.ingest([pdfs.simple_pdf(tmp_path / "a.pdf", ["Some cover text for the test."])]).outcomes[0]
    assert outcome.status == "failed" and outcome.error_kind == "index"


def test_two_libraries_on_one_server_keep_their_own_documents(tmp_path, chroma_server):
    """Two homes (say, two kiosks) pointed at one server: each library's vectors stay its own."""
    first = PolicyBot(make_settings(tmp_path / "first", chroma_url=chroma_server))
    second = PolicyBot(make_settings(tmp_path / "second", chroma_url=chroma_server))
    assert not first.ingest([pdfs.sample_policy(tmp_path / "acme-home.pdf")]).failed
    assert first.components.index.store.count() > 0
    assert second.components.index.store.count() == 0  # the second library sees none of the first's vectors
    assert second.library.documents().documents == []
    # The id is made once per library and kept: reopening the first finds its vectors again.
    again = PolicyBot(make_settings(tmp_path / "first", chroma_url=chroma_server))
    assert again.components.index.store.count() == first.components.index.store.count()
    assert (tmp_path / "first" / "library-id").read_text() != (tmp_path / "second" / "library-id").read_text()


def test_with_the_server_down_questions_are_answered_by_words_with_a_note(tmp_path, chroma_server):
    """A library on a Chroma server that then stops. A library small enough to be searched exactly
    (``exact_search_max_chunks``) is still searched by meaning, from the registry's own copy of the
    vectors. A larger one answers from the local BM25 index, saying so in one line; ingesting says
    which server to start; nothing crashes."""
    home = tmp_path / "home"
    policy = pdfs.sample_policy(tmp_path / "acme-home.pdf")
    assert not PolicyBot(make_settings(home, chroma_url=chroma_server)).ingest([policy]).failed
    gone = f"http://127.0.0.1:{_free_port()}"
    exact = PolicyBot(make_settings(home, chroma_url=gone, llm_mode="off")).search(
        "What does Insured Person mean?", k=3
    )
    assert exact.notice is None and exact.hits[0].dense_rank is not None
    down = make_settings(home, chroma_url=gone, llm_mode="off", exact_search_max_chunks=0)
    bot = PolicyBot(down)
    response = bot.search("What does Insured Person mean?", k=3)
    assert response.hits and response.hits[0].section.endswith("1.1 Insured Person")
    assert response.hits[0].dense_rank is None and response.hits[0].lexical_rank == 1
    assert response.notice and response.notice.startswith("Searched by words only, not by meaning: the Chroma server")
    assert "unset POLICYBOT_CHROMA_URL" in response.notice and "\n" not in response.notice
    answer = bot.ask("What does Insured Person mean?", use_llm=False)
    assert answer.shown_citations and answer.notice and "Searched by words only" in answer.notice
    outcome = bot.ingest([pdfs.simple_pdf(tmp_path / "b.pdf", ["Boats are covered in a marina."])]).outcomes[0]
    assert outcome.status == "failed" and "cannot be reached" in outcome.message and "\n" not in outcome.message
    back = PolicyBot(make_settings(home, chroma_url=chroma_server))  # the server is back: by meaning again
    assert back.search("What does Insured Person mean?", k=3).notice is None

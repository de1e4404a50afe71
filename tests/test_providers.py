"""The production LLM path (langchain-ollama ChatOllama, the ollama client) against a local
stand-in speaking Ollama's HTTP API: options sent, streaming, token counts, health checks."""

import pytest

from policybot.doctor import run_checks
from policybot.models.downloads import pull_ollama_model
from policybot.models.providers import ollama_status
from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import make_settings
from tests.fake_ollama import FakeOllama

EXPANSION = (
    '{"hyde": "Insured Person means you and your family living with you.", "rewrites": ["insured person '
    'definition", "who is insured"]}'
)
ANSWER = (
    'An Insured Person is "you, your spouse or partner, and members of your family who permanently live in your '
    'home" [1].'
)


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    return pdfs.sample_policy(tmp_path_factory.mktemp("ollama") / "acme-home.pdf")


def _bot(tmp_path, policy, url):
    bot = PolicyBot(make_settings(tmp_path / "home", ollama_host=url, adaptive_expansion=False))
    with FakeOllama([], []) as nothing:  # ingest with no LLM model: extractive summary
        bot.settings.ollama_host = nothing.url
        assert not bot.ingest([policy]).failed
    bot.settings.ollama_host = url
    bot.components.llm.forget()
    return bot


def test_answer_through_chat_ollama(tmp_path, policy):
    with FakeOllama(["gemma3n:e4b"], [EXPANSION, ANSWER]) as server:
        bot = _bot(tmp_path, policy, server.url)
        answer = bot.ask("What does Insured Person mean?")
    assert answer.mode == "generated" and answer.llm_model == "gemma3n:e4b"
    assert answer.citations[0].verified and "spouse or partner" in answer.citations[0].quote
    chats = [r for r in server.requests if r["path"] == "/api/chat"]
    assert len(chats) == 2
    expansion, final = chats
    assert expansion["format"] == "json" and expansion["options"]["num_predict"] == 160
    assert final["options"]["num_predict"] == 512
    for request in chats:
        assert request["options"]["temperature"] == 0.1
        assert request["options"]["num_ctx"] in (2048, 4096, 8192)  # explicit, bucketed
        assert request["model"] == "gemma3n:e4b"
    assert answer.llm.calls == 2 and answer.llm.prompt_tokens == 2 * 321  # counts reported by the server


def test_missing_model_means_extractive_with_the_pull_command(tmp_path, policy):
    with FakeOllama(["llama3:8b"], []) as server:
        bot = _bot(tmp_path, policy, server.url)
        answer = bot.ask("What does Insured Person mean?")
        status = bot.status()
        report = run_checks(bot)
    # The pull command is in Status (and doctor), not in the answer a citizen reads or exports.
    assert answer.mode == "extractive" and answer.notice is None
    assert "ollama pull gemma3n:e4b" in status.llm_notice
    llm_check = next(c for c in report.checks if c.name == "llm model")
    assert not llm_check.ok and llm_check.fix == "ollama pull gemma3n:e4b"
    assert next(c for c in report.checks if c.name == "ollama").ok


def test_status_and_pull_with_the_real_client():
    with FakeOllama(["gemma3n:e4b"], []) as server:
        status = ollama_status(server.url)
        events = []
        pull_ollama_model("gemma3n:e4b", server.url, events.append)
    assert status.reachable and status.has("gemma3n:e4b")
    assert [e.status for e in events] == ["pulling manifest", "downloading", "success"]
    assert (events[1].completed, events[1].total) == (5, 10)


def test_status_names_the_models_and_the_llm_or_why_there_is_none(tmp_path):
    bot = PolicyBot(make_settings(tmp_path / "home"))
    offline = bot.status()
    assert (offline.profile, offline.embedding_model, offline.reranker, offline.llm) == (
        "lite",
        "all-MiniLM-L6-v2",
        None,
        None,
    )
    assert "ollama serve" in offline.llm_notice and offline.profile_reason
    with FakeOllama(["gemma3n:e4b"], []) as server:
        bot.settings.ollama_host = server.url
        bot.components.llm.forget()
        online = bot.status()
    assert online.llm == "gemma3n:e4b" and online.llm_notice is None


def test_a_remote_ollama_that_goes_down_leaves_answers_as_quotes_with_one_line(tmp_path, policy):
    """Issue 23: the server answered the first question, then stopped. The next question is still
    answered, from the documents' own words, with one plain line, and no traceback."""
    with FakeOllama(["gemma3n:e4b"], [EXPANSION, ANSWER]) as server:
        bot = _bot(tmp_path, policy, server.url)
        first = bot.ask("What does Insured Person mean?")
    assert first.mode == "generated"
    after = bot.ask("What does Insured Person mean?")  # the server is gone now
    assert after.mode == "extractive" and "spouse or partner" in after.answer
    assert after.notice and "\n" not in after.notice and "Traceback" not in after.notice
    assert after.citations and after.citations[0].quote

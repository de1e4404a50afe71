"""`policybot models pull`: Hugging Face downloads and Ollama pulls, with fakes for both
(nothing here reaches the network)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from policybot.models.downloads import (
    PullEvent,
    hf_model_ids,
    localize_remote_code,
    pull_hf_model,
    pull_ollama_model,
    pull_profile,
)
from policybot.models.profiles import (
    BGE_RERANKER,
    GTE_MULTILINGUAL,
    MINILM,
    PROFILES,
    local_dir_name,
    local_model_path,
    resolve_profile,
)
from tests.conftest import make_settings

REMOTE_AUTO_MAP = {
    "AutoConfig": "Alibaba-NLP/new-impl--configuration.NewConfig",
    "AutoModel": "Alibaba-NLP/new-impl--modeling.NewModel",
}


class FakeHub:
    """Stands in for ``huggingface_hub``: records calls and writes plausible files."""

    def __init__(self, auto_map: dict | None = None, fail: Exception | None = None) -> None:
        self.auto_map = REMOTE_AUTO_MAP if auto_map is None else auto_map
        self.fail = fail
        self.snapshots: list[tuple[str, str]] = []
        self.files: list[tuple[str, str, str]] = []

    def snapshot_download(self, repo_id: str, local_dir: str) -> str:
        self.snapshots.append((repo_id, local_dir))
        if self.fail is not None:
            raise self.fail
        target = Path(local_dir)
        target.mkdir(parents=True, exist_ok=True)
        config: dict = {"model_type": "new" if repo_id == GTE_MULTILINGUAL.hf_id else "xlm-roberta"}
        if repo_id == GTE_MULTILINGUAL.hf_id and self.auto_map:
            config["auto_map"] = dict(self.auto_map)
        (target / "config.json").write_text(json.dumps(config))
        (target / "model.safetensors").write_bytes(b"weights")
        return local_dir

    def hf_hub_download(self, repo_id: str, filename: str, local_dir: str) -> str:
        self.files.append((repo_id, filename, local_dir))
        path = Path(local_dir) / filename
        path.write_text(f"# {repo_id}/{filename}\nclass Placeholder: ...\n")
        return str(path)


class FakeOllama:
    """Stands in for ``ollama.Client``: ``pull(name, stream=True)`` yields progress parts."""

    def __init__(self, parts: list | None = None, fail: Exception | None = None) -> None:
        self.parts = parts if parts is not None else []
        self.fail = fail
        self.pulled: list[tuple[str, bool]] = []

    def pull(self, name: str, stream: bool = False):
        self.pulled.append((name, stream))
        if self.fail is not None:
            raise self.fail
        return iter(self.parts)


OLLAMA_PARTS = [
    {"status": "pulling manifest"},
    {"status": "pulling abc123", "completed": 50, "total": 200},
    SimpleNamespace(status="pulling abc123", completed=200, total=200),
    SimpleNamespace(status="success", completed=None, total=None),
]


@pytest.fixture(autouse=True)
def _empty_hub_cache(monkeypatch, tmp_path):
    """``local_model_path`` also looks in the Hugging Face cache: point it at an empty folder."""
    import huggingface_hub.constants as hf_constants

    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(cache))


def snapshot(folder: Path, config: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


# --- remote code ----------------------------------------------------------------------------


def test_localize_remote_code_copies_code_and_rewrites_auto_map(tmp_path):
    settings = make_settings(tmp_path / "home")
    folder = snapshot(
        settings.resolved_models_dir / local_dir_name(GTE_MULTILINGUAL.hf_id),
        {"model_type": "new", "auto_map": dict(REMOTE_AUTO_MAP), "hidden_size": 768},
    )
    hub = FakeHub()
    fetched = localize_remote_code(folder, hub)

    assert sorted(fetched) == ["Alibaba-NLP/new-impl/configuration.py", "Alibaba-NLP/new-impl/modeling.py"]
    assert (folder / "modeling.py").is_file()
    assert (folder / "configuration.py").is_file()
    config = json.loads((folder / "config.json").read_text())
    assert config["auto_map"] == {"AutoConfig": "configuration.NewConfig", "AutoModel": "modeling.NewModel"}
    assert config["hidden_size"] == 768  # the rest of the config is kept
    assert {(repo, name) for repo, name, _ in hub.files} == {
        ("Alibaba-NLP/new-impl", "modeling.py"),
        ("Alibaba-NLP/new-impl", "configuration.py"),
    }
    assert local_model_path(GTE_MULTILINGUAL.hf_id, settings) == folder


def test_localize_remote_code_twice_fetches_nothing_more(tmp_path):
    folder = snapshot(tmp_path / "m", {"auto_map": dict(REMOTE_AUTO_MAP)})
    hub = FakeHub()
    localize_remote_code(folder, hub)
    first = (folder / "config.json").read_text()
    assert localize_remote_code(folder, hub) == []
    assert len(hub.files) == 2
    assert (folder / "config.json").read_text() == first


def test_localize_remote_code_skips_present_files_but_still_rewrites(tmp_path):
    folder = snapshot(tmp_path / "m", {"auto_map": dict(REMOTE_AUTO_MAP)})
    (folder / "modeling.py").write_text("# already here\n")
    hub = FakeHub()
    assert localize_remote_code(folder, hub) == ["Alibaba-NLP/new-impl/configuration.py"]
    assert (folder / "modeling.py").read_text() == "# already here\n"
    assert json.loads((folder / "config.json").read_text())["auto_map"]["AutoModel"] == "modeling.NewModel"


def test_localize_remote_code_rewrites_config_when_code_is_already_there(tmp_path):
    folder = snapshot(tmp_path / "m", {"auto_map": dict(REMOTE_AUTO_MAP)})
    (folder / "modeling.py").write_text("# already here\n")
    (folder / "configuration.py").write_text("# already here\n")
    hub = FakeHub()
    assert localize_remote_code(folder, hub) == []
    assert hub.files == []
    assert json.loads((folder / "config.json").read_text())["auto_map"] == {
        "AutoConfig": "configuration.NewConfig",
        "AutoModel": "modeling.NewModel",
    }


def test_pulling_again_keeps_the_model_loadable_offline(tmp_path):
    """A second `models pull` re-downloads config.json (the local copy was edited), the code
    files are already there: config.json must still end up pointing at the local code."""
    hub = FakeHub()
    target = pull_hf_model(GTE_MULTILINGUAL.hf_id, tmp_path / "models", lambda e: None, hub)
    assert json.loads((target / "config.json").read_text())["auto_map"]["AutoModel"] == "modeling.NewModel"
    pull_hf_model(GTE_MULTILINGUAL.hf_id, tmp_path / "models", lambda e: None, hub)
    assert json.loads((target / "config.json").read_text())["auto_map"]["AutoModel"] == "modeling.NewModel"


def test_localize_remote_code_handles_list_refs(tmp_path):
    folder = snapshot(
        tmp_path / "m",
        {"auto_map": {"AutoTokenizer": ["Alibaba-NLP/new-impl--tokenization.NewTokenizer", None]}},
    )
    assert localize_remote_code(folder, FakeHub()) == ["Alibaba-NLP/new-impl/tokenization.py"]
    assert json.loads((folder / "config.json").read_text())["auto_map"] == {
        "AutoTokenizer": ["tokenization.NewTokenizer", None]
    }
    assert (folder / "tokenization.py").is_file()


def test_localize_remote_code_leaves_local_refs_alone(tmp_path):
    config = {"auto_map": {"AutoModel": "modeling.NewModel"}}
    folder = snapshot(tmp_path / "m", config)
    before = (folder / "config.json").read_text()
    hub = FakeHub()
    assert localize_remote_code(folder, hub) == []
    assert hub.files == []
    assert (folder / "config.json").read_text() == before


def test_localize_remote_code_without_config(tmp_path):
    (tmp_path / "m").mkdir()
    assert localize_remote_code(tmp_path / "m", FakeHub()) == []


def test_pull_hf_model_downloads_into_models_dir(tmp_path):
    events: list[PullEvent] = []
    hub = FakeHub()
    target = pull_hf_model(GTE_MULTILINGUAL.hf_id, tmp_path / "models", events.append, hub)
    assert target == tmp_path / "models" / "Alibaba-NLP--gte-multilingual-base"
    assert hub.snapshots == [(GTE_MULTILINGUAL.hf_id, str(target))]
    assert (target / "modeling.py").is_file()
    assert [e.model for e in events] == [GTE_MULTILINGUAL.hf_id] * 2
    assert events[0].status.startswith("downloading into")
    assert events[-1].status == "ready"


# --- ollama -----------------------------------------------------------------------------------


def test_pull_ollama_model_relays_dicts_and_objects():
    events: list[PullEvent] = []
    client = FakeOllama(OLLAMA_PARTS)
    pull_ollama_model("gemma3n:e4b", "http://unused", events.append, client)
    assert client.pulled == [("gemma3n:e4b", True)]
    assert [(e.model, e.status, e.completed, e.total) for e in events] == [
        ("gemma3n:e4b", "pulling manifest", None, None),
        ("gemma3n:e4b", "pulling abc123", 50, 200),
        ("gemma3n:e4b", "pulling abc123", 200, 200),
        ("gemma3n:e4b", "success", None, None),
    ]


# --- whole profiles -----------------------------------------------------------------------------


def test_hf_model_ids_per_profile():
    assert hf_model_ids(PROFILES["paper"]) == [GTE_MULTILINGUAL.hf_id, BGE_RERANKER.hf_id]
    assert hf_model_ids(PROFILES["lite"]) == []


def test_pull_paper_profile(tmp_path):
    settings = make_settings(tmp_path / "home", profile="auto")
    hub, client = FakeHub(), FakeOllama(OLLAMA_PARTS)
    events: list[PullEvent] = []

    problems = pull_profile(PROFILES["paper"], settings, events.append, downloader=hub, ollama_client=client)

    assert problems == []
    assert [repo for repo, _ in hub.snapshots] == [GTE_MULTILINGUAL.hf_id, BGE_RERANKER.hf_id]
    assert client.pulled == [("gemma3n:e4b", True)]
    by_model = {e.model for e in events}
    assert by_model == {GTE_MULTILINGUAL.hf_id, BGE_RERANKER.hf_id, "gemma3n:e4b"}
    llm_events = [e for e in events if e.model == "gemma3n:e4b"]
    assert [e.status for e in llm_events] == ["pulling manifest", "pulling abc123", "pulling abc123", "success"]
    assert any(e.completed == 50 and e.total == 200 for e in llm_events)
    ready = [e.model for e in events if e.status == "ready"]
    assert ready == [GTE_MULTILINGUAL.hf_id, BGE_RERANKER.hf_id]

    gte = settings.resolved_models_dir / "Alibaba-NLP--gte-multilingual-base"
    assert json.loads((gte / "config.json").read_text())["auto_map"]["AutoModel"] == "modeling.NewModel"
    assert local_model_path(BGE_RERANKER.hf_id, settings) == settings.resolved_models_dir / "BAAI--bge-reranker-base"
    # Once pulled, `auto` picks the paper profile with nothing left to download.
    resolved = resolve_profile(settings)
    assert resolved.name == "paper"
    assert resolved.missing == ()


def test_pull_with_ollama_down_reports_the_command(tmp_path):
    settings = make_settings(tmp_path / "home")
    events: list[PullEvent] = []
    problems = pull_profile(
        PROFILES["paper"],
        settings,
        events.append,
        downloader=FakeHub(),
        ollama_client=FakeOllama(fail=ConnectionError("Connection refused")),
    )
    assert len(problems) == 1
    assert "ollama pull gemma3n:e4b" in problems[0]
    assert "ollama serve" in problems[0]
    assert settings.ollama_host in problems[0]
    # The Hugging Face models were still fetched.
    assert local_model_path(GTE_MULTILINGUAL.hf_id, settings) is not None
    assert local_model_path(BGE_RERANKER.hf_id, settings) is not None


def test_pull_with_failing_downloader_names_the_models(tmp_path):
    settings = make_settings(tmp_path / "home")
    client = FakeOllama(OLLAMA_PARTS)
    problems = pull_profile(
        PROFILES["paper"],
        settings,
        lambda e: None,
        downloader=FakeHub(fail=OSError("network unreachable")),
        ollama_client=client,
    )
    assert len(problems) == 2
    assert GTE_MULTILINGUAL.hf_id in problems[0]
    assert BGE_RERANKER.hf_id in problems[1]
    assert all("network unreachable" in p and "download failed" in p for p in problems)
    # One failed download does not stop the LLM pull.
    assert client.pulled == [("gemma3n:e4b", True)]
    assert resolve_profile(make_settings(tmp_path / "home", profile="auto")).name == "lite"


def test_pull_lite_profile_downloads_nothing_from_the_hub(tmp_path):
    settings = make_settings(tmp_path / "home")
    hub, client = FakeHub(), FakeOllama([{"status": "success"}])
    events: list[PullEvent] = []
    problems = pull_profile(PROFILES["lite"], settings, events.append, downloader=hub, ollama_client=client)
    assert problems == []
    assert hub.snapshots == [] and hub.files == []
    assert events[0].model == MINILM.hf_id
    assert "nothing to download" in events[0].status
    assert client.pulled == [("gemma3n:e4b", True)]
    assert settings.resolved_models_dir.is_dir()
    assert list(settings.resolved_models_dir.iterdir()) == []

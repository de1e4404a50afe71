"""Preparing a machine to run offline: download a profile's models once, load them locally after.

``policybot models pull --profile paper`` fetches the Hugging Face models into
``POLICYBOT_MODELS_DIR`` and asks Ollama to pull the LLM. Models that run custom code
(gte-multilingual-base keeps its code in another repository) get that code copied next
to their weights, so a kiosk never needs the hub again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from policybot.models.profiles import Profile, local_dir_name
from policybot.settings import Settings


@dataclass
class PullEvent:
    """Progress of one model download."""

    model: str
    status: str
    completed: int | None = None
    total: int | None = None


PullFn = Callable[[PullEvent], None]


def hf_model_ids(profile: Profile) -> list[str]:
    """The profile's Hugging Face models that have to be downloaded (packaged ones do not)."""
    ids = [] if profile.embedding.packaged else [profile.embedding.hf_id]
    return ids + ([profile.reranker.hf_id] if profile.reranker else [])


def pull_hf_model(hf_id: str, models_dir: Path, on_event: PullFn, downloader: Any = None) -> Path:
    """Download a model repository into ``models_dir`` and make it loadable offline."""
    if downloader is None:
        import huggingface_hub as downloader  # type: ignore[no-redef]

    target = models_dir / local_dir_name(hf_id)
    on_event(PullEvent(hf_id, f"downloading into {target}"))
    downloader.snapshot_download(repo_id=hf_id, local_dir=str(target))
    localize_remote_code(target, downloader)
    on_event(PullEvent(hf_id, "ready"))
    return target


def localize_remote_code(model_dir: Path, downloader: Any) -> list[str]:
    """Copy code referenced as ``other/repo--module.Class`` into the model folder and point
    ``config.json`` at the local copy; returns the files fetched."""
    config_path = model_dir / "config.json"
    if not config_path.is_file():
        return []
    config = json.loads(config_path.read_text())
    original = config.get("auto_map") or {}
    auto_map = dict(original)
    fetched: list[str] = []
    for key, ref in list(auto_map.items()):
        refs = ref if isinstance(ref, list) else [ref]
        local_refs = []
        for item in refs:
            if not isinstance(item, str) or "--" not in item:
                local_refs.append(item)
                continue
            repo, local = item.split("--", 1)
            module_file = local.rsplit(".", 1)[0] + ".py"
            if not (model_dir / module_file).exists():
                downloader.hf_hub_download(repo_id=repo, filename=module_file, local_dir=str(model_dir))
                fetched.append(f"{repo}/{module_file}")
            local_refs.append(local)
        auto_map[key] = local_refs if isinstance(ref, list) else local_refs[0]
    if auto_map != original:
        config["auto_map"] = auto_map
        config_path.write_text(json.dumps(config, indent=2))
    return fetched


def pull_ollama_model(name: str, host: str, on_event: PullFn, client: Any = None) -> None:
    """Ask the Ollama server to pull ``name``, relaying its progress."""
    if client is None:
        import ollama

        client = ollama.Client(host=host)
    stream: Iterator[Any] = client.pull(name, stream=True)
    for part in stream:
        status = getattr(part, "status", None) or (part.get("status") if isinstance(part, dict) else "")
        completed = getattr(part, "completed", None) if not isinstance(part, dict) else part.get("completed")
        total = getattr(part, "total", None) if not isinstance(part, dict) else part.get("total")
        on_event(PullEvent(name, str(status or ""), completed, total))


def pull_profile(
    profile: Profile, settings: Settings, on_event: PullFn, downloader: Any = None, ollama_client: Any = None
) -> list[str]:
    """Fetch every model of a profile; returns the problems (empty when all is ready)."""
    problems: list[str] = []
    models_dir = settings.resolved_models_dir
    models_dir.mkdir(parents=True, exist_ok=True)
    if profile.embedding.packaged:
        on_event(PullEvent(profile.embedding.hf_id, "installed with PolicyBot (Python package), nothing to download"))
    for hf_id in hf_model_ids(profile):
        try:
            pull_hf_model(hf_id, models_dir, on_event, downloader)
        except Exception as exc:
            problems.append(f"{hf_id}: download failed ({exc}); check the internet connection and retry")
    try:
        pull_ollama_model(profile.llm.name, settings.ollama_host, on_event, ollama_client)
    except Exception as exc:
        problems.append(
            f"{profile.llm.name}: Ollama at {settings.ollama_host} could not pull it ({exc}); "
            f"start Ollama (`ollama serve`) and run `ollama pull {profile.llm.name}`"
        )
    return problems

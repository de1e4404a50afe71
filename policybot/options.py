"""Per-question choices: everything a question may override, validated once and passed down."""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from policybot.settings import Settings


class AskOptions(BaseModel):
    """What one question may choose; ``None`` keeps the setting's default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    docs: list[str] | None = Field(None, description="Search only these documents (by name)")
    fast: bool | None = Field(None, description="No query expansion: no LLM call before the answer")
    rerank: bool | None = Field(None, description="Rerank with the profile's cross-encoder, when it has one")
    top_p: float | None = Field(None, gt=0, le=1, description="Top-p of both passage selections")
    rewrites: int | None = Field(None, ge=0, le=8, description="Query rewrites in the expansion call")
    language: str | None = Field(None, description="Answer language; 'auto' = the question's")
    use_llm: bool = Field(True, description="False: answer extractively even when an LLM is running")
    as_of: date | None = Field(None, description="Search the editions in force on this date (default: today's)")

    def apply(self, settings: Settings) -> Settings:
        """The settings this question runs with."""
        update: dict[str, Any] = {}
        if self.fast is not None:
            update["fast_mode"] = self.fast
        if self.rerank is not None:
            update["rerank"] = self.rerank
        if self.top_p is not None:
            update["fusion_top_p"] = update["rerank_top_p"] = self.top_p
        if self.rewrites is not None:
            update["expansion_rewrites"] = self.rewrites
        if self.language is not None:
            update["answer_language"] = self.language
        return settings.model_copy(update=update) if update else settings

    def merged(self, **choices: Any) -> AskOptions:
        """These options with some choices replaced (validated)."""
        return AskOptions.model_validate({**self.model_dump(), **choices}) if choices else self


class EvidenceOptions(BaseModel):
    """What one evidence run may choose; ``None`` keeps the setting's default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    docs: list[str] | None = Field(None, description="Collect only from these documents (by name)")
    max_steps: int | None = Field(None, ge=1, le=20, description="Agent steps before it is stopped")
    use_llm: bool = Field(True, description="False: the deterministic planner even when an LLM is running")
    single_k: int | None = Field(
        None, ge=1, le=100, description="Just one search of the issue, keeping this many passages (a baseline)"
    )

    def merged(self, **choices: Any) -> EvidenceOptions:
        """These options with some choices replaced (validated)."""
        return EvidenceOptions.model_validate({**self.model_dump(), **choices}) if choices else self

"""The no-answer decision: refuse, before any LLM call, when no passage is relevant enough."""

from __future__ import annotations

from dataclasses import dataclass

from policybot.scoring import Scored


@dataclass(frozen=True)
class Verdict:
    """The relevance the decision was made on, and the refusal reason (None: answer)."""

    relevance: float
    threshold: float
    refusal: str | None


class Guard:
    """Compares the best relevance with the scorer's threshold. A clause the question names
    that leads the ranking is relevance enough: the user pointed at it."""

    def run(self, scored: Scored, has_sources: bool, clause_ids: set[str]) -> Verdict:
        relevance = scored.relevance
        if clause_ids and scored.candidates and scored.candidates[0].chunk.chunk_id in clause_ids:
            relevance = max(relevance, scored.threshold)
        if not has_sources:
            return Verdict(relevance, scored.threshold, "no passage found")
        if relevance < scored.threshold:
            reason = f"best {scored.source.value} score {relevance:.2f} is below the threshold {scored.threshold:.2f}"
            return Verdict(relevance, scored.threshold, reason)
        return Verdict(relevance, scored.threshold, None)

"""The no-answer decision, in bands: refuse (before any LLM call) only a question clearly outside
the documents; answer an uncertain one with a caution, or let the LLM decide from the passages."""

from __future__ import annotations

from dataclasses import dataclass

from policybot.answer.bands import Band, Signals, decide, near_a_probe
from policybot.answer.scoring import Scored, ScoreSource
from policybot.core.probes import Calibration


@dataclass(frozen=True)
class Verdict:
    """The band, the score it was decided on, and the refusal reason (None: answer)."""

    band: Band
    relevance: float
    threshold: float  # at or below this cosine the question would be out of scope
    refusal: str | None


class Guard:
    """Decides the band from the best passage's cosine, the scope's calibration (what off-topic
    questions score) and whether dense retrieval and BM25 agree. A cross-encoder, when there is
    one, can only make a confident match uncertain (its thresholds are provisional)."""

    def run(self, signals: Signals, calibration: Calibration, scored: Scored, has_sources: bool) -> Verdict:
        band, floor = decide(signals, calibration)
        if not has_sources:
            return Verdict("out_of_scope", signals.cosine, floor, "no passage found")
        if band == "out_of_scope":
            reason = (
                f"best cosine {signals.cosine:.2f} is no higher than off-topic questions reach in these documents "
                f"({floor:.2f})"
            )
            if near_a_probe(signals):
                reason += f", and the question is as close to one of those ({signals.probe_nearness:.2f})"
            elif signals.request_nearness is not None:
                near = signals.request_nearness
                reason += f", and the question is closer to a request for something outside them ({near:.2f})"
            return Verdict(band, signals.cosine, floor, reason)
        if band == "confident" and scored.source is ScoreSource.RERANKER and scored.relevance < scored.threshold:
            band = "uncertain"
        return Verdict(band, signals.cosine, floor, None)

"""Deciding in bands, not at a cliff: a question is out of scope (refused), uncertain (answered
with a caution, or left to the LLM to decide from the passages) or confident (answered).

A fixed cosine threshold does not carry: cosines depend on the embedding model and on the
corpus (a library of long legal clauses scores everything lower than one of short FAQs), and
BM25 scores on the corpus's statistics. So the scale is set by the library itself: a bank of
off-topic probe questions (cooking, sport, astronomy …, ``calibration/offtopic-probes.txt``) is
scored against the documents searched, by the embedding model (per document, at ingestion) and
by BM25 (per scope, when the library changes). A question whose best passage is no closer in
meaning than what 95 % of off-topic questions reach in the same documents, and whose best BM25
match is no stronger than any off-topic question's, is clearly outside them. One on which
dense retrieval and BM25 agree about the best passage is a confident match (agreement is what
predicts a good first pass); the rest is uncertain.

Low closeness alone is not enough to refuse: a citizen's short story ("my hearing aid fell down the
toilet", "the neighbour's tree roots cracked our drains") is as far from every passage, under a small
embedding model, as questions about cooking are. Refusing it reads as "not covered". So a question is
refused only when it is also at least as close to one of the off-topic probes as to its best passage:
positive evidence that it is about something else. One that resembles nothing (neither the documents
nor the probes) gets the passages with a caution instead (eval/decisions/2026-11-29-refusal-evidence.md).

A kiosk visitor also asks the world outside the documents for things ("where is the nearest cash
machine", "can you book me a taxi"). No topic probe is like them, so nothing was evidence against them.
A second bank, requests for places, bookings, forecasts and sums (``calibration/request-probes.txt``),
is that evidence, past a margin: the spread of the topic probes' scores (``nearer_elsewhere``). It never
sets the floors or the fusion's scale, which stay the topic bank's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from policybot.core.probes import Calibration

Band = Literal["confident", "uncertain", "out_of_scope"]


# Out of scope: no closer in meaning than this share of the off-topic probes, and no stronger a
# word match than the best of them. Not fitted to any set: "no closer than 95 % of questions
# about something else entirely" is the definition. The word-match test only rescues: an
# off-topic question sharing a few common words with the documents ("won", "world") still
# reaches the 95th percentile of the probes' BM25, never their maximum.
OUT_QUANTILE = 0.95
# With the evidence of the probe nearness (below), the floor is what the closest off-topic question
# reaches: the nearness, not a margin under the probes, now guards the answerable questions
# (eval/decisions/2026-11-29-refusal-floor.md).
OUT_QUANTILE_WITH_NEARNESS = 1.0
LEXICAL_RESCUE_QUANTILE = 1.0


@dataclass(frozen=True)
class Signals:
    """What is known about a question's best passages when the band is decided."""

    cosine: float  # best cosine of the question with a kept passage
    lexical: float  # best BM25 score of the question over the scope
    agreement: bool  # dense retrieval and BM25 put the same passage first
    clause_led: bool  # a clause the question names (by number, or asks what its title means) leads the ranking
    probe_nearness: float | None = None  # the question's best cosine with an off-topic probe (None: not measured)
    request_nearness: float | None = None  # its best cosine with a request for the world outside the documents


def decide(signals: Signals, calibration: Calibration) -> tuple[Band, float]:
    """The band, and the cosine at or below which the question is out of scope (when BM25 too
    finds nothing better than the off-topic probes do). Without a measured nearness (evidence
    mode's aspect queries), the floors alone decide, under the stricter floor."""
    nearness = signals.probe_nearness
    floor = calibration.dense_floor(OUT_QUANTILE if nearness is None else OUT_QUANTILE_WITH_NEARNESS)
    if signals.clause_led:
        return "confident", floor  # the user pointed at the clause
    if (
        signals.cosine <= floor
        and signals.lexical <= calibration.lexical_floor(LEXICAL_RESCUE_QUANTILE)
        and (nearness is None or nearer_elsewhere(signals, calibration))
    ):
        return "out_of_scope", floor
    return ("confident" if signals.agreement else "uncertain"), floor


def nearer_elsewhere(signals: Signals, calibration: Calibration) -> bool:
    """Evidence that a question is about something else: it is at least as close to an off-topic probe
    as to its best passage, or closer to a request for the world outside the documents ("can you
    recommend a good plumber near me") by more than the spread of what off-topic questions reach in
    these documents. That margin keeps a weak story from being refused on a weaker likeness: under
    MiniLM "we got stuck at the airport for 15 hours" is .26 from "Where is the closest pharmacy that
    is open late tonight?" and .22 from the travel policy's delay clause, a spread (.06) apart
    (eval/decisions/2026-12-01-a-requests-as-evidence.md)."""
    request = signals.request_nearness
    return near_a_probe(signals) or (request is not None and request - calibration.spread() >= signals.cosine)


def near_a_probe(signals: Signals) -> bool:
    """Whether the question is at least as close to an off-topic probe as to its best passage."""
    return signals.probe_nearness is not None and signals.probe_nearness >= signals.cosine

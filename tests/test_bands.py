"""The bands: a question is refused only on evidence that it is about something else."""

import pytest

from policybot.answer.bands import Signals, decide
from policybot.core.probes import Calibration

# What 20 off-topic questions reach in a scope: cosines .05-.24, BM25 scores 1-3.
CALIBRATION = Calibration(tuple(0.05 + 0.01 * i for i in range(20)), tuple(1.0 + 0.1 * i for i in range(20)))


def band(cosine: float, lexical: float = 1.5, nearness: float | None = 1.0, request: float | None = None) -> str:
    signals = Signals(
        cosine, lexical, agreement=False, clause_led=False, probe_nearness=nearness, request_nearness=request
    )
    return decide(signals, CALIBRATION)[0]


def test_a_question_no_closer_than_off_topic_ones_and_closest_to_one_of_them_is_out_of_scope():
    assert band(0.12, nearness=0.6) == "out_of_scope"  # "how do I bake a sourdough loaf?"


def test_a_question_that_resembles_nothing_gets_the_passages_with_a_caution():
    """Far from every passage, and farther still from every off-topic question: not evidence enough to
    refuse ("my hearing aid fell down the toilet", under a small model)."""
    assert band(0.21, nearness=0.18) == "uncertain"


@pytest.mark.parametrize(("cosine", "lexical"), [(0.30, 1.5), (0.12, 3.5)])
def test_closeness_or_a_strong_word_match_is_never_refused(cosine, lexical):
    assert band(cosine, lexical, nearness=0.9) == "uncertain"


def test_without_a_measured_nearness_the_floors_alone_decide():
    assert decide(Signals(0.12, 1.5, False, False), CALIBRATION)[0] == "out_of_scope"


def test_with_a_measured_nearness_the_floor_is_what_the_closest_off_topic_question_reaches():
    """Between the probes' 95th percentile (.2305 here) and their maximum (.24), a question closer to an
    off-topic probe than to any passage is refused ("is the swimming pool open on bank holidays?" over a
    home policy); without the nearness, the floors alone keep the margin."""
    assert band(0.235, nearness=0.5) == "out_of_scope"
    assert band(0.235, nearness=None) == "uncertain"
    assert band(0.245, nearness=0.9) == "uncertain"  # closer than any off-topic question gets


def test_a_request_for_the_world_outside_is_evidence_only_beyond_the_spread_of_the_off_topic_scores():
    """ "can you recommend a good plumber near me" is far from every topic probe and from the policy; it
    is near "Can you find me a reliable electrician in my area?", by more than the off-topic probes'
    spread: refused. "we got stuck at the airport for 15 hours" is a little nearer a request (a pharmacy
    open late tonight) than to the delay clause, within that spread: answered under a caution."""
    spread = CALIBRATION.spread()
    assert 0.05 < spread < 0.06  # the twenty cosines .05-.24 of CALIBRATION
    assert band(0.20, nearness=0.15, request=0.20 + spread + 0.01) == "out_of_scope"
    assert band(0.20, nearness=0.15, request=0.20 + spread - 0.01) == "uncertain"
    assert band(0.30, nearness=0.15, request=0.9) == "uncertain"  # closer than any off-topic question gets

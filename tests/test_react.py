"""The ReAct evidence agent with scripted fake chat models at the LLM boundary; the tools, the
library and the sample policy are real."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from policybot.evidence.collector import FALLBACK_NOTICE
from policybot.evidence.react import STOP, parse_finish, parse_step
from policybot.models.llm import cut_at_stop, fixed_llm, load_prompt
from policybot.service import PolicyBot
from tests.conftest import make_settings, sample_home


class ScriptedAgent(FakeListChatModel):
    """Replies in order and remembers each prompt and stop list it was given."""

    prompts: list = []
    stops: list = []

    def _call(self, messages: Any, stop: Any = None, *args: Any, **kwargs: Any) -> str:
        self.prompts.append(str(messages[-1].content))
        self.stops.append(stop)
        return super()._call(messages, stop, *args, **kwargs)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    bot = PolicyBot(make_settings(sample_home(tmp_path_factory.mktemp("react") / "home")))
    return bot


@pytest.fixture
def agent(library):
    def install(*replies: str) -> ScriptedAgent:
        model = ScriptedAgent(responses=list(replies), prompts=[], stops=[])
        library.set_llm(fixed_llm(model, name="scripted"))
        return model

    yield install
    library.set_llm(None, "test: no LLM")


def test_good_trace_searches_looks_up_and_finishes_with_chosen_rows(library, agent):
    model = agent(
        " I should find the cover first.\nAction: Search[escape of water cover]",
        " The cover points to the deductible.\nAction: Lookup[clause 5.2]\nObservation: the model must not write this",
        " Done.\nAction: Finish[E1: the escape of water cover; E5: the $750 deductible]",
    )
    # Ids are given in the order passages are first seen: E1 is the search's best hit, and the
    # look-up's passage is E5 unless the search had already shown it.
    report = library.evidence("escape of water", max_steps=6)
    assert report.mode == "react" and report.stopped == "finished" and report.llm_model == "scripted"
    assert [s.action for s in report.trace] == ["Search", "Lookup", "Finish"]
    assert report.trace[1].argument == "clause 5.2"
    assert "5.2 Escape of water deductible" in report.trace[1].observation
    # Observations are the tools', never the model's: the invented one was cut at the stop sequence.
    assert "must not write this" not in model.prompts[2]
    assert all(stop == list(STOP) for stop in model.stops)
    assert report.llm.calls == 3
    # The table is what Finish chose, with the model's reasons, quotes located in the chunks.
    tags = {
        line.split(" | ")[0]: line for s in report.trace for line in s.observation.splitlines() if line.startswith("E")
    }
    chosen = [t for t in ("E1", "E5") if t in tags]
    assert [r.why for r in report.rows] == ["the escape of water cover", "the $750 deductible"][: len(chosen)]
    assert len(report.rows) == len(chosen) >= 1
    lookup_tag = report.trace[1].observation.split(" | ")[0]
    assert lookup_tag in tags and "5.2" in tags[lookup_tag]
    assert all(r.citation.verified for r in report.rows)
    assert report.rows[0].found_by == "Search[escape of water cover]"


def test_malformed_actions_become_observations_and_the_loop_goes_on(library, agent):
    agent(
        " I will think about water.",  # no action at all
        " Let me search.\nAction: Search[]",  # empty argument
        " Now properly.\nAction: search [escape of water",  # wrong case, missing bracket
        " Finish.\nAction: Finish[E1: cover]",
    )
    report = library.evidence("escape of water")
    actions = [s.action for s in report.trace]
    assert actions == ["Invalid", "Invalid", "Search", "Finish"]
    assert "No action found" in report.trace[0].observation and "Search followed by" in report.trace[0].observation
    assert "needs something inside the square brackets" in report.trace[1].observation
    assert report.trace[2].argument == "escape of water" and report.rows


def test_a_model_that_never_finishes_is_stopped_by_the_step_cap(library, agent):
    agent(*[f" Search more.\nAction: Search[water damage {i}]" for i in range(10)])
    report = library.evidence("escape of water", max_steps=3)
    assert len(report.trace) == 3 and report.llm.calls == 3
    assert report.stopped.startswith("step limit (3)")
    # Everything it saw is kept, so the analyst still gets the evidence.
    seen = {line.split(" | ")[0] for s in report.trace for line in s.observation.splitlines() if line.startswith("E")}
    assert len(report.rows) == len(seen) > 0


def test_a_model_that_finds_nothing_costs_nothing_the_rules_take_over(library, agent):
    """A confused model (SmolLM2 writes no valid action at all) leaves the agent with no passage:
    the deterministic planner then collects the table, and the report says so in plain words."""
    agent(*[" I will think about water damage in the house." for _ in range(4)])
    report = library.evidence("escape of water", max_steps=2)
    assert [s.action for s in report.trace[:2]] == ["Invalid", "Invalid"]
    assert len(report.trace) > 2 and [s.step for s in report.trace] == list(range(1, len(report.trace) + 1))
    planner = library.evidence("escape of water", use_llm=False)
    assert [r.citation.chunk_id for r in report.rows] == [r.citation.chunk_id for r in planner.rows]
    assert report.notice == FALLBACK_NOTICE and "ollama" not in report.notice.lower()
    assert report.stopped.startswith("step limit (2) reached before Finish: no passage was seen; then ")


def test_lookup_of_a_clause_that_does_not_exist_says_so(library, agent):
    agent(" Look up the clause.\nAction: Lookup[clause 42.7]", " Nothing there.\nAction: Finish[]")
    report = library.evidence("escape of water")
    assert "no clause, defined term or section of that name" in report.trace[0].observation
    assert report.trace[1].action == "Finish" and report.rows == []


def test_finish_with_unknown_ids_keeps_every_passage_seen(library, agent):
    agent(" Search.\nAction: Search[escape of water]", " Done.\nAction: Finish[E99: made up]")
    report = library.evidence("escape of water")
    assert report.rows and "keeping every passage seen" in report.trace[1].observation


def test_use_llm_false_runs_the_planner_even_with_an_llm(library, agent):
    model = agent("never used")
    report = library.evidence("escape of water", use_llm=False)
    assert report.mode == "planner" and model.prompts == [] and report.llm.calls == 0


def test_failed_steps_are_not_shown_to_the_model_as_actions(library, agent):
    model = agent(" Hmm.\nAction: Search[words]", " Done.\nAction: Finish[E1: why; E2: why]")
    report = library.evidence("escape of water", max_steps=2)
    assert [s.action for s in report.trace[:2]] == ["Invalid", "Invalid"]
    assert "copied from the instructions" in report.trace[0].observation
    assert "Action: (none)" in model.prompts[1] and "Action: Invalid" not in model.prompts[1]
    assert "no passage was seen; then" in report.stopped and report.notice == FALLBACK_NOTICE  # the rules took over


def test_parsers():
    assert parse_step("Thought: go\nAction 2: Lookup[definition of Flood]").argument == "definition of Flood"
    assert parse_step("Search[storm]").action == "Search"
    assert parse_step("Thought: hmm").action == "Invalid"
    known = {"E1": object(), "E3": object()}
    assert parse_finish("E1: cover; E2: nope, E3 - the limit.", known) == [("E1", "cover"), ("E3", "the limit")]
    assert cut_at_stop("Action: Search[x]\nObservation: fake", STOP) == "Action: Search[x]"


def test_react_prompt_has_its_placeholders_and_examples():
    prompt = load_prompt("react")
    text = prompt.format(max_steps=6, documents="a.pdf", issue="flood", scratchpad="Thought:")
    assert "Search[" in text and "Lookup[" in text and "Finish[" in text and text.rstrip().endswith("Thought:")

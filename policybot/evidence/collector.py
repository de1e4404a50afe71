"""An evidence run composed: the tools over a scope, then the ReAct agent (with an LLM) or the
deterministic planner (without), streaming each step and ending with the ``EvidenceReport``."""

from __future__ import annotations

import time
from typing import Iterator, Sequence

from policybot.answer.openings import ListOpenings
from policybot.core.rows import DocumentRow
from policybot.events import EvidenceDoneEvent, EvidenceEvent, EvidenceStepEvent, StageEvent
from policybot.evidence.planner import EvidencePlanner, PlannerLimits
from policybot.evidence.react import AgentLimits, ReActAgent
from policybot.evidence.table import EvidenceTable
from policybot.evidence.tools import EvidenceTools
from policybot.models.llm import ChatLLM, LLMUsage
from policybot.schemas import EvidenceReport, TraceStep
from policybot.settings import EvidenceSettings

# Plain words for whoever reads the table (and its export); how to start a language model is for
# Status, `policybot doctor` and the CLI, never for the table.
PLANNER_NOTICE = "Collected by fixed rules from your documents; no language model was used."
FALLBACK_NOTICE = (
    "The language model found nothing on this issue, so these were collected by fixed rules from your documents."
)


class EvidenceCollector:
    """One evidence run over a scope."""

    def __init__(self, tools: EvidenceTools, settings: EvidenceSettings, llm: ChatLLM | None) -> None:
        self.tools = tools
        self.settings = settings
        self.llm = llm

    def run(self, issue: str, scope: Sequence[DocumentRow], single_k: int | None = None) -> Iterator[EvidenceEvent]:
        started = time.perf_counter()
        table, usage, trace = EvidenceTable(issue, openings=ListOpenings(self.tools.rows)), LLMUsage(), []
        s = self.settings
        mode = "single" if single_k else ("react" if self.llm is not None else "planner")
        yield StageEvent("searching")
        for step in self._steps(mode, issue, table, usage, single_k):
            trace.append(step)
            yield EvidenceStepEvent(step)
        stopped = _why_stopped(mode, trace, table, s)
        notice = PLANNER_NOTICE if mode == "planner" else None
        finished = bool(trace) and trace[-1].action == "Finish"
        if mode == "react" and not table.rows and not finished:  # a confused model costs nothing: the rules take over
            for step in self._steps("planner", issue, table, usage, None):
                step = step.model_copy(update={"step": len(trace) + 1})
                trace.append(step)
                yield EvidenceStepEvent(step)
            stopped, notice = f"{stopped}; then {_why_stopped('planner', trace, table, s)}", FALLBACK_NOTICE
        table.note_copies(self.tools.copies)  # sibling copies no search returned
        yield EvidenceDoneEvent(
            EvidenceReport(
                issue=issue,
                mode=mode,
                documents=[d.name for d in scope],
                rows=table.rows,
                trace=trace,
                stopped=stopped,
                llm=usage.cost(),
                llm_model=self.llm.name if self.llm is not None and mode == "react" else None,
                notice=notice,
                seconds=round(time.perf_counter() - started, 3),
            )
        )

    def _steps(
        self, mode: str, issue: str, table: EvidenceTable, usage: LLMUsage, single_k: int | None
    ) -> Iterator[TraceStep]:
        s = self.settings
        if mode == "single":
            hits = self.tools.search(issue, single_k or s.max_rows)
            new = [row.n for hit in hits for row, added in [table.add(hit, f"Search[{issue}]")] if added and row]
            yield TraceStep(
                step=1,
                thought="One search of the issue (baseline).",
                action="Search",
                argument=issue,
                observation=f"{len(hits)} passages",
                new_rows=new,
            )
        elif mode == "react" and self.llm is not None:
            agent = AgentLimits(
                max_steps=s.max_steps, step_max_tokens=s.step_max_tokens, hits_per_search=s.hits_per_search
            )
            yield from ReActAgent(self.tools, self.llm, agent).run(issue, table, usage)
        else:
            plan = PlannerLimits(
                issue_hits=s.issue_hits, aspect_hits=s.aspect_hits, max_rows=s.max_rows, aspects=s.aspects
            )
            yield from EvidencePlanner(self.tools, plan).run(issue, table)


def _why_stopped(mode: str, trace: list[TraceStep], table: EvidenceTable, s: EvidenceSettings) -> str:
    if mode == "single":
        return "one search"
    if mode == "react":
        if trace and trace[-1].action == "Finish":
            return "finished"
        kept = "every passage seen is kept" if table.rows else "no passage was seen"
        return f"step limit ({s.max_steps}) reached before Finish: {kept}"
    if len(table.rows) >= s.max_rows:
        return f"row limit ({s.max_rows}) reached"
    return "nothing new to follow"

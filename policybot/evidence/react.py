"""The ReAct evidence agent: an LLM alternating Thought → Action → Observation over the library.

After Zhang & Pope's ReAct prompting for policy evidence collection, offline: the actions are
``Search[query]`` (hybrid search of the scope), ``Lookup[reference]`` (a clause, a defined term
or a section, answered exactly) and ``Finish[ids]``. The model writes one Thought and one Action
per call and is stopped before it can write its own Observation (stop sequences, and the reply
cut there in case a model ignores them); the tools write the Observation. The loop is bounded
(``max_steps`` calls, ``step_max_tokens`` each), so its cost on a small GPU is known in advance.
A reply without a usable action becomes an Observation that says what was wrong, and the next
step tries again — as the answering pipeline does with unusable JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from policybot.core.passages import Passage
from policybot.evidence.quotes import snippet
from policybot.evidence.table import EvidenceTable
from policybot.evidence.tools import EvidenceTools
from policybot.models.llm import ChatLLM, LLMUsage, load_prompt
from policybot.schemas import TraceStep

STOP = ("\nObservation", "Observation:")
_ACTION = re.compile(r"Action\s*\d*\s*:\s*(Search|Lookup|Finish)\s*\[(.*)\]", re.IGNORECASE | re.DOTALL)
_BARE_ACTION = re.compile(r"^\s*(Search|Lookup|Finish)\s*\[(.*)\]", re.IGNORECASE | re.MULTILINE | re.DOTALL)
_THOUGHT = re.compile(r"Thought\s*\d*\s*:\s*(.*?)(?=\n\s*Action|\Z)", re.IGNORECASE | re.DOTALL)
_EVIDENCE_ID = re.compile(r"\bE(\d+)\b")
# Said in words, not as bracketed templates: a small model copies "Search[words]" literally.
ACTIONS = (
    "Search followed by the words to search in square brackets, Lookup followed by a clause number, defined term "
    "or section title in square brackets, or Finish followed by the evidence ids you keep in square brackets"
)
# Arguments copied from the instructions or the example instead of written for the issue.
_PLACEHOLDERS = {
    "words",
    "query",
    "reference",
    "ids",
    "e1: why; e2: why",
    "e1: storm cover; e2: what counts as a storm; e3: fences and gates excluded",
}


@dataclass
class ParsedStep:
    thought: str
    action: str  # Search / Lookup / Finish, or "Invalid"
    argument: str
    problem: str = ""  # for Invalid: what was wrong, shown to the model as the Observation


def parse_step(reply: str) -> ParsedStep:
    """A model's step. Tolerant: "Action 2:", a missing "Action:" label, a trailing "]" missing
    on the last line; anything else is an Invalid step that says what was expected."""
    thought_m = _THOUGHT.search(reply)
    thought = " ".join((thought_m.group(1) if thought_m else reply.split("Action")[0]).split())
    m = _ACTION.search(reply) or _BARE_ACTION.search(reply)
    if m is None:
        unclosed = re.search(
            r"(?:Action\s*\d*\s*:\s*)?(Search|Lookup|Finish)\s*\[([^\]\n]+)$", reply.strip(), re.IGNORECASE
        )
        if unclosed:
            m = unclosed
    if m is None:
        return ParsedStep(thought, "Invalid", "", f"No action found. Write one Action line: {ACTIONS}.")
    action, argument = m.group(1).capitalize(), " ".join(m.group(2).split("]")[0].split())
    if not argument and action != "Finish":
        return ParsedStep(thought, "Invalid", "", f"{action} needs something inside the square brackets.")
    if argument.lower().strip(" .") in _PLACEHOLDERS:
        return ParsedStep(
            thought,
            "Invalid",
            "",
            f"'{argument}' is copied from the instructions: write your own words for this issue.",
        )
    return ParsedStep(thought, action, argument)


def parse_finish(argument: str, known: dict[str, Passage]) -> list[tuple[str, str]]:
    """(evidence id, why) pairs from Finish[E1: the cover; E3: the deductible]; ids not seen are dropped."""
    out: list[tuple[str, str]] = []
    marks = list(_EVIDENCE_ID.finditer(argument))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(argument)
        why = argument[m.end() : end].strip(" :;,-–—.\n")
        tag = f"E{m.group(1)}"
        if tag in known and tag not in {t for t, _ in out}:
            out.append((tag, why))
    return out


@dataclass
class AgentLimits:
    max_steps: int = 6
    step_max_tokens: int = 96
    hits_per_search: int = 4
    observation_chars: int = 160  # snippet length per hit shown to the model


@dataclass
class AgentRun:
    """What the agent saw and chose, as it goes."""

    seen: dict[str, Passage] = field(default_factory=dict)  # E1.. -> hit
    found_by: dict[str, str] = field(default_factory=dict)  # E1.. -> the action that returned it
    chosen: list[tuple[str, str]] = field(default_factory=list)
    finished: bool = False


class ReActAgent:
    """Thought → Action → Observation with an LLM, bounded; the table is what it chose at Finish
    (everything it saw, in order, when it never finishes)."""

    def __init__(self, tools: EvidenceTools, llm: ChatLLM, limits: AgentLimits | None = None) -> None:
        self.tools = tools
        self.llm = llm
        self.limits = limits or AgentLimits()
        self.prompt = load_prompt("react")

    def run(self, issue: str, table: EvidenceTable, usage: LLMUsage) -> Iterator[TraceStep]:
        run = AgentRun()
        scratchpad = ""
        documents = ", ".join(d.name for d in self.tools.scope.values())
        for step in range(1, self.limits.max_steps + 1):
            text = self.prompt.format(
                max_steps=self.limits.max_steps, documents=documents, issue=issue, scratchpad=scratchpad + "Thought:"
            )
            reply = self.llm.complete(usage, "react", text, max_tokens=self.limits.step_max_tokens, stop=STOP)
            parsed = parse_step("Thought:" + reply if not reply.lstrip().lower().startswith("thought") else reply)
            observation = self._act(parsed, run, issue)
            # A failed step is written as "(none)", never as a bracketed action the model could copy.
            action_line = f"{parsed.action}[{parsed.argument}]" if parsed.action != "Invalid" else "(none)"
            scratchpad += f"Thought: {parsed.thought}\nAction: {action_line}\nObservation: {observation}\n"
            yield TraceStep(
                step=step,
                thought=parsed.thought,
                action=parsed.action,
                argument=parsed.argument,
                observation=observation,
            )
            if run.finished:
                break
        self._fill(run, table)

    def _act(self, parsed: ParsedStep, run: AgentRun, issue: str) -> str:
        if parsed.action == "Invalid":
            return parsed.problem
        if parsed.action == "Finish":
            run.chosen = parse_finish(parsed.argument, run.seen)
            run.finished = True
            if not run.chosen and run.seen:
                return "Finished without naming any evidence id: keeping every passage seen."
            return f"Finished with {len(run.chosen)} passages."
        if parsed.action == "Search":
            hits = self.tools.search(parsed.argument, self.limits.hits_per_search)
        else:
            hits = self.tools.lookup(parsed.argument)[: self.limits.hits_per_search]
            if not hits:
                return (
                    f"Lookup[{parsed.argument}]: no clause, defined term or section of that name in these "
                    "documents. Try Search instead."
                )
        if not hits:
            return "Nothing found. Try other words."
        lines = []
        for hit in hits:
            tag = next((t for t, h in run.seen.items() if h.chunk.chunk_id == hit.chunk.chunk_id), None)
            if tag is None:
                tag = f"E{len(run.seen) + 1}"
                run.seen[tag], run.found_by[tag] = hit, f"{parsed.action}[{parsed.argument}]"
            lines.append(
                f"{tag} | {hit.doc.name} | {hit.chunk.section or '(no section)'} | p.{hit.chunk.page_start} | "
                f"{snippet(hit, issue, self.limits.observation_chars)}"
            )
        return "\n".join(lines)

    def _fill(self, run: AgentRun, table: EvidenceTable) -> None:
        chosen = run.chosen or [(tag, "") for tag in run.seen]
        for tag, why in chosen:
            table.add(run.seen[tag], run.found_by[tag], why=why or None)

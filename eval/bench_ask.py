"""Benchmark answering: per-stage latency and LLM cost per question.

    python eval/bench_ask.py [DATASET_DIR] [--no-llm] [--fast] [--repeat 1]

Ingests the dataset's documents into a cached index, warms the models up once (as the app
does at start), then asks every question and prints p50/p95 seconds per stage, time to the
first passages, and LLM calls / prompt / output tokens per question. Uses whatever LLM the
settings resolve to (Ollama, POLICYBOT_LLM_PROVIDER=llamacpp, or none = extractive).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from policybot.evaluation.datasets import load_dataset  # noqa: E402
from policybot.evaluation.harness import index_home  # noqa: E402
from policybot.evaluation.metrics import percentile  # noqa: E402
from policybot.events import AnswerEvent, PassagesEvent  # noqa: E402
from policybot.service import PolicyBot  # noqa: E402
from policybot.settings import Settings  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", nargs="?", default="eval/datasets/sample-behaviour")
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--fast", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cache", default=".policybot-eval")
    args = ap.parse_args()
    dataset = load_dataset(args.dataset)
    settings = Settings()
    bot = PolicyBot(settings.model_copy(update={"home": index_home(Path(args.cache), dataset, settings)}))
    assert not bot.ingest(dataset.docs).failed
    t0 = time.perf_counter()
    bot.warm_up()
    llm, notice = bot.llm()
    print(
        f"profile {bot.components.profile.name}; LLM {llm.name if llm and not args.no_llm else 'none (extractive)'}; "
        f"warm-up {time.perf_counter() - t0:.1f} s"
    )
    stages: dict[str, list[float]] = defaultdict(list)
    first_passages, totals, calls, prompt_toks, output_toks, modes = [], [], [], [], [], defaultdict(int)
    for _ in range(args.repeat):
        for q in dataset.questions:
            start = time.perf_counter()
            answer = None
            for event in bot.ask_stream(q.question, fast=args.fast or None, use_llm=not args.no_llm):
                if isinstance(event, PassagesEvent):
                    first_passages.append(time.perf_counter() - start)
                elif isinstance(event, AnswerEvent):
                    answer = event.answer
            assert answer is not None, "the answer pipeline ended without an answer"
            totals.append(time.perf_counter() - start)
            for stage, seconds in answer.timings.items():
                stages[stage].append(seconds)
            calls.append(answer.llm.calls)
            prompt_toks.append(answer.llm.prompt_tokens)
            output_toks.append(answer.llm.output_tokens)
            modes[answer.mode] += 1
    n = len(totals)
    print(f"{n} questions: {dict(modes)}")
    print(
        f"first passages shown after: p50 {percentile(first_passages, 0.5):.3f} s, p95 "
        f"{percentile(first_passages, 0.95):.3f} s"
    )
    print(f"whole answer: p50 {percentile(totals, 0.5):.3f} s, p95 {percentile(totals, 0.95):.3f} s")
    for stage, values in stages.items():
        print(
            f"  {stage:12s} p50 {percentile(values, 0.5):.4f} s  p95 {percentile(values, 0.95):.4f} s  "
            f"(n={len(values)})"
        )
    print(f"LLM calls per question: mean {statistics.mean(calls):.2f}, max {max(calls)}")
    print(
        f"prompt tokens per question: mean {statistics.mean(prompt_toks):.0f}; output tokens: mean "
        f"{statistics.mean(output_toks):.0f}"
    )


if __name__ == "__main__":
    main()

"""Concurrent kiosk sessions against one process (a script, not a test).

    python eval/bench_concurrency.py --home /tmp/scale/work/size-10000/home [--sessions 10] [--questions 3]

Streamlit answers every browser session in its own thread of one server process, all sharing
one ``PolicyBot``. This drives that directly — N threads on one facade, each asking its
questions in turn, no LLM — so the figure is the server's, not ten browsers' on the same cores
(ten Chromium instances on two cores measure mostly themselves). It reports p50/p95 time to the
first passages and to the whole answer, errors, and the process RSS.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

QUESTIONS = [
    "How does the deductible apply to water damage?",
    "Mice chewed through my sofa and cables. Am I covered?",
    "How long do I have to send a proof of loss after a flood?",
    "Is my bike covered if it is stolen from the garden?",
    "What is the waiting period for accidental damage?",
    "Can I cancel the policy and get a refund?",
    "Are legal fees included in the coverage?",
    "What counts as a flood?",
    "Is wear and tear covered?",
    "What happens if the home is empty for three months?",
]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", required=True)
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--questions", type=int, default=3)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from policybot.evaluation.metrics import percentile
    from policybot.events import AnswerEvent, PassagesEvent
    from policybot.service import PolicyBot
    from policybot.settings import Settings

    bot = PolicyBot(Settings(home=Path(args.home), profile="lite", llm_mode="off"))
    bot.warm_up()
    bot.ask(QUESTIONS[0], use_llm=False)  # the first question also loads the probe calibration
    chunks = sum(d.chunks for d in bot.library.documents().documents)
    first, whole, errors = [], [], []
    lock = threading.Lock()

    def session(n: int) -> None:
        for i in range(args.questions):
            question = QUESTIONS[(n * args.questions + i) % len(QUESTIONS)]
            start = time.perf_counter()
            try:
                for event in bot.ask_stream(question, use_llm=False):
                    if isinstance(event, PassagesEvent):
                        with lock:
                            first.append(time.perf_counter() - start)
                    elif isinstance(event, AnswerEvent):
                        with lock:
                            whole.append(time.perf_counter() - start)
            except Exception as exc:  # counted, not fatal: the figure is how many fail
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}")

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.sessions) as pool:
        list(pool.map(session, range(args.sessions)))
    wall = time.perf_counter() - started
    print(
        f"library: {chunks} chunks; {args.sessions} sessions x {args.questions} questions at once, no LLM; wall "
        f"{wall:.1f} s"
    )
    print(f"first passages: p50 {statistics.median(first):.2f} s, p95 {percentile(first, 0.95):.2f} s")
    print(
        f"whole answer:   p50 {statistics.median(whole):.2f} s, p95 {percentile(whole, 0.95):.2f} s (target p95 <= 3 s)"
    )
    print(f"errors: {len(errors)} {errors[:3]}")
    print(f"process RSS: {rss_mb():.0f} MB; machine load (1, 5, 15 min): {os.getloadavg()}")


if __name__ == "__main__":
    main()

"""How the app's cost per turn grows in a long conversation (a script, not a test).

    python eval/bench_conversation.py [--home .policybot] [--turns 30]

Drives one headless Streamlit session (``streamlit.testing.v1.AppTest``, no browser: the
server's own work) through N questions without an LLM and prints the time of turn 1, 10, 30:
every Streamlit rerun redraws the whole history, so whatever each past turn costs to draw is
paid again on every new question.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

QUESTIONS = [
    "How does the deductible apply to water damage?",
    "What is the waiting period for accidental damage?",
    "Is wear-and-tear covered under the policy?",
    "Are legal fees included in the coverage?",
    "What is the definition of an 'Insured Person'?",
    "Is my bike covered if it is stolen from the garden?",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=".policybot")
    ap.add_argument("--turns", type=int, default=30)
    args = ap.parse_args()
    os.environ.update(POLICYBOT_HOME=args.home, HF_HUB_OFFLINE="1", POLICYBOT_LLM_MODE="off")
    from streamlit.testing.v1 import AppTest

    app = Path(__file__).resolve().parents[1] / "app.py"
    at = AppTest.from_file(str(app), default_timeout=300).run()
    times = []
    for turn in range(1, args.turns + 1):
        start = time.perf_counter()
        at.chat_input[0].set_value(QUESTIONS[(turn - 1) % len(QUESTIONS)]).run()
        times.append(time.perf_counter() - start)
        assert not at.exception, [e.value for e in at.exception]
    marks = [t for t in (1, 10, 30) if t <= len(times)]
    print("turn seconds: " + ", ".join(f"turn {t}: {times[t - 1]:.2f} s" for t in marks))
    print(f"machine load (1, 5, 15 min): {os.getloadavg()}")


if __name__ == "__main__":
    main()

"""Measure the bands (refuse / uncertain / confident) on evaluation sets, for any profile.

    python eval/calibrate_guardrail.py DATASET_DIR... [--out eval/results/guardrail.json] [--profile paper]

The out-of-scope floor needs no calibration per model: it is the 95th percentile of what the
off-topic probe questions score against the same documents with the same model
(``policybot/bands.py``). What a profile with a cross-encoder does need is the reranker
probability below which a confident match is demoted to uncertain
(``refusal_thresholds["bge-reranker-base"]``, provisional until this script runs on a machine
with the paper models). For each set and pooled, it prints:

- the band counts of answerable, near-miss (in-domain, unanswerable) and clearly out-of-scope questions;
- the share of answerable questions refused (target <= 5 %) and of out-of-scope ones refused (target >= 95 %);
- the AUROC of the cosine margin over the floor (answerable vs unanswerable);
- with a reranker, the AUROC of its probability and the highest threshold that keeps 95 % of
  the answerable questions above it: the value for ``POLICYBOT_REFUSAL_THRESHOLDS``.

Run it on every set you have (eval/datasets/*, ../shared/eval-data/*) and write the result into
a decision record; it reads questions' categories ``out_of_scope`` / ``near_miss``.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from policybot.evaluation.datasets import load_dataset  # noqa: E402
from policybot.evaluation.metrics import auroc  # noqa: E402
from policybot.service import PolicyBot  # noqa: E402
from policybot.settings import Settings  # noqa: E402


def score_set(root: Path, cache: Path, profile: str) -> list[dict]:
    dataset = load_dataset(root)
    bot = PolicyBot(Settings(home=cache / root.name, profile=profile, llm_mode="off"))
    report = bot.ingest(dataset.docs)
    assert not report.failed, [o.message for o in report.failed]
    has_reranker = bot.components.profile.profile.reranker is not None
    rows = []
    for q in dataset.questions:
        answer = bot.ask(q.question, use_llm=False, rerank=has_reranker)
        reranker = (
            max((c.score for c in answer.citations if not c.referenced_by), default=None) if has_reranker else None
        )
        group = "answerable" if q.answerable else ("out_of_scope" if q.category == "out_of_scope" else "near_miss")
        rows.append(
            {
                "set": root.name,
                "id": q.id,
                "group": group,
                "band": answer.band,
                "margin": round((answer.relevance or 0.0) - (answer.refusal_threshold or 0.0), 4),
                "reranker": reranker,
            }
        )
    return rows


def summarise(name: str, rows: list[dict]) -> None:
    groups = {g: [r for r in rows if r["group"] == g] for g in ("answerable", "near_miss", "out_of_scope")}
    print(f"\n== {name} ({len(rows)} questions)")
    for group, members in groups.items():
        if members:
            bands = {b: sum(r["band"] == b for r in members) for b in ("confident", "uncertain", "out_of_scope")}
            refused = bands["out_of_scope"] / len(members)
            print(f"  {group:13s} n={len(members):4d}  bands {bands}  refused {refused:.1%}")
    pos = [r["margin"] for r in groups["answerable"]]
    neg = [r["margin"] for r in groups["near_miss"] + groups["out_of_scope"]]
    print(f"  AUROC of the cosine margin: {auroc(pos, neg)}")
    probs = sorted(r["reranker"] for r in groups["answerable"] if r["reranker"] is not None)
    if probs:
        negs = [r["reranker"] for r in groups["near_miss"] + groups["out_of_scope"] if r["reranker"] is not None]
        keep95 = probs[int(0.05 * len(probs))]
        print(f"  reranker: AUROC {auroc(probs, negs)}; threshold keeping 95 % of answerable questions: {keep95:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--cache", type=Path, default=Path(".policybot-eval/guardrail"))
    ap.add_argument("--profile", default="auto", choices=["auto", "paper", "lite"])
    ap.add_argument("--out", type=Path, default=Path("eval/results/guardrail.json"))
    args = ap.parse_args()
    rows: list[dict] = []
    for root in args.datasets:
        part = score_set(root, args.cache, args.profile)
        summarise(root.name, part)
        rows += part
    summarise("all sets pooled", rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1))
    print(f"\nper-question scores: {args.out}")


if __name__ == "__main__":
    main()

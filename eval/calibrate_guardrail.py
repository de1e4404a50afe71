"""Measure the scores behind the no-answer guardrail and adaptive expansion.

    python eval/calibrate_guardrail.py DATASET_DIR... [--out eval/results/guardrail.json]

For every question (no LLM, lite or whatever profile resolves): the relevance score the
guardrail compares (reranker probability, else best cosine of the final candidates) and the
first-pass top cosine. Prints AUROC of relevance (answerable = positive), the threshold that
maximises balanced accuracy per set and pooled, refusal rates at candidate thresholds, and for
adaptive expansion the first-pass hit@5 rate above candidate confidence thresholds.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from policybot.evaluation import is_relevant, load_dataset  # noqa: E402
from policybot.service import PolicyBot  # noqa: E402
from policybot.settings import Settings  # noqa: E402


def auroc(pos: list[float], neg: list[float]) -> float:
    """Probability that a random answerable question scores above a random unanswerable one."""
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def balanced_accuracy(pos: list[float], neg: list[float], t: float) -> float:
    tpr = sum(p >= t for p in pos) / len(pos) if pos else 1.0
    tnr = sum(n < t for n in neg) / len(neg) if neg else 1.0
    return (tpr + tnr) / 2


def score_set(root: Path, cache: Path) -> list[dict]:
    dataset = load_dataset(root)
    emb_never_refuse = {"all-MiniLM-L6-v2": -1.0, "gte-multilingual-base": -1.0, "bge-reranker-base": -1.0}
    bot = PolicyBot(Settings(home=cache / root.name, refusal_thresholds=emb_never_refuse, confident_thresholds={}))
    report = bot.ingest(dataset.docs)
    assert not report.failed, [o.message for o in report.failed]
    rows = []
    for q in dataset.questions:
        answer = bot.ask(q.question, use_llm=False)
        first = bot.search(q.question, k=5).hits
        rows.append(
            {
                "set": root.name,
                "id": q.id,
                "answerable": q.answerable,
                "category": q.category,
                "relevance": answer.relevance,
                "first_pass": answer.first_pass_score,
                "first_hit5": any(is_relevant(h.doc, h.text, q.gold) for h in first) if q.gold else None,
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--cache", default=".policybot-eval", help="where the eval indexes are kept between runs")
    ap.add_argument("--out", default="eval/results/guardrail.json")
    args = ap.parse_args()
    rows = []
    for d in args.datasets:
        rows += score_set(Path(d), Path(args.cache))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1))
    grid = [round(0.05 * i, 2) for i in range(2, 17)]
    sets = sorted({r["set"] for r in rows}) + ["pooled"]
    print("## refusal score (relevance): answerable = positive")
    for name in sets:
        sel = [r for r in rows if name in ("pooled", r["set"])]
        pos = [r["relevance"] for r in sel if r["answerable"]]
        neg = [r["relevance"] for r in sel if not r["answerable"]]
        best = max(grid, key=lambda t: balanced_accuracy(pos, neg, t))
        print(f"{name}: n={len(pos)}+{len(neg)}  AUROC {auroc(pos, neg):.3f}  best threshold {best} (balanced acc {balanced_accuracy(pos, neg, best):.3f})")
        for t in grid:
            fr = sum(p < t for p in pos) / max(len(pos), 1)
            rr = sum(n < t for n in neg) / max(len(neg), 1)
            print(f"   t={t:.2f}: refuses {rr:.0%} of unanswerable, {fr:.0%} of answerable")
    print("\n## adaptive expansion: first-pass top cosine vs first-pass hit@5 (answerable)")
    ans = [r for r in rows if r["answerable"] and r["first_hit5"] is not None]
    for t in grid:
        above = [r for r in ans if r["first_pass"] >= t]
        if above:
            hit = sum(r["first_hit5"] for r in above) / len(above)
            print(f"   t={t:.2f}: {len(above)}/{len(ans)} skip expansion; hit@5 among them {hit:.3f}")


if __name__ == "__main__":
    main()

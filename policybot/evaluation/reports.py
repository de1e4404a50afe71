"""Reports of ``policybot eval``: one Markdown table per measure with a row per configuration,
and the recall@k and latency plots."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from policybot.evaluation.metrics import KS


def markdown_report(results: list[dict[str, Any]], plots: dict[str, str] | None = None) -> str:
    """One table row per configuration, plus refusal, citation and cost tables."""
    ran = [r for r in results if "metrics" in r]
    skipped = [r for r in results if "skipped" in r]
    dataset = (ran or skipped or [{}])[0].get("dataset", "?")
    lines = [f"# PolicyBot evaluation: {dataset}", ""]
    if ran:
        lines += [f"Profile {ran[0]['profile']} ({ran[0]['embedding_model']}), {ran[0]['created']}.", ""]
        lines += _retrieval_table(ran) + _conversation_table(ran) + _refusal_table(ran) + _reading_table(ran)
        lines += _answer_tables(ran)
        lines += _cost_table(ran)
        lines += ["", "Configurations:", ""] + [f"- `{r['config']}`: {r['description']}" for r in ran]
    if skipped:
        lines += ["", "Not run here:", ""] + [f"- `{r['config']}`: {r['skipped']}" for r in skipped]
    for title, path in (plots or {}).items():
        lines += ["", f"![{title}]({path})"]
    return "\n".join(lines) + "\n"


def _retrieval_table(ran: list[dict[str, Any]]) -> list[str]:
    cols = ["R@1", "R@3", "R@5", "R@10", "recall@10", "precision@5", "f1@5", "mrr@10", "ndcg@10"]
    lines = ["## Retrieval (answerable questions; R@k = a relevant chunk in the top k)", ""]
    lines += ["| config | " + " | ".join(cols) + " | chunks | ingest s |", "|---" * (len(cols) + 3) + "|"]
    for r in ran:
        m = r["metrics"]["retrieval"]
        vals = " | ".join(f"{m.get(c, float('nan')):.3f}" for c in cols)
        lines.append(f"| {r['config']} | {vals} | {r['ingestion']['chunks']} | {r['ingestion']['seconds']:.1f} |")
    return lines


def _conversation_table(ran: list[dict[str, Any]]) -> list[str]:
    keys = ["R@5 first turns", "R@5 follow-ups", "R@5 topic switches", "context used right"]
    rows = [
        (
            r["config"],
            [_fmt(r["metrics"]["conversation"].get(k)) for k in keys]
            + [
                str(r["metrics"]["conversation"]["context used on a switch"]),
                str(r["metrics"]["conversation"]["context missing on a follow-up"]),
            ],
        )
        for r in ran
        if "conversation" in r["metrics"]
    ]
    headers = keys + ["context used on a switch", "context missing on a follow-up"]
    return _table("Conversations (turn by turn, each asked after the turns before it)", headers, rows)


def _refusal_table(ran: list[dict[str, Any]]) -> list[str]:
    keys = ("auroc", "refusal_rate", "out_of_scope_refusal_rate", "false_refusal_rate")
    return _table(
        "Refusals (bands: confident/uncertain/out of scope)",
        [
            "AUROC of the score",
            "refused: unanswerable",
            "refused: clearly out of scope",
            "refused: answerable",
            "bands (answerable · unanswerable)",
        ],
        [
            (
                r["config"],
                [_fmt(r["metrics"]["refusal"].get(k)) for k in keys]
                + [_bands(r["metrics"]["refusal"].get("bands", {}))],
            )
            for r in ran
        ],
    )


def _reading_table(ran: list[dict[str, Any]]) -> list[str]:
    def cells(m: dict[str, Any]) -> list[str]:
        stated = _fmt(m["conditions_stated"]) + (f" ({m['conditions']})" if m["conditions"] else "")
        return [
            _fmt(m["gold_in_answer"]),
            _fmt(m.get("gold_first")),
            stated,
            f"{m['with_unsupported']} of {m['shown']}",
        ]

    return _table(
        "What the answer text holds (gold passage: answerable questions; conditions: of the gold answers')",
        [
            "gold passage in the answer",
            "in its first quote",
            "conditions stated",
            "shown answers with an unsupported sentence",
        ],
        [(r["config"], cells(r["metrics"]["reading"])) for r in ran if "reading" in r["metrics"]],
    )


def _answer_tables(ran: list[dict[str, Any]]) -> list[str]:
    answered = [r for r in ran if "answers" in r["metrics"]]
    cited = [r for r in ran if "citations" in r["metrics"]]
    return _table(
        "Answers (vs reference answers)",
        ["scored", "ROUGE-L", "similarity"],
        [
            (
                r["config"],
                [str(r["metrics"]["answers"]["scored"])]
                + [_fmt(r["metrics"]["answers"][k]) for k in ("rouge_l", "similarity")],
            )
            for r in answered
        ],
    ) + _table(
        "Citations",
        ["page accuracy", "section present", "verified"],
        [
            (
                r["config"],
                [
                    _fmt(r["metrics"]["citations"][k])
                    for k in ("page_accuracy", "section_presence", "verification_rate")
                ],
            )
            for r in cited
        ],
    )


def _cost_table(ran: list[dict[str, Any]]) -> list[str]:
    def cells(cost: dict[str, Any]) -> list[str]:
        seconds = cost["question_seconds"]
        return [
            f"{seconds['p50']:.3f}",
            f"{seconds['p95']:.3f}",
            f"{cost['llm_calls_per_question']:.2f}",
            f"{cost['prompt_tokens_per_question']:.0f}",
        ]

    return _table(
        "Cost",
        ["question p50 s", "p95 s", "LLM calls / q", "prompt tokens / q"],
        [(r["config"], cells(r["metrics"]["cost"])) for r in ran],
    )


def _table(title: str, headers: list[str], rows: list[tuple[str, list[str]]]) -> list[str]:
    """A Markdown section with one row per configuration (nothing when there are no rows)."""
    if not rows:
        return []
    lines = ["", f"## {title}", "", "| config | " + " | ".join(headers) + " |", "|---" * (len(headers) + 1) + "|"]
    return lines + [f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows]


def _bands(bands: dict[str, dict[str, int]]) -> str:
    def one(group: str) -> str:
        counts = bands.get(group, {})
        return "/".join(str(counts.get(b, 0)) for b in ("confident", "uncertain", "out_of_scope"))

    return f"{one('answerable')} · {one('unanswerable')}" if bands else "—"


def _fmt(value: Any) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def plot_recall(results: list[dict[str, Any]], path: Path) -> Path:
    """Recall@k curves (k = 1, 3, 5, 10), one line per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in results:
        if "metrics" not in r:
            continue
        m = r["metrics"]["retrieval"]
        ax.plot(KS, [m.get(f"R@{k}", 0) for k in KS], marker="o", label=r["config"])
    ax.set_xlabel("k")
    ax.set_ylabel("R@k (relevant chunk in top k)")
    ax.set_ylim(0, 1)
    ax.set_xticks(KS)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"Retrieval: {results[0].get('dataset', '')}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_latency(results: list[dict[str, Any]], path: Path) -> Path:
    """p50 seconds per pipeline stage, one group of bars per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ran = [r for r in results if "metrics" in r]
    stages = sorted({s for r in ran for s in r["metrics"]["cost"]["latency"]})
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / max(len(ran), 1)
    for i, r in enumerate(ran):
        lat = r["metrics"]["cost"]["latency"]
        ax.bar(
            [j + i * width for j in range(len(stages))],
            [lat.get(s, {}).get("p50", 0) * 1000 for s in stages],
            width,
            label=r["config"],
        )
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(stages))])
    ax.set_xticklabels(stages, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("p50 milliseconds")
    ax.legend(fontsize=7)
    ax.set_title("Latency per stage")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

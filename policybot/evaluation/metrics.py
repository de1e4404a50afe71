"""The metrics, one definition each, for ``policybot eval`` and every benchmark: which chunks
are relevant to a question, ranking metrics (computed with ranx), AUROC and percentiles."""

from __future__ import annotations

import warnings
from typing import Mapping, Sequence

import numpy as np

from policybot.core.text import alnum
from policybot.evaluation.datasets import Question, contains_half

KS = (1, 3, 5, 10)


def relevant_chunks(
    question: Question,
    chunks: Sequence[tuple[str, str, str]],
    pages: Mapping[str, tuple[int, int]] | None = None,
) -> set[str]:
    """Ids of the chunks (id, doc name, text) holding at least half of a gold passage, in its
    document or in one the set says holds the same passage (``also_in``). A gold with a page and no
    text (a reviewer's "the right passage is on page N") is met by any chunk of its document on
    that page (``pages``: chunk id -> first and last page)."""
    golds = [({g.doc, *g.also_in}, alnum(g.text), g.page) for g in question.gold]
    found = set()
    for chunk_id, doc, text in chunks:
        text_alnum = None
        for gdocs, gtext, gpage in golds:
            if doc not in gdocs:
                continue
            if not gtext:
                span = (pages or {}).get(chunk_id)
                if gpage is not None and span is not None and span[0] <= gpage <= span[1]:
                    found.add(chunk_id)
                    break
                continue
            text_alnum = text_alnum if text_alnum is not None else alnum(text)
            if contains_half(text_alnum, gtext):
                found.add(chunk_id)
                break
    return found


def ranking_metrics(qrels: dict[str, set[str]], runs: dict[str, list[str]]) -> dict[str, float]:
    """Hit rate (R@k: a relevant chunk in the top k), recall, precision, F1, MRR@10 and
    nDCG@10 over questions with at least one relevant chunk, computed with ranx."""
    from ranx import Qrels, Run, evaluate

    judged = {q: rel for q, rel in qrels.items() if rel}
    if not judged:
        return {}
    qrels_dict = {q: {cid: 1 for cid in rel} for q, rel in judged.items()}
    # ranx needs every judged question in the run; an empty ranking scores zero.
    run_dict = {
        q: {cid: float(len(runs.get(q, [])) - i) for i, cid in enumerate(runs.get(q, []))} or {"-": 0.0} for q in judged
    }
    metrics = (
        [f"hit_rate@{k}" for k in KS]
        + [f"{m}@{k}" for m in ("recall", "precision", "f1") for k in (5, 10)]
        + ["mrr@10", "ndcg@10"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = evaluate(Qrels(qrels_dict), Run(run_dict), metrics)
    out = {name.replace("hit_rate@", "R@"): round(float(v), 4) for name, v in scores.items()}
    out["questions"] = len(judged)
    return out


def auroc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    """The chance that a random positive scores above a random negative (ties count half);
    None when either side is empty."""
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0 to 1) by linear interpolation between the nearest ranks (numpy's
    default), the one definition every report and benchmark quotes; 0.0 when there are none."""
    return float(np.quantile(np.asarray(values, dtype=float), q)) if len(values) else 0.0

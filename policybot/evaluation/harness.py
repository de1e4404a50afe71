"""Running named configurations over an eval dataset and writing results, reports and plots.

Each configuration switches one thing (retriever, expansion, reranker, chunker) so the grid
shows what every design choice buys. Results keep every question's ranked chunks, so any
run can be re-scored or inspected later.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

from policybot.core.rows import ChunkRow, doc_of
from policybot.evaluation import answer_quality
from policybot.evaluation.answer_quality import conditions_stated, gold_first, gold_in_answer, unsupported_sentences
from policybot.evaluation.datasets import Dataset, Question, load_dataset
from policybot.evaluation.metrics import auroc, percentile, ranking_metrics, relevant_chunks
from policybot.evaluation.reports import markdown_report, plot_latency, plot_recall
from policybot.schemas import Answer
from policybot.service import PolicyBot
from policybot.settings import Settings

Retrieval = Literal["dense", "bm25", "hybrid", "pipeline", "none"]


@dataclass(frozen=True)
class EvalConfig:
    name: str
    description: str
    retrieval: Retrieval
    overrides: dict[str, Any] = field(default_factory=dict)
    needs_llm: bool = False
    needs_reranker: bool = False


def _cfg(
    name: str,
    description: str,
    retrieval: Retrieval,
    needs_llm: bool = False,
    needs_reranker: bool = False,
    **overrides: Any,
) -> EvalConfig:
    return EvalConfig(name, description, retrieval, overrides, needs_llm, needs_reranker)


CONFIGS: dict[str, EvalConfig] = {
    c.name: c
    for c in [
        _cfg("dense", "dense retrieval only (first pass)", "dense"),
        _cfg("bm25", "BM25 only (first pass)", "bm25"),
        _cfg("hybrid", "dense + BM25, calibrated score fusion (first pass)", "hybrid"),
        _cfg(
            "hybrid-rrf",
            "dense + BM25, reciprocal rank fusion (first pass; the earlier default)",
            "hybrid",
            fusion="rrf",
        ),
        _cfg(
            "all-documents",
            "full pipeline, fast mode, without narrowing to documents the question names",
            "pipeline",
            fast_mode=True,
            name_documents=False,
        ),
        _cfg("fast", "full pipeline, fast mode: no query expansion, extractive answer", "pipeline", fast_mode=True),
        _cfg(
            "no-token-match",
            "fast without token match (the best candidates are not re-ordered by late interaction)",
            "pipeline",
            fast_mode=True,
            token_match=False,
        ),
        _cfg(
            "hyde",
            "pipeline + HyDE passage only",
            "pipeline",
            needs_llm=True,
            expansion_rewrites=0,
            adaptive_expansion=False,
        ),
        _cfg(
            "multiquery",
            "pipeline + rewrites only",
            "pipeline",
            needs_llm=True,
            expansion_hyde=False,
            adaptive_expansion=False,
        ),
        _cfg(
            "expansion",
            "pipeline + HyDE + rewrites (no adaptive skip)",
            "pipeline",
            needs_llm=True,
            adaptive_expansion=False,
        ),
        _cfg(
            "expansion-unguarded",
            "pipeline + HyDE + rewrites (no adaptive skip), rewrites not checked against the question's own ranking",
            "pipeline",
            needs_llm=True,
            adaptive_expansion=False,
            expansion_guard=False,
        ),
        _cfg(
            "follow-ups-always",
            "fast, every later question in a conversation searched joined to the previous question",
            "pipeline",
            fast_mode=True,
            follow_up_context="always",
        ),
        _cfg(
            "follow-ups-never",
            "fast, every question in a conversation searched on its own",
            "pipeline",
            fast_mode=True,
            follow_up_context="never",
        ),
        _cfg(
            "rerank",
            "pipeline + cross-encoder reranker, fast mode",
            "pipeline",
            needs_reranker=True,
            fast_mode=True,
            rerank=True,
        ),
        _cfg("default", "the pipeline as configured (LLM answer when one is running)", "pipeline", needs_llm=True),
        _cfg("no-context", "the LLM answers without any sources (baseline for answer quality)", "none", needs_llm=True),
        _cfg(
            "chunk-semantic", "hybrid over SemanticChunker chunks (the default chunking)", "hybrid", chunker="semantic"
        ),
        _cfg("chunk-structure", "hybrid over structure-aware recursive chunks", "hybrid", chunker="structure"),
        _cfg("chunk-recursive", "hybrid over recursive 1000/150 chunks per section", "hybrid", chunker="recursive"),
        _cfg(
            "run-in-headings",
            "fast, with run-in headings in body type read as sections ('2. Term. Unless…')",
            "pipeline",
            fast_mode=True,
            run_in_headings=True,
        ),
        _cfg(
            "no-header", "hybrid, chunks indexed without their title/section header", "hybrid", contextual_header=False
        ),
        _cfg(
            "baseline-recursive-dense",
            "plain baseline: per-page recursive 1000/150, no sections or header, dense only",
            "dense",
            chunker="recursive",
            chunk_scope="page",
            contextual_header=False,
            name_documents=False,
            fusion="rrf",
        ),
        _cfg(
            "baseline-recursive-bm25",
            "plain baseline: per-page recursive 1000/150, no sections or header, BM25 only",
            "bm25",
            chunker="recursive",
            chunk_scope="page",
            contextual_header=False,
            name_documents=False,
            fusion="rrf",
        ),
        _cfg(
            "reference-semantic-page",
            "the reference's core: SemanticChunker per page, no merge or header, dense only",
            "dense",
            chunker="semantic",
            chunk_scope="page",
            contextual_header=False,
            semantic_merge_tokens=0,
            name_documents=False,
        ),
    ]
}
GRID = list(CONFIGS)

# Settings that change the index: configurations differing in them need their own.
_INDEX_KEYS = ("chunker", "chunk_scope", "contextual_header", "semantic_merge_tokens", "profile")
# Index settings added later: they enter the cache key only when not at their default, so the
# indexes already built stay valid.
_LATER_INDEX_KEYS = {
    "run_in_headings": False,
    "vector_header": True,
    "clause_titles": True,
    "list_lead_ins": False,
    "plain_headings": False,
    "heading_breaks": False,
    "bare_headings": "keep",
}


def index_home(cache: Path, dataset: Dataset, settings: Settings) -> Path:
    values = {k: str(getattr(settings, k)) for k in _INDEX_KEYS}
    values.update({k: str(getattr(settings, k)) for k, d in _LATER_INDEX_KEYS.items() if getattr(settings, k) != d})
    if settings.embedding_backend == "onnx-int8":  # vectors of their own (torch and onnx give the same ones)
        values["vectors"] = "int8"
    key = json.dumps(values, sort_keys=True)
    return cache / dataset.root.name / hashlib.sha1(key.encode()).hexdigest()[:10]


def unavailable(config: EvalConfig, bot: PolicyBot) -> str | None:
    """Why a configuration cannot run here (None when it can)."""
    if config.needs_reranker and bot.components.profile.profile.reranker is None:
        return f"the {bot.components.profile.name} profile has no reranker (needs the paper profile's models)"
    if config.needs_llm and bot.llm()[0] is None:
        return "no LLM is running (" + (bot.llm()[1] or "") + ")"
    return None


# --- running --------------------------------------------------------------------------------


Say = Callable[[str], None]  # a line of progress for the person running the evaluation


# The settings a result records (what tells two runs apart).
_REPORTED_SETTINGS = (
    "chunker",
    "chunk_scope",
    "contextual_header",
    "semantic_merge_tokens",
    "run_in_headings",
    "plain_headings",
    "heading_breaks",
    "bare_headings",
    "clause_titles",
    "list_lead_ins",
    "rrf_k",
    "fast_mode",
    "token_match",
    "rerank",
)


def run_config(
    dataset_dir: str | Path,
    config_name: str,
    out_root: Path,
    cache: Path = Path(".policybot-eval"),
    limit: int | None = None,
    base: Settings | None = None,
    say: Say = lambda message: None,
    llm: Any = None,
) -> dict[str, Any]:
    """Evaluate one configuration; writes ``out_root/<dataset>/<config>/results.json`` and ``report.md``.
    ``llm`` replaces the configured LLM (tests, other providers)."""
    config = CONFIGS[config_name]
    dataset = load_dataset(dataset_dir)
    base = base or Settings()
    settings = base.model_copy(update=config.overrides)
    settings = settings.model_copy(update={"home": index_home(cache, dataset, settings)})
    bot = PolicyBot(settings)
    if llm is not None:
        bot.set_llm(llm)
    out_dir = out_root / dataset.root.name / config.name
    reason = unavailable(config, bot)
    if reason:
        return {"config": config.name, "dataset": dataset.root.name, "skipped": reason}

    say(f"{dataset.root.name} / {config.name}: indexing {len(dataset.docs)} documents")
    names, all_chunks, ingestion = _index(bot, dataset)
    questions = dataset.questions[:limit] if limit else dataset.questions
    pages = chunk_pages(bot) if any(not g.text for q in questions for g in q.gold) else None
    say(f"{dataset.root.name} / {config.name}: {len(questions)} questions")
    histories: dict[str, list[Answer]] = {}  # a conversation's answers so far, for its next turn
    per_question = [
        _run_question(
            bot, config, q, list(names), names, all_chunks, histories.setdefault(q.conversation or q.id, []), pages
        )
        for q in questions
    ]
    result = {
        "format": "policybot eval results v1",
        "dataset": dataset.root.name,
        "config": config.name,
        "description": config.description,
        "profile": bot.components.profile.name,
        "embedding_model": bot.components.profile.profile.embedding.vector_id,
        "embedding_backend": bot.components.embedding_backend,
        "settings": {k: getattr(settings, k) for k in _REPORTED_SETTINGS},
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "ingestion": ingestion,
        "metrics": summarize(per_question),
        "questions": per_question,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps(result, indent=1, default=str))
    (out_dir / "report.md").write_text(markdown_report([result]))
    return result


def _index(bot: PolicyBot, dataset: Dataset) -> tuple[dict[str, str], list[tuple[str, str, str]], dict[str, Any]]:
    """Index the set's documents; their names, every chunk, and what the ingestion took."""
    started = time.perf_counter()
    report = bot.ingest(dataset.docs)
    docs = bot.library.resolve_docs(None)
    all_chunks = library_chunks(bot)
    ingestion = {
        "seconds": round(sum(d.ingest_seconds for d in docs), 2),
        "chunks": len(all_chunks),
        "failed": [o.message for o in report.failed],
        "wall_seconds": round(time.perf_counter() - started, 2),
    }
    return {d.doc_id: d.name for d in docs}, all_chunks, ingestion


def library_chunks(bot: PolicyBot) -> list[tuple[str, str, str]]:
    """Every chunk of the library as (chunk id, document name, text): what relevance is judged on."""
    names = {d.doc_id: d.name for d in bot.components.index.documents()}
    rows = _chunk_rows(bot)
    return [(cid, names[doc_of(cid)], row.text) for cid, row in rows.items() if doc_of(cid) in names]


def _chunk_rows(bot: PolicyBot) -> dict[str, ChunkRow]:
    """Every registered chunk of the library's collection, by id."""
    c = bot.components
    collection = c.index.collection
    return c.registry.chunks(collection, [cid for cid, _ in c.registry.chunk_texts(collection)])


def chunk_pages(bot: PolicyBot) -> dict[str, tuple[int, int]]:
    """Every chunk's first and last page, for golds given by page alone (a reviewer's marks)."""
    return {cid: (row.page_start, row.page_end) for cid, row in _chunk_rows(bot).items()}


def _run_question(
    bot: PolicyBot,
    config: EvalConfig,
    q: Question,
    doc_ids: list[str],
    names: dict[str, str],
    all_chunks: list[tuple[str, str, str]],
    history: list[Answer],
    pages: dict[str, tuple[int, int]] | None = None,
) -> dict[str, Any]:
    if config.retrieval == "none":
        return _no_context(bot, q)
    row: dict[str, Any] = {
        "id": q.id,
        "question": q.question,
        "answerable": q.answerable,
        "category": q.category,
        "gold_pages": [(g.doc, g.page) for g in q.gold if g.page],
    }
    if q.conversation:
        row.update(conversation=q.conversation, turn=q.turn, follow_up=q.follow_up)
    started = time.perf_counter()
    if config.retrieval == "pipeline":
        ranked, scores = _ask(bot, config, q, row, history)
    else:
        ranked, scores = _retrieve(bot, config.retrieval, q.question, doc_ids)
        dense = bot.components.retriever.dense.run(q.question, 1, doc_ids)
        row.update(
            refused=None,
            refusal_score=round(dense[0][1], 4) if dense else 0.0,
            timings={"retrieval": round(time.perf_counter() - started, 4)},
        )
    row["seconds"] = round(time.perf_counter() - started, 4)
    chunks = bot.components.registry.chunks(bot.components.index.collection, ranked)
    relevant = relevant_chunks(q, all_chunks, pages) if q.gold else set()
    row["relevant"] = sorted(relevant)
    row["ranked"] = [
        {
            "chunk_id": cid,
            "doc": names.get(chunks[cid].doc_id, ""),
            "page_start": chunks[cid].page_start,
            "page_end": chunks[cid].page_end,
            "section": chunks[cid].section,
            "text": chunks[cid].text,
            "score": scores.get(cid),
            "relevant": cid in relevant,
        }
        for cid in ranked[:10]
        if cid in chunks
    ]
    return row


def _ask(
    bot: PolicyBot, config: EvalConfig, q: Question, row: dict[str, Any], history: list[Answer]
) -> tuple[list[str], dict[str, float]]:
    """The whole pipeline: its ranking, and what it answered (into ``row``). A conversation's turn
    is asked after the turns before it, with the answers PolicyBot gave them (``history``)."""
    answer = bot.ask(q.question, history=list(history), use_llm=config.needs_llm)
    history.append(answer)
    if q.conversation:
        row.update(searched_as=answer.standalone_question, used_context=answer.standalone_question != q.question)
    row.update(
        refused=answer.refused,
        band=answer.band,
        relevance=answer.relevance,
        # The margin over the out-of-scope floor: comparable across scopes (the floor depends on
        # the documents searched), so it is what the AUROC is computed on.
        refusal_score=round(answer.relevance - answer.refusal_threshold, 4)
        if answer.relevance is not None and answer.refusal_threshold is not None
        else None,
        mode=answer.mode,
        answer=answer.answer,
        timings=answer.timings,
        llm=answer.llm.model_dump(),
        citations=[
            {
                "n": c.n,
                "doc": c.doc,
                "section": c.section,
                "page_start": c.page_start,
                "page_end": c.page_end,
                "cited": c.cited,
                "verified": c.verified,
            }
            for c in answer.citations
        ],
        reference=q.answer,
    )
    row.update(_reading(q, answer))
    if q.answer and answer.mode == "generated":
        row.update(answer_scores(bot, q.answer, answer.answer))
    return answer.retrieved, dict(zip(answer.retrieved, answer.retrieved_scores))


def _reading(q: Question, answer: Answer) -> dict[str, Any]:
    """What the citizen reads: gold passage and conditions in the answer, unsupported sentences."""
    shown = "" if answer.refused else answer.answer
    # A passage as its panel shows it: the lead-in of the list it opens inside (document text read
    # from the passage before it, see answer/openings.py), then its text.
    passages = {c.n: f"{c.lead_in}\n{c.text}" if c.lead_in else c.text for c in answer.citations}
    return {
        "gold_in_answer": bool(shown) and gold_in_answer(q, shown),
        "gold_first": bool(shown) and gold_first(q, shown),
        "conditions_total": len(q.conditions),
        "conditions_stated": conditions_stated(q, shown),
        "unsupported": unsupported_sentences(answer.mode, shown, passages, [c.n for c in answer.citations if c.cited]),
    }


def _retrieve(
    bot: PolicyBot, retrieval: Retrieval, question: str, doc_ids: list[str], k: int = 20
) -> tuple[list[str], dict[str, float]]:
    """One first-pass retriever on its own over the whole scope: dense or BM25 as they are (the
    parts), or their fusion with the documents the question names favoured (the first pass)."""
    retriever = bot.components.retriever
    if retrieval == "dense":
        hits = retriever.dense.run(question, k, doc_ids)
    elif retrieval == "bm25":
        hits = retriever.lexical.run(question, k, doc_ids)
    else:
        scope = [d for d in bot.components.index.documents() if d.doc_id in set(doc_ids)]
        named = bot.components.name_documents(question, scope)
        hits = [(f.chunk_id, f.score) for f in retriever.run(question, k, doc_ids, named)]
    return [cid for cid, _ in hits], {cid: round(score, 6) for cid, score in hits}


def answer_scores(bot: PolicyBot, reference: str, answer: str) -> dict[str, float]:
    """ROUGE-L F1 and embedding cosine between an answer and the reference answer."""
    import re

    from rouge_score import rouge_scorer

    plain = re.sub(r"\[\d+\]", "", answer)  # citation markers are not words of the answer
    rouge = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score(reference, plain)["rougeL"].fmeasure
    vectors = bot.components.embedder.embed([reference, plain])
    return {"rouge_l": round(float(rouge), 4), "similarity": round(float(vectors[0] @ vectors[1]), 4)}


def _no_context(bot: PolicyBot, q: Question) -> dict[str, Any]:
    """The same LLM asked with no sources: what retrieval adds to answer quality."""
    from policybot.models.llm import LLMUsage

    llm, _ = bot.llm()
    assert llm is not None
    usage = LLMUsage()
    started = time.perf_counter()
    text = llm.complete(usage, "no-context", q.question, max_tokens=bot.settings.answer_max_tokens)
    row: dict[str, Any] = {
        "id": q.id,
        "question": q.question,
        "answerable": q.answerable,
        "category": q.category,
        "answer": text,
        "reference": q.answer,
        "refused": None,
        "refusal_score": None,
        "ranked": [],
        "relevant": [],
        "seconds": round(time.perf_counter() - started, 4),
        "timings": {"generation": round(usage.seconds, 4)},
        "llm": {"calls": usage.calls, "prompt_tokens": usage.prompt_tokens, "output_tokens": usage.output_tokens},
    }
    if q.answer:
        row.update(answer_scores(bot, q.answer, text))
    return row


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Retrieval, citation, refusal, answer and cost metrics over per-question rows."""
    answerable = [r for r in rows if r["answerable"]]
    qrels = {r["id"]: set(r["relevant"]) for r in answerable}
    runs = {r["id"]: [c["chunk_id"] for c in r["ranked"]] for r in answerable}
    out: dict[str, Any] = {"retrieval": ranking_metrics(qrels, runs)}
    unanswerable = [r for r in rows if not r["answerable"]]
    pos = [r["refusal_score"] for r in answerable if r.get("refusal_score") is not None]
    neg = [r["refusal_score"] for r in unanswerable if r.get("refusal_score") is not None]
    refusal: dict[str, Any] = {
        "auroc": auroc(pos, neg),
        "unanswerable": len(unanswerable),
        "answerable": len(answerable),
    }
    if rows and rows[0].get("refused") is not None:
        out_of_scope = [r for r in unanswerable if r.get("category") == "out_of_scope"]
        refusal["refusal_rate"] = _rate(unanswerable)
        refusal["false_refusal_rate"] = _rate(answerable)
        refusal["out_of_scope"] = len(out_of_scope)
        refusal["out_of_scope_refusal_rate"] = _rate(out_of_scope)
        refusal["bands"] = {
            group: dict(sorted(Counter(r.get("band") or "none" for r in members).items()))
            for group, members in (
                ("answerable", answerable),
                ("unanswerable", unanswerable),
                ("out_of_scope", out_of_scope),
            )
            if members
        }
        out["citations"] = _citation_metrics(answerable)
    out["refusal"] = refusal
    scored = [r for r in rows if "rouge_l" in r]
    if scored:
        out["answers"] = {
            "scored": len(scored),
            "rouge_l": round(statistics.mean(r["rouge_l"] for r in scored), 4),
            "similarity": round(statistics.mean(r["similarity"] for r in scored), 4),
        }
    if any("unsupported" in r for r in rows):
        out["reading"] = answer_quality.summary(rows)
    if any(r.get("conversation") for r in rows):
        out["conversation"] = conversation_metrics(rows)
    out["cost"] = _cost(rows)
    return out


def conversation_metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Turn-level retrieval of a conversation set, by kind of turn, and how often the context of
    the previous question was used exactly when the turn needed it (labelled ``follow_up``)."""

    def r_at_5(group: list[dict[str, Any]]) -> float | None:
        judged = [r for r in group if r["answerable"] and r["relevant"]]
        hits = [any(c["relevant"] for c in r["ranked"][:5]) for r in judged]
        return round(sum(hits) / len(hits), 4) if hits else None

    later = [r for r in rows if (r.get("turn") or 1) > 1]
    decided = [r for r in later if r.get("used_context") is not None]
    return {
        "turns": len(rows),
        "R@5 first turns": r_at_5([r for r in rows if (r.get("turn") or 1) == 1]),
        "R@5 follow-ups": r_at_5([r for r in later if r.get("follow_up")]),
        "R@5 topic switches": r_at_5([r for r in later if r.get("follow_up") is False]),
        "context used right": round(
            sum(r["used_context"] == bool(r.get("follow_up")) for r in decided) / len(decided), 4
        )
        if decided
        else None,
        "context used on a switch": sum(bool(r["used_context"]) and not r.get("follow_up") for r in decided),
        "context missing on a follow-up": sum(not r["used_context"] and bool(r.get("follow_up")) for r in decided),
    }


def _rate(rows: list[dict[str, Any]]) -> float | None:
    """The share of these questions refused outright."""
    return round(sum(bool(r["refused"]) for r in rows) / len(rows), 4) if rows else None


def _citation_metrics(answerable: list[dict[str, Any]]) -> dict[str, Any]:
    """Page accuracy: the first cited source (else the first source) is on a gold page."""
    pages_ok = judged = with_section = total = verified = cited = 0
    for r in answerable:
        if r.get("refused") or not r.get("citations"):
            continue
        cites = [c for c in r["citations"] if c["cited"]] or r["citations"][:1]
        total += len(cites)
        with_section += sum(bool(c["section"]) for c in cites)
        cited += sum(c["cited"] for c in cites)
        verified += sum(c["verified"] for c in cites if c["cited"])
        first = cites[0]
        if r.get("gold_pages"):
            judged += 1
            pages_ok += any(
                doc == first["doc"] and first["page_start"] <= page <= first["page_end"]
                for doc, page in r["gold_pages"]
            )
    return {
        "page_accuracy": round(pages_ok / judged, 4) if judged else None,
        "section_presence": round(with_section / total, 4) if total else None,
        "verification_rate": round(verified / cited, 4) if cited else None,
    }


def _cost(rows: list[dict[str, Any]]) -> dict[str, Any]:
    stages: dict[str, list[float]] = {}
    for r in rows:
        for stage, seconds in (r.get("timings") or {}).items():
            stages.setdefault(stage, []).append(seconds)
    llm = [r["llm"] for r in rows if r.get("llm")]
    return {
        "latency": {
            s: {"p50": round(percentile(v, 0.5), 4), "p95": round(percentile(v, 0.95), 4)} for s, v in stages.items()
        },
        "question_seconds": {
            "p50": round(percentile([r["seconds"] for r in rows], 0.5), 4),
            "p95": round(percentile([r["seconds"] for r in rows], 0.95), 4),
        },
        "llm_calls_per_question": round(statistics.mean(x["calls"] for x in llm), 3) if llm else 0.0,
        "prompt_tokens_per_question": round(statistics.mean(x["prompt_tokens"] for x in llm), 1) if llm else 0.0,
    }


def run_grid(
    dataset_dir: str | Path,
    configs: Sequence[str],
    out_root: Path,
    cache: Path = Path(".policybot-eval"),
    limit: int | None = None,
    base: Settings | None = None,
    say: Say = lambda message: None,
) -> tuple[list[dict[str, Any]], Path]:
    """Run several configurations and write a combined report with plots."""
    results = [run_config(dataset_dir, name, out_root, cache, limit, base, say) for name in configs]
    folder = out_root / Path(dataset_dir).resolve().name
    folder.mkdir(parents=True, exist_ok=True)
    plots = {}
    if any("metrics" in r for r in results):
        plots["recall@k"] = plot_recall(results, folder / "recall_at_k.png").name
        plots["latency per stage"] = plot_latency(results, folder / "latency.png").name
    report = folder / "report.md"
    report.write_text(markdown_report(results, plots))
    (folder / "summary.json").write_text(
        json.dumps([{k: v for k, v in r.items() if k != "questions"} for r in results], indent=1, default=str)
    )
    return results, report

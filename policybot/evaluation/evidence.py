"""Evaluating evidence mode on an "evidence issues" set (``issues.jsonl``, see
``eval/datasets/evidence-issues/README.md``): clause recall of the single search, the
deterministic planner and the ReAct agent, on the same issues, each scoped to its documents.

Matching is the evaluator's rule (``policybot.evaluation.datasets.contains_half``): a row *contains* a
gold clause when its chunk comes from the gold document and holds a contiguous run of at least
half of the gold text, comparing lowercase letters and digits only.

Sibling copies. A row folds in other documents' copies of the same text (``same_text_in``,
"doc.pdf, p.X" labels, no chunk ids). A gold clause of such a sibling document is credited to
the row when the row's *own* chunk text contains it: the table only folds texts that are
``selection.same_text`` (≥ 0.9 word-sequence ratio), so the row's text stands for its
siblings'. The label's page is not checked (the rule has no page test either).

Metrics per issue, then averaged per configuration (macro; recall also micro):

- recall: gold clauses contained in at least one row / gold clauses;
- precision: rows containing at least one gold clause / rows (indicative only: README);
- quote verification: rows whose quote was found in its chunk (``citation.verified``) / rows;
- role agreement: among rows containing a gold clause, those whose role equals the role of one
  of the gold clauses they contain (a chunk can hold a cover and its exclusions);
- rows, steps (``len(trace)``), LLM calls, prompt + output tokens, wall seconds.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from policybot.core.text import alnum
from policybot.evaluation.datasets import Dataset, contains_half, dataset_documents
from policybot.evaluation.harness import Say, index_home
from policybot.options import EvidenceOptions
from policybot.schemas import EvidenceReport
from policybot.service import PolicyBot
from policybot.settings import Settings

ROLES = ("covers", "limits", "defines", "condition", "procedure", "other")

# The configurations, in the order they run (the single search takes its k from the planner).
EVIDENCE_CONFIGS: dict[str, str] = {
    "evidence-single": "one hybrid search of the issue, keeping as many passages as the planner's table has (baseline)",
    "evidence-planner": "the deterministic planner: search, search the cover/exclusion/condition/claims sections, "
    "follow references",
    "evidence-react": "the ReAct agent with the configured LLM (Search / Lookup / Finish)",
}


class EvidenceDatasetError(ValueError):
    """An evidence set that cannot be read: the message names the file and line."""


@dataclass(frozen=True)
class GoldClause:
    doc: str
    page: int
    text: str
    role: str
    section: str = ""
    page_end: int | None = None


@dataclass(frozen=True)
class EvidenceIssue:
    id: str
    issue: str
    scope: tuple[str, ...]
    gold: tuple[GoldClause, ...]
    notes: str = ""


@dataclass
class EvidenceDataset:
    root: Path
    issues: list[EvidenceIssue] = field(default_factory=list)

    @property
    def docs(self) -> list[Path]:
        return dataset_documents(self.root)


def is_evidence_dataset(root: str | Path) -> bool:
    """A folder with ``issues.jsonl`` and no ``questions.jsonl``."""
    root = Path(root)
    return (root / "issues.jsonl").is_file() and not (root / "questions.jsonl").is_file()


def load_evidence_dataset(root: str | Path) -> EvidenceDataset:
    """Read ``issues.jsonl``; a bad line raises ``EvidenceDatasetError`` naming it in one line."""
    root = Path(root)
    path = root / "issues.jsonl"
    if not path.is_file() or not (root / "docs").is_dir():
        raise EvidenceDatasetError(f"{root}: not an evidence dataset (needs docs/ and issues.jsonl)")
    available = {p.name for p in dataset_documents(root)}
    issues: list[EvidenceIssue] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            issue = _issue(json.loads(line), available)
        except json.JSONDecodeError as exc:
            raise EvidenceDatasetError(f"{path}:{number}: not valid JSON ({exc.msg}, column {exc.colno})") from None
        except (KeyError, TypeError, ValueError) as exc:
            what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise EvidenceDatasetError(f"{path}:{number}: {what}") from None
        if issue.id in seen:
            raise EvidenceDatasetError(f"{path}:{number}: duplicate id {issue.id}")
        seen.add(issue.id)
        issues.append(issue)
    if not issues:
        raise EvidenceDatasetError(f"{path}: no issues")
    return EvidenceDataset(root, issues)


def _issue(raw: Any, available: set[str]) -> EvidenceIssue:
    if not isinstance(raw, dict):
        raise TypeError("each line must be a JSON object")
    scope = raw["scope"]
    if not isinstance(scope, list) or not scope or not all(isinstance(s, str) for s in scope):
        raise ValueError("scope must be a non-empty list of document names")
    absent = [s for s in scope if s not in available]
    if absent:
        raise ValueError(f"scope names documents not in docs/: {', '.join(absent)}")
    gold = []
    for i, g in enumerate(raw["gold"]):
        if not isinstance(g, dict):
            raise TypeError(f"gold[{i}] must be an object")
        clause = GoldClause(
            str(g["doc"]), int(g["page"]), str(g["text"]), str(g["role"]), str(g.get("section", "")), g.get("page_end")
        )
        if clause.doc not in scope:
            raise ValueError(f"gold[{i}].doc {clause.doc} is not in the issue's scope")
        if clause.role not in ROLES:
            raise ValueError(f"gold[{i}].role '{clause.role}' is not one of {', '.join(ROLES)}")
        if not alnum(clause.text):
            raise ValueError(f"gold[{i}].text is empty")
        gold.append(clause)
    if not gold:
        raise ValueError("gold is empty")
    issue = str(raw["issue"]).strip()
    if not issue:
        raise ValueError("issue is empty")
    return EvidenceIssue(str(raw["id"]), issue, tuple(scope), tuple(gold), str(raw.get("notes", "")))


# --- scoring ------------------------------------------------------------------------------------


def label_doc(label: str) -> str:
    """The document of a ``same_text_in`` label ("nfip-sfip-rcbap.pdf, p.12" -> "nfip-sfip-rcbap.pdf")."""
    return label.rsplit(", p", 1)[0].strip()


def row_matches(issue: EvidenceIssue, report: EvidenceReport) -> list[list[int]]:
    """Per row, the indices of the gold clauses it contains (its own document, or a sibling
    document it holds the same text of, checked against its own chunk text)."""
    golds = [(g.doc, alnum(g.text)) for g in issue.gold]
    out = []
    for row in report.rows:
        c = row.citation
        docs = {c.doc, *(label_doc(label) for label in c.same_text_in)}
        text = alnum(c.text)
        out.append([i for i, (doc, gold) in enumerate(golds) if doc in docs and contains_half(text, gold)])
    return out


def score_issue(issue: EvidenceIssue, report: EvidenceReport, seconds: float | None = None) -> dict[str, Any]:
    """The metrics of one report against the issue's gold (ratios are None when undefined)."""
    matches = row_matches(issue, report)
    found = sorted({i for m in matches for i in m})
    rows = len(report.rows)
    matched_rows = [(row, m) for row, m in zip(report.rows, matches) if m]
    agreeing = sum(any(row.role == issue.gold[i].role for i in m) for row, m in matched_rows)
    return {
        "gold": len(issue.gold),
        "found": len(found),
        "recall": round(len(found) / len(issue.gold), 4),
        "precision": round(len(matched_rows) / rows, 4) if rows else None,
        "verification": round(sum(r.citation.verified for r in report.rows) / rows, 4) if rows else None,
        "role_agreement": round(agreeing / len(matched_rows), 4) if matched_rows else None,
        "matched_rows": len(matched_rows),
        "agreeing_rows": agreeing,
        "rows": rows,
        "steps": len(report.trace),
        "llm_calls": report.llm.calls,
        "tokens": report.llm.prompt_tokens + report.llm.output_tokens,
        "prompt_tokens": report.llm.prompt_tokens,
        "output_tokens": report.llm.output_tokens,
        "llm_failures": report.llm.failures,
        "seconds": round(seconds if seconds is not None else report.seconds, 3),
        "row_gold": matches,
        "missed": [
            {"gold": i, "doc": g.doc, "page": g.page, "section": g.section, "role": g.role, "text": g.text}
            for i, g in enumerate(issue.gold)
            if i not in found
        ],
    }


def summarize(per_issue: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-configuration averages over the issues that ran (macro; recall also micro)."""
    scored = [r for r in per_issue if "recall" in r]

    def mean(key: str) -> float | None:
        values = [r[key] for r in scored if r.get(key) is not None]
        return round(statistics.mean(values), 4) if values else None

    gold = sum(r["gold"] for r in scored)
    return {
        "issues": len(scored),
        "errors": len(per_issue) - len(scored),
        "recall": mean("recall"),
        "recall_micro": round(sum(r["found"] for r in scored) / gold, 4) if gold else None,
        "precision": mean("precision"),
        "verification": mean("verification"),
        "role_agreement": mean("role_agreement"),
        "role_agreement_micro": (
            round(sum(r["agreeing_rows"] for r in scored) / matched, 4)
            if (matched := sum(r["matched_rows"] for r in scored))
            else None
        ),
        "issues_without_rows": sum(1 for r in scored if not r["rows"]),
        **{f"{key}_per_issue": mean(key) for key in ("rows", "steps", "llm_calls", "tokens", "seconds")},
        "by_corpus": by_corpus(scored),
    }


def by_corpus(scored: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Recall per corpus, when a set's issues search more than one (``evidence-issues`` holds the sample
    policy's issues and the FEMA forms'): each corpus is its own target, and an average would hide the
    weaker one. A corpus is the documents that issues search together (an issue over two of the three
    FEMA forms joins them all into one); empty when there is only one."""
    corpora: list[set[str]] = []
    for r in scored:
        docs = set(r.get("scope") or [])
        joined = [c for c in corpora if c & docs or c == docs]
        corpora = [c for c in corpora if c not in joined] + [docs.union(*joined)]
    if len(corpora) < 2:
        return {}
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in scored:
        corpus = next(c for c in corpora if set(r.get("scope") or []) <= c)
        groups.setdefault(", ".join(sorted(corpus)), []).append(r)
    return {
        corpus: {
            "issues": len(rows),
            "recall": round(statistics.mean(r["recall"] for r in rows), 4),
            "found": sum(r["found"] for r in rows),
            "gold": sum(r["gold"] for r in rows),
        }
        for corpus, rows in groups.items()
    }


# --- running ------------------------------------------------------------------------------------


def unavailable(config: str, bot: PolicyBot) -> str | None:
    """Why a configuration cannot run here (None when it can)."""
    if config == "evidence-react":
        llm, notice = bot.llm()
        if llm is None:
            return "no LLM is available (" + (notice or "no reason given") + ")"
    return None


def run_evidence(
    dataset_dir: str | Path,
    configs: Sequence[str] = tuple(EVIDENCE_CONFIGS),
    out_root: Path = Path("eval/results"),
    cache: Path = Path(".policybot-eval"),
    limit: int | None = None,
    base: Settings | None = None,
    say: Say = lambda message: None,
    llm: Any = None,
) -> tuple[list[dict[str, Any]], Path]:
    """Run evidence configurations on one set; writes ``out_root/<set>/<config>/results.json``
    (and ``report.md``), ``out_root/<set>/report.md`` and ``summary.json``. ``llm`` replaces
    the configured LLM (tests, other providers)."""
    unknown = ", ".join(c for c in configs if c not in EVIDENCE_CONFIGS)
    if unknown:
        raise ValueError(f"unknown evidence configuration(s): {unknown} (choose from {', '.join(EVIDENCE_CONFIGS)})")
    dataset = load_evidence_dataset(dataset_dir)
    base = base or Settings()
    home = index_home(cache, Dataset(dataset.root, []), base)
    bot = PolicyBot(base.model_copy(update={"home": home}))
    if llm is not None:
        bot.set_llm(llm)
    name = dataset.root.resolve().name
    say(f"{name}: indexing {len(dataset.docs)} documents (cached in {home})")
    ingestion = _ingest(bot, dataset)
    issues = dataset.issues[:limit] if limit else dataset.issues
    planner_rows: dict[str, int] = {}  # issue id -> rows of the planner's table (k of the single search)
    # The planner first: the single search takes its k from the planner's tables.
    ordered = sorted(dict.fromkeys(configs), key=lambda c: (c != "evidence-planner", list(EVIDENCE_CONFIGS).index(c)))
    results: list[dict[str, Any]] = []
    for config in ordered:
        head = {"format": "policybot evidence eval v1", "dataset": name, "config": config}
        head["description"] = EVIDENCE_CONFIGS[config]
        reason = unavailable(config, bot)
        if reason:
            say(f"{name} / {config}: not run: {reason}")
            results.append({**head, "skipped": reason})
            continue
        say(f"{name} / {config}: {len(issues)} issues")
        per_issue = [_run_issue(bot, config, issue, planner_rows, say) for issue in issues]
        result = {
            **head,
            **_run_facts(bot, per_issue),
            "ingestion": ingestion,
            "metrics": summarize(per_issue),
            "issues": per_issue,
        }
        _write(out_root / name / config, result)
        results.append(result)
    results.sort(key=lambda r: list(EVIDENCE_CONFIGS).index(r["config"]))
    return results, _write_summary(out_root / name, results)


def _write_summary(folder: Path, results: list[dict[str, Any]]) -> Path:
    """The set's report (every configuration) and summary.json; returns the report's path."""
    folder.mkdir(parents=True, exist_ok=True)
    report = folder / "report.md"
    report.write_text(markdown_report(results))
    summary = [{k: v for k, v in r.items() if k != "issues"} for r in results]
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return report


def _ingest(bot: PolicyBot, dataset: EvidenceDataset) -> dict[str, Any]:
    """Index the set's documents (unchanged ones are skipped: the library is a cache)."""
    started = time.perf_counter()
    report = bot.ingest(dataset.docs)
    return {
        "wall_seconds": round(time.perf_counter() - started, 2),
        "chunks": sum(d.chunks for d in bot.library.resolve_docs(None)),
        "failed": [o.message for o in report.failed],
    }


def _run_facts(bot: PolicyBot, per_issue: list[dict[str, Any]]) -> dict[str, Any]:
    """What a configuration ran with."""
    return {
        "profile": bot.components.profile.name,
        "embedding_model": bot.components.profile.profile.embedding.vector_id,
        "llm_model": next((r.get("llm_model") for r in per_issue if r.get("llm_model")), None),
        "evidence_settings": bot.settings.evidence.model_dump(),
        "matching": "contains_half on the row's chunk text; sibling documents (same_text_in) credited with the row's "
        "own text",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _write(out_dir: Path, result: dict[str, Any]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps(result, indent=1, default=str))
    (out_dir / "report.md").write_text(markdown_report([result]))


def _planner_k(bot: PolicyBot, issue: EvidenceIssue, planner_rows: dict[str, int]) -> int:
    if issue.id not in planner_rows:
        report = bot.evidence(issue.issue, options=EvidenceOptions(docs=list(issue.scope), use_llm=False))
        planner_rows[issue.id] = len(report.rows)
    return max(1, planner_rows[issue.id])


def _run_issue(
    bot: PolicyBot, config: str, issue: EvidenceIssue, planner_rows: dict[str, int], say: Say
) -> dict[str, Any]:
    head: dict[str, Any] = {"id": issue.id, "issue": issue.issue, "scope": list(issue.scope)}
    try:
        if config == "evidence-single":
            head["k"] = _planner_k(bot, issue, planner_rows)
            options = EvidenceOptions(docs=list(issue.scope), single_k=head["k"])
        else:
            options = EvidenceOptions(docs=list(issue.scope), use_llm=config == "evidence-react")
        started = time.perf_counter()
        report = bot.evidence(issue.issue, options=options)
        seconds = time.perf_counter() - started
    except Exception as exc:  # noqa: BLE001 -- one issue failing (an LLM error, a missing document) is recorded, not fatal
        say(f"  {issue.id}: failed: {exc}")
        return {**head, "error": f"{type(exc).__name__}: {exc}"}
    expected = {"evidence-single": "single", "evidence-planner": "planner", "evidence-react": "react"}[config]
    if report.mode != expected:  # e.g. the LLM went away mid-run: never score a planner run as the agent's
        return {**head, "error": f"ran in {report.mode} mode, not {expected}: {report.notice or ''}".strip()}
    if config == "evidence-planner":
        planner_rows[issue.id] = len(report.rows)
    scores = score_issue(issue, report, seconds)
    say(
        f"  {issue.id}: recall {scores['recall']:.2f} ({scores['found']}/{scores['gold']}), {scores['rows']} rows, "
        f"{seconds:.1f} s"
    )
    return {
        **head,
        **scores,
        "mode": report.mode,
        "stopped": report.stopped,
        "llm_model": report.llm_model,
        "rows_detail": [
            {
                "n": r.n,
                "chunk_id": r.citation.chunk_id,
                "doc": r.citation.doc,
                "section": r.citation.section,
                "page_start": r.citation.page_start,
                "page_end": r.citation.page_end,
                "role": r.role,
                "found_by": r.found_by,
                "why": r.why,
                "verified": r.citation.verified,
                "quote": r.citation.quote,
                "same_text_in": r.citation.same_text_in,
                "gold": m,
                "text": r.citation.text,
            }
            for r, m in zip(report.rows, scores["row_gold"])
        ],
        "trace": [s.model_dump(include={"step", "thought", "action", "argument", "new_rows"}) for s in report.trace],
    }


# --- reports ------------------------------------------------------------------------------------


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def markdown_report(results: Sequence[dict[str, Any]]) -> str:
    """The comparison table, then per issue: recall of each configuration and what was missed."""
    ran = [r for r in results if "metrics" in r]
    skipped = [r for r in results if "skipped" in r]
    dataset = (list(results) or [{}])[0].get("dataset", "?")
    lines = [f"# PolicyBot evidence evaluation: {dataset}", ""]
    if ran:
        first = ran[0]
        lines += [
            (
                f"Profile {first['profile']} ({first['embedding_model']}), {first['created']}. "
                "Recall: gold clauses contained in a row's chunk (contains_half; sibling copies credited with the "
                "row's own text). "
                "Precision: rows containing a gold clause / rows (indicative). Macro averages over issues; recall also "
                "micro."
            ),
            "",
            (
                "| config | issues | recall | recall (micro) | precision | quote verified | role agreement | rows / "
                "issue "
                "| steps / issue | LLM calls / issue | tokens / issue | s / issue |"
            ),
            "|---" * 12 + "|",
        ]
        for r in ran:
            m = r["metrics"]
            failed = f" ({m['errors']} failed)" if m["errors"] else ""
            lines.append(
                f"| {r['config']} | {m['issues']}{failed} | {_fmt(m['recall'])} | {_fmt(m['recall_micro'])} "
                f"| {_fmt(m['precision'])} | {_fmt(m['verification'])} | {_fmt(m['role_agreement'])} | "
                f"{_fmt(m['rows_per_issue'], 1)} "
                f"| {_fmt(m['steps_per_issue'], 1)} | {_fmt(m['llm_calls_per_issue'], 1)} | "
                f"{_fmt(m['tokens_per_issue'], 0)} | {_fmt(m['seconds_per_issue'], 2)} |"
            )
        lines += _corpus_table(ran)
        lines += _per_issue_table(ran)
        lines += ["", "Configurations:", ""] + [
            f"- `{r['config']}`: {r['description']}" + (f" (LLM: {r['llm_model']})" if r.get("llm_model") else "")
            for r in ran
        ]
        lines += _missed(ran)
    if skipped:
        lines += ["", "Not run here:", ""] + [f"- `{r['config']}`: {r['skipped']}" for r in skipped]
    return "\n".join(lines) + "\n"


def _corpus_table(ran: Sequence[dict[str, Any]]) -> list[str]:
    rows = [(r["config"], corpus, c) for r in ran for corpus, c in (r["metrics"].get("by_corpus") or {}).items()]
    if not rows:
        return []
    lines = [
        "",
        "## Per corpus (the documents an issue searches)",
        "",
        "| config | corpus | issues | recall | found / gold |",
    ]
    lines.append("|---|---|---|---|---|")
    lines += [
        f"| {cfg} | {corpus} | {c['issues']} | {_fmt(c['recall'])} | {c['found']} / {c['gold']} |"
        for cfg, corpus, c in rows
    ]
    return lines


def _per_issue_table(ran: Sequence[dict[str, Any]]) -> list[str]:
    by_config = {r["config"]: {i["id"]: i for i in r["issues"]} for r in ran}
    ids = list(dict.fromkeys(i["id"] for r in ran for i in r["issues"]))
    issue_of = {i["id"]: i["issue"] for r in ran for i in r["issues"]}
    names = [r["config"] for r in ran]
    lines = [
        "",
        "## Per issue (recall found/gold · rows)",
        "",
        "| id | issue | gold | " + " | ".join(names) + " |",
        "|---" * (3 + len(names)) + "|",
    ]
    for issue_id in ids:
        cells, gold = [], "—"
        for config in names:
            row = by_config[config].get(issue_id)
            if row is None:
                cells.append("—")
            elif "error" in row:
                cells.append("error")
            else:
                gold = str(row["gold"])
                cells.append(f"{row['recall']:.2f} ({row['found']}/{row['gold']}) · {row['rows']}")
        lines.append(f"| {issue_id} | {issue_of[issue_id]} | {gold} | " + " | ".join(cells) + " |")
    return lines


def _missed(ran: Sequence[dict[str, Any]]) -> list[str]:
    """The gold each configuration missed, issue by issue (doc, page, section, role)."""
    lines = ["", "## Missed gold", ""]
    for r in ran:
        lines += [f"### {r['config']}", ""]
        for issue in r["issues"]:
            if "error" in issue:
                lines.append(f"- {issue['id']}: error: {issue['error']}")
            elif issue["missed"]:
                missed = "; ".join(
                    f"{m['doc']} p.{m['page']} {m['section'] or '(no section)'} [{m['role']}]" for m in issue["missed"]
                )
                lines.append(f"- {issue['id']} ({issue['found']}/{issue['gold']}): {missed}")
        lines.append("")
    return lines


def summary_line(result: dict[str, Any]) -> str:
    """One line per configuration for the command line."""
    if "skipped" in result:
        return f"{result['dataset']} / {result['config']}: not run — {result['skipped']}"
    m = result["metrics"]
    return (
        f"{result['dataset']} / {result['config']}: recall {_fmt(m['recall'])} (micro {_fmt(m['recall_micro'])}), "
        f"precision {_fmt(m['precision'])}, quotes verified {_fmt(m['verification'])}, roles "
        f"{_fmt(m['role_agreement'])}; "
        f"{_fmt(m['rows_per_issue'], 1)} rows, {_fmt(m['steps_per_issue'], 1)} steps, "
        f"{_fmt(m['llm_calls_per_issue'], 1)} LLM calls, "
        f"{_fmt(m['seconds_per_issue'], 2)} s per issue ({m['issues']} issues)"
        + "".join(
            f"\n  {corpus}: recall {_fmt(c['recall'])} ({c['found']}/{c['gold']}, {c['issues']} issues)"
            for corpus, c in (m.get("by_corpus") or {}).items()
        )
    )

"""Evaluating evidence mode on an evidence set it has never seen (made here, the issues.jsonl
format): a real PDF, a real library and the packaged MiniLM; a scripted chat model at the LLM boundary."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from typer.testing import CliRunner

from policybot.cli import app
from policybot.evaluation.evidence import (
    EvidenceDatasetError,
    EvidenceIssue,
    GoldClause,
    label_doc,
    load_evidence_dataset,
    run_evidence,
    score_issue,
    summarize,
    summary_line,
)
from policybot.models.llm import fixed_llm
from policybot.schemas import Citation, EvidenceReport, EvidenceRow, LLMCost, TraceStep
from tests import pdfs
from tests.conftest import NO_OLLAMA, make_settings

DOC = "acme-home.pdf"
WEAR = GoldClause(
    DOC,
    2,
    "Wear and Tear means the gradual loss of value or condition of property through ordinary use and age.",
    "defines",
)
ROT = GoldClause(
    DOC,
    2,
    "We will not pay for loss or damage caused by wear and tear, rust, rot, mould or gradual deterioration.",
    "limits",
)
QUAKE = GoldClause(
    DOC,
    2,
    "Earthquake damage to the buildings is covered only when the schedule shows the earthquake extension",
    "covers",
)
COOLING = GoldClause(
    DOC,
    5,
    "You may cancel within fourteen days of receiving this policy and we will refund the premium in full.",
    "procedure",
)

ISSUES = [
    {"id": "t-01", "issue": "wear and tear", "scope": [DOC], "gold": [WEAR.__dict__, ROT.__dict__], "notes": ""},
    {"id": "t-02", "issue": "cancelling the policy", "scope": [DOC], "gold": [COOLING.__dict__]},
]


def _write_set(root, issues=ISSUES, extra_line: str | None = None):
    (root / "docs").mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(i) for i in issues] + ([extra_line] if extra_line is not None else [])
    (root / "issues.jsonl").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="module")
def evidence_set(tmp_path_factory):
    root = _write_set(tmp_path_factory.mktemp("evidence-set"))
    pdfs.sample_policy(root / "docs" / DOC)
    return root


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """One cache for the module: the set is indexed once."""
    return tmp_path_factory.mktemp("evidence-eval")


# --- the loader -----------------------------------------------------------------------------------


def test_loader_reads_issues_scope_and_gold(tmp_path):
    root = _write_set(tmp_path / "set")
    (root / "docs" / DOC).write_bytes(b"%PDF-1.7\n")  # the loader only checks names
    dataset = load_evidence_dataset(root)
    assert [i.id for i in dataset.issues] == ["t-01", "t-02"]
    first = dataset.issues[0]
    assert first.scope == (DOC,) and first.gold[1].role == "limits" and first.gold[0].page == 2
    assert dataset.docs == [root / "docs" / DOC]


@pytest.mark.parametrize(
    "bad, message",
    [
        ('{"id": "t-03", "issue": "storm", ', "issues.jsonl:3: not valid JSON"),
        ('{"id": "t-03", "issue": "storm", "scope": ["acme-home.pdf"]}', "issues.jsonl:3: missing field 'gold'"),
        (
            json.dumps({"id": "t-03", "issue": "storm", "scope": ["other.pdf"], "gold": []}),
            "issues.jsonl:3: scope names documents not in docs/: other.pdf",
        ),
        (
            json.dumps({"id": "t-03", "issue": "storm", "scope": [DOC], "gold": [{**WEAR.__dict__, "role": "cover"}]}),
            "issues.jsonl:3: gold[0].role 'cover'",
        ),
        (json.dumps(ISSUES[0]), "issues.jsonl:3: duplicate id t-01"),
    ],
)
def test_loader_names_the_bad_line_in_one_line(tmp_path, bad, message):
    root = _write_set(tmp_path / "set", extra_line=bad)
    (root / "docs" / DOC).write_bytes(b"%PDF-1.7\n")
    with pytest.raises(EvidenceDatasetError) as info:
        load_evidence_dataset(root)
    assert message in str(info.value) and "\n" not in str(info.value)


# --- scoring --------------------------------------------------------------------------------------


def _row(
    n: int, doc: str, text: str, role: str, verified: bool = True, same_text_in: list[str] | None = None
) -> EvidenceRow:
    citation = Citation(
        n=n,
        chunk_id=f"c{n}",
        doc=doc,
        section="s",
        page_start=2,
        page_end=2,
        text=text,
        score=1.0,
        quote=text[:20],
        quote_start=0,
        quote_end=20,
        verified=verified,
        same_text_in=same_text_in or [],
    )
    return EvidenceRow(n=n, citation=citation, role=role, why="", found_by="Search[x]")  # type: ignore[arg-type]


def test_recall_precision_verification_and_roles_on_a_hand_made_report():
    sibling = GoldClause(
        "form-b.pdf", 3, "The deductible applies separately to the building and to its contents in each loss.", "limits"
    )
    issue = EvidenceIssue("h-01", "wear and tear", (DOC, "form-b.pdf"), (WEAR, ROT, QUAKE, sibling))
    report = EvidenceReport(
        issue="wear and tear",
        mode="planner",
        documents=[DOC, "form-b.pdf"],
        rows=[
            # holds the whole definition, and most of the exclusion: both count (half is enough)
            _row(
                1,
                DOC,
                "1.2 Wear and Tear. " + WEAR.text + " We will not pay for loss or damage caused by wear and tear, rust",
                "defines",
            ),
            _row(
                2, DOC, "Any amount payable is subject to the limits shown in the schedule.", "limits", verified=False
            ),
            # the sibling's text is credited through same_text_in, judged on this row's own text
            _row(3, "form-a.pdf", "C. " + sibling.text, "other", same_text_in=["form-b.pdf, p.3"]),
            # the right words in the wrong document do not count
            _row(4, "form-c.pdf", QUAKE.text, "covers"),
        ],
        trace=[
            TraceStep(step=1, action="Search", argument="wear and tear"),
            TraceStep(step=2, action="Lookup", argument="1.2"),
        ],
        llm=LLMCost(calls=2, prompt_tokens=300, output_tokens=40),
    )
    scores = score_issue(issue, report, seconds=1.5)
    assert scores["row_gold"] == [[0, 1], [], [3], []]
    assert (scores["found"], scores["gold"], scores["recall"]) == (3, 4, 0.75)
    assert scores["precision"] == 0.5  # rows 1 and 3 of 4
    assert scores["verification"] == 0.75
    assert scores["role_agreement"] == 0.5  # row 1 agrees (defines), row 3 does not (other vs limits)
    assert [m["gold"] for m in scores["missed"]] == [2] and scores["missed"][0]["role"] == "covers"
    assert (scores["rows"], scores["steps"], scores["llm_calls"], scores["tokens"], scores["seconds"]) == (
        4,
        2,
        2,
        340,
        1.5,
    )
    assert label_doc("nfip-sfip-rcbap.pdf, pp.3-4") == "nfip-sfip-rcbap.pdf"

    empty = score_issue(issue, EvidenceReport(issue="x", mode="react", documents=[DOC]))
    assert empty["recall"] == 0.0 and empty["precision"] is None and empty["role_agreement"] is None
    summary = summarize([scores, empty, {"id": "h-03", "error": "boom"}])
    assert summary["issues"] == 2 and summary["errors"] == 1
    assert summary["recall"] == 0.375 and summary["recall_micro"] == 0.375 and summary["precision"] == 0.5
    assert summary["issues_without_rows"] == 1 and summary["rows_per_issue"] == 2
    assert summary["by_corpus"] == {}  # per-issue scores without a scope: one corpus


def test_recall_is_also_reported_per_corpus_when_issues_search_different_documents():
    """``evidence-issues`` holds the sample policy's issues and the FEMA forms': each corpus has its own
    recall target, which an average over the set would hide."""
    policy = [
        {"id": f"p{i}", "scope": [DOC], "recall": r, "found": f, "gold": 4}
        for i, (r, f) in enumerate([(1.0, 4), (0.5, 2)])
    ]
    forms = [  # issues over some of the forms: one corpus with the others
        {"id": "f1", "scope": ["form-b.pdf"], "recall": 0.25, "found": 1, "gold": 4},
        {"id": "f2", "scope": ["form-b.pdf", "form-a.pdf"], "recall": 0.75, "found": 3, "gold": 4},
    ]
    rows = [
        {
            **r,
            "rows": 1,
            "precision": None,
            "verification": None,
            "role_agreement": None,
            "matched_rows": 0,
            "agreeing_rows": 0,
        }
        for r in policy + forms
    ]
    corpora = summarize(rows)["by_corpus"]
    assert corpora == {
        DOC: {"issues": 2, "recall": 0.75, "found": 6, "gold": 8},
        "form-a.pdf, form-b.pdf": {"issues": 2, "recall": 0.5, "found": 4, "gold": 8},
    }
    result = {"dataset": "d", "config": "evidence-planner", "metrics": summarize(rows)}
    assert "\n  form-a.pdf, form-b.pdf: recall 0.500 (4/8, 2 issues)" in summary_line(result)


# --- runs -----------------------------------------------------------------------------------------


def test_planner_and_single_run_end_to_end_and_react_is_not_faked(evidence_set, work):
    base = make_settings(work / "home", ollama_host=NO_OLLAMA)
    results, report = run_evidence(
        evidence_set, ["evidence-react", "evidence-single", "evidence-planner"], work / "out", work / "cache", base=base
    )
    by = {r["config"]: r for r in results}
    assert list(by) == ["evidence-single", "evidence-planner", "evidence-react"]

    planner = by["evidence-planner"]
    wear = planner["issues"][0]
    assert wear["mode"] == "planner" and wear["rows"] > 0 and wear["steps"] > 0 and wear["llm_calls"] == 0
    assert wear["recall"] == 1.0  # the definition and the exclusion
    assert planner["metrics"]["issues"] == 2 and planner["metrics"]["recall"] > 0.5
    assert all(r["doc"] == DOC for r in wear["rows_detail"])

    single = by["evidence-single"]
    assert [i["k"] for i in single["issues"]] == [max(1, i["rows"]) for i in planner["issues"]]
    assert all(i["mode"] == "single" and i["steps"] == 1 for i in single["issues"])

    assert "no LLM is available" in by["evidence-react"]["skipped"] and "Ollama" in by["evidence-react"]["skipped"]
    text = report.read_text()
    assert (
        "| evidence-planner | 2 |" in text
        and "## Per issue" in text
        and "Not run here" in text
        and "evidence-react" in text
    )
    saved = json.loads((work / "out" / evidence_set.name / "evidence-planner" / "results.json").read_text())
    assert (
        saved["format"] == "policybot evidence eval v1"
        and len(saved["issues"]) == 2
        and "text" in saved["issues"][0]["rows_detail"][0]
    )


def test_react_runs_with_an_llm_and_counts_its_calls(evidence_set, work):
    base = make_settings(work / "home", ollama_host=NO_OLLAMA)
    # The set is indexed first, without an LLM: indexing with one writes each document's summary
    # with it, which would spend the first scripted reply (this test alone, or first on its worker).
    run_evidence(evidence_set, ["evidence-planner"], work / "out-index", work / "cache", limit=1, base=base)
    replies = iter(
        [
            AIMessage("Thought: find the exclusion.\nAction: Search[wear and tear]"),
            AIMessage("Thought: that is it.\nAction: Finish[E1: excluded]"),
        ]
    )
    llm = fixed_llm(GenericFakeChatModel(messages=replies), name="scripted")
    results, _ = run_evidence(
        evidence_set, ["evidence-react"], work / "out-react", work / "cache", limit=1, base=base, llm=llm
    )
    react = results[0]
    issue = react["issues"][0]
    assert issue["mode"] == "react" and react["llm_model"] == "scripted"
    assert issue["llm_calls"] == 2 and issue["steps"] == 2 and issue["tokens"] > 0 and issue["rows"] == 1
    assert issue["stopped"] == "finished" and react["metrics"]["issues"] == 1


def test_cli_runs_an_evidence_set(evidence_set, work, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", NO_OLLAMA)
    result = CliRunner().invoke(
        app,
        [
            "--profile",
            "lite",
            "eval",
            str(evidence_set),
            "--config",
            "evidence-planner",
            "--out",
            str(work / "cli"),
            "--cache",
            str(work / "cache"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "evidence-planner: recall" in result.output and "report:" in result.output
    bad = CliRunner().invoke(app, ["--profile", "lite", "eval", str(evidence_set), "--config", "hybrid"])
    assert bad.exit_code == 2 and "evidence-single" in bad.output

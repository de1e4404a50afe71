"""The evaluation harness on a dataset folder it has never seen (made here, same format)."""

import json

import pytest

from policybot.evaluation.datasets import Gold, Question, load_dataset
from policybot.evaluation.harness import CONFIGS, auroc, ranking_metrics, relevant_chunks, run_grid
from tests import pdfs
from tests.conftest import NO_OLLAMA, make_settings

QUESTIONS = [
    {
        "id": "a1",
        "question": "What does Insured Person mean?",
        "answerable": True,
        "gold": [
            {
                "doc": "acme-home.pdf",
                "page": 1,
                "text": "Insured Person means you, your spouse or partner, and members of your family",
            }
        ],
    },
    {
        "id": "a2",
        "question": "How long is the cooling-off period to cancel the policy?",
        "answerable": True,
        "gold": [
            {"doc": "acme-home.pdf", "page": 5, "text": "You may cancel within fourteen days of receiving this policy"}
        ],
    },
    {
        "id": "a3",
        "question": "Is earthquake damage covered?",
        "answerable": True,
        "gold": [
            {
                "doc": "acme-home.pdf",
                "page": 2,
                "text": "Earthquake damage to the buildings is covered only when the schedule shows the earthquake "
                "extension",
            }
        ],
    },
    {"id": "u1", "question": "Who won the Olympics in 2024?", "answerable": False, "gold": []},
]


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("never-seen-set")
    (root / "docs").mkdir()
    pdfs.sample_policy(root / "docs" / "acme-home.pdf")
    with open(root / "questions.jsonl", "w") as f:
        for q in QUESTIONS:
            f.write(json.dumps({**q, "answer": None, "category": None, "label_source": "test"}) + "\n")
    return root


@pytest.fixture(scope="module")
def grid(dataset_dir, tmp_path_factory):
    work = tmp_path_factory.mktemp("eval")
    base = make_settings(work / "home", ollama_host=NO_OLLAMA)
    configs = ["dense", "bm25", "hybrid", "fast", "chunk-semantic", "baseline-recursive-bm25", "expansion", "rerank"]
    results, report = run_grid(dataset_dir, configs, work / "results", work / "cache", base=base)
    return {r["config"]: r for r in results}, report, work


def test_results_keep_every_question_and_its_ranked_chunks(grid, dataset_dir):
    results, _, work = grid
    saved = json.loads((work / "results" / dataset_dir.name / "hybrid" / "results.json").read_text())
    assert saved["format"] == "policybot eval results v1" and len(saved["questions"]) == 4
    first = saved["questions"][0]
    assert set(first) >= {"id", "refusal_score", "ranked", "relevant", "seconds"}
    top = first["ranked"][0]
    assert set(top) >= {"doc", "page_start", "page_end", "section", "text", "score", "relevant"}
    assert top["score"] >= first["ranked"][-1]["score"]
    assert top["relevant"] and top["doc"] == "acme-home.pdf" and top["page_start"] == 1


def test_metrics_are_computed_per_configuration(grid):
    results, _, _ = grid
    hybrid = results["hybrid"]["metrics"]
    assert hybrid["retrieval"]["questions"] == 3
    assert hybrid["retrieval"]["R@5"] == 1.0 and 0 < hybrid["retrieval"]["ndcg@10"] <= 1
    assert hybrid["refusal"]["auroc"] == 1.0  # the Olympics scores below every policy question
    fast = results["fast"]["metrics"]
    assert fast["refusal"]["refusal_rate"] == 1.0 and fast["refusal"]["false_refusal_rate"] == 0.0
    assert fast["citations"]["page_accuracy"] == 1.0 and fast["citations"]["verification_rate"] == 1.0
    assert "first_pass" in fast["cost"]["latency"]
    # The page baseline chunks page by page: no chunk runs across a page break.
    baseline = results["baseline-recursive-bm25"]
    assert all(c["page_start"] == c["page_end"] for q in baseline["questions"] for c in q["ranked"])
    assert results["chunk-semantic"]["ingestion"]["chunks"] != results["hybrid"]["ingestion"]["chunks"]


def test_unavailable_configurations_are_reported_not_faked(grid):
    results, report, _ = grid
    assert "no LLM is running" in results["expansion"]["skipped"]
    assert "no reranker" in results["rerank"]["skipped"]
    text = report.read_text()
    assert "| hybrid |" in text and "Not run here" in text and "recall_at_k.png" in text
    assert (report.parent / "recall_at_k.png").stat().st_size > 1000
    assert (report.parent / "latency.png").stat().st_size > 1000


def test_relevance_needs_half_the_gold_passage_contiguous():
    q = Question("x", "?", True, [Gold("a.pdf", 1, "the waiting period is fourteen days for accidental damage")])
    chunks = [
        ("c1", "a.pdf", "Note: the waiting period is fourteen days for accidental damage claims."),
        ("c2", "a.pdf", "waiting days accidental period damage fourteen the is"),  # same words, scrambled
        ("c3", "b.pdf", "the waiting period is fourteen days for accidental damage"),  # wrong document
        ("c4", "a.pdf", "The waiting period is fourteen days, nothing more."),  # a contiguous half
    ]
    assert relevant_chunks(q, chunks) == {"c1", "c4"}


def test_ranking_metrics_and_auroc():
    m = ranking_metrics({"q1": {"a"}, "q2": {"z"}, "q3": set()}, {"q1": ["b", "a"], "q2": ["x", "y"]})
    assert m["questions"] == 2 and m["R@1"] == 0.0 and m["R@3"] == 0.5 and m["mrr@10"] == 0.25
    assert auroc([0.9, 0.8], [0.1, 0.85]) == 0.75 and auroc([], [1.0]) is None


def test_every_named_configuration_is_documented():
    assert all(c.description for c in CONFIGS.values())
    assert {"dense", "bm25", "hybrid", "hyde", "multiquery", "rerank", "fast"} <= set(CONFIGS)


def test_cli_eval(dataset_dir, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from policybot.cli import app

    monkeypatch.setenv("OLLAMA_HOST", NO_OLLAMA)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "--home",
            str(tmp_path / "home"),
            "--profile",
            "lite",
            "eval",
            str(dataset_dir),
            "--config",
            "bm25",
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "cache"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "bm25: R@1" in result.output and (out / dataset_dir.name / "report.md").exists()
    bad = CliRunner().invoke(app, ["eval", str(dataset_dir), "--config", "nope"])
    assert bad.exit_code == 2 and "unknown configuration" in " ".join(bad.output.split())
    assert load_dataset(dataset_dir).questions[0].id == "a1"


def test_answer_quality_with_and_without_sources(dataset_dir, tmp_path):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from policybot.evaluation.harness import run_config
    from policybot.models.llm import fixed_llm

    questions = load_dataset(dataset_dir).questions
    reference = "An Insured Person is you, your spouse or partner, and family members living in your home."
    # Give the first question a reference answer in a copy of the set.
    copy = tmp_path / "with-answers"
    (copy / "docs").mkdir(parents=True)
    (copy / "docs" / "acme-home.pdf").write_bytes((dataset_dir / "docs" / "acme-home.pdf").read_bytes())
    lines = []
    for q in questions[:1]:
        lines.append(
            json.dumps(
                {
                    "id": q.id,
                    "question": q.question,
                    "answerable": True,
                    "gold": [g.__dict__ for g in q.gold],
                    "answer": reference,
                    "category": None,
                    "label_source": "test",
                }
            )
        )
    (copy / "questions.jsonl").write_text("\n".join(lines) + "\n")
    base = make_settings(tmp_path / "home", ollama_host=NO_OLLAMA, adaptive_expansion=False)
    grounded = (
        'An Insured Person is "you, your spouse or partner, and members of your family who permanently live in '
        'your home" [1].'
    )
    with_sources = run_config(
        copy,
        "expansion",
        tmp_path / "out",
        tmp_path / "cache",
        base=base,
        llm=fixed_llm(
            FakeListChatModel(
                responses=["A home insurance policy.", '{"hyde": "", "rewrites": ["insured person"]}', grounded]
            )
        ),
    )
    without = run_config(
        copy,
        "no-context",
        tmp_path / "out",
        tmp_path / "cache",
        base=base,
        llm=fixed_llm(FakeListChatModel(responses=["It usually means whoever pays the premium."])),
    )
    a, b = with_sources["metrics"]["answers"], without["metrics"]["answers"]
    assert a["scored"] == b["scored"] == 1
    assert a["rouge_l"] > b["rouge_l"] and a["similarity"] > b["similarity"]
    assert with_sources["metrics"]["citations"]["verification_rate"] == 1.0
    assert with_sources["metrics"]["cost"]["llm_calls_per_question"] == 2.0
    # Ingestion asked the LLM for the document summary that the expansion prompt uses.
    from policybot.service import PolicyBot

    home = tmp_path / "cache" / "with-answers"
    [doc] = PolicyBot(base.model_copy(update={"home": next(home.iterdir())})).components.registry.documents()
    assert doc.summary == "A home insurance policy."


def test_a_set_reads_documents_kept_elsewhere_from_its_shared_list(tmp_path):
    """Real forms live in ../shared/eval-data and are listed, never copied into the repository."""
    from policybot.evaluation.datasets import dataset_documents

    shared = tmp_path / "shared" / "form.pdf"
    shared.parent.mkdir()
    shared.write_bytes(b"%PDF-1.4")
    root = tmp_path / "project" / "eval" / "datasets" / "set"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "own.pdf").write_bytes(b"%PDF-1.4")
    (root / "docs" / "shared.txt").write_text("# kept elsewhere\n../../../../shared/form.pdf\n")
    assert [p.name for p in dataset_documents(root)] == ["form.pdf", "own.pdf"]
    (root / "docs" / "shared.txt").write_text("../../../../shared/gone.pdf\n")
    with pytest.raises(FileNotFoundError, match="gone.pdf is missing"):
        dataset_documents(root)

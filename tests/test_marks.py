"""Reviewers' citation marks become a regression set (`policybot eval --marks`): right sources are
gold by their quote, wrong ones by the page the reviewer gave, and the set runs as any other."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from policybot.cli import app
from policybot.evaluation.datasets import load_dataset
from policybot.evaluation.marks import write_marks_set
from policybot.evaluation.metrics import relevant_chunks
from policybot.service import PolicyBot
from tests.conftest import make_settings, sample_home


def _mark(key, n, verdict, page=None, doc="policy.pdf", quote="an escape of water"):
    return {
        "answer_key": key,
        "question": f"question {key}",
        "n": n,
        "doc": doc,
        "page_start": 4,
        "page_end": 5,
        "chunk_id": f"c{n}",
        "quote": quote,
        "verdict": verdict,
        "correct_page": page,
    }


def test_marks_make_questions_with_gold_by_quote_or_page(tmp_path):
    pdf = tmp_path / "policy.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    marks = [
        _mark("a", 1, "right"),
        _mark("a", 2, "wrong", page=9),
        _mark("b", 1, "wrong"),  # no right page: nothing to test
        _mark("c", 1, "right", doc="gone.pdf"),  # deleted since
    ]
    made = write_marks_set(marks, lambda name: pdf if name == "policy.pdf" else None, tmp_path / "set")
    assert (made.questions, made.golds, made.marks, made.without_page) == (1, 2, 4, 1)
    assert made.missing_documents == ["gone.pdf"]
    assert "1 wrong mark(s) without the right page left out" in made.summary()
    dataset = load_dataset(tmp_path / "set")
    assert [d.name for d in dataset.docs] == ["policy.pdf"] and dataset.docs[0].resolve() == pdf.resolve()
    (question,) = dataset.questions
    assert question.question == "question a" and question.answerable
    assert [(g.doc, g.page, g.text) for g in question.gold] == [
        ("policy.pdf", 4, "an escape of water"),
        ("policy.pdf", 9, ""),
    ]
    chunks = [("x1", "policy.pdf", "nothing of it"), ("x2", "policy.pdf", "other words"), ("x3", "other.pdf", "")]
    pages = {"x1": (8, 9), "x2": (10, 10), "x3": (9, 9)}
    assert relevant_chunks(question, chunks, pages) == {"x1"}  # page 9 of the marked document only


def test_marks_from_the_app_run_as_a_regression_set(tmp_path):
    home = sample_home(tmp_path / "home")
    bot = PolicyBot(make_settings(home))
    answer = bot.ask("A slow leak under the sink ruined my kitchen floor. Will you pay?", use_llm=False)
    shown = answer.shown_citations
    bot.mark_citation("s/0/1", answer, shown[0].n, "right", session="s")
    bot.mark_citation("s/0/1", answer, shown[1].n, "wrong", correct_page=4, session="s")
    bot.record_feedback(answer, "up", session="s", answer_key="s/0/1")
    bot.record_feedback(answer, "down", "second thoughts", session="s", answer_key="s/0/1")
    assert bot.components.feedback.count() == 1
    result = CliRunner().invoke(
        app,
        [
            "--home",
            str(home),
            "eval",
            "--marks",
            "--config",
            "fast",
            "--out",
            str(tmp_path / "results"),
            "--cache",
            str(tmp_path / "cache"),
        ],
        env={"POLICYBOT_PROFILE": "lite", "POLICYBOT_MODELS_DIR": str(home / "models")},
    )
    assert result.exit_code == 0, result.output
    assert "marks-set / fast: R@1" in result.stdout
    summary = json.loads((tmp_path / "results" / "marks-set" / "fast" / "results.json").read_text())
    (row,) = summary["questions"]
    assert row["question"] == answer.question
    assert row["relevant"]  # the marked passage and every passage on page 4 are gold
    assert summary["metrics"]["retrieval"]["R@5"] == 1.0  # the marked source was in the top 5 it came from


def test_eval_marks_without_marks_says_so(tmp_path):
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "eval", "--marks"])
    assert result.exit_code != 0
    assert "no citation marks in this library yet" in result.output

"""The answering benchmark (eval/bench_ask.py) runs end to end on the sample set without an LLM and
prints its per-stage figures: it had silently broken when the pipeline's events became typed."""

from __future__ import annotations

import sys
from pathlib import Path

EVAL = Path(__file__).resolve().parents[1] / "eval"
sys.path.insert(0, str(EVAL))

import bench_ask  # noqa: E402


def test_the_answering_benchmark_prints_per_stage_latency_on_the_sample_set(tmp_path, monkeypatch, capsys):
    dataset = EVAL / "datasets" / "sample-behaviour"
    monkeypatch.setattr(sys, "argv", ["bench_ask.py", str(dataset), "--no-llm", "--fast", "--cache", str(tmp_path)])
    bench_ask.main()
    out = capsys.readouterr().out
    questions = sum(1 for line in (dataset / "questions.jsonl").read_text().splitlines() if line.strip())
    assert f"{questions} questions: " in out and "'extractive': " in out
    assert "whole answer: p50 " in out and "first passages shown after: p50 " in out
    assert "  extractive   p50 " in out  # the stage that quotes the passages
    assert "LLM calls per question: mean 0.00, max 0" in out

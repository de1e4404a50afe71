"""The GPU embedding benchmark (eval/bench_gpu_embed.py): its CPU half runs here. It writes the
reference vectors that the GPU run compares with, through the library's own embedding path; the GPU
half needs CUDA and is skipped without it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

EVAL = Path(__file__).resolve().parents[1] / "eval"
sys.path.insert(0, str(EVAL))

import bench_gpu_embed  # noqa: E402

TEXTS = ["A slow leak under the sink ruined my kitchen floor.", "Send the proof of loss within 60 days."]


def test_the_cpu_reference_is_the_librarys_own_unit_vectors(tmp_path, monkeypatch, capsys):
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(TEXTS), encoding="utf-8")
    out = tmp_path / "cpu.npy"
    monkeypatch.setattr(sys, "argv", ["bench_gpu_embed.py", "--texts", str(texts), "--write-reference", str(out)])
    bench_gpu_embed.main()
    assert "wrote the CPU vectors of 2 texts" in capsys.readouterr().out
    vectors = np.load(out)
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    same = bench_gpu_embed._agreement(vectors, vectors)
    assert same is not None and same["lowest_cosine"] == pytest.approx(1.0)
    crossed = bench_gpu_embed._agreement(vectors, vectors[::-1])
    assert crossed is not None and crossed["lowest_cosine"] < 0.9  # two different sentences


def test_the_gpu_half_needs_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device here: run eval/bench_gpu_embed.py on a machine with one")
    report = bench_gpu_embed.on_gpu(TEXTS * 40, None, None)
    assert report["auto_device"] == "cuda" and report["auto_backend"] == "torch" and report["default_batch"] == 32

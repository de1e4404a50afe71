"""The embedding model's ONNX export: made here from the packaged weights, checked against torch,
used by `auto` on a CPU with torch's own collection, and int8 kept in an index of its own."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from policybot.models import onnx
from policybot.models.embeddings import Embedder, choose_backend, get_embedder
from policybot.models.onnx import OnnxUnavailable, export_onnx, export_problem, find_export
from policybot.models.profiles import MINILM, int8_variant
from policybot.service import PolicyBot
from tests.conftest import SAMPLE_POLICY, make_settings

TEXTS = [
    "Escape of water means water escaping suddenly from a fixed installation.",
    "slow leak under the sink ruined my floor, will you pay?",
    "We will not pay for loss or damage caused by wear and tear. " * 40,  # past the 256-token window
]


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    """One export for the module (about 10 s), in a models folder of its own."""
    folder = tmp_path_factory.mktemp("onnx-models")
    export_onnx(MINILM, make_settings(tmp_path_factory.mktemp("home"), models_dir=folder))
    return folder


def test_the_export_gives_torch_vectors_and_token_counts(models_dir, tmp_path):
    torch_embedder = Embedder(MINILM, make_settings(tmp_path / "a", device="cpu", embedding_backend="torch"))
    onnx_embedder = Embedder(
        MINILM, make_settings(tmp_path / "b", device="cpu", models_dir=models_dir, embedding_backend="onnx")
    )
    expected, got = torch_embedder.embed(TEXTS), onnx_embedder.embed(TEXTS)
    assert (torch_embedder.backend, onnx_embedder.backend) == ("torch", "onnx")
    assert got.shape == expected.shape and got.dtype == np.float32
    assert float((got * expected).sum(axis=1).min()) >= onnx.SAME_VECTORS
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert onnx_embedder.count_tokens(TEXTS) == torch_embedder.count_tokens(TEXTS)
    assert onnx_embedder.max_tokens == torch_embedder.max_tokens
    assert onnx_embedder.batch_size == 1  # no padding at all: onnxruntime's fastest here
    meta = json.loads((models_dir / "onnx" / "sentence-transformers--all-MiniLM-L6-v2" / "export.json").read_text())
    assert meta["fp32_min_cosine"] >= onnx.SAME_VECTORS and 0.95 < meta["int8_mean_cosine"] < 1.0


def test_auto_takes_the_export_on_a_cpu_and_torch_without_one(models_dir, tmp_path):
    with_export = make_settings(tmp_path / "a", device="cpu", models_dir=models_dir)
    without = make_settings(tmp_path / "b", device="cpu")
    assert choose_backend(MINILM, with_export) == "onnx"
    assert choose_backend(MINILM, without) == "torch"
    assert choose_backend(MINILM, with_export.model_copy(update={"embedding_backend": "torch"})) == "torch"
    assert choose_backend(MINILM, with_export.model_copy(update={"device": "cuda"})) == "torch"
    assert choose_backend(int8_variant(MINILM), without) == "onnx-int8"  # the vectors decide


def test_libraries_share_a_torch_model_loaded_from_the_same_files_and_keep_their_own_export(models_dir, tmp_path):
    """One process serving several libraries (the app's sessions, a test run) loads the packaged
    model once, whatever each library's models folder; an export is its folder's own."""
    first = get_embedder(MINILM, make_settings(tmp_path / "a", device="cpu"))
    second = get_embedder(MINILM, make_settings(tmp_path / "b", device="cpu", models_dir=tmp_path / "other-models"))
    assert first is second
    assert get_embedder(MINILM, make_settings(tmp_path / "c", device="cpu", embedding_backend="torch")) is first
    own_batches = get_embedder(MINILM, make_settings(tmp_path / "f", device="cpu", embed_batch_size=16))
    assert own_batches is not first and own_batches.batch_size == 16  # what a library sets is kept
    exported = get_embedder(MINILM, make_settings(tmp_path / "d", device="cpu", models_dir=models_dir))
    assert exported is not first
    exported.warm_up()
    assert exported.backend == "onnx"
    assert get_embedder(MINILM, make_settings(tmp_path / "e", device="cpu", models_dir=models_dir)) is exported


def test_asking_for_onnx_without_an_export_says_what_to_run(tmp_path):
    settings = make_settings(tmp_path / "home", device="cpu", embedding_backend="onnx")
    with pytest.raises(OnnxUnavailable, match="policybot models export-onnx"):
        Embedder(MINILM, settings).embed(["a question"])


def test_an_export_of_other_weights_is_not_used(models_dir, tmp_path):
    folder = tmp_path / "models"
    shutil.copytree(models_dir, folder)
    settings = make_settings(tmp_path / "home", device="cpu", models_dir=folder)
    meta_path = folder / "onnx" / "sentence-transformers--all-MiniLM-L6-v2" / "export.json"
    meta = json.loads(meta_path.read_text())
    meta["weights"]["size"] += 1  # as after an upgrade of the model's package
    meta_path.write_text(json.dumps(meta))
    assert find_export(MINILM, settings) is None
    assert "other weights" in (export_problem(MINILM, settings) or "")
    assert choose_backend(MINILM, settings) == "torch"


def test_a_failed_export_keeps_the_previous_one(models_dir, tmp_path, monkeypatch):
    folder = tmp_path / "models"
    shutil.copytree(models_dir, folder)
    settings = make_settings(tmp_path / "home", device="cpu", models_dir=folder)
    before = find_export(MINILM, settings)
    assert before is not None

    def broken(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr("onnxruntime.quantization.quantize_dynamic", broken)
    with pytest.raises(OSError):
        export_onnx(MINILM, settings)
    after = find_export(MINILM, settings)
    assert after is not None and after.meta == before.meta
    assert [p.name for p in (folder / "onnx").iterdir()] == ["sentence-transformers--all-MiniLM-L6-v2"]


def test_a_torch_index_answers_the_same_through_the_export(models_dir, tmp_path):
    home = tmp_path / "home"
    built = PolicyBot(make_settings(home, device="cpu", embedding_backend="torch"))
    built.ingest([SAMPLE_POLICY])
    torch_hits = built.search("slow leak under the sink ruined my floor", k=5)
    served = PolicyBot(make_settings(home, device="cpu", models_dir=models_dir))
    onnx_hits = served.search("slow leak under the sink ruined my floor", k=5)
    assert served.components.embedder.backend == "onnx"
    assert [h.chunk_id for h in onnx_hits.hits] == [h.chunk_id for h in torch_hits.hits]
    assert [h.score for h in onnx_hits.hits] == pytest.approx([h.score for h in torch_hits.hits], abs=1e-3)


def test_int8_vectors_live_in_an_index_of_their_own(models_dir, tmp_path):
    home = tmp_path / "home"
    plain = PolicyBot(make_settings(home, device="cpu", models_dir=models_dir))
    plain.ingest([SAMPLE_POLICY])
    quantised = PolicyBot(make_settings(home, device="cpu", models_dir=models_dir, embedding_backend="onnx-int8"))
    assert quantised.library.documents().documents == []  # nothing mixed in: it is indexed again
    quantised.ingest([SAMPLE_POLICY])
    c = quantised.components
    assert c.embedder.backend == "onnx-int8"
    assert c.index.collection == "policybot-all-minilm-l6-v2-int8" != plain.components.index.collection
    assert c.index.store.collection.metadata["embedding_model"] == MINILM.hf_id + "#int8"
    top = quantised.search("Is water escaping gradually from a slow drip covered?", k=5)
    assert any("2.5" in (h.section or "") for h in top.hits)
    listing = plain.library.documents()
    assert [d.name for d in listing.documents] == [SAMPLE_POLICY.name]
    assert [d.name for d in listing.other_models] == [SAMPLE_POLICY.name]


def test_doctor_names_the_backend_and_the_export_command(models_dir, tmp_path):
    from policybot.doctor import run_checks

    def backend_check(**overrides):
        bot = PolicyBot(make_settings(tmp_path / "home", device="cpu", **overrides))
        [check] = [c for c in run_checks(bot, ollama_client=object()).checks if c.name == "embedding backend"]
        return check

    exported = backend_check(models_dir=models_dir)
    assert exported.ok and exported.detail.startswith("onnx") and exported.fix is None
    missing = backend_check()
    assert not missing.ok and not missing.required and missing.fix == "policybot models export-onnx"
    asked = backend_check(embedding_backend="onnx")
    assert not asked.ok and asked.required and "export-onnx" in (asked.fix or "")
    assert backend_check(embedding_backend="torch").ok


def test_the_export_gives_torch_token_vectors(models_dir, tmp_path):
    """Token match (answer/token_match.py) reads the same word pieces and vectors on either backend."""
    torch_embedder = Embedder(MINILM, make_settings(tmp_path / "a", device="cpu", embedding_backend="torch"))
    onnx_embedder = Embedder(
        MINILM, make_settings(tmp_path / "b", device="cpu", models_dir=models_dir, embedding_backend="onnx")
    )
    expected, got = torch_embedder.token_vectors(TEXTS), onnx_embedder.token_vectors(TEXTS)
    assert [t.pieces for t in got] == [t.pieces for t in expected]
    assert "[CLS]" not in got[0].pieces and "[SEP]" not in got[0].pieces
    assert len(got[2].pieces) == torch_embedder.max_tokens  # truncated to the window, like the vectors
    for embedder, vectors in ((torch_embedder, expected), (onnx_embedder, got)):  # the tokenizer alone agrees
        assert embedder.pieces(TEXTS) == [t.pieces for t in vectors]
    for a, b in zip(got, expected):
        assert a.vectors.shape == b.vectors.shape == (len(a.pieces), 384)
        assert float((a.vectors * b.vectors).sum(axis=1).min()) >= 0.999

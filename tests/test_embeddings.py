"""The embedding model's batches: small on a CPU (fastest on two cores), large on a GPU, or as set."""

from __future__ import annotations

from policybot.models.embeddings import CPU_BATCH, Embedder
from policybot.models.profiles import EMBEDDING_MODELS
from tests.conftest import make_settings


def _lite_model():
    return next(m for m in EMBEDDING_MODELS.values() if "MiniLM" in m.hf_id)


def test_the_batch_size_follows_the_device_unless_set(tmp_path):
    auto = Embedder(_lite_model(), make_settings(tmp_path / "home", device="cpu"))
    auto.warm_up()
    assert auto.batch_size == CPU_BATCH == 8
    chosen = Embedder(_lite_model(), make_settings(tmp_path / "home", device="cpu", embed_batch_size=16))
    chosen.warm_up()
    assert chosen.batch_size == 16
    vectors = auto.embed(["Escape of water means water escaping from a fixed installation."] * 3)
    assert vectors.shape == (3, auto.dimension)

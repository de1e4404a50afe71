"""The embedding model's batches: small on a CPU (fastest on two cores), large on a GPU, or as set;
and one model shared by threads (Streamlit sessions, an ingest beside questions)."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

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


def test_counting_tokens_in_one_thread_never_breaks_a_batch_encoded_in_another(tmp_path):
    """Ingestion counts tokens (no padding) while visitors' questions are embedded (padded
    batches), all on one model: the tokenizer's state must never leak from one call into the other."""
    embedder = Embedder(_lite_model(), make_settings(tmp_path / "home", device="cpu", embedding_backend="torch"))
    words = "we will pay for damage caused by water escaping from a fixed pipe unless gradual".split()
    rng = random.Random(7)
    long_texts = [" ".join(rng.choice(words) for _ in range(rng.randint(300, 900))) for _ in range(8)]
    batches = [[" ".join(words[: rng.randint(2, len(words))]) for _ in range(6)] for _ in range(12)]
    counts, pieces = embedder.count_tokens(long_texts), embedder.pieces(long_texts[:2])
    serial = [embedder.embed(batch) for batch in batches]
    done, errors = threading.Event(), []

    def count() -> None:
        while not done.is_set():
            try:
                assert embedder.count_tokens(long_texts) == counts
                assert embedder.pieces(long_texts[:2]) == pieces
            except Exception as exc:  # reported below
                errors.append(exc)

    def encode(share: list[list[str]]) -> list[np.ndarray]:
        return [embedder.embed(batch) for batch in share]

    counters = [threading.Thread(target=count) for _ in range(2)]
    for thread in counters:
        thread.start()
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            halves = list(pool.map(encode, [batches[0::2], batches[1::2]]))
    finally:
        done.set()
        for thread in counters:
            thread.join()
    assert not errors, errors[:1]
    together = [v for pair in zip(*halves) for v in pair]
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(serial, together))

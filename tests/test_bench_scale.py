"""The scale benchmark's own parts (eval/bench_scale.py, eval/scale_corpus.py): generated policies
are distinct, valid PDFs with the expected headings, and the vector cache spares the model."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pymupdf

EVAL = Path(__file__).resolve().parents[1] / "eval"
sys.path.insert(0, str(EVAL))

import bench_scale  # noqa: E402
import scale_corpus  # noqa: E402


def shingles(text: str, n: int = 8) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n)}


def test_generated_policies_are_distinct_valid_pdfs(tmp_path: Path) -> None:
    paths = [scale_corpus.generated_pdf(i, seed=7, cache=tmp_path) for i in range(2)]
    texts, tocs = [], []
    for path in paths:
        with pymupdf.open(path) as doc:
            assert doc.is_pdf and 12 <= doc.page_count <= 30
            texts.append("\n".join(page.get_text() for page in doc))
            tocs.append([title for _, title, _ in doc.get_toc()])
            assert doc.metadata["title"] and doc.metadata["author"]
    assert texts[0] != texts[1]
    a, b = shingles(texts[0]), shingles(texts[1])
    assert len(a & b) / len(a | b) < 0.7  # not near-duplicates (same template, other wording)
    source = shingles(scale_corpus.SOURCE.read_text())
    assert all(len(s & source) / len(s | source) < 0.7 for s in (a, b))
    for toc, text in zip(tocs, texts):
        level1 = [t for t in toc if re.match(r"(Section|Part|Chapter) \d+ ", t)]
        assert len(level1) >= 10  # every numbered section is bookmarked ...
        assert any("About this policy" == t for t in toc)
        assert sum(bool(re.match(r"\d+\.\d+ ", t)) for t in toc) > 100  # ... and its clauses
        numbers = {t.split(" ", 1)[0] for t in toc if re.match(r"\d+\.\d+ ", t)}
        refs = set(re.findall(r"\bclauses? (\d+\.\d+)", " ".join(text.split())))
        assert refs and refs <= numbers, refs - numbers  # cross-references follow the renumbering
    # Names and numbers vary too.
    g0, g1 = scale_corpus.generate(0, 7), scale_corpus.generate(1, 7)
    assert (g0.insurer, g0.product) != (g1.insurer, g1.product)
    assert g0.insurer in texts[0] and "Hearthstone" not in texts[0]


def test_generation_is_deterministic(tmp_path: Path) -> None:
    assert scale_corpus.generate(3, 5).markdown == scale_corpus.generate(3, 5).markdown
    one = scale_corpus.generated_pdf(3, seed=5, cache=tmp_path / "a")
    two = scale_corpus.generated_pdf(3, seed=5, cache=tmp_path / "b")
    assert one.read_bytes() == two.read_bytes()


class FakeModel:
    hf_id = "fake/model"


class FakeEmbedder:
    def __init__(self) -> None:
        self.model = FakeModel()
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


def test_vector_cache_spares_the_model(tmp_path: Path) -> None:
    texts = ["alpha clause", "beta clause", "gamma"]
    embedder = FakeEmbedder()
    cache = bench_scale.VectorCache(tmp_path / "vectors.sqlite")
    stats = bench_scale.install_vector_cache(embedder, cache)
    first = embedder.embed(texts)
    assert len(embedder.calls) == 1 and stats.misses == 3
    second = embedder.embed(texts)
    assert len(embedder.calls) == 1 and stats.hits == 3  # no model call the second time
    np.testing.assert_array_equal(first, second)
    mixed = embedder.embed(["gamma", "delta"])
    assert embedder.calls[-1] == ["delta"]  # only the new text goes to the model
    np.testing.assert_array_equal(mixed[0], first[2])
    cache.close()
    # Another process (a repeat run) finds them on disk; another model does not.
    fresh = FakeEmbedder()
    bench_scale.install_vector_cache(fresh, bench_scale.VectorCache(tmp_path / "vectors.sqlite"))
    np.testing.assert_array_equal(fresh.embed(texts), first)
    assert fresh.calls == []
    other = FakeEmbedder()
    other.model.hf_id = "other/model"
    bench_scale.install_vector_cache(
        other, bench_scale.VectorCache(tmp_path / "vectors.sqlite"), model_id="other/model"
    )
    other.embed(texts)
    assert len(other.calls) == 1
    bench_scale.uninstall_vector_cache(fresh)
    fresh.embed(["x"])
    assert fresh.calls == [["x"]]


def test_build_summary_splits_cached_and_uncached() -> None:
    rec = {"status": "ingested", "pages": 10, "parse": 1.0, "chunk": 0.1, "embed": 5.0, "index": 0.5, "other": 0.1}
    records = [
        dict(rec, name="a", chunks=100, seconds=6.7, hits=0, misses=100),
        dict(rec, name="b", chunks=100, seconds=1.7, embed=0.01, hits=100, misses=0),
    ]
    summary = bench_scale.summarise_build(records)
    assert summary["uncached"]["documents"] == 1 and summary["cached"]["documents"] == 1
    assert summary["uncached"]["chunks_per_s"] < summary["cached"]["chunks_per_s"]
    assert summary["all"]["chunks"] == 200

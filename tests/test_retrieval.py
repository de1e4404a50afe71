"""Hybrid search: dense + BM25 fused with RRF, scoped to documents, persisted BM25."""

import json

import pytest

from policybot.lexical import LexicalIndex, Tokenizer
from policybot.retrieval import RankFusion
from policybot.service import PolicyBot, PolicyBotError
from tests import pdfs
from tests.conftest import make_settings


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    root = tmp_path_factory.mktemp("search")
    bot = PolicyBot(make_settings(root / "home"))
    policy = pdfs.sample_policy(root / "acme-home.pdf")
    travel = pdfs.simple_pdf(
        root / "travel.pdf",
        [
            "Lost luggage is covered up to five hundred dollars per trip.",
            "Medical emergencies abroad are covered up to one million dollars.",
        ],
        heading="Section 1 Travel Cover",
    )
    assert not bot.ingest([policy, travel]).failed
    return bot


def test_rrf_sums_reciprocal_ranks():
    fused = RankFusion(k=60).run({"dense": [("a", 0.9), ("b", 0.8)], "lexical": [("b", 7.0), ("c", 3.0)]})
    assert [f.chunk_id for f in fused] == ["b", "a", "c"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0].ranks == {"dense": 2, "lexical": 1}
    assert fused[1].score == pytest.approx(1 / 61)


def test_rrf_weights_and_k():
    fused = RankFusion(k=1).run({"x": [("a", 1.0)], "y": [("b", 1.0)]}, weights={"y": 2.0})
    assert [f.chunk_id for f in fused] == ["b", "a"]
    assert fused[0].score == pytest.approx(1.0)


def test_tokenizer_stems_and_drops_stopwords():
    # "not" is kept on purpose: "is not covered" and "is covered" must not look alike.
    assert Tokenizer()("The deductibles are not covered") == ["deduct", "not", "cover"]


def test_search_finds_the_clause_with_page_and_section(library):
    response = library.search("What is the definition of an Insured Person?", k=5)
    top = response.hits[0]
    assert top.doc == "acme-home.pdf"
    assert top.section == "Section 1 Definitions > 1.1 Insured Person"
    assert (top.page_start, top.page_end) == (1, 1)
    assert top.citation == "acme-home.pdf (Section 1 Definitions > 1.1 Insured Person), p.1"
    assert [h.rank for h in response.hits] == list(range(1, len(response.hits) + 1))
    assert all(a.score >= b.score for a, b in zip(response.hits, response.hits[1:]))


def test_exact_terms_come_from_bm25(library):
    hits = library.search("Richter scale earthquake extension", k=3).hits
    assert hits[0].section.endswith("2.2 Earthquake damage")
    assert hits[0].lexical_rank == 1
    assert hits[0].page_start == 2 and hits[0].page_end in (2, 3)


def test_table_rows_are_searchable(library):
    hits = library.search("escape of water deductible for buildings", k=5).hits
    table = next(h for h in hits if h.kind == "table")
    assert "$750" in table.text and table.page_start == 3


def test_scope_limits_documents(library):
    hits = library.search("what is covered", k=10, docs=["travel.pdf"]).hits
    assert hits and {h.doc for h in hits} == {"travel.pdf"}
    with pytest.raises(PolicyBotError, match="not indexed: nope.pdf"):
        library.search("luggage", docs=["nope.pdf"])
    with pytest.raises(PolicyBotError, match="empty"):
        library.search("   ")


def test_json_schema_is_stable(library):
    data = json.loads(library.search("luggage", k=2).model_dump_json())
    assert data["schema_version"] == "1"
    assert set(data["hits"][0]) >= {"rank", "doc", "title", "section", "page_start", "page_end", "score", "text", "chunk_id"}


def test_search_with_nothing_indexed_says_what_to_do(tmp_path):
    with pytest.raises(PolicyBotError, match="policybot ingest"):
        PolicyBot(make_settings(tmp_path / "empty")).search("anything")


def test_lexical_index_is_persisted_and_reloaded(tmp_path):
    folder = tmp_path / "lex"
    built = []
    index = LexicalIndex(folder)
    chunks = [("d1:00000", "flood damage to the basement"), ("d1:00001", "fire and smoke damage")]
    index.ensure(1, lambda: built.append(1) or chunks)
    assert index.search("basement flooding", 5)[0][0] == "d1:00000"
    reloaded = LexicalIndex(folder)
    reloaded.ensure(1, lambda: built.append(2) or chunks)
    assert built == [1]  # loaded from disk, not rebuilt
    assert reloaded.search("smoke", 5)[0][0] == "d1:00001"
    assert reloaded.search("smoke", 5, allowed_docs={"other"}) == []
    reloaded.ensure(2, lambda: built.append(3) or chunks[:1])  # a newer generation rebuilds
    assert built == [1, 3] and reloaded.search("smoke", 5) == []

"""Hybrid search: dense + BM25 fused with RRF, scoped to documents, persisted BM25."""

import json

import numpy as np
import pytest

from policybot.answer.retrieval import (
    ListKey,
    RankFusion,
    beyond_chance,
    blended,
    in_order_of,
    naming_is_topic,
    without_direction,
)
from policybot.core.rows import doc_of
from policybot.service import PolicyBot, PolicyBotError
from policybot.store.lexical import LexicalIndex, Tokenizer
from tests import pdfs
from tests.conftest import make_settings, supply_contracts


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
    assert top.citation == "Acme Home Insurance Policy · 1.1 Insured Person · p.1"
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
    assert set(data["hits"][0]) >= {
        "rank",
        "doc",
        "title",
        "section",
        "page_start",
        "page_end",
        "score",
        "text",
        "chunk_id",
    }


def test_search_with_nothing_indexed_says_what_to_do(tmp_path):
    with pytest.raises(PolicyBotError, match="policybot ingest"):
        PolicyBot(make_settings(tmp_path / "empty")).search("anything")


def _docs(chunks):
    """A registry stand-in: documents with signatures, and each one's chunks."""
    by_doc = {}
    for cid, text in chunks:
        by_doc.setdefault(cid.split(":")[0], []).append((cid, text))
    return (lambda: {d: f"sig-{len(c)}" for d, c in by_doc.items()}), (lambda d: by_doc[d])


def test_lexical_index_is_persisted_and_reloaded(tmp_path):
    folder = tmp_path / "lex"
    built = []
    chunks = [
        ("d1:00000", "flood damage to the basement"),
        ("d1:00001", "fire and smoke damage"),
        ("d2:00000", "theft of a bicycle"),
    ]
    documents, chunks_of = _docs(chunks)
    index = LexicalIndex(folder)
    index.ensure(1, documents, lambda d: built.append(d) or chunks_of(d))
    assert index.search("basement flooding", 5)[0][0] == "d1:00000"
    assert sorted(built) == ["d1", "d2"]
    reloaded = LexicalIndex(folder)
    reloaded.ensure(1, documents, lambda d: built.append(d) or chunks_of(d))
    assert sorted(built) == ["d1", "d2"]  # read from disk, not tokenised again
    assert reloaded.search("smoke", 5)[0][0] == "d1:00001"
    assert reloaded.search("smoke", 5, allowed_docs={"other"}) == []
    # d2 deleted, d3 added: only d3 is tokenised, d2's shard goes from memory and disk.
    after = chunks[:2] + [("d3:00000", "smoke alarm batteries")]
    documents2, chunks_of2 = _docs(after)
    reloaded.ensure(2, documents2, lambda d: built.append(d) or chunks_of2(d))
    assert sorted(built) == ["d1", "d2", "d3"]
    assert reloaded.search("bicycle", 5) == [] and not (folder / "d2.npz").exists()
    assert {cid for cid, _ in reloaded.search("smoke", 5)} == {"d1:00001", "d3:00000"}
    assert sorted(reloaded.chunk_ids()) == ["d1:00000", "d1:00001", "d3:00000"]


def test_the_share_of_passages_that_use_a_word_is_counted_over_the_documents_searched(tmp_path):
    chunks = [
        ("d1:00000", "We will pay for subsidence damage to the Buildings."),
        ("d1:00001", "We will pay the cost of repairs."),
        ("d1:00002", "Payments are made within 10 days."),
        ("d2:00000", "Subsidence is excluded."),
    ]
    documents, chunks_of = _docs(chunks)
    index = LexicalIndex(tmp_path / "lex")
    index.ensure(1, documents, chunks_of)
    assert index.share_using("subsidence", ["d1"]) == pytest.approx(1 / 3)
    assert index.share_using("Subsidence", ["d1", "d2"]) == pytest.approx(2 / 4)
    assert index.share_using("pays", ["d1"]) == pytest.approx(2 / 3)  # by its stem: "pay", not "payments"
    assert index.share_using("flood", ["d1", "d2"]) == 0.0
    assert index.share_using("the", ["d1"]) == 1.0  # a stopword: BM25 reads it nowhere, every passage holds it
    assert index.share_using("subsidence", ["gone"]) == 0.0


def test_incremental_bm25_scores_equal_a_whole_corpus_bm25s_index(tmp_path):
    import bm25s

    texts = [
        "We will cover loss or damage caused by Escape of Water from a fixed installation.",
        "A Deductible of $750 applies to every claim for Escape of Water.",
        "Flood means a general and temporary condition of partial or complete inundation.",
        "We will not pay for damage caused by wear and tear or gradual deterioration.",
        "You must tell us within 30 days about any claim; water damage claims need a plumber's report.",
        "",
    ]
    chunks = [(f"d{i % 3}:{i:05d}", t) for i, t in enumerate(texts)]
    documents, chunks_of = _docs(chunks)
    index = LexicalIndex(tmp_path / "lex", Tokenizer())
    index.ensure(1, documents, chunks_of)
    reference = bm25s.BM25()
    tokenizer = Tokenizer()
    reference.index([tokenizer(t) or ["\u2205"] for _, t in chunks], show_progress=False)
    for query in ["escape of water deductible", "water water damage claim", "flood", "gradual wear", "spaceship"]:
        tokens = tokenizer(query)
        ids, scores = reference.retrieve([tokens], k=len(chunks), show_progress=False) if tokens else ([[]], [[]])
        expected = [(chunks[int(i)][0], float(s)) for i, s in zip(ids[0], scores[0]) if s > 0]
        got = index.search(query, len(chunks))
        assert [c for c, _ in got] == [c for c, _ in expected] or sorted(got) == pytest.approx(sorted(expected)), query
        assert dict(got) == pytest.approx(dict(expected), rel=1e-5), query


def test_a_scoped_search_returns_k_from_the_chosen_document(tmp_path):
    chunks = [(f"big:{i:05d}", f"water damage clause {i}") for i in range(200)] + [
        (f"small:{i:05d}", f"water clause {i}") for i in range(5)
    ]
    documents, chunks_of = _docs(chunks)
    index = LexicalIndex(tmp_path / "lex")
    index.ensure(1, documents, chunks_of)
    hits = index.search("water damage", 5, allowed_docs={"small"})
    assert len(hits) == 5 and all(c.startswith("small:") for c, _ in hits)


def test_dense_search_over_most_of_the_library_skips_the_filter_but_keeps_the_scope(tmp_path):
    """Unfiltered nearest-neighbour query when the scope is most of the library (Chroma's filter
    grows with the collection), with the scope still respected and never starved."""
    bot = PolicyBot(make_settings(tmp_path / "home"))
    twins = [pdfs.sample_policy(tmp_path / f"acme-{name}.pdf") for name in ("a", "b", "c")]
    assert not bot.ingest(twins).failed
    docs = {d.name: d.doc_id for d in bot.components.index.documents()}
    store, vector = bot.components.index.store, bot.components.embedder.embed_query("wear and tear")
    calls = []
    real = store.collection.query
    store.collection.query = lambda **kw: calls.append("where" in kw) or real(**kw)
    two = [docs["acme-a.pdf"], docs["acme-b.pdf"]]
    hits = store.query(vector, 10, two, library_docs=3)
    assert len(hits) == 10 and {c.split(":")[0] for c, _ in hits} <= set(two)
    assert calls[0] is False  # unfiltered first
    calls.clear()
    one = store.query(vector, 10, [docs["acme-c.pdf"]], library_docs=3)
    assert calls == [True] and {c.split(":")[0] for c, _ in one} == {docs["acme-c.pdf"]}
    # Same ranking as the filtered query.
    filtered = store.query(vector, 10, two)
    assert [c for c, _ in hits] == [c for c, _ in filtered]


@pytest.fixture(scope="module")
def contracts(tmp_path_factory):
    """Two agreements whose every passage names their parties, as real contracts do."""
    return supply_contracts(tmp_path_factory.mktemp("contracts"))


def test_a_named_document_is_favoured_not_filtered(contracts):
    c = contracts.components
    docs = c.index.documents()
    ids = [d.doc_id for d in docs]
    question = "Which state's laws govern our supply agreement with Zenbo?"
    [named] = c.name_documents(question, docs)
    assert named.doc.name == "acme-zenbo-supply.pdf"
    lists = c.retriever.lists(question, ids, named=[named])
    hybrid, plain = lists[ListKey("hybrid")], lists[ListKey("plain")]
    assert {cid for cid, _ in hybrid} == {cid for cid, _ in plain}  # the same passages, reordered
    assert {doc_of(cid) for cid, _ in hybrid} == set(ids)  # the other agreement is still searched
    rows = c.registry.chunks(c.index.collection, [hybrid[0][0]])
    top = rows[hybrid[0][0]]
    assert top.doc_id == named.doc.doc_id and "Delaware" in top.text  # ranked by "laws govern", not by "Zenbo"


def test_without_a_name_nothing_is_favoured(contracts):
    ids = [d.doc_id for d in contracts.components.index.documents()]
    lists = contracts.components.retriever.lists("Which state's laws govern the agreement?", ids)
    assert ListKey("plain") not in lists


def test_a_rewrite_counts_as_far_as_it_agrees_with_the_question():
    from policybot.answer.retrieval import fusion_weights

    own = [(f"c{i}", 1.0) for i in range(20)]
    lists = {
        ListKey("hybrid", 0): own,
        ListKey("hybrid", 1): [(f"c{i}", 1.0) for i in range(10)],  # finds what the question finds
        ListKey("hybrid", 2): [(f"x{i}", 1.0) for i in range(10)],  # a confused rewrite: other passages
        ListKey("hybrid", 3): [("c1", 1.0), ("x1", 1.0)],
        ListKey("clause"): [("c5", 1.0)],
    }
    weights = fusion_weights(lists, 4.0, planned=True, anchor=own)
    assert weights == {
        ListKey("hybrid", 0): 4.0,
        ListKey("hybrid", 1): 1.0,
        ListKey("hybrid", 2): 0.0,
        ListKey("hybrid", 3): 0.5,
        ListKey("clause"): 4.0,
    }
    assert fusion_weights(lists, 4.0, planned=False)[ListKey("hybrid", 2)] == 1.0  # the first pass again


def test_expansions_never_push_out_what_the_question_found():
    from policybot.answer.pipeline import _keep_own_order
    from policybot.answer.retrieval import Fused

    own = [("a", 9.0), ("b", 8.0), ("c", 7.0)]
    expanded = [Fused("x", 0.5), Fused("b", 0.4), Fused("y", 0.3), Fused("a", 0.2), Fused("c", 0.1)]
    kept = _keep_own_order(expanded, own)
    assert [f.chunk_id for f in kept] == ["a", "x", "b", "c", "y"]  # none lower than the question ranked it
    assert [f.score for f in kept] == [0.5, 0.4, 0.3, 0.2, 0.1]  # scores still fall with the rank


@pytest.fixture(scope="module")
def sectioned_contracts(tmp_path_factory):
    """Two agreements in numbered clauses; each preamble names its parties and its kind of agreement."""
    root = tmp_path_factory.mktemp("sectioned")
    bot = PolicyBot(make_settings(root / "home"))
    for stem, party in (("acme-zenbo-supply", "Zenbo"), ("acme-orlix-distribution", "Orlix")):
        b = pdfs.PdfBuilder()
        kind = "Supply Agreement" if party == "Zenbo" else "Distribution Agreement"
        b.heading(kind.upper())
        clauses = [
            ("1. Parties", f"This {kind} is made between Acme Corp and {party} Industries Ltd, together the parties."),
            ("2. Delivery", "Goods shall be delivered within thirty days of each written purchase order."),
            ("3. Governing Law", "This Agreement is governed by the laws of the State of Delaware."),
            ("4. Assignment", "Neither party may assign this Agreement without written consent."),
        ]
        for title, text in clauses:
            b.heading(title, level=2)
            b.paragraph(text)
        assert bot.ingest_file(b.save(root / f"{stem}.pdf")).status == "ingested"
    return bot


def test_a_named_document_s_passages_are_ranked_by_what_the_question_asks_not_by_its_name(sectioned_contracts):
    """ "What law governs our supply agreement with Zenbo Industries?": whole, the question's vector is
    nearest to what names the agreement (its title, its preamble); turned away from its naming words
    ("supply agreement Zenbo Industries"), the dense list leads with the governing-law clause
    (``Settings.naming_direction``: record 2026-11-27-naming-direction)."""
    c = sectioned_contracts.components
    docs = c.index.documents()
    ids = [d.doc_id for d in docs]
    question = "What law governs our supply agreement with Zenbo Industries?"
    [named] = c.name_documents(question, docs)

    def first_dense(direction: bool) -> tuple[str, float]:
        default, c.retriever.naming_direction = c.retriever.naming_direction, direction
        try:
            top, score = c.retriever.lists(question, ids, named=[named])[ListKey("dense")][0]
        finally:
            c.retriever.naming_direction = default
        return c.registry.chunks(c.index.collection, [top])[top].text, score

    turned, level = first_dense(True)
    assert "laws of the State of Delaware" in turned
    whole, whole_level = first_dense(False)  # the title line or the preamble: what names the agreement
    assert "supply agreement" in whole.lower() and "Delaware" not in whole
    # Only the order changes: the list keeps the whole question's cosines, which the probes, the
    # bands and the expansion gate were measured against.
    assert level == whole_level


def test_title_words_name_no_contract_that_never_writes_the_party_the_question_names(tmp_path):
    """ "Who owns the intellectual property created under our supply agreement with Zenbo?" named the
    intellectual-property agreement with Orlix by half its title's words, favoured it and searched
    without "intellectual property"; the answer quoted Orlix's ownership clause (cuad-106, Philips)."""
    bot = PolicyBot(make_settings(tmp_path / "home"))
    for stem, kind, party, owner in (
        ("acme-zenbo-supply", "Supply Agreement", "Zenbo", "Acme Corp"),
        ("acme-orlix-intellectual-property", "Intellectual Property Agreement", "Orlix", "Orlix Labs"),
    ):
        b = pdfs.PdfBuilder()
        b.heading(kind.upper())
        b.heading("1. Parties", level=2)
        b.paragraph(f"This {kind} is made between Acme Corp and {party} Labs, together the parties.")
        b.heading("2. Ownership", level=2)
        b.paragraph(f"All intellectual property created under this Agreement is owned by {owner} alone.")
        b.heading("3. Governing Law", level=2)
        b.paragraph("This Agreement is governed by the laws of the State of Delaware.")
        assert bot.ingest_file(b.save(tmp_path / f"{stem}.pdf")).status == "ingested"
    c = bot.components
    docs = c.index.documents()
    question = "Who owns the intellectual property created under our supply agreement with Zenbo?"
    assert [n.doc.name for n in c.name_documents(question, docs)] == ["acme-zenbo-supply.pdf"]
    first = bot.ask(question).citations[0]
    assert first.doc == "acme-zenbo-supply.pdf" and "owned by Acme Corp" in first.text, first
    # The Orlix agreement is still named by its title words where the question gives no other name.
    assert [n.doc.name for n in c.name_documents("Under the intellectual property agreement, who owns it?", docs)] == [
        "acme-orlix-intellectual-property.pdf"
    ]


def test_naming_words_that_are_the_topic_count_for_more_than_a_party_s_name(sectioned_contracts):
    """The turned order counts as far as the naming words are not what is asked (``naming_is_topic``,
    the packaged model's vectors): a party's name beside "What law governs" is unrelated to it, so
    the turned order leads; "intellectual property agreement" beside "Who owns the inventions" is
    the question's topic, so the whole question's order leads."""
    embed = sectioned_contracts.components.retriever.dense.embedder.embed_query
    name = naming_is_topic(embed("supply agreement Zenbo Industries"), embed("What law governs our with ?"))
    topic = naming_is_topic(embed("intellectual property agreement"), embed("Who owns the inventions made under our ?"))
    assert 0.0 <= name < topic / 2
    assert topic <= 1.0


def test_two_rankings_blend_by_their_weight():
    first = [("a", 0.9), ("b", 0.6), ("d", 0.1)]
    second = [("b", 0.8), ("c", 0.7), ("a", 0.2)]
    assert [cid for cid, _ in blended(first, second, 1.0)][:2] == ["a", "b"]
    assert [cid for cid, _ in blended(first, second, 0.0)][:2] == ["b", "c"]
    # An even blend: a chunk one list lacks takes that list's lowest score (c: (.1 + .7) / 2).
    even = blended(first, second, 0.5)
    assert [cid for cid, _ in even] == ["b", "a", "c", "d"]
    assert [score for _, score in even] == pytest.approx([0.7, 0.55, 0.4, 0.15])


def test_a_ranking_in_another_order_keeps_its_scores():
    order = [("c", 0.2), ("a", 0.1), ("d", 0.05)]
    scale = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    assert in_order_of(order, scale) == [("c", 0.9), ("a", 0.8), ("d", 0.7)]
    assert in_order_of(order, []) == []


def test_a_vector_turned_from_a_direction_is_orthogonal_to_it_and_unit_length():
    rng = np.random.default_rng(0)
    vector, away = rng.normal(size=8), rng.normal(size=8)
    vector /= np.linalg.norm(vector)
    turned = without_direction(vector, away)
    assert abs(float(turned @ away)) < 1e-9 and abs(float(np.linalg.norm(turned)) - 1) < 1e-9
    assert np.array_equal(without_direction(vector, 2 * vector), vector)  # nothing left: unchanged


def test_agreement_counts_only_beyond_what_chance_puts_in_the_other_list():
    """Of 140 passages, a best 20 holds 1 in 7 of any list's passages by chance; of 13, all of them."""
    assert beyond_chance(1.0, 20, 140) == 1.0
    assert beyond_chance(1 / 7, 20, 140) == pytest.approx(0.0)
    assert beyond_chance(0.5, 20, 140) == pytest.approx((0.5 - 1 / 7) / (6 / 7))
    assert beyond_chance(0.1, 20, 140) == 0.0
    assert beyond_chance(1.0, 13, 13) == 0.0  # a 13-passage wording: every list "agrees" with its best 20
    assert beyond_chance(1.0, 0, 0) == 0.0

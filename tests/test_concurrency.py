"""Streamlit reruns every browser session in its own thread, all sharing one PolicyBot: the
embedder, Chroma, the BM25 index and the registry's SQLite connection are called at once.
These tests run questions from several threads while a document is being ingested."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import SAMPLE_POLICY, make_settings

QUESTIONS = [
    "How does the deductible apply to water damage?",
    "Is wear-and-tear covered under the policy?",
    "What is the definition of an 'Insured Person'?",
    "Are legal fees included in the coverage?",
]


def test_questions_from_many_threads_while_a_document_is_ingested(tmp_path):
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off"))
    assert not bot.ingest([SAMPLE_POLICY]).failed
    extra = [pdfs.sample_policy(tmp_path / f"acme-{i}.pdf") for i in range(2)]
    started, errors = threading.Event(), []

    def ingest() -> None:
        started.set()
        try:
            report = bot.ingest(extra)
            assert not report.failed, [o.message for o in report.failed]
        except Exception as exc:  # reported below with the others
            errors.append(exc)

    def ask(question: str) -> tuple[str, int]:
        answer = bot.ask(question, use_llm=False)
        hits = bot.search(question, k=5)
        evidence = bot.evidence("escape of water", use_llm=False)
        return answer.mode, len(hits.hits) + len(evidence.rows)

    writer = threading.Thread(target=ingest)
    writer.start()
    started.wait()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(ask, QUESTIONS * 3))
    writer.join()
    assert not errors
    assert all(mode in {"extractive", "refused"} for mode, _ in results)
    assert all(n > 0 for _, n in results)
    # Afterwards the library is whole: every document's chunks are searchable by BM25 and by vectors.
    docs = bot.library.documents().documents
    assert len(docs) == 3
    lexical = bot.components.index.lexical_ready().chunk_ids()
    assert len(lexical) == sum(d.chunks for d in docs) == len(set(lexical))
    assert {h.doc for h in bot.search("wear and tear", k=30).hits} >= {
        d.name for d in docs if d.name.startswith("acme-")
    }


def test_caches_of_earlier_library_generations_are_dropped(tmp_path):
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off"))
    assert not bot.ingest([SAMPLE_POLICY]).failed
    bot.ask("What is the definition of an 'Insured Person'?", use_llm=False)
    names_before = [k for k in bot.components._built if k.startswith("names@")]
    assert len(names_before) == 1
    assert not bot.ingest([pdfs.sample_policy(tmp_path / "acme.pdf")]).failed
    bot.ask("What is the definition of an 'Insured Person'?", use_llm=False)
    names_after = [k for k in bot.components._built if k.startswith("names@")]
    assert len(names_after) == 1 and names_after != names_before


def test_a_serving_process_prepares_the_changed_library_in_the_background(tmp_path):
    """After an ingest or a delete, the app's next question finds this generation's BM25 shards
    and library-wide calibration built already; a one-shot CLI run builds nothing extra."""
    cli = PolicyBot(make_settings(tmp_path / "cli", llm_mode="off"))
    assert not cli.ingest([SAMPLE_POLICY]).failed
    assert cli.preparing is None

    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off"))
    bot.warm_up_in_background().wait(120)
    for change in (
        lambda: bot.ingest([SAMPLE_POLICY]),
        lambda: bot.ingest([pdfs.sample_policy(tmp_path / "acme.pdf")]),
        lambda: bot.delete("acme.pdf"),
    ):
        change()
        assert bot.preparing is not None
        bot.preparing.join(120)
        generation = bot.components.registry.generation(bot.components.index.collection)
        built = [k for k in bot.components._built if k.startswith("lexical-probes:")]
        assert len(built) == 1 and built[0].endswith(f"@{generation}")  # this generation's, the old one dropped
    answer = bot.ask("What is the definition of an 'Insured Person'?", use_llm=False)
    assert answer.citations and [k for k in bot.components._built if k.startswith("lexical-probes:")] == built

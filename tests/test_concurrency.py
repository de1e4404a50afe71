"""Streamlit reruns every browser session in its own thread, all sharing one PolicyBot: the
embedder, Chroma, the BM25 index and the registry's SQLite connection are called at once.
These tests run questions from several threads while a document is being ingested."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import NO_OLLAMA, SAMPLE_POLICY, make_settings, sample_home

QUESTIONS = [
    "How does the deductible apply to water damage?",
    "Is wear-and-tear covered under the policy?",
    "What is the definition of an 'Insured Person'?",
    "Are legal fees included in the coverage?",
]


def _one_paragraph(folder):
    """A one-page document to change a library with: any ingest or delete makes a new generation."""
    return pdfs.simple_pdf(folder / "bikes.pdf", ["The excess for bicycles is fifty dollars."], heading="Bicycles")


def test_questions_from_many_threads_while_a_document_is_ingested(tmp_path):
    bot = PolicyBot(make_settings(sample_home(tmp_path / "home"), llm_mode="off"))
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
    bot = PolicyBot(make_settings(sample_home(tmp_path / "home"), llm_mode="off"))
    bot.ask("What is the definition of an 'Insured Person'?", use_llm=False)
    names_before = [k for k in bot.components._built if k.startswith("names@")]
    assert len(names_before) == 1
    assert not bot.ingest([_one_paragraph(tmp_path)]).failed  # any change makes a new generation
    bot.ask("What is the definition of an 'Insured Person'?", use_llm=False)
    names_after = [k for k in bot.components._built if k.startswith("names@")]
    assert len(names_after) == 1 and names_after != names_before


def test_a_serving_process_prepares_the_changed_library_in_the_background(tmp_path):
    """After an ingest or a delete, the app's next question finds this generation's BM25 shards
    and library-wide calibration built already; a one-shot CLI run builds nothing extra."""
    small = _one_paragraph(tmp_path)
    cli = PolicyBot(make_settings(tmp_path / "cli", llm_mode="off"))
    assert not cli.ingest([small]).failed
    assert cli.preparing is None

    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off"))
    bot.warm_up_in_background().wait(120)
    for change in (
        lambda: bot.ingest([SAMPLE_POLICY]),
        lambda: bot.ingest([small]),
        lambda: bot.delete("bikes.pdf"),
    ):
        change()
        assert bot.preparing is not None
        bot.preparing.join(120)
        generation = bot.components.registry.generation(bot.components.index.collection)
        built = [k for k in bot.components._built if k.startswith("lexical-probes:")]
        assert len(built) == 1 and built[0].endswith(f"@{generation}")  # this generation's, the old one dropped
    answer = bot.ask("What is the definition of an 'Insured Person'?", use_llm=False)
    assert answer.citations and [k for k in bot.components._built if k.startswith("lexical-probes:")] == built


# --- several processes on one library (issue 23) ---------------------------------------------------


def _cli(home, *args: str) -> subprocess.Popen:
    env = dict(os.environ, HF_HUB_OFFLINE="1", POLICYBOT_PROFILE="lite", OLLAMA_HOST=NO_OLLAMA)
    command = [sys.executable, "-m", "policybot.cli", "--home", str(home), *args]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_a_running_process_finds_what_another_process_added(tmp_path):
    """`policybot ingest` beside a running app: the app's next search finds the new document by
    meaning too (its vector store is reopened), not only by words."""
    bikes = pdfs.simple_pdf(
        tmp_path / "bikes.pdf", ["The excess for bicycles is fifty dollars per claim."], heading="Section 1 Bicycles"
    )
    boats = pdfs.simple_pdf(
        tmp_path / "boats.pdf",
        ["Sailing boats are covered up to ten thousand dollars while moored in a marina."],
        heading="Section 1 Boats",
    )
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off"))
    assert bot.ingest_file(bikes).status == "ingested"
    assert [h.doc for h in bot.search("bicycle excess", k=3).hits] == ["bikes.pdf"]
    other = _cli(tmp_path / "home", "ingest", str(boats))
    assert other.wait(timeout=300) == 0, other.stdout.read() if other.stdout else ""
    [first, *_] = bot.search("sailing boat moored in a marina", k=3).hits
    assert first.doc == "boats.pdf" and first.dense_rank == 1, first
    assert bot.ask("Are sailing boats covered in a marina?", use_llm=False).shown_citations[0].doc == "boats.pdf"


def test_parallel_ingests_on_a_new_data_folder_all_succeed(tmp_path):
    """Two `policybot ingest` started at once on a folder that does not exist yet: each creates
    or opens the databases in turn (one used to fail with "database is locked")."""
    home = tmp_path / "home"
    files = [pdfs.simple_pdf(tmp_path / f"p{i}.pdf", [f"Clause {i}: the excess is {i}0 dollars."]) for i in range(2)]
    runs = [_cli(home, "ingest", str(f)) for f in files]
    outputs = [(run.wait(timeout=600), run.stdout.read() if run.stdout else "") for run in runs]
    assert all(code == 0 for code, _ in outputs), outputs
    assert sorted(d.name for d in PolicyBot(make_settings(home)).library.documents().documents) == [
        f.name for f in files
    ]

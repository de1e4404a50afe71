"""The document library: ingest, dedupe, replace, delete, and all-or-nothing ingestion."""

import shutil
from pathlib import Path

import pytest

from policybot.service import AlreadyDeleted, PolicyBot
from policybot.store.registry import Registry
from tests import pdfs
from tests.conftest import make_settings


def _state(bot: PolicyBot) -> dict:
    """Everything the index holds, to compare before and after a failure."""
    docs = bot.components.index.documents()
    return {
        "docs": sorted((d.name, d.doc_id, d.chunks) for d in docs),
        "vectors": bot.components.index.store.count(),
        "vector_docs": sorted(bot.components.index.store.doc_ids()),
        "lexical": sorted(cid for cid, _ in bot.components.registry.chunk_texts(bot.components.index.collection)),
        "files": sorted(p.name for p in (bot.settings.home / "files").glob("*")),
    }


def test_ingest_records_metadata_and_stores_the_file(bot, policy_pdf):
    report = bot.ingest([policy_pdf])
    [outcome] = report.outcomes
    assert outcome.status == "ingested" and outcome.pages == 5 and outcome.tables == 1
    assert outcome.sections == 9 and outcome.empty_pages == [4] and "4" in outcome.message
    [doc] = bot.library.documents().documents
    assert doc.name == "acme-home.pdf" and doc.title == "Acme Home Insurance Policy"
    assert doc.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert doc.chunks == bot.components.index.store.count() == outcome.chunks
    assert (bot.settings.home / "files" / f"{doc.sha256}.pdf").read_bytes() == policy_pdf.read_bytes()
    # Chunk metadata made it into both stores with the right pages.
    rows = bot.components.registry.chunks(
        bot.components.index.collection,
        [cid for cid, _ in bot.components.registry.chunk_texts(bot.components.index.collection)],
    )
    assert {r.page_start for r in rows.values()} == {1, 2, 3, 5}
    got = bot.components.index.store.collection.get(ids=list(rows)[:3], include=["metadatas"])
    for cid, meta in zip(got["ids"], got["metadatas"]):
        assert (meta["page_start"], meta["section"]) == (rows[cid].page_start, rows[cid].section)


def test_unchanged_file_is_skipped_and_duplicates_reported(bot, policy_pdf, tmp_path):
    bot.ingest([policy_pdf])
    before = _state(bot)
    again = bot.ingest([policy_pdf]).outcomes[0]
    assert again.status == "unchanged"
    copy = tmp_path / "copy-of-acme.pdf"
    shutil.copy(policy_pdf, copy)
    dup = bot.ingest([copy]).outcomes[0]
    assert dup.status == "duplicate" and "acme-home.pdf" in dup.message
    assert _state(bot) == before


def test_changed_file_replaces_its_old_chunks(bot, tmp_path):
    path = tmp_path / "terms.pdf"
    pdfs.simple_pdf(path, ["Old wording: the excess is one hundred dollars."], heading="Section 1 Excess")
    bot.ingest([path])
    old = bot.components.index.documents()[0]
    pdfs.simple_pdf(path, ["New wording: the excess is two hundred dollars."], heading="Section 1 Excess")
    outcome = bot.ingest([path]).outcomes[0]
    assert outcome.status == "replaced"
    [new] = bot.components.index.documents()
    assert new.doc_id != old.doc_id
    assert bot.components.index.store.doc_ids() == {new.doc_id}
    texts = " ".join(t for _, t in bot.components.registry.chunk_texts(bot.components.index.collection))
    assert "two hundred" in texts and "one hundred" not in texts
    assert not (bot.settings.home / "files" / f"{old.sha256}.pdf").exists()
    hits = bot.search("excess amount").hits
    assert hits and all("one hundred" not in h.text for h in hits)


def test_delete_removes_everything(bot, policy_pdf, tmp_path):
    other = pdfs.simple_pdf(tmp_path / "other.pdf", ["Travel cover for lost luggage up to five hundred dollars."])
    bot.ingest([policy_pdf, other])
    report = bot.delete("acme-home.pdf")
    assert report.deleted == 1
    assert [d.name for d in bot.components.index.documents()] == ["other.pdf"]
    [kept] = bot.components.index.documents()
    assert bot.components.index.store.doc_ids() == {kept.doc_id}
    assert all(
        cid.startswith(kept.doc_id) for cid, _ in bot.components.registry.chunk_texts(bot.components.index.collection)
    )
    assert [p.name for p in (bot.settings.home / "files").iterdir()] == [f"{kept.sha256}.pdf"]
    assert all(h.doc == "other.pdf" for h in bot.search("insured person definition").hits)
    from policybot.service import PolicyBotError

    with pytest.raises(PolicyBotError, match="no document named"):
        bot.delete("acme-home.pdf")


@pytest.mark.parametrize("fail_at", ["vectors", "registry"])
def test_failed_ingestion_leaves_index_as_before(bot, policy_pdf, tmp_path, monkeypatch, fail_at):
    first = pdfs.simple_pdf(tmp_path / "first.pdf", ["Home emergency cover pays for a plumber after a burst pipe."])
    bot.ingest([first])
    before = _state(bot)

    if fail_at == "vectors":
        real_add = bot.components.index.store.add

        def add_then_fail(ids, vectors, texts, metadatas):
            real_add(ids[:2], vectors[:2], texts[:2], metadatas[:2])  # half written, then the disk fills
            raise OSError("No space left on device")

        monkeypatch.setattr(bot.components.index.store, "add", add_then_fail)
    else:

        def replace_fails(*args, **kwargs):
            raise RuntimeError("database is locked")

        monkeypatch.setattr(Registry, "replace", replace_fails)

    later = pdfs.simple_pdf(tmp_path / "later.pdf", ["Another document about contents cover."])
    report = bot.ingest([policy_pdf, later])
    assert [o.status for o in report.outcomes] == ["failed", "failed"]
    assert report.outcomes[0].error_kind == ("disk_full" if fail_at == "vectors" else "index")  # said as what it is
    assert _state(bot) == before
    monkeypatch.undo()
    # Nothing was left half-done: the same files now ingest cleanly.
    assert [o.status for o in bot.ingest([policy_pdf]).outcomes] == ["ingested"]


def test_bad_files_fail_alone(bot, policy_pdf, scanned_pdf, encrypted_pdf, corrupt_pdf, empty_file, not_pdf):
    report = bot.ingest([scanned_pdf, encrypted_pdf, policy_pdf, corrupt_pdf, empty_file, not_pdf])
    kinds = {o.name: (o.status, o.error_kind) for o in report.outcomes}
    assert kinds == {
        "scan.pdf": ("failed", "scanned"),
        "locked.pdf": ("failed", "encrypted"),
        "acme-home.pdf": ("ingested", None),
        "broken.pdf": ("failed", "corrupt"),
        "empty.pdf": ("failed", "empty"),
        "notes.pdf": ("failed", "not_pdf"),
    }
    assert [d.name for d in bot.components.index.documents()] == ["acme-home.pdf"]
    assert next(o for o in report.outcomes if o.name == "scan.pdf").pages == 3


def test_folder_ingestion_and_progress(bot, tmp_path, policy_pdf):
    folder = tmp_path / "inbox"
    (folder / "nested").mkdir(parents=True)
    shutil.copy(policy_pdf, folder / "nested" / "a.pdf")
    pdfs.simple_pdf(folder / "b.PDF", ["Short document about motor cover."])
    (folder / "readme.txt").write_text("not a policy")
    events = []
    report = bot.ingest([folder], progress=events.append)
    assert sorted(o.name for o in report.outcomes) == ["a.pdf", "b.PDF"]
    stages = [(e.file, e.stage) for e in events]
    assert ("a.pdf", "read") in stages and ("a.pdf", "embed") in stages and stages[-1][1] == "done"
    reads = [e for e in events if e.file == "a.pdf" and e.stage == "read"]
    assert (reads[-1].done, reads[-1].total) == (5, 5)


def test_each_embedding_model_has_its_own_collection(tmp_path, policy_pdf):
    from policybot.models.profiles import PROFILES, EmbeddingModel, Profile, register_embedding, register_profile

    bot = PolicyBot(make_settings(tmp_path / "home"))
    bot.ingest([policy_pdf])
    # A second model (same weights, different registered name) must get a separate collection.
    twin = register_embedding(
        EmbeddingModel("minilm-twin", "sentence-transformers/all-MiniLM-L6-v2", 256, packaged=True)
    )
    register_profile(Profile("twin-test", twin, None, PROFILES["lite"].llm))
    try:
        from policybot.models.profiles import ResolvedProfile

        other = PolicyBot(make_settings(tmp_path / "home").model_copy(update={"profile": "lite"}))
        other.components._built["profile"] = ResolvedProfile(PROFILES["twin-test"], "twin-test", "test")
        assert other.components.index.collection != bot.components.index.collection
        assert other.components.index.documents() == []
        listing = other.library.documents()
        assert listing.documents == [] and [d.name for d in listing.other_models] == ["acme-home.pdf"]
    finally:
        PROFILES.pop("twin-test")


def test_index_survives_a_restart(tmp_path, policy_pdf):
    settings = make_settings(tmp_path / "home")
    PolicyBot(settings).ingest([policy_pdf])
    fresh = PolicyBot(settings)
    hits = fresh.search("What does Insured Person mean?", k=3).hits
    assert hits[0].section.endswith("1.1 Insured Person")


# --- hardening (issue 8) ----------------------------------------------------------------------


def test_delete_is_bound_to_the_confirmed_document(bot, tmp_path):
    """Two sessions: B confirmed 'prompt-injection.pdf', A deleted it first. B's delete must
    change nothing (it used to delete whatever the list showed by then)."""
    names = ["good.pdf", "política-ñ-测试.pdf", "prompt-injection.pdf"]
    for i, name in enumerate(names):
        bot.ingest_file(pdfs.simple_pdf(tmp_path / f"{i}.pdf", [f"Document {i} about cover number {i}."]), name=name)
    target = next(d for d in bot.library.documents().documents if d.name == "prompt-injection.pdf")
    bot.delete(target.name, sha256=target.sha256)  # session A
    with pytest.raises(AlreadyDeleted, match="already deleted"):
        bot.delete(target.name, sha256=target.sha256)  # session B, a moment later
    assert [d.name for d in bot.library.documents().documents] == names[:2]
    # Same name, new content: the confirmed (old) one is gone, so the new one stays.
    bot.ingest_file(pdfs.simple_pdf(tmp_path / "new.pdf", ["Different wording entirely."]), name="prompt-injection.pdf")
    with pytest.raises(AlreadyDeleted):
        bot.delete("prompt-injection.pdf", sha256=target.sha256)
    assert "prompt-injection.pdf" in [d.name for d in bot.library.documents().documents]


def test_concurrent_deletes_from_two_threads_delete_once(bot, tmp_path):
    import threading

    for name in ("a.pdf", "b.pdf"):
        bot.ingest_file(pdfs.simple_pdf(tmp_path / name, [f"Policy {name} covers bicycles."]), name=name)
    doc = next(d for d in bot.library.documents().documents if d.name == "a.pdf")
    results: list[str] = []

    def delete() -> None:
        try:
            bot.delete(doc.name, sha256=doc.sha256)
            results.append("deleted")
        except AlreadyDeleted:
            results.append("already deleted")

    threads = [threading.Thread(target=delete) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["already deleted", "deleted"]
    assert [d.name for d in bot.library.documents().documents] == ["b.pdf"]


def test_uploads_get_safe_names_and_are_staged_inside_the_data_folder(bot, policy_pdf, monkeypatch):
    from policybot.ingestion.pipeline import IngestPipeline

    staged: list = []
    real = IngestPipeline.run

    def spy(self, path, name=None, progress=None):
        staged.append(path)
        assert path.exists()
        return real(self, path, name, progress)

    monkeypatch.setattr(IngestPipeline, "run", spy)
    data = policy_pdf.read_bytes()
    hostile = "![x](http://127.0.0.1:8799/pixel-from-name.png) [y](javascript:alert(5)).pdf"
    outcome = bot.ingest_upload(hostile, data)
    assert outcome.status == "ingested" and outcome.name == "pixel-from-name.png y javascript alert 5.pdf"
    long = bot.ingest_upload("x" * 300 + ".pdf", b"%PDF-1.7\n" + bytes(range(256)) * 40)  # used to crash (ENAMETOOLONG)
    assert long.status == "failed" and long.error_kind == "corrupt" and long.name == "x" * 116 + ".pdf"
    assert (
        bot.ingest_upload(
            "../../evil.pdf", pdfs.simple_pdf(bot.settings.home.parent / "e.pdf", ["Evil cover."]).read_bytes()
        ).name
        == "evil.pdf"
    )
    home = bot.settings.home.resolve()
    assert staged and all(home in p.resolve().parents for p in staged)
    assert not any(p.exists() for p in staged)  # removed, failed or not
    assert list((bot.settings.home / "uploads").iterdir()) == []
    assert sorted(d.name for d in bot.library.documents().documents) == [
        "evil.pdf",
        "pixel-from-name.png y javascript alert 5.pdf",
    ]


def test_ingest_outcome_reports_damage_and_stripped_lines(bot, tmp_path, policy_pdf):
    garbled = pdfs.garbled_xref_pdf(tmp_path / "garbled.pdf", policy_pdf)
    [outcome] = bot.ingest([garbled]).outcomes
    assert outcome.status == "ingested"
    assert outcome.warnings and outcome.warnings[0].startswith("damaged PDF: 5 of 5 pages recovered")
    assert outcome.running_lines_removed == 5 and outcome.running_line_example == "Acme Home Policy - page 1 of 5"
    assert "5 running header/footer line(s) left out, e.g. 'Acme Home Policy - page 1 of 5'" in outcome.message


def _crash_after_vectors(bot, pdf):
    """What a kill -9 between the vector write and the registry commit leaves behind."""
    from policybot.ingestion.files import sha256_of

    sha = sha256_of(pdf)
    doc_id = f"{sha[:16]}-crashed"
    bot.components.registry.begin_pending(
        bot.components.index.collection, doc_id, str(bot.components.index.files_dir / f"{sha}.pdf")
    )
    stored, _ = bot.components.index.store_file(pdf, sha)
    bot.components.index.store.add(
        [f"{doc_id}:00000"],
        bot.components.embedder.embed(["half an ingestion"]),
        ["half an ingestion"],
        [{"doc_id": doc_id, "name": pdf.name, "section": "", "page_start": 1, "page_end": 1, "kind": "text"}],
    )
    return doc_id, stored


def test_restart_cleans_up_an_interrupted_ingestion(tmp_path, policy_pdf):
    settings = make_settings(tmp_path / "home")
    bot = PolicyBot(settings)
    kept = pdfs.simple_pdf(tmp_path / "kept.pdf", ["Kept document about garden sheds."])
    bot.ingest([kept])
    doc_id, stored = _crash_after_vectors(bot, policy_pdf)
    (bot.components.index.files_dir / "half-copied.part").write_bytes(b"%PDF-")
    (bot.components.index.files_dir / f"{'0' * 64}.pdf").write_bytes(b"%PDF- an orphan, no registry row, no journal")
    assert doc_id in bot.components.index.store.doc_ids() and stored.exists()

    fresh = PolicyBot(settings)  # the next start
    assert fresh.components.index.store.doc_ids() == {d.doc_id for d in fresh.components.index.documents()}
    assert sorted(p.name for p in fresh.components.index.files_dir.iterdir()) == [
        f"{fresh.components.index.documents()[0].sha256}.pdf"
    ]
    assert fresh.components.registry.pending() == []
    # The crashed file ingests cleanly afterwards.
    assert [o.status for o in fresh.ingest([policy_pdf]).outcomes] == ["ingested"]


def test_clean_up_waits_for_another_process_ingesting(tmp_path, policy_pdf):
    settings = make_settings(tmp_path / "home")
    bot = PolicyBot(settings)
    bot.components.index
    doc_id, stored = _crash_after_vectors(bot, policy_pdf)  # as if still being written by another process
    with bot.components.library_lock.hold():
        other = PolicyBot(settings)
        assert other.components.index.recover(other.components.library_lock).total == 0
        assert stored.exists() and doc_id in other.components.index.store.doc_ids()
    assert other.components.index.recover(other.components.library_lock).interrupted == 1
    assert not stored.exists() and doc_id not in other.components.index.store.doc_ids()


def test_a_store_torn_by_a_kill_is_set_aside_and_rebuilt_from_the_registry(tmp_path):
    """A kill while Chroma persists its HNSW files leaves them torn, and Chroma then crashes the
    next process (SIGSEGV). The write marker makes the next start set the store aside and
    refill a fresh one from the vectors kept in the registry. Run in a child process: if the
    torn store were opened, it would take the test runner down with it."""
    import json
    import os
    import subprocess
    import sys

    from policybot.store.index import write_marker
    from tests.conftest import NO_OLLAMA, sample_home

    home = sample_home(tmp_path / "home")  # the sample policy ingested: enough chunks for Chroma to persist HNSW files
    bot = PolicyBot(make_settings(home))
    question = "How does the deductible apply to water damage?"
    before = [h.chunk_id for h in bot.search(question, k=5).hits]
    chunks = bot.components.index.store.count()
    torn = sorted((home / "chroma").rglob("*.bin"))
    assert torn, "Chroma wrote no HNSW files; the test needs more chunks"
    write_marker(home).write_text("4242")  # the writer died inside a write...
    for path in torn:  # ...half way through persisting
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])

    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICYBOT_")}
    env.update(HF_HUB_OFFLINE="1", OLLAMA_HOST=NO_OLLAMA, POLICYBOT_MODELS_DIR=str(home / "models"))
    done = subprocess.run(
        [sys.executable, "-m", "policybot", "--home", str(home), "--profile", "lite",
         "search", "--json", question, "--k", "5"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert [h["chunk_id"] for h in json.loads(done.stdout)["hits"]] == before
    assert "rebuilding from the registry" in done.stderr
    assert len(list(home.glob("chroma.interrupted-*"))) == 1 and not write_marker(home).exists()
    assert f"restored={chunks}" in done.stderr  # every vector came back, none re-embedded


def test_copies_of_the_ingested_sample_library_are_libraries_of_their_own(tmp_path):
    """The tests' shared sample library (``conftest.sample_home``): each copy answers as an ingest
    would, and keeps its own stored PDF, so deleting the document from one copy leaves the other."""
    from tests.conftest import SAMPLE_POLICY, sample_home

    first = PolicyBot(make_settings(sample_home(tmp_path / "a")))
    second = PolicyBot(make_settings(sample_home(tmp_path / "b")))
    [doc] = second.library.documents().documents
    assert doc.name == SAMPLE_POLICY.name and doc.chunks > 100
    stored = second.components.registry.documents(second.components.index.collection)[0].stored_path
    assert stored.startswith(str(tmp_path / "b"))
    first.delete(SAMPLE_POLICY.name)
    assert not first.library.documents().documents
    assert Path(stored).is_file()
    answer = second.ask("What is the waiting period for accidental damage?", use_llm=False)
    assert answer.mode == "extractive" and "6.2" in answer.citations[0].section, answer.citations[0].section

"""The document library: ingest, dedupe, replace, delete, and all-or-nothing ingestion."""

import shutil

import pytest

from policybot.registry import Registry
from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import make_settings


def _state(bot: PolicyBot) -> dict:
    """Everything the index holds, to compare before and after a failure."""
    docs = bot.index.documents()
    return {
        "docs": sorted((d.name, d.doc_id, d.chunks) for d in docs),
        "vectors": bot.index.store.count(),
        "vector_docs": sorted(bot.index.store.doc_ids()),
        "lexical": sorted(cid for cid, _ in bot.registry.chunk_texts(bot.index.collection)),
        "files": sorted(p.name for p in (bot.settings.home / "files").glob("*")),
    }


def test_ingest_records_metadata_and_stores_the_file(bot, policy_pdf):
    report = bot.ingest([policy_pdf])
    [outcome] = report.outcomes
    assert outcome.status == "ingested" and outcome.pages == 5 and outcome.tables == 1
    assert outcome.sections == 9 and outcome.empty_pages == [4] and "4" in outcome.message
    [doc] = bot.documents().documents
    assert doc.name == "acme-home.pdf" and doc.title == "Acme Home Insurance Policy"
    assert doc.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert doc.chunks == bot.index.store.count() == outcome.chunks
    assert (bot.settings.home / "files" / f"{doc.sha256}.pdf").read_bytes() == policy_pdf.read_bytes()
    # Chunk metadata made it into both stores with the right pages.
    rows = bot.registry.chunks(bot.index.collection, [cid for cid, _ in bot.registry.chunk_texts(bot.index.collection)])
    assert {r.page_start for r in rows.values()} == {1, 2, 3, 5}
    got = bot.index.store.collection.get(ids=list(rows)[:3], include=["metadatas"])
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
    old = bot.index.documents()[0]
    pdfs.simple_pdf(path, ["New wording: the excess is two hundred dollars."], heading="Section 1 Excess")
    outcome = bot.ingest([path]).outcomes[0]
    assert outcome.status == "replaced"
    [new] = bot.index.documents()
    assert new.doc_id != old.doc_id
    assert bot.index.store.doc_ids() == {new.doc_id}
    texts = " ".join(t for _, t in bot.registry.chunk_texts(bot.index.collection))
    assert "two hundred" in texts and "one hundred" not in texts
    assert not (bot.settings.home / "files" / f"{old.sha256}.pdf").exists()
    hits = bot.search("excess amount").hits
    assert hits and all("one hundred" not in h.text for h in hits)


def test_delete_removes_everything(bot, policy_pdf, tmp_path):
    other = pdfs.simple_pdf(tmp_path / "other.pdf", ["Travel cover for lost luggage up to five hundred dollars."])
    bot.ingest([policy_pdf, other])
    report = bot.delete("acme-home.pdf")
    assert report.deleted == 1
    assert [d.name for d in bot.index.documents()] == ["other.pdf"]
    [kept] = bot.index.documents()
    assert bot.index.store.doc_ids() == {kept.doc_id}
    assert all(cid.startswith(kept.doc_id) for cid, _ in bot.registry.chunk_texts(bot.index.collection))
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
        real_add = bot.index.store.add

        def add_then_fail(ids, vectors, texts, metadatas):
            real_add(ids[:2], vectors[:2], texts[:2], metadatas[:2])  # half written, then the disk fills
            raise OSError("No space left on device")

        monkeypatch.setattr(bot.index.store, "add", add_then_fail)
    else:

        def replace_fails(*args, **kwargs):
            raise RuntimeError("database is locked")

        monkeypatch.setattr(Registry, "replace", replace_fails)

    later = pdfs.simple_pdf(tmp_path / "later.pdf", ["Another document about contents cover."])
    report = bot.ingest([policy_pdf, later])
    assert [o.status for o in report.outcomes] == ["failed", "failed"]
    assert report.outcomes[0].error_kind == "index"
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
    assert [d.name for d in bot.index.documents()] == ["acme-home.pdf"]
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
    from policybot.profiles import EmbeddingModel, register_embedding, register_profile, Profile, PROFILES

    bot = PolicyBot(make_settings(tmp_path / "home"))
    bot.ingest([policy_pdf])
    # A second model (same weights, different registered name) must get a separate collection.
    twin = register_embedding(EmbeddingModel("minilm-twin", "sentence-transformers/all-MiniLM-L6-v2", 256, packaged=True))
    register_profile(Profile("twin-test", twin, None, PROFILES["lite"].llm))
    try:
        other = PolicyBot(make_settings(tmp_path / "home").model_copy(update={"profile": "lite"}))
        other._profile = None
        from policybot.profiles import ResolvedProfile

        other._profile = ResolvedProfile(PROFILES["twin-test"], "twin-test", "test")
        assert other.index.collection != bot.index.collection
        assert other.index.documents() == []
        listing = other.documents()
        assert listing.documents == [] and [d.name for d in listing.other_models] == ["acme-home.pdf"]
    finally:
        PROFILES.pop("twin-test")


def test_index_survives_a_restart(tmp_path, policy_pdf):
    settings = make_settings(tmp_path / "home")
    PolicyBot(settings).ingest([policy_pdf])
    fresh = PolicyBot(settings)
    hits = fresh.search("What does Insured Person mean?", k=3).hits
    assert hits[0].section.endswith("1.1 Insured Person")

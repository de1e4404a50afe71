"""`policybot doctor`: each check, its fix, and the orphan repair path. Real index and
embedder; a fake only for the Ollama client."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from policybot.doctor import run_checks
from policybot.models.providers import OllamaStatus, ollama_status
from policybot.schemas import DoctorReport
from policybot.service import PolicyBot
from tests import pdfs
from tests.conftest import NO_OLLAMA, make_settings


class FakeOllama:
    def __init__(self, models: list[str] | None = None, fail: Exception | None = None, as_dict: bool = False) -> None:
        self.models = models or []
        self.fail = fail
        self.as_dict = as_dict
        self.calls = 0

    def list(self):
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        if self.as_dict:
            return {"models": [{"name": m} for m in self.models]}
        return SimpleNamespace(models=[SimpleNamespace(model=m) for m in self.models])


def check(report: DoctorReport, name: str):
    found = [c for c in report.checks if c.name == name]
    assert len(found) == 1, f"expected one '{name}' check in {[c.name for c in report.checks]}"
    return found[0]


@pytest.fixture(autouse=True)
def _empty_hub_cache(monkeypatch, tmp_path):
    import huggingface_hub.constants as hf_constants

    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(cache))


# --- ollama -------------------------------------------------------------------------------------


def test_ollama_and_llm_model_ok(bot):
    client = FakeOllama(["llama3.2:latest", "gemma3n:e4b"])
    report = run_checks(bot, ollama_client=client)
    assert client.calls == 1
    assert report.profile == "lite"
    ollama = check(report, "ollama")
    assert ollama.ok and ollama.fix is None
    llm = check(report, "llm model")
    assert llm.ok and llm.fix is None
    assert "gemma3n:e4b" in llm.detail


def test_llm_model_missing_gives_pull_command(bot):
    report = run_checks(bot, ollama_client=FakeOllama(["llama3.2:latest", "gemma3n:e2b"]))
    assert check(report, "ollama").ok
    llm = check(report, "llm model")
    assert not llm.ok
    assert llm.required is False
    assert llm.fix == "ollama pull gemma3n:e4b"
    assert "llama3.2:latest" in llm.detail
    assert report.ok  # the LLM is optional


def test_ollama_dict_listing_is_understood(bot):
    report = run_checks(bot, ollama_client=FakeOllama(["gemma3n:e4b"], as_dict=True))
    assert check(report, "llm model").ok


def test_ollama_unreachable(bot):
    report = run_checks(bot, ollama_client=FakeOllama(fail=ConnectionError("Connection refused")))
    ollama = check(report, "ollama")
    assert not ollama.ok
    assert ollama.required is False
    assert "ollama serve" in ollama.fix
    assert "Connection refused" in ollama.detail
    assert all(c.name != "llm model" for c in report.checks)
    assert report.ok


def test_real_client_against_closed_port(bot):
    report = run_checks(bot)  # settings point at NO_OLLAMA
    ollama = check(report, "ollama")
    assert not ollama.ok
    assert NO_OLLAMA in ollama.detail
    assert "ollama serve" in ollama.fix


def test_ollama_status_never_raises():
    status = ollama_status("http://unused", client=FakeOllama(fail=RuntimeError("boom\nsecond line")))
    assert status.reachable is False
    assert status.models == []
    assert status.error == "boom"
    silent = ollama_status("http://unused", client=FakeOllama(fail=ConnectionError()))
    assert silent.reachable is False
    assert silent.error == "ConnectionError"


def test_ollama_status_lists_models():
    status = ollama_status("http://unused", client=FakeOllama(["gemma3n:e4b", "qwen3"]))
    assert status.reachable
    assert status.models == ["gemma3n:e4b", "qwen3"]


def test_ollama_status_has_matches_latest_tag():
    status = OllamaStatus(True, ["qwen3:latest", "gemma3n:e4b"])
    assert status.has("qwen3")
    assert status.has("gemma3n:e4b")
    assert not status.has("gemma3n")
    assert not status.has("gemma3n:e2b")


# --- models, documents, index -------------------------------------------------------------------


def test_fresh_lite_install(bot):
    report = run_checks(bot, ollama_client=FakeOllama(["gemma3n:e4b"]))
    assert report.ok
    emb = check(report, "embedding model")
    assert emb.ok and "all-MiniLM-L6-v2" in emb.detail
    assert check(report, "reranker").ok
    assert check(report, "index").ok
    docs = check(report, "documents")
    assert not docs.ok
    assert docs.required is False
    assert docs.fix == "policybot ingest data/"


def test_paper_profile_without_models_is_not_ok(tmp_path):
    bot = PolicyBot(make_settings(tmp_path / "home", profile="paper"))
    report = run_checks(bot, ollama_client=FakeOllama(["gemma3n:e4b"]))
    assert report.profile == "paper"
    emb = check(report, "embedding model")
    assert not emb.ok
    assert emb.fix == "policybot models pull --profile paper"
    assert "not on this machine" in emb.detail
    reranker = check(report, "reranker")
    assert not reranker.ok
    assert reranker.fix in ("policybot models pull --profile paper", "pip install -e '.[paper]'")
    assert not report.ok


@pytest.fixture
def ingested_bot(tmp_path) -> PolicyBot:
    bot = PolicyBot(make_settings(tmp_path / "home"))
    pdf = pdfs.simple_pdf(
        tmp_path / "short.pdf",
        [
            "Storm damage to fences and gates is covered up to five hundred dollars per claim.",
            "Flood damage is not covered unless the flood extension is shown in the schedule.",
        ],
        heading="Section 1 Cover",
    )
    report = bot.ingest([pdf])
    assert [o.status for o in report.outcomes] == ["ingested"]
    return bot


def test_documents_check_after_ingest(ingested_bot):
    report = run_checks(ingested_bot, ollama_client=FakeOllama(["gemma3n:e4b"]))
    docs = check(report, "documents")
    assert docs.ok and docs.fix is None
    assert docs.detail.startswith("1 indexed")
    index = check(report, "index")
    assert index.ok
    assert f"{ingested_bot.components.index.store.count()} vectors" in index.detail


def test_orphan_vectors_are_reported_and_repaired(ingested_bot):
    bot = ingested_bot
    store = bot.components.index.store
    registered = {d.doc_id for d in bot.components.index.documents()}
    before = store.count()
    orphan = "deadbeefdeadbeef-000000"
    assert orphan not in registered
    store.add(
        [f"{orphan}:00000"],
        bot.components.embedder.embed(["Left behind by an ingestion that crashed before the registry row."]),
        ["Left behind by an ingestion that crashed before the registry row."],
        [{"doc_id": orphan, "name": "crashed.pdf", "section": "", "page_start": 1, "page_end": 1, "kind": "text"}],
    )
    assert orphan in store.doc_ids()

    report = run_checks(bot, ollama_client=FakeOllama(["gemma3n:e4b"]))
    index = check(report, "index")
    assert not index.ok
    assert index.fix == "policybot doctor --repair"
    assert "1 unregistered document" in index.detail
    assert orphan in store.doc_ids()  # a plain check changes nothing

    repaired = run_checks(bot, repair=True, ollama_client=FakeOllama(["gemma3n:e4b"]))
    index = check(repaired, "index")
    assert index.ok
    assert "repaired: vectors of 1 unregistered document(s)" in index.detail
    # The count reported is the one after the repair (it used to be the one before).
    assert f", {before} vectors;" in index.detail
    assert orphan not in store.doc_ids()
    assert store.doc_ids() == registered
    assert store.count() == before
    # The registered document is untouched and still searchable.
    hits = bot.search("flood extension", k=3).hits
    assert hits and hits[0].doc == "short.pdf"

    again = run_checks(bot, ollama_client=FakeOllama(["gemma3n:e4b"]))
    assert check(again, "index").ok


def test_a_kiosk_without_an_admin_pin_is_told_how_to_set_one(tmp_path):
    """The kiosk screen never shows set-up commands; doctor does."""
    bare = run_checks(PolicyBot(make_settings(tmp_path / "home", kiosk=True)), ollama_client=FakeOllama())
    pin = check(bare, "kiosk admin PIN")
    assert not pin.ok and not pin.required and "POLICYBOT_KIOSK_PIN" in (pin.fix or "")
    locked = run_checks(
        PolicyBot(make_settings(tmp_path / "home", kiosk=True, kiosk_pin="4321")), ollama_client=FakeOllama()
    )
    assert check(locked, "kiosk admin PIN").ok
    assert "4321" not in check(locked, "kiosk admin PIN").detail
    plain = run_checks(PolicyBot(make_settings(tmp_path / "home")), ollama_client=FakeOllama())
    assert not [c for c in plain.checks if c.name == "kiosk admin PIN"]


def test_stores_set_aside_after_an_interrupted_write_are_reported_and_removed_on_repair(tmp_path):
    """A full disk interrupts a write: the store is set aside and rebuilt; the old copy is space to free."""
    bot = PolicyBot(make_settings(tmp_path / "home"))
    aside = tmp_path / "home" / "chroma.interrupted-1795666609"
    (aside / "seg").mkdir(parents=True)
    (aside / "seg" / "data_level0.bin").write_bytes(b"\0" * 300_000)
    found = check(run_checks(bot, ollama_client=FakeOllama(["gemma3n:e4b"])), "set-aside stores")
    assert not found.ok and not found.required and "1 vector store(s) set aside" in found.detail
    assert "0.3 MB" in found.detail and found.fix == "policybot doctor --repair removes them"
    repaired = check(run_checks(bot, repair=True, ollama_client=FakeOllama(["gemma3n:e4b"])), "set-aside stores")
    assert repaired.detail == "1 removed" and not aside.exists()
    assert check(run_checks(bot, ollama_client=FakeOllama(["gemma3n:e4b"])), "set-aside stores").ok

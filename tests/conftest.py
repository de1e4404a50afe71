"""Shared fixtures: real PDFs made with PyMuPDF, a real Chroma in a temp dir, the packaged
MiniLM embedding model. Nothing here reaches the network."""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import shutil
import sqlite3
import tempfile
import threading

# Before any model library is imported: never look anything up on the hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One test process per core (`make test`): each computes on one thread, as the app does when
    # serving, or two processes' thread pools fight over the same cores (measured: slower than one).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    # pytest-xdist gives its workers an 80-column terminal (COLUMNS=80); the CLI's tables and
    # messages are read here as a pipe reads them, as in a run without workers.
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from policybot.service import PolicyBot  # noqa: E402
from policybot.settings import Settings  # noqa: E402
from tests import pdfs  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "eval-data"
FLOOD = SHARED / "nfip-flood"
CUAD = FLOOD.parent / "contracts-cuad"
SAMPLE_POLICY = Path(__file__).resolve().parents[1] / "data" / "homeshield-household-policy.pdf"
# Port 9 (discard) is closed here: Ollama checks fail fast instead of waiting.
NO_OLLAMA = "http://127.0.0.1:9"


def make_settings(home: Path, **overrides) -> Settings:
    values = dict(home=home, profile="lite", ollama_host=NO_OLLAMA, models_dir=home / "models")
    values.update(overrides)
    return Settings(**values)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    """Tests never read the developer's POLICYBOT_* variables or policybot.toml."""
    for key in list(os.environ):
        if key.startswith("POLICYBOT_") or key == "OLLAMA_HOST":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("POLICYBOT_CONFIG", str(tmp_path / "absent.toml"))


@pytest.fixture(scope="session")
def embedder(tmp_path_factory):
    """The packaged embedding model, loaded once (for stages that take an embedder directly)."""
    from policybot.models.embeddings import get_embedder
    from policybot.models.profiles import MINILM

    emb = get_embedder(MINILM, make_settings(tmp_path_factory.mktemp("embedder")))
    emb.warm_up()
    return emb


@pytest.fixture
def settings(tmp_path) -> Settings:
    return make_settings(tmp_path / "home")


@pytest.fixture
def bot(settings) -> PolicyBot:
    return PolicyBot(settings)


@pytest.fixture
def policy_pdf(tmp_path) -> Path:
    return pdfs.sample_policy(tmp_path / "acme-home.pdf")


@pytest.fixture
def outlined_pdf(tmp_path) -> Path:
    return pdfs.sample_policy(tmp_path / "acme-outlined.pdf", outline=True)


@pytest.fixture
def scanned_pdf(tmp_path) -> Path:
    return pdfs.scanned_pdf(tmp_path / "scan.pdf")


@pytest.fixture
def encrypted_pdf(tmp_path) -> Path:
    return pdfs.encrypted_pdf(tmp_path / "locked.pdf")


@pytest.fixture
def corrupt_pdf(tmp_path) -> Path:
    return pdfs.corrupt_pdf(tmp_path / "broken.pdf")


@pytest.fixture
def empty_file(tmp_path) -> Path:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    return path


@pytest.fixture
def not_pdf(tmp_path) -> Path:
    path = tmp_path / "notes.pdf"
    path.write_text("These are meeting notes, not a PDF.\n")
    return path


_LIBRARIES: dict[str, Path] = {}  # libraries ingested once per test run, by name
_MESSAGES: dict[str, list[str]] = {}  # what their ingestion said of each document
_LIBRARY_LOCK = threading.Lock()
_RUN_FOLDER: list[Path] = []  # under pytest-xdist: a folder every worker of this run shares


@pytest.fixture(scope="session", autouse=True)
def _libraries_shared_by_workers(tmp_path_factory):
    """Under pytest-xdist each worker's temporary folder sits in the run's: the shared libraries are
    ingested there once, by the first worker to need each, and copied by every worker."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _RUN_FOLDER[:] = [tmp_path_factory.getbasetemp().parent / "shared-libraries"]
    yield


def sample_home(dest: Path) -> Path:
    """A library at ``dest`` holding the sample policy (lite profile, default index settings), as
    ``PolicyBot(make_settings(dest)).ingest([SAMPLE_POLICY])`` would leave it, in about a second
    instead of the 4 to 10 an ingest takes here: a copy of one ingested once per test run, its
    registry pointed at its own copy of the PDF. For tests that read or change a library, not for
    tests of ingestion itself."""
    return shared_library("sample", [SAMPLE_POLICY], dest)


def house_and_flood_home(dest: Path) -> Path:
    """A library at ``dest`` holding the sample house policy and the FEMA Dwelling Form, copied as
    ``sample_home`` is: two documents a conversation can drift between. Skips without the eval data."""
    return shared_library("house-and-flood", [SAMPLE_POLICY, require_flood() / "docs" / "nfip-sfip-dwelling.pdf"], dest)


def flood_home(dest: Path) -> Path:
    """A library at ``dest`` holding the three FEMA flood forms (``../shared/eval-data/nfip-flood``),
    copied as ``sample_home`` is. Skips without the eval data."""
    return shared_library("flood", sorted((require_flood() / "docs").glob("*.pdf")), dest)


def ingest_messages(name: str) -> list[str]:
    """What the ingestion of a shared library (``"flood"``, ``"sample"`` …) said of each document."""
    return _MESSAGES[name]


def shared_library(name: str, docs: list[Path], dest: Path) -> Path:
    """A library at ``dest`` holding ``docs``: ingested in that order once per test run under
    ``name``, then copied for each caller (without locks or models), its registry pointed at the copy."""
    with _LIBRARY_LOCK:
        if name not in _LIBRARIES:
            _LIBRARIES[name], _MESSAGES[name] = _master_library(name, docs)
        master = _LIBRARIES[name]
    shutil.copytree(master, dest, ignore=shutil.ignore_patterns("*.lock", "models"))
    with sqlite3.connect(dest / "registry.sqlite") as db:
        db.execute("UPDATE documents SET stored_path = replace(stored_path, ?, ?)", (str(master), str(dest)))
    db.close()
    return dest


def _master_library(name: str, docs: list[Path]) -> tuple[Path, list[str]]:
    """The library ``name`` ingested, and what its ingestion said: once per process, or once per run
    under pytest-xdist (the other workers wait for it on a file lock, then read it)."""
    if not _RUN_FOLDER:
        master = Path(tempfile.mkdtemp(prefix=f"policybot-{name}-")) / "home"
        atexit.register(shutil.rmtree, master.parent, True)
        return master, _ingested(master, docs)
    folder = _RUN_FOLDER[0] / name
    folder.mkdir(parents=True, exist_ok=True)
    said = folder / "said.json"
    with (folder / "building.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not said.is_file():
            said.write_text(json.dumps(_ingested(folder / "home", docs)))
    return folder / "home", json.loads(said.read_text())


def _ingested(master: Path, docs: list[Path]) -> list[str]:
    report = PolicyBot(make_settings(master)).ingest(docs)
    assert not report.failed, [o.message for o in report.failed]
    return [o.message for o in report.outcomes]


def supply_contracts(root: Path, **overrides) -> PolicyBot:
    """A library of two supply agreements whose every passage names their parties, as real
    contracts do (Acme with Zenbo, Acme with Orlix)."""
    bot = PolicyBot(make_settings(root / "home", **overrides))
    for stem, party in (("acme-zenbo-supply", "Zenbo"), ("acme-orlix-supply", "Orlix")):
        path = pdfs.simple_pdf(
            root / f"{stem}.pdf",
            [
                f"This Supply Agreement is made between Acme Corp and {party} Industries. {party} supplies the parts.",
                f"{party} shall deliver the parts to Acme within 30 days of each order placed by Acme.",
                f"This Agreement between Acme and {party} is governed by the laws of the State of Delaware.",
                f"Neither Acme nor {party} may assign this Agreement without the other party's written consent.",
            ],
            heading="Supply Agreement",
        )
        assert bot.ingest_file(path).status == "ingested"
    return bot


def require_flood() -> Path:
    if not (FLOOD / "questions.jsonl").is_file():
        pytest.skip(f"eval set not found at {FLOOD} (../shared/eval-data/nfip-flood beside the project)")
    return FLOOD

"""The `policybot` command line, driven in-process with Typer's CliRunner: real PDFs, a real
Chroma under a temp home, the packaged MiniLM model; Ollama is pointed at a closed port."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from policybot.cli import app, main
from policybot.schemas import DoctorReport, DocumentList, IngestReport, SearchResponse
from tests import pdfs
from tests.conftest import NO_OLLAMA

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
INSURED_QUESTION = "Who counts as an Insured Person under this policy?"


def plain(text: str) -> str:
    """Output without colour codes, with Rich's line wrapping undone."""
    return " ".join(ANSI.sub("", text).split())


def lines(text: str) -> list[str]:
    return [ANSI.sub("", line).strip() for line in text.splitlines() if line.strip()]


def cli_env(mp: pytest.MonkeyPatch, models_dir: Path) -> None:
    for key in list(os.environ):
        if key.startswith("POLICYBOT_") or key == "OLLAMA_HOST":
            mp.delenv(key, raising=False)
    mp.setenv("POLICYBOT_CONFIG", str(models_dir.parent / "absent.toml"))
    mp.setenv("OLLAMA_HOST", NO_OLLAMA)
    mp.setenv("POLICYBOT_OLLAMA_HOST", NO_OLLAMA)
    # One models folder for every home, so the embedding model is loaded once per process.
    mp.setenv("POLICYBOT_MODELS_DIR", str(models_dir))


def run(home: Path, *args: str, profile: str = "lite", env: dict[str, str] | None = None):
    return CliRunner().invoke(app, ["--home", str(home), "--profile", profile, *args], env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def shared_models(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli-models")


@pytest.fixture(autouse=True)
def _cli_env(_isolated_env, monkeypatch, shared_models):
    cli_env(monkeypatch, shared_models)


@pytest.fixture(scope="module")
def library(tmp_path_factory, shared_models):
    """A home with the sample policy ingested once (through `ingest --json`) for the module."""
    root = tmp_path_factory.mktemp("cli-library")
    home = root / "home"
    pdf = pdfs.sample_policy(root / "acme-home.pdf")
    with pytest.MonkeyPatch.context() as mp:
        cli_env(mp, shared_models)
        result = run(home, "ingest", "--json", str(pdf))
    return home, pdf, result


# --- ingest ---------------------------------------------------------------------------------------


def test_ingest_json_report(library):
    home, pdf, result = library
    assert result.exit_code == 0, result.output
    report = IngestReport.model_validate_json(result.stdout)
    assert report.profile == "lite"
    assert report.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert len(report.outcomes) == 1
    outcome = report.outcomes[0]
    assert outcome.status == "ingested"
    assert outcome.name == "acme-home.pdf"
    assert outcome.file == str(pdf)
    assert outcome.pages == 5
    assert outcome.chunks and outcome.chunks > 0
    assert outcome.sections and outcome.sections >= 4
    assert outcome.tables == 1
    assert outcome.empty_pages == [4]
    assert report.failed == []


def test_reingest_is_unchanged(library):
    home, pdf, first = library
    chunks = IngestReport.model_validate_json(first.stdout).outcomes[0].chunks

    as_json = run(home, "ingest", "--json", str(pdf))
    assert as_json.exit_code == 0, as_json.output
    outcome = IngestReport.model_validate_json(as_json.stdout).outcomes[0]
    assert outcome.status == "unchanged"
    assert outcome.chunks == chunks

    text = run(home, "ingest", str(pdf))
    assert text.exit_code == 0, text.output
    assert [line for line in lines(text.stdout) if "acme-home.pdf" in line][0].startswith("unchanged")
    listing = DocumentList.model_validate_json(run(home, "docs", "--json").stdout)
    assert [d.name for d in listing.documents] == ["acme-home.pdf"]


def test_ingest_folder_with_a_corrupt_pdf(tmp_path):
    home = tmp_path / "home"
    folder = tmp_path / "inbox"
    folder.mkdir()
    pdfs.simple_pdf(
        folder / "good.pdf",
        ["Storm damage to fences is covered up to five hundred dollars.", "Flood damage is excluded."],
        heading="Section 1 Cover",
    )
    pdfs.corrupt_pdf(folder / "broken.pdf")
    (folder / "readme.txt").write_text("not a PDF, not picked up")

    result = run(home, "ingest", str(folder))

    assert result.exit_code == 1, result.output
    out = lines(result.stdout)
    assert len(out) == 2, result.stdout  # one line per PDF, the text file is not a PDF
    good = [line for line in out if "good.pdf" in line]
    bad = [line for line in out if "broken.pdf" in line]
    assert len(good) == 1 and good[0].startswith("ingested")
    assert re.search(r"good\.pdf: 1 pages, \d+ chunks, \d+ sections, 0 tables", good[0])
    assert len(bad) == 1
    assert bad[0].startswith("FAILED")
    assert "broken.pdf: cannot be read as a PDF" in bad[0]
    # The good file was indexed in spite of the bad one.
    listing = DocumentList.model_validate_json(run(home, "docs", "--json").stdout)
    assert [d.name for d in listing.documents] == ["good.pdf"]


def test_ingest_folder_without_pdfs(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    result = run(tmp_path / "home", "ingest", str(folder))
    assert result.exit_code == 2
    assert "no PDF files found" in plain(result.stderr)


def test_invalid_profile_is_a_settings_error(tmp_path):
    result = run(tmp_path / "home", "docs", profile="gigantic")
    assert result.exit_code == 2
    assert "invalid settings" in plain(result.stderr)


# --- docs -----------------------------------------------------------------------------------------


def test_docs_table(library):
    home, _, _ = library
    result = run(home, "docs", env={"COLUMNS": "200"})  # wide enough that no cell is folded
    assert result.exit_code == 0, result.output
    text = plain(result.stdout)
    assert "Documents (sentence-transformers/all-MiniLM-L6-v2)" in text
    [row] = [line for line in lines(result.stdout) if "acme-home.pdf" in line]
    cells = [c.strip() for c in row.strip("│┃ ").split("│")]
    assert cells[0] == "acme-home.pdf"
    assert cells[1] == "Acme Home Insurance Policy"
    assert cells[2] == "5"
    assert cells[6] == ""  # OCR: no scanned pages
    assert cells[7] == "all-MiniLM-L6-v2"


def test_docs_json(library):
    home, _, ingested = library
    outcome = IngestReport.model_validate_json(ingested.stdout).outcomes[0]
    result = run(home, "docs", "--json")
    assert result.exit_code == 0, result.output
    listing = DocumentList.model_validate_json(result.stdout)
    assert listing.profile == "lite"
    assert listing.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert listing.other_models == []
    assert len(listing.documents) == 1
    doc = listing.documents[0]
    assert doc.name == "acme-home.pdf"
    assert doc.pages == outcome.pages == 5
    assert doc.chunks == outcome.chunks
    assert doc.sections == outcome.sections
    assert doc.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert Path(doc.stored_path).is_file()


def test_docs_empty_library(tmp_path):
    result = run(tmp_path / "home", "docs")
    assert result.exit_code == 0
    assert "No documents yet" in plain(result.stdout)
    assert "policybot ingest" in plain(result.stdout)


def test_ingest_then_delete(tmp_path):
    home = tmp_path / "home"
    pdf = pdfs.simple_pdf(tmp_path / "short.pdf", ["Theft from an unlocked car is not covered."], heading="Exclusions")

    ingested = run(home, "ingest", str(pdf))
    assert ingested.exit_code == 0, ingested.output
    [line] = lines(ingested.stdout)
    assert line.startswith("ingested")
    assert re.search(r"short\.pdf: 1 pages, [1-9]\d* chunks", line)
    assert "profile lite" in plain(ingested.stderr)

    deleted = run(home, "docs", "--delete", "short.pdf")
    assert deleted.exit_code == 0, deleted.output
    assert "deleted short.pdf" in plain(deleted.stdout)

    listing = DocumentList.model_validate_json(run(home, "docs", "--json").stdout)
    assert listing.documents == [] and listing.other_models == []
    assert "No documents yet" in plain(run(home, "docs").stdout)
    assert not any((home / "files").glob("*.pdf"))  # the stored copy is gone too
    assert run(home, "search", "theft").exit_code == 2


def test_delete_unknown_name(library):
    home, _, _ = library
    result = run(home, "docs", "--delete", "nothing-like-it.pdf")
    assert result.exit_code == 2
    message = plain(result.stderr)
    assert "no document named 'nothing-like-it.pdf'" in message
    assert "acme-home.pdf" in message  # says what is there
    # Nothing was deleted.
    listing = DocumentList.model_validate_json(run(home, "docs", "--json").stdout)
    assert [d.name for d in listing.documents] == ["acme-home.pdf"]


# --- search ---------------------------------------------------------------------------------------


def test_search_json_finds_the_definition(library):
    home, _, _ = library
    result = run(home, "search", INSURED_QUESTION, "--k", "3", "--json")
    assert result.exit_code == 0, result.output
    response = SearchResponse.model_validate_json(result.stdout)
    assert response.query == INSURED_QUESTION
    assert response.profile == "lite"
    assert 1 <= len(response.hits) <= 3
    assert [h.rank for h in response.hits] == list(range(1, len(response.hits) + 1))
    scores = [h.score for h in response.hits]
    assert scores == sorted(scores, reverse=True)
    for hit in response.hits:
        assert hit.doc == "acme-home.pdf"
        assert 1 <= hit.page_start <= hit.page_end <= 5
    top = response.hits[0]
    assert "1.1 Insured Person" in top.section
    assert top.page_start == 1
    assert "Insured Person means" in top.text


def test_search_text_output_cites_pages(library):
    home, _, _ = library
    result = run(home, "search", "earthquake extension Richter scale", "--k", "2")
    assert result.exit_code == 0, result.output
    first = lines(result.stdout)[0]
    assert first.startswith("1. Acme Home Insurance Policy · ")  # the title a person reads, not the file name
    assert "2.2 Earthquake damage" in first
    assert re.search(r"pp?\.\d", first)
    assert "2 passages" in plain(result.stderr)


def test_search_restricted_to_unknown_doc(library):
    home, _, _ = library
    result = run(home, "search", INSURED_QUESTION, "--docs", "unknown.pdf")
    assert result.exit_code == 2
    message = plain(result.stderr)
    assert "not indexed: unknown.pdf" in message
    assert "acme-home.pdf" in message


def test_search_restricted_to_known_doc(library):
    home, _, _ = library
    result = run(home, "search", INSURED_QUESTION, "--docs", "acme-home.pdf", "--k", "1", "--json")
    assert result.exit_code == 0, result.output
    assert [h.doc for h in SearchResponse.model_validate_json(result.stdout).hits] == ["acme-home.pdf"]


def test_search_with_nothing_indexed(tmp_path):
    result = run(tmp_path / "home", "search", "anything at all")
    assert result.exit_code == 2
    assert "policybot ingest" in plain(result.stderr)
    assert result.stdout == ""


def test_search_empty_query(library):
    home, _, _ = library
    result = run(home, "search", "   ")
    assert result.exit_code == 2
    assert "the query is empty" in plain(result.stderr)


def test_search_k_out_of_range(library):
    home, _, _ = library
    result = run(home, "search", INSURED_QUESTION, "--k", "0")
    assert result.exit_code == 2


# --- doctor ---------------------------------------------------------------------------------------


def test_doctor_without_ollama(tmp_path):
    result = run(tmp_path / "home", "doctor")
    assert result.exit_code == 0, result.output  # Ollama is optional
    text = plain(result.stdout)
    assert "profile: lite" in text
    assert "ollama serve" in text
    assert NO_OLLAMA in text
    assert "policybot ingest data/" in text  # no documents yet: says how to add some


def test_doctor_json_without_ollama(library):
    home, _, _ = library
    result = run(home, "doctor", "--json")
    assert result.exit_code == 0, result.output
    report = DoctorReport.model_validate_json(result.stdout)
    assert report.profile == "lite"
    assert report.ok
    checks = {c.name: c for c in report.checks}
    assert checks["ollama"].ok is False
    assert checks["ollama"].required is False
    assert "ollama serve" in checks["ollama"].fix
    assert "llm model" not in checks  # cannot be asked without a server
    assert checks["documents"].ok
    assert checks["index"].ok
    assert checks["embedding model"].ok


# --- models pull ----------------------------------------------------------------------------------


def test_models_pull_lite_without_ollama(tmp_path):
    result = run(tmp_path / "home", "models", "pull", "--profile", "lite")
    assert result.exit_code == 1
    err = plain(result.stderr)
    assert "nothing to download" in err  # the packaged MiniLM
    assert "problem:" in err
    assert "ollama pull gemma3n:e4b" in err
    assert "is ready offline" not in plain(result.stdout)


def test_models_pull_unknown_profile(tmp_path):
    result = run(tmp_path / "home", "models", "pull", "--profile", "gigantic")
    assert result.exit_code == 2
    assert "unknown profile 'gigantic'" in plain(result.stderr)


def test_ask_json_extractive_and_refusal(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from policybot.cli import app
    from policybot.schemas import Answer
    from tests import pdfs

    monkeypatch.setenv("OLLAMA_HOST", NO_OLLAMA)
    home = tmp_path / "home"
    pdf = pdfs.sample_policy(tmp_path / "acme-home.pdf")
    runner = CliRunner()
    base = ["--home", str(home), "--profile", "lite"]
    assert runner.invoke(app, base + ["ingest", str(pdf)]).exit_code == 0
    result = runner.invoke(app, base + ["ask", "What does Insured Person mean?", "--json", "--no-llm"])
    assert result.exit_code == 0, result.output
    answer = Answer.model_validate_json(result.stdout)
    assert answer.mode == "extractive" and answer.citations[0].verified
    assert answer.citations[0].section.endswith("1.1 Insured Person") and answer.citations[0].page_start == 1
    text = runner.invoke(app, base + ["ask", "What does Insured Person mean?"])
    assert text.exit_code == 0 and "ollama serve" in text.output and "[1] Acme Home Insurance Policy · " in text.output
    refused = runner.invoke(app, base + ["ask", "Who won the Olympics in 2024?", "--json"])
    assert Answer.model_validate_json(refused.stdout).refused
    unknown = runner.invoke(app, base + ["ask", "anything", "--docs", "nope.pdf"])
    assert unknown.exit_code == 2 and "not indexed" in unknown.output


def test_ingest_json_is_one_document_even_for_damaged_files(tmp_path, policy_pdf):
    """A real process: MuPDF writes its errors from C straight to the file descriptors, which
    CliRunner never sees. stdout must hold exactly one JSON document."""
    import json
    import subprocess
    import sys

    bad = tmp_path / "bad"
    bad.mkdir()
    pdfs.garbled_xref_pdf(bad / "garbled.pdf", policy_pdf)
    pdfs.truncated_pdf(bad / "truncated.pdf")
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICYBOT_")}
    env.update(HF_HUB_OFFLINE="1", OLLAMA_HOST=NO_OLLAMA, POLICYBOT_MODELS_DIR=str(tmp_path / "models"))
    done = subprocess.run(
        [sys.executable, "-m", "policybot", "--home", str(tmp_path / "home"), "--profile", "lite",
         "ingest", "--json", str(bad / "garbled.pdf"), str(bad / "truncated.pdf")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]  # one file failed
    report = IngestReport.model_validate(json.loads(done.stdout))  # the whole of stdout parses
    garbled, truncated = report.outcomes
    assert garbled.status == "ingested" and garbled.warnings[0].startswith("damaged PDF: 5 of 5 pages recovered")
    assert truncated.status == "failed" and truncated.error_kind == "corrupt" and "damaged PDF" in truncated.message
    assert "MuPDF" not in done.stdout + done.stderr


def test_ingest_text_output_shows_damage_warnings(tmp_path, policy_pdf):
    garbled = pdfs.garbled_xref_pdf(tmp_path / "garbled.pdf", policy_pdf)
    result = run(tmp_path / "home", "ingest", str(garbled))
    assert result.exit_code == 0
    assert "warning garbled.pdf: damaged PDF: 5 of 5 pages recovered" in plain(result.output)


def test_eval_without_its_extra_says_how_to_install_it(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ranx" else real(name, *a))
    result = CliRunner().invoke(app, ["eval", str(tmp_path)])
    assert result.exit_code == 2
    assert "pip install -e '.[eval]'" in plain(result.output) and "make eval" in plain(result.output)


def test_evidence_json_csv_and_markdown(library):
    home = library[0]
    result = run(home, "evidence", "wear and tear", "--no-llm", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["mode"] == "planner" and report["issue"] == "wear and tear"
    sections = [row["citation"]["section"] for row in report["rows"]]
    assert any("Wear and Tear" in s for s in sections), sections
    assert all(row["citation"]["verified"] for row in report["rows"])

    csv_out = run(home, "evidence", "wear and tear", "--no-llm", "--csv")
    assert csv_out.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(csv_out.stdout)))
    assert len(rows) == len(report["rows"]) and rows[0]["n"] == "1"
    assert set(rows[0]) >= {"document", "section", "pages", "role", "quote", "why", "same_text_in"}

    md = run(home, "evidence", "wear and tear", "--no-llm", "--md")
    assert md.exit_code == 0 and md.stdout.startswith("# Evidence: wear and tear")
    assert "| # | Document | Section | Pages | Role | Quote |" in md.stdout and "## Trace" in md.stdout


def test_evidence_rejects_two_formats_and_an_empty_issue(library):
    home = library[0]
    both = run(home, "evidence", "flood", "--json", "--csv")
    assert both.exit_code == 2 and "choose one of" in both.output
    empty = run(home, "evidence", "  ", "--no-llm")
    assert empty.exit_code == 2 and "empty" in empty.output


# --- bad input (issue 23) ---------------------------------------------------------------------------


def test_a_question_that_is_not_utf8_is_answered_not_a_crash(library):
    home = library[0]
    garbled = "what is \udcff\udcfe covered for water"  # bytes 0xff 0xfe, as the shell passes them
    for command in (["search", garbled, "--json"], ["ask", garbled, "--no-llm", "--json"]):
        result = run(home, *command)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)
    evidence = run(home, "evidence", "water \udcff", "--no-llm", "--json")
    assert evidence.exit_code == 0 and json.loads(evidence.stdout)["issue"].startswith("water")


def test_a_data_folder_that_is_a_file_is_one_clear_line(tmp_path):
    afile = tmp_path / "not-a-folder"
    afile.write_text("x")
    result = run(afile, "search", "water")
    assert result.exit_code == 2
    # A long path is folded mid-name on a narrow terminal: compared without the white space.
    assert "".join(f"the data folder {afile} is a file, not a folder".split()) in "".join(result.output.split())
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["ask", "--json", "--k", "3", "water"], "No such option: --k"),
        (["search", "--json", "--k", "0", "water"], "Invalid value for '--k'"),
    ],
)
def test_under_json_a_usage_error_is_a_json_object_on_stdout(monkeypatch, capsys, library, args, message):
    monkeypatch.setattr(sys, "argv", ["policybot", "--home", str(library[0]), *args])
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["kind"] == "usage" and message in error["message"]


def test_ask_never_prints_a_draft_that_does_not_check_out(tmp_path, monkeypatch):
    """Issue 21: the model's words are not printed as they come; a made-up draft is replaced by the
    quoted passages before anything is shown, and a checked one is printed once."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from typer.testing import CliRunner

    from policybot.cli import app
    from policybot.models.llm import fixed_llm
    from policybot.models.providers import LLMProvider
    from tests import pdfs

    home = tmp_path / "home"
    pdf = pdfs.sample_policy(tmp_path / "acme-home.pdf")
    runner = CliRunner()
    base = ["--home", str(home), "--profile", "lite"]
    assert runner.invoke(app, base + ["ingest", str(pdf)]).exit_code == 0
    made_up = "The cost of this policy per month is $2.50 [1]. I'll make sure to pay for the damage."
    fake = fixed_llm(FakeListChatModel(responses=[made_up]), name="fake")
    monkeypatch.setattr(LLMProvider, "get", lambda self: (fake, None))
    result = runner.invoke(app, base + ["ask", "--fast", "How much does this policy cost per month?"])
    assert result.exit_code == 0, result.output
    assert "$2.50" not in result.stdout and "make sure to pay" not in result.stdout
    assert '"' in result.stdout and "[1]" in result.stdout  # the quoted passages instead

"""The ingestion pipeline (policybot/ingestion/pipeline.py): its stages in order, their progress
and timings, and a failure of any stage turned into a one-line outcome that leaves nothing behind."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from policybot.errors import DiskFull, is_disk_full
from policybot.events import INGEST_STAGES, Progress
from policybot.ingestion.pdf import read_pdf
from policybot.ingestion.pipeline import ChunkStage, IngestPipeline, chunking_signature
from policybot.service import PolicyBot
from tests import pdfs


def test_the_stages_run_in_order_and_each_is_timed(bot: PolicyBot, policy_pdf):
    events: list[Progress] = []
    outcome = bot.ingest_file(policy_pdf, progress=events.append)
    assert outcome.status == "ingested"
    order = list(dict.fromkeys(e.stage for e in events))
    assert order == ["read", "sections", "chunk", "embed", "probes", "store", "done"]
    assert all(e.stage in INGEST_STAGES for e in events) and all(e.file == "acme-home.pdf" for e in events)
    assert events[-1].label == "acme-home.pdf: done (1/1)"
    sections = next(e for e in events if e.stage == "sections")
    assert sections.done == outcome.sections == 9
    assert set(outcome.timings) == {"read", "sections", "chunk", "embed", "probes", "store", "register"}
    assert all(seconds >= 0 for seconds in outcome.timings.values())
    assert sum(outcome.timings.values()) <= outcome.seconds + 0.01


def test_an_unchanged_document_is_recognised_by_its_chunking_signature(bot: PolicyBot, policy_pdf):
    bot.ingest_file(policy_pdf)
    c = bot.components
    [row] = c.index.documents()
    assert row.chunker == chunking_signature(bot.settings, c.chunker)
    again = bot.ingest_file(policy_pdf)
    assert again.status == "unchanged" and again.timings == {}


def test_a_stage_that_fails_becomes_the_outcome_and_writes_nothing(bot: PolicyBot, tmp_path, monkeypatch):
    pdf = pdfs.simple_pdf(tmp_path / "motor.pdf", ["Motor cover pays for accidental damage to your car."])

    def broken(self, rows, name, progress):
        raise RuntimeError("the embedding model could not be loaded")

    monkeypatch.setattr("policybot.ingestion.pipeline.EmbedStage.run", broken)
    events: list[Progress] = []
    outcome = bot.ingest_file(pdf, progress=events.append)
    assert outcome.status == "failed" and outcome.error_kind == "index"
    assert outcome.message == "motor.pdf: the embedding model could not be loaded"
    assert events[-1].stage == "done"  # a progress bar always ends
    assert bot.components.index.documents() == [] and bot.components.index.store.count() == 0
    assert not list((bot.settings.home / "files").glob("*.pdf"))


def test_building_the_chunker_is_part_of_the_run(bot: PolicyBot, tmp_path, monkeypatch):
    """A model that cannot load (the chunker needs its window) fails each file with one line."""

    def no_model():
        raise OSError("model files are missing")

    parts = bot.components.ingest_parts()
    parts.chunker = no_model
    pdf = pdfs.simple_pdf(tmp_path / "home.pdf", ["Home cover."])
    outcome = IngestPipeline(parts).run(pdf)
    assert outcome.status == "failed" and outcome.message == "home.pdf: model files are missing"


# --- a full disk (issue 23) ------------------------------------------------------------------------


def test_disk_full_is_recognised_through_the_errors_it_raises():
    import errno
    import sqlite3

    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert is_disk_full(sqlite3.OperationalError("database or disk is full"))
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise RuntimeError("error returned from database: (code: 13)") from inner
    except RuntimeError as outer:
        assert is_disk_full(outer)  # the cause counts, however the library wraps it
    assert not is_disk_full(sqlite3.OperationalError("no such table: chunks"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB file system for the library (tmpfs; skipped where mounting is not allowed)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_is_said_in_one_line_and_the_library_recovers(small_disk):
    from tests.conftest import SAMPLE_POLICY, make_settings

    home = small_disk / "home"
    settings = make_settings(home, llm_mode="off", models_dir=small_disk.parent / "models")
    outcome = PolicyBot(settings).ingest_file(SAMPLE_POLICY)
    assert outcome.status == "failed" and outcome.error_kind == "disk_full", outcome.message
    assert outcome.message == f"{SAMPLE_POLICY.name}: {DiskFull(home.resolve())}"
    assert "\n" not in outcome.message and "database" not in outcome.message
    subprocess.run(["mount", "-o", "remount,size=300m", str(small_disk)], check=True)
    again = PolicyBot(settings).ingest_file(SAMPLE_POLICY)  # space freed: the same library takes it
    assert again.status == "ingested", again.message
    answer = PolicyBot(settings).ask("How much is the escape of water deductible?", use_llm=False)
    assert answer.shown_citations and not answer.refused


def test_chunks_are_embedded_longest_first_and_come_back_in_their_order(bot: PolicyBot):
    """Issue 24: texts of about one length share a batch (little padding); each vector is its chunk's."""
    from policybot.core.rows import ChunkRow
    from policybot.ingestion.pipeline import EmbedStage

    texts = [("word " * n).strip() + f" clause {n}" for n in (3, 120, 7, 60, 1, 200, 15, 90)]
    rows = [ChunkRow(f"d:{i:05d}", "d", i, t, t, "s", 1, 1, "text") for i, t in enumerate(texts)]
    embedder = bot.components.embedder
    seen: list[list[str]] = []
    real = embedder.embed

    def spy(batch):
        seen.append(list(batch))
        return real(batch)

    stage = EmbedStage(embedder, step=3)  # three texts a step, so the order across steps shows
    embedder.embed = spy
    try:
        vectors = stage.run(rows, "d.pdf", lambda event: None)
    finally:
        del embedder.embed
    lengths = [len(t) for batch in seen for t in batch]
    assert lengths == sorted(lengths, reverse=True)
    expected = real(texts)
    assert vectors.shape == expected.shape
    assert all(float(vectors[i] @ expected[i]) > 0.9999 for i in range(len(texts)))


@pytest.mark.parametrize("vector_header", [True, False])
def test_the_vector_reads_the_header_only_when_asked(tmp_path, policy_pdf, vector_header):
    from tests.conftest import make_settings

    bot = PolicyBot(make_settings(tmp_path / "home", vector_header=vector_header))
    bot.ingest([policy_pdf])
    c = bot.components
    stored = c.index.store.collection.get(include=["embeddings"], limit=4)
    rows = c.registry.chunks(c.index.collection, stored["ids"])
    assert all(rows[i].index_text != rows[i].text for i in stored["ids"])  # BM25 keeps the header either way
    expected = c.embedder.embed([rows[i].index_text if vector_header else rows[i].text for i in stored["ids"]])
    cosines = (np.asarray(stored["embeddings"]) * expected).sum(axis=1)
    assert cosines.min() > 0.9999
    assert ("|vh0" in chunking_signature(c.settings, c.chunker)) is not vector_header


def contract_pdf(path):
    """A contract whose clause titles run into their clauses, in body type."""
    b = pdfs.PdfBuilder()
    b.heading("ARTICLE 12 MISCELLANEOUS")
    clauses = {
        "12.1 Agency.": "Neither Party is, nor shall be deemed to be, an agent or legal representative of the other.",
        "12.2 Assignment.": "Neither this Agreement nor any interest hereunder shall be assignable without consent.",
        "12.3 Notices.": "All notices and other communications hereunder shall be in writing and delivered.",
        "12.4 Waiver.": "No failure to exercise any right shall operate as a waiver of that right or any other.",
    }
    for title, text in clauses.items():
        more = 14 if "Notices" in title else 0  # one clause runs over two chunks
        b.paragraph(f"{title} {text} " + "Each notice is sent to the address given in the schedule. " * more)
    return b.save(path)


def test_a_chunk_is_indexed_under_the_clause_titles_it_holds(tmp_path):
    """A chunk holding several run-in clauses is not cut at them; its header names them, and a
    chunk that opens inside a clause is labelled with that clause's title."""
    from tests.conftest import make_settings

    bot = PolicyBot(make_settings(tmp_path / "home", structure_chunk_tokens=120))
    bot.ingest([contract_pdf(tmp_path / "supply-contract.pdf")])
    c = bot.components
    rows = c.registry.chunks(c.index.collection, c.index.store.collection.get()["ids"])
    headers = [r.index_text.split("\n")[0] for r in sorted(rows.values(), key=lambda r: r.ord)]
    assert all(r.section == "ARTICLE 12 MISCELLANEOUS" for r in rows.values())
    assert any(h.endswith("— 12.1 Agency; 12.2 Assignment") for h in headers), headers  # two clauses, one chunk
    # Every chunk names a clause: its own titles, or the one it opens inside.
    assert all("ARTICLE 12 MISCELLANEOUS — 12." in h for h in headers), headers
    assert sum("12.3 Notices" in h for h in headers) >= 2, headers
    # Switched off, the chunks are the same and their headers name the section only.
    assert "|ct1" in chunking_signature(c.settings, c.chunker)
    off = c.settings.model_copy(update={"clause_titles": False})
    assert "|ct1" not in chunking_signature(off, c.chunker)
    stage = ChunkStage(off, lambda: c.chunker)
    parsed = read_pdf(tmp_path / "supply-contract.pdf")  # with its sections
    plain = stage.run(parsed, "d", "supply-contract.pdf", lambda progress: None)
    assert [r.text for r in plain] == [r.text for r in sorted(rows.values(), key=lambda r: r.ord)]
    assert all(r.index_text.split("\n")[0].endswith("ARTICLE 12 MISCELLANEOUS") for r in plain)


def travel_wording_pdf(path):
    """A travel wording whose numbered sections are followed, in the same type, by unnumbered ones."""
    b = pdfs.PdfBuilder()
    b.heading("Section 1 - Personal belongings")
    b.paragraph("We will not pay for theft unless reported to the local police within 24 hours of discovery.")
    b.heading("Section 2 - Personal liability")
    b.paragraph("You must not admit liability or offer any payment without our written consent.")
    b.heading("General conditions")
    b.paragraph("Cover under this policy ends on the date you change your country of residence.")
    b.heading("Making a claim")
    b.paragraph("You must tell us about any incident that may lead to a claim within 31 days of your return home.")
    b.heading("Complaints")
    b.paragraph("If we cannot resolve your complaint within eight weeks you may refer it to the Ombudsman.")
    return b.save(path)


def test_unnumbered_headings_file_their_clauses_and_a_citation_names_them(tmp_path):
    """The claims condition after "Making a claim" was filed, indexed and cited under "Section 2 -
    Personal liability", with the heading glued into its quote ("Making a claim You must tell us…")."""
    from tests.conftest import NO_OLLAMA, make_settings

    bot = PolicyBot(make_settings(tmp_path / "home", ollama_host=NO_OLLAMA))
    outcome = bot.ingest_file(travel_wording_pdf(tmp_path / "travel.pdf"))
    assert outcome.status == "ingested" and outcome.sections == 5, outcome.message
    c = bot.components
    rows = c.registry.chunks(c.index.collection, c.index.store.collection.get()["ids"]).values()
    claim = next(r for r in rows if "31 days" in r.text)
    assert claim.section == "Making a claim" and claim.text.startswith("Making a claim\nYou must tell us")
    answer = bot.ask("How long have I got to tell the insurer about something that happened on my trip?")
    first = answer.citations[0]
    assert first.section == "Making a claim" and first.quote.startswith("You must tell us"), answer.citations
    assert "|ph2" in chunking_signature(c.settings, c.chunker)
    off = c.settings.model_copy(update={"plain_headings": False})
    assert "|ph2" not in chunking_signature(off, c.chunker)
    from policybot.ingestion.pdf import find_sections

    lines = find_sections(read_pdf(tmp_path / "travel.pdf", sections=False), plain_headings=False).lines
    assert [line.section for line in lines if "31 days" in line.text] == ["Section 2 - Personal liability"]  # off


def test_a_contract_set_at_tab_stops_is_cited_under_its_articles(tmp_path):
    """A supply agreement whose article numbers and titles stand at two tab stops ("4." / "TERM AND
    TERMINATION") had no section at all: every citation was unnamed and no header carried a title."""
    from tests.conftest import NO_OLLAMA, make_settings

    bot = PolicyBot(make_settings(tmp_path / "home", ollama_host=NO_OLLAMA))
    outcome = bot.ingest_file(pdfs.tabbed_contract_pdf(tmp_path / "supply-agreement.pdf"))
    assert outcome.status == "ingested" and outcome.sections == 4, outcome.message
    answer = bot.ask("Can the customer end the agreement without giving a reason?")
    assert answer.citations[0].section == "4. TERM AND TERMINATION", answer.citations
    assert "six months" in answer.citations[0].quote
    assert "|bn1" in chunking_signature(bot.components.settings, bot.components.chunker)


def travel_wording_with_definitions_pdf(path):
    """A wording whose unnumbered DEFINITIONS come after its opening paragraph and before Section 1, and
    define their terms before a colon or a dash."""
    b = pdfs.PdfBuilder()
    b.heading("SunWay Travel Insurance", size=16)
    b.paragraph("This policy wording and your schedule form your contract with us, so please keep them safe.")
    b.heading("DEFINITIONS")
    b.paragraph("Unattended: when you are not in full view of your property and not able to stop it being taken.")
    b.paragraph("Valuables - jewellery, watches, cameras and binoculars.")
    b.heading("Section 1 - Baggage")
    b.paragraph("We will not pay for Valuables left Unattended in a public place.")
    b.heading("Section 2 - Cancellation")
    b.paragraph("We will pay your share of travel costs you cannot get back if you have to cancel your trip.")
    b.heading("Making a claim")
    b.paragraph("You must tell us about any claim within 31 days of your return home.")
    return b.save(path)


def test_definitions_before_the_first_numbered_section_are_a_section_with_their_terms(tmp_path):
    """ "DEFINITIONS" above "Section 1" was a cover line: its definitions had no section, so the
    glossary read no term from them and a citation named only the page."""
    from policybot.core.glossary import glossary_of
    from tests.conftest import NO_OLLAMA, make_settings

    bot = PolicyBot(make_settings(tmp_path / "home", ollama_host=NO_OLLAMA))
    outcome = bot.ingest_file(travel_wording_with_definitions_pdf(tmp_path / "travel.pdf"))
    assert outcome.status == "ingested", outcome.message
    c = bot.components
    rows = sorted(
        c.registry.chunks(c.index.collection, c.index.store.collection.get()["ids"]).values(), key=lambda r: r.ord
    )
    assert [r.section for r in rows][:2] == ["", "DEFINITIONS"]  # the title and opening paragraph: no section
    assert list(glossary_of(rows).terms) == ["Unattended", "Valuables"]
    answer = bot.ask("what does unattended mean")
    first = answer.citations[0]
    assert first.section == "DEFINITIONS" and first.quote.startswith("Unattended: when you are not in full view")
    # The second definition of the passage, asked about, is the one quoted (its term read as the glossary reads it).
    first = bot.ask("what does valuables mean").citations[0]
    assert first.section == "DEFINITIONS" and first.quote == "Valuables - jewellery, watches, cameras and binoculars."
    assert "|gl3" in chunking_signature(c.settings, c.chunker)


def guide_pdf(path):
    """A gov.uk-style guide: numbered chapters, and smaller unnumbered sub-headings inside them."""
    b = pdfs.PdfBuilder()
    b.heading("1. Overview", size=14)
    b.paragraph("You don't usually pay tax on anything you inherit at the time you inherit it.")
    b.heading("Inheritance Tax", size=12)
    b.paragraph("You may have to pay Inheritance Tax on money and shares you inherit if the estate cannot pay it.")
    b.heading("Income Tax", size=12)
    b.paragraph("You may have to pay Income Tax on rent from a property you inherit.")
    b.heading("Capital Gains Tax", size=12)
    b.paragraph("You may have to pay Capital Gains Tax if you later sell shares you inherit.")
    b.heading("2. Money and shares", size=14)
    b.paragraph("The estate of the person who died usually pays any tax due on money and shares.")
    b.heading("If the estate cannot pay", size=12)  # a condition set as a sub-heading, as gov.uk does
    b.paragraph("You must pay the Inheritance Tax yourself within 6 months of the death.")
    return b.save(path)


def test_a_sub_heading_stands_apart_in_the_chunk_and_never_runs_into_a_quote(tmp_path):
    """With ``heading_breaks`` (off by default), gov.uk's sub-headings stay inside their chapter (no new
    section) between blank lines, so the answer quotes "You may have to pay Inheritance Tax…", not
    "Inheritance Tax You may have to pay…". A sub-heading that sets a condition ("If the estate cannot
    pay") leads the sentence it governs: the answer shows the two together, the heading first."""
    from policybot.ingestion.pdf import find_sections
    from tests.conftest import NO_OLLAMA, make_settings

    bot = PolicyBot(make_settings(tmp_path / "home", ollama_host=NO_OLLAMA, heading_breaks=True))
    assert bot.ingest_file(guide_pdf(tmp_path / "guide.pdf")).sections == 2
    c = bot.components
    rows = c.registry.chunks(c.index.collection, c.index.store.collection.get()["ids"]).values()
    overview = next(r for r in rows if r.section == "1. Overview")
    assert "inherit it.\n\nInheritance Tax\n\nYou may have to pay Inheritance Tax" in overview.text
    answer = bot.ask("Do I have to pay inheritance tax on money and shares I inherit?")
    assert answer.citations[0].quote.startswith("You may have to pay Inheritance Tax on money"), answer.citations
    money = next(r for r in rows if r.section == "2. Money and shares")
    assert "money and shares.\nIf the estate cannot pay\nYou must pay the Inheritance Tax yourself" in money.text
    answer = bot.ask("Nothing is left in my mum's estate. Do I have to pay the inheritance tax myself?")
    quotes = [" ".join(c.quote.split()) for c in answer.citations]
    assert "You must pay the Inheritance Tax yourself within 6 months of the death." in quotes
    shown = "If the estate cannot pay … You must pay the Inheritance Tax yourself within 6 months of the death."
    assert shown in answer.answer, answer.answer
    assert "|hb1" in chunking_signature(c.settings, c.chunker)
    parsed = find_sections(read_pdf(tmp_path / "guide.pdf", sections=False), plain_headings=True)
    assert not any(line.heading for line in parsed.lines)  # switched off (heading_breaks): no marks


def exclusions_pdf(path):
    """A list longer than one small chunk, introduced by a lead-in that only the first chunk holds."""
    b = pdfs.PdfBuilder()
    b.heading("V. Exclusions")
    b.paragraph("D. We do not insure for direct physical loss caused directly or indirectly by any of the following:")
    items = ["The pressure or weight of ice", "Freezing or thawing", "Rain, snow, sleet, hail, or water spray"]
    items += [f"Damage from cause number {n} listed in the schedule of the policy" for n in range(4, 16)]
    for n, item in enumerate(items, 1):
        b.paragraph(f"{n}. {item};")
    return b.save(path)


def test_a_chunk_opening_inside_a_list_is_indexed_under_its_lead_in_when_asked(tmp_path):
    """``list_lead_ins``: the list's lead-in is read from the chunk before and indexed with the chunks
    that open inside the list; the chunks shown are the same either way. Off by default (record
    2026-11-27-list-lead-ins-in-the-index)."""
    from tests.conftest import make_settings

    bot = PolicyBot(make_settings(tmp_path / "home", structure_chunk_tokens=60, list_lead_ins=True))
    bot.ingest([exclusions_pdf(tmp_path / "flood-form.pdf")])
    c = bot.components
    stored = c.registry.chunks(c.index.collection, c.index.store.collection.get()["ids"])
    rows = sorted(stored.values(), key=lambda r: r.ord)
    lead = "D. We do not insure for direct physical loss caused directly or indirectly by any of the following:"
    flat = {r.chunk_id: (" ".join(r.text.split()), " ".join(r.index_text.split())) for r in rows}
    opening = [r for r in rows if r.text.lstrip()[:1].isdigit()]
    assert len(rows) >= 3 and opening, [r.text for r in rows]
    assert all(lead in flat[r.chunk_id][0] for r in rows if r not in opening)  # the first chunk holds it
    assert all(lead not in flat[r.chunk_id][0] for r in opening)  # the shown text is never changed
    assert all(lead in flat[r.chunk_id][1] for r in opening), [r.index_text for r in opening]
    assert "|li1" in chunking_signature(c.settings, c.chunker)
    # Off (the default): the same chunks, indexed under their section only.
    off = c.settings.model_copy(update={"list_lead_ins": False})
    assert "|li1" not in chunking_signature(off, c.chunker)
    plain = ChunkStage(off, lambda: c.chunker).run(read_pdf(tmp_path / "flood-form.pdf"), "d", "f.pdf", lambda p: None)
    assert [r.text for r in plain] == [r.text for r in rows]
    assert not any(lead in " ".join(r.index_text.split()) for r in plain if r.text.lstrip()[:1].isdigit())


def test_a_clause_is_indexed_under_the_meaning_of_the_term_its_heading_names_when_asked(tmp_path):
    """``term_glosses``: the real sample policy's 2.5 *Escape of water* ("we will cover loss or damage
    caused by Escape of Water") is indexed with what *Escape of Water* means ("… water tank, water
    pipe, domestic appliance…"), so "leaking pipe" can find the cover; the text shown is the same
    either way, and a definition is not glossed. On by default (record 2026-11-29-term-glosses)."""
    from tests.conftest import SAMPLE_POLICY, make_settings

    c = PolicyBot(make_settings(tmp_path / "home", term_glosses=True)).components
    parsed = read_pdf(SAMPLE_POLICY)
    on = ChunkStage(c.settings, lambda: c.chunker).run(parsed, "d", "policy.pdf", lambda p: None)
    off_settings = c.settings.model_copy(update={"term_glosses": False})
    off = ChunkStage(off_settings, lambda: c.chunker).run(parsed, "d", "policy.pdf", lambda p: None)
    assert [r.text for r in on] == [r.text for r in off]
    cover = next(r for r in on if r.section.endswith("2.5 Escape of water"))
    flat = " ".join(cover.index_text.split())
    assert "Escape of Water: Water escaping suddenly" in flat and "water pipe" in flat
    assert not any("water pipe" in r.index_text for r in off if r.section.endswith("2.5 Escape of water"))
    assert all(a.index_text == b.index_text for a, b in zip(on, off) if "Definitions" in a.section)
    assert "|gl3" in chunking_signature(c.settings, c.chunker)
    assert "|gl3" not in chunking_signature(off_settings, c.chunker)


def test_no_chunk_holds_only_its_heading(tmp_path):
    """A section whose heading stands over its sub-sections or its table ("Section 8 Claims",
    "Annexure II") made a chunk of the heading alone, ranked on its words and quoted as a passage."""
    from tests.conftest import NO_OLLAMA, make_settings
    from tests.pdfs import PdfBuilder

    b = PdfBuilder()
    b.heading("Section 7 Cover")
    b.heading("7.1 What we pay", size=10.5)
    b.paragraph("We pay for loss or damage to your home caused by fire, storm or flood, up to the sum insured.")
    b.heading("Section 8 Claims")
    b.heading("8.1 How to claim", size=10.5)
    b.paragraph("To make a claim, call our claims line on 555-0100 within 30 days of the loss.")
    b.heading("Annexure II Benefit rates")
    b.table([["Benefit", "Rate"], ["Ambulance", "2,000"], ["Day care", "9,000"]])
    pdf = b.save(tmp_path / "claims.pdf")

    def chunks(bare_headings: str) -> list:
        home = tmp_path / bare_headings
        bot = PolicyBot(make_settings(home, ollama_host=NO_OLLAMA, bare_headings=bare_headings))
        assert bot.ingest_file(pdf).status == "ingested"
        c = bot.components
        return list(c.registry.chunks(c.index.collection, c.index.store.collection.get()["ids"]).values())

    merged = chunks("merge")
    assert not [r.text for r in merged if r.text.strip() in ("Section 8 Claims", "Annexure II Benefit rates")]
    claim = next(r for r in merged if "555-0100" in r.text)
    assert claim.section == "Section 8 Claims > 8.1 How to claim"
    assert any(r.text.strip() == "Section 8 Claims" for r in chunks("keep"))

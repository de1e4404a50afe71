"""The ingestion pipeline (policybot/ingestion/pipeline.py): its stages in order, their progress
and timings, and a failure of any stage turned into a one-line outcome that leaves nothing behind."""

from __future__ import annotations

from policybot.events import INGEST_STAGES, Progress
from policybot.ingestion.pipeline import IngestPipeline, chunking_signature
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

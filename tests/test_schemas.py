"""The public shapes' own behaviour: how a document is named to a person."""

from __future__ import annotations

from policybot.schemas import DocumentInfo, DocumentList


def _doc(name: str, title: str) -> DocumentInfo:
    return DocumentInfo(
        name=name,
        title=title,
        pages=1,
        chunks=1,
        sections=0,
        section_source="none",
        tables=0,
        embedding_model="m",
        chunker="c",
        sha256="0" * 64,
        ingested_at="2026-11-29T00:00:00",
        ingest_seconds=0.1,
        stored_path=f"/tmp/{name}",
    )


def test_a_document_is_shown_by_its_title_and_by_its_file_name_only_where_titles_are_shared():
    """ "Searched mainly in HomeShield Household Policy", not in "homeshield-household-policy.pdf";
    two editions of one policy share a title, so their file names tell them apart."""
    listing = DocumentList(
        profile="lite",
        embedding_model="m",
        documents=[
            _doc("homeshield-household-policy.pdf", "HomeShield Household Policy"),
            _doc("flood-2024.pdf", "Flood Policy"),
            _doc("flood-2025.pdf", "Flood Policy"),
            _doc("untitled.pdf", ""),
        ],
    )
    assert listing.shown_names() == {
        "homeshield-household-policy.pdf": "HomeShield Household Policy",
        "flood-2024.pdf": "flood-2024.pdf",
        "flood-2025.pdf": "flood-2025.pdf",
        "untitled.pdf": "untitled.pdf",
    }

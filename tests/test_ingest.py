"""Reading PDFs: pages, sections, tables, running footers, and a clear error per bad file."""

import pytest

from policybot.ingest import IngestError, read_pdf


def _section_of(doc, needle):
    return next(line for line in doc.lines if needle in line.text)


def test_pages_sections_and_title(policy_pdf):
    doc = read_pdf(policy_pdf)
    assert doc.page_count == 5
    assert doc.title == "Acme Home Insurance Policy"  # the biggest line on page 1
    assert doc.section_source == "patterns"
    insured = _section_of(doc, "Insured Person means")
    assert insured.page == 1
    assert insured.section == "Section 1 Definitions > 1.1 Insured Person"
    cooling = _section_of(doc, "cancel within fourteen days")
    assert cooling.page == 5
    assert cooling.section == "Section 4 Cancellation > 4.1 Cooling-off period"
    assert len(doc.sha256) == 64


def test_outline_gives_the_sections(outlined_pdf):
    doc = read_pdf(outlined_pdf)
    assert doc.section_source == "outline"
    assert _section_of(doc, "We will not pay for loss").section == "Section 2 Exclusions > 2.1 Gradual deterioration"


def test_table_is_one_markdown_block(policy_pdf):
    doc = read_pdf(policy_pdf)
    tables = [line for line in doc.lines if line.kind == "table"]
    assert doc.tables == 1 and len(tables) == 1
    rows = tables[0].text.splitlines()
    assert rows[0].replace(" ", "") == "|Cover|Standarddeductible|Escapeofwater|"
    assert len(rows) == 5  # header, separator, 3 rows
    assert tables[0].section == "Section 3 Deductibles"
    # Cell text is not repeated as loose lines.
    assert not any(line.kind == "text" and line.text.strip() == "$750" for line in doc.lines)


def test_running_footer_removed_and_image_page_reported(policy_pdf):
    doc = read_pdf(policy_pdf)
    assert not any("Acme Home Policy - page" in line.text for line in doc.lines)
    assert doc.empty_pages == [4]
    kept = read_pdf(policy_pdf, strip_running_headers=False)
    assert any("Acme Home Policy - page 2 of 5" in line.text for line in kept.lines)


def test_progress_reports_every_page(policy_pdf):
    seen = []
    read_pdf(policy_pdf, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 5) for i in range(1, 6)]


@pytest.mark.parametrize(
    "fixture, kind, words",
    [
        ("scanned_pdf", "scanned", ["no extractable text", "3 pages", "OCR"]),
        ("encrypted_pdf", "encrypted", ["password-protected"]),
        ("corrupt_pdf", "corrupt", ["cannot be read as a PDF"]),
        ("empty_file", "empty", ["empty"]),
        ("not_pdf", "not_pdf", ["not a PDF"]),
    ],
)
def test_bad_files_get_one_clear_line(request, fixture, kind, words):
    path = request.getfixturevalue(fixture)
    with pytest.raises(IngestError) as info:
        read_pdf(path)
    err = info.value
    assert err.kind == kind
    assert "\n" not in err.message and path.name in err.message
    for word in words:
        assert word in err.message
    if kind == "scanned":
        assert err.pages == 3


def test_missing_and_oversize_files(tmp_path, policy_pdf):
    with pytest.raises(IngestError) as info:
        read_pdf(tmp_path / "nope.pdf")
    assert info.value.kind == "not_found"
    with pytest.raises(IngestError) as info:
        read_pdf(policy_pdf, max_mb=0.001)
    assert info.value.kind == "too_large" and "MB" in info.value.message

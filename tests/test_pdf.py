"""Reading PDFs: pages, sections, tables, running footers, and a clear error per bad file."""

import pytest

from policybot.ingestion.files import MAX_NAME_CHARS, safe_upload_name
from policybot.ingestion.pdf import IngestError, read_pdf
from tests import pdfs


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


def test_a_number_and_its_title_at_two_tab_stops_head_a_section(tmp_path):
    doc = read_pdf(pdfs.tabbed_contract_pdf(tmp_path / "supply-agreement.pdf"))
    assert doc.section_source == "patterns"
    assert _section_of(doc, "remains in force for five years").section == "4. TERM AND TERMINATION"
    assert _section_of(doc, "pays each invoice").section == "3. PRICE AND PAYMENT"
    assert _section_of(doc, "SUPPLY AGREEMENT").section == ""  # the title above the first article heads nothing


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
    read_pdf(policy_pdf, progress=seen.append)
    assert [(p.file, p.stage, p.done, p.total) for p in seen] == [(policy_pdf.name, "read", i, 5) for i in range(1, 6)]


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


# --- damaged files and running headers (issue 8) ----------------------------------------------


def test_truncated_pdf_is_damaged_not_scanned(tmp_path):
    path = pdfs.truncated_pdf(tmp_path / "truncated.pdf")
    with pytest.raises(IngestError) as info:
        read_pdf(path)
    err = info.value
    assert err.kind == "corrupt", err.message  # was "scanned: no extractable text (a scan?)"
    assert err.message.startswith("truncated.pdf: damaged PDF: none of its 2 pages could be read")
    assert "OCR" not in err.message and "\n" not in err.message


def test_garbled_pdf_is_read_with_a_damage_warning(tmp_path, policy_pdf):
    path = pdfs.garbled_xref_pdf(tmp_path / "garbled.pdf", policy_pdf)
    doc = read_pdf(path)
    assert doc.page_count == 5 and any("Insured Person means" in ln.text for ln in doc.lines)
    [warning] = doc.warnings
    assert warning.startswith("damaged PDF: 5 of 5 pages recovered")
    assert read_pdf(policy_pdf).warnings == []


def test_clause_numbered_first_lines_are_kept_and_page_footer_dropped(tmp_path):
    path = pdfs.clause_first_lines_pdf(tmp_path / "clauses.pdf", pages=6)
    doc = read_pdf(path)
    firsts = [ln.text for ln in doc.lines if ln.text.startswith("Clause ")]
    assert len(firsts) == 6, firsts  # the old filter dropped all six (same text, numbers aside)
    assert firsts[2].startswith("Clause 3. The insurer pays claims within 3 days.")
    assert not any(ln.text.startswith("PAGE ") for ln in doc.lines)
    assert doc.stripped_lines == 6 and doc.stripped_example == "PAGE 1 OF 6"


def test_real_running_lines_still_go(policy_pdf):
    doc = read_pdf(policy_pdf)
    assert doc.stripped_lines == 5 and doc.stripped_example == "Acme Home Policy - page 1 of 5"
    assert read_pdf(policy_pdf, strip_running_headers=False).stripped_lines == 0


def test_mupdf_messages_never_reach_stdout(tmp_path, capfd):
    read_pdf(pdfs.garbled_xref_pdf(tmp_path / "garbled.pdf", pdfs.sample_policy(tmp_path / "src.pdf")))
    with pytest.raises(IngestError):
        read_pdf(pdfs.truncated_pdf(tmp_path / "truncated.pdf"))
    captured = capfd.readouterr()  # file descriptors: MuPDF writes from C, not through sys.stdout
    assert "MuPDF" not in captured.out + captured.err


def test_upload_names_are_reduced_to_safe_base_names():
    cases = {
        "![x](http://127.0.0.1:8799/pixel-from-name.png) [y](javascript:alert(5)).pdf": "pixel-from-name.png y "
        "javascript alert 5.pdf",
        "../../evil.pdf": "evil.pdf",
        "/tmp/x/abs-evil.pdf": "abs-evil.pdf",
        "C:\\Users\\me\\policy [2024].PDF": "policy 2024.pdf",
        "política-ñ-测试.pdf": "política-ñ-测试.pdf",
        "bell\x07\x1b[31mred.pdf": "bell 31mred.pdf",
        ".pdf": "document.pdf",
    }
    for raw, expected in cases.items():
        assert safe_upload_name(raw) == expected, raw
    long = safe_upload_name("a" * 300 + ".pdf")
    assert len(long) == MAX_NAME_CHARS and long.endswith(".pdf")


# --- tables only where a page can hold one (issue 24) ------------------------------------------------


def test_find_tables_runs_only_where_the_drawings_could_make_a_grid(tmp_path, policy_pdf):
    import pymupdf

    from policybot.ingestion.pdf import could_hold_table

    with pymupdf.open(policy_pdf) as doc:
        grids = [could_hold_table(page) for page in doc]
        with_table = [p.number for p in doc if [t for t in p.find_tables().tables if t.row_count >= 2]]
    assert with_table and all(grids[n] for n in with_table)  # the page with the table is tested
    assert grids.count(False) >= 1  # text pages skip find_tables

    doc = pymupdf.open()
    framed = doc.new_page()
    framed.draw_rect(framed.rect + (20, 20, -20, -20))  # a frame around the page, and one rule
    framed.draw_line((72, 400), (500, 400))
    framed.insert_text((72, 100), "Section 1 Cover. We pay for loss or damage.")
    filled = doc.new_page()
    for row in range(3):
        for col in range(3):  # a grid of filled cells, no stroked lines
            filled.draw_rect(
                pymupdf.Rect(72 + col * 100, 100 + row * 20, 170 + col * 100, 118 + row * 20),
                fill=(0.9, 0.9, 0.9),
                color=None,
            )
    assert not could_hold_table(doc[0])  # a frame and a rule make no grid
    assert could_hold_table(doc[1])


# --- a table is written once per cell, and text in a ruled box is read as text ---------------------


def test_a_spanned_cell_is_written_once_and_empty_columns_are_dropped():
    from policybot.ingestion.tables import grid_markdown

    rows = [
        ["Rate", "First payment", None, ""],
        ["Higher rate", "£3,500", "£350", ""],
        ["Lower rate", "£2,500", "£100", ""],
    ]
    assert grid_markdown(rows) == (
        "|Rate|First payment||\n|---|---|---|\n|Higher rate|£3,500|£350|\n|Lower rate|£2,500|£100|"
    )
    assert grid_markdown([["a|b", "c\nd"], ["1", "2"]]) == "|a/b|c d|\n|---|---|\n|1|2|"  # one row per line


def test_text_drawn_in_a_ruled_grid_is_not_a_table():
    from policybot.ingestion.tables import grid_markdown

    preamble = "This Manufacturing Agreement is made and entered into as of the 20th day of March"
    # A sentence in a box whose rules make a grid of eight columns: most cells are spans of the first.
    rows = [
        [preamble] + [None] * 7,
        ["by and between Antares Pharma, Inc."] + [None] * 7,
        ["Agreement", "Col"] + [None] * 6,
    ]
    assert grid_markdown(rows) is None
    assert grid_markdown([["only one column"], ["of text"]]) is None


def test_a_boxed_preamble_is_read_as_text_and_a_real_table_as_one_block(tmp_path):
    """Rules drawn around a paragraph make a grid for find_tables; its cells are spans, so the page
    is read as lines (one sentence, once). A real table beside it stays one Markdown block."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    # The boxed preamble: horizontal rules across, vertical rules only at the ends, except one short
    # inner rule in the first row (what the contract's layout draws): a grid of spanned cells.
    left, right, top = 60, 540, 80
    for i in range(5):
        page.draw_line((left, top + i * 20), (right, top + i * 20))
    page.draw_line((left, top), (left, top + 80))
    page.draw_line((right, top), (right, top + 80))
    for x in (180, 300, 420):
        page.draw_line((x, top), (x, top + 20))
    lines = [
        "This Agreement is made between Antares Pharma, Inc.",
        "and AMAG Pharmaceuticals, Inc.,",
        "each a Party,",
        "and collectively the Parties.",
    ]
    for i, text in enumerate(lines):
        page.insert_text((left + 4, top + 14 + i * 20), text, fontsize=10)
    # A real table below it: 3 columns, 3 rows, every cell its own.
    cells = [["Cover", "Deductible", "Limit"], ["Buildings", "$250", "$50,000"], ["Contents", "$100", "$20,000"]]
    for r in range(4):
        page.draw_line((60, 300 + r * 20), (420, 300 + r * 20))
    for c in range(4):
        page.draw_line((60 + c * 120, 300), (60 + c * 120, 360))
    for r, row in enumerate(cells):
        for c, text in enumerate(row):
            page.insert_text((64 + c * 120, 314 + r * 20), text, fontsize=10)
    path = tmp_path / "boxed.pdf"
    doc.save(path)

    read = read_pdf(path)
    tables = [line.text for line in read.lines if line.kind == "table"]
    texts = [line.text for line in read.lines if line.kind == "text"]
    assert tables == ["|Cover|Deductible|Limit|\n|---|---|---|\n|Buildings|$250|$50,000|\n|Contents|$100|$20,000|"]
    assert "Col" not in "".join(tables)
    joined = " ".join(texts)
    assert joined.count("Antares Pharma") == 1 and "and collectively the Parties." in joined


def test_a_page_number_footer_goes_even_on_a_two_page_document(tmp_path):
    """Too few pages to tell a running line by repetition, but a line that is only a page number
    ("PAGE 1 OF 2", "Page 2", "- 35 -") in the footer's place is page furniture, not text."""
    doc = read_pdf(pdfs.clause_first_lines_pdf(tmp_path / "two.pdf", pages=2))
    assert not any(ln.text.startswith("PAGE ") for ln in doc.lines)
    assert doc.stripped_lines == 2 and doc.stripped_example == "PAGE 1 OF 2"
    assert any(ln.text.startswith("Clause 2. The insurer pays claims") for ln in doc.lines)
    footers = {
        # One that names the document before its page number ("… - Page 1 of 2"): it was quoted inside a
        # sentence of the page it ended ("…claims arising Arogya Shield… Page 1 of 2 due to…").
        "Arogya Shield Health Policy - UIN ASH-2026 - Page {n} of {total}": "Arogya",
        # One that ends in a bare page number after other words, one more on the second page.
        "JSY Operational Guidelines, Version 2.1 | {n}": "Version 2.1",
        # One that is the same on both pages: it ran into the sentence a page break cut ("you may drive
        # another Roadsure Private Car Policy Booklet RS-PC-0426 private car…").
        "Roadsure Private Car Policy Booklet RS-PC-0426": "Roadsure",
        # One that ends in its page number, however many words name the document before it.
        "Assured Shorthold Tenancy Agreement - 14 Elm Road - page {n} of {total}": "Elm Road",
    }
    for i, (footer, words) in enumerate(footers.items()):
        read = read_pdf(pdfs.clause_first_lines_pdf(tmp_path / f"footer{i}.pdf", pages=2, footer=footer))
        assert read.stripped_lines == 2 and not any(words in ln.text for ln in read.lines), footer
        assert any(ln.text.startswith("Clause 2. The insurer pays claims") for ln in read.lines), footer

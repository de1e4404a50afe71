"""Scanned pages read by Tesseract: image-only PDFs made from PDFs whose text is known, mixed
documents, confidence and flagging, progress, and a machine without the engine (issue 13).

The tests that need the real engine skip when `tesseract` is not installed (`make` installs it
as root); those about its absence always run, with a command name that does not exist."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from policybot.doctor import run_checks
from policybot.ingestion.ocr import TesseractOCR, parse_tsv
from policybot.ingestion.pdf import MIN_OCR_DPI, ocr_dpi, read_pdf
from policybot.service import PolicyBot
from policybot.settings import OcrSettings
from tests import pdfs
from tests.conftest import make_settings

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="tesseract is not installed (`make` installs it as root)"
)
NO_ENGINE = "/nonexistent/tesseract"


@pytest.fixture(scope="module")
def scanned_policy(tmp_path_factory) -> Path:
    """The test policy (5 pages, text known) with every page an image at 200 dpi."""
    folder = tmp_path_factory.mktemp("scans")
    return pdfs.scan_of(pdfs.sample_policy(folder / "acme.pdf"), folder / "scanned-policy.pdf")


@pytest.fixture(scope="module")
def digital_policy(tmp_path_factory) -> Path:
    return pdfs.sample_policy(tmp_path_factory.mktemp("digital") / "acme.pdf")


@pytest.fixture(scope="module")
def scanned_home(tmp_path_factory, scanned_policy) -> tuple[Path, list]:
    """The scanned policy ingested once, with the progress events it produced."""
    home = tmp_path_factory.mktemp("scanned-home") / "home"
    events: list = []
    outcome = PolicyBot(make_settings(home, llm_mode="off")).ingest_file(scanned_policy, progress=events.append)
    assert outcome.status == "ingested", outcome.message
    return home, events


def _tsv(*rows: tuple[int, int, int, str, float, tuple[int, int, int, int]]) -> str:
    header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    lines = [header]
    for i, (block, par, line, text, conf, (left, top, width, height)) in enumerate(rows):
        lines.append(f"5\t1\t{block}\t{par}\t{line}\t{i}\t{left}\t{top}\t{width}\t{height}\t{conf}\t{text}")
    return "\n".join(lines)


def test_tsv_words_become_lines_in_points_with_a_length_weighted_confidence():
    tsv = _tsv(
        (1, 1, 1, "Flood", 90.0, (100, 100, 50, 20)),
        (1, 1, 1, "insurance", 60.0, (160, 102, 90, 20)),
        (1, 1, 2, "~", 12.0, (100, 140, 5, 5)),  # a speck of noise read as a symbol: dropped
        (2, 1, 1, "75%", 40.0, (300, 400, 40, 20)),  # low confidence, but a number: kept
    )
    first, second = parse_tsv(tsv, 72.0 / 200)
    assert first.text == "Flood insurance" and first.block == 1
    assert first.confidence == pytest.approx((90 * 5 + 60 * 9) / 14, abs=0.05)
    assert (first.x0, first.y0) == pytest.approx((100 * 0.36, 100 * 0.36))
    assert first.y1 == pytest.approx(122 * 0.36)
    assert second.text == "75%" and second.confidence == 40.0


@needs_tesseract
def test_a_scanned_policy_is_read_with_its_page_numbers(scanned_home):
    home, _ = scanned_home
    bot = PolicyBot(make_settings(home, llm_mode="off"))
    [doc] = bot.library.documents().documents
    assert set(doc.ocr_pages) == {1, 2, 3, 4, 5}  # page 4, a picture, still has its footer
    assert all(80 <= c <= 100 for c in doc.ocr_pages.values()) and doc.ocr_flagged == []
    hit = bot.search("What does Insured Person mean?", k=3).hits[0]
    assert hit.page_start == 1 and "insured person" in hit.text.lower()
    cancel = bot.search("cancel within fourteen days refund the premium", k=3).hits[0]
    assert cancel.page_start == 5
    answer = bot.ask("Who counts as an insured person?", use_llm=False)
    top = answer.shown_citations[0]
    assert top.page_start == 1 and top.ocr_confidence is not None and top.ocr_confidence >= 80
    assert "twenty-one" in top.text


@needs_tesseract
def test_ocr_text_matches_the_text_layer_it_was_made_from(scanned_policy, digital_policy):
    """Character agreement with the digital original, page by page (the benchmark's CER, small)."""
    from difflib import SequenceMatcher

    settings = OcrSettings(dpi=200)
    scanned = read_pdf(scanned_policy, ocr=_plan(settings))
    digital = read_pdf(digital_policy)
    for page in (1, 2, 5):
        ocr = " ".join(" ".join(line.text.split()) for line in scanned.lines if line.page == page).lower()
        true = " ".join(
            " ".join(line.text.split()) for line in digital.lines if line.page == page and line.kind == "text"
        ).lower()
        assert SequenceMatcher(None, ocr, true, autojunk=False).ratio() > 0.9, page


@needs_tesseract
def test_progress_reports_each_scanned_page(scanned_home):
    _, events = scanned_home
    ocr = [(e.done, e.total) for e in events if e.stage == "ocr"]
    assert ocr and ocr[-1][0] == ocr[-1][1] == len(ocr)
    assert [done for done, _ in ocr] == list(range(1, len(ocr) + 1))


@needs_tesseract
def test_in_a_mixed_document_only_the_image_only_page_is_read_by_ocr(tmp_path, digital_policy):
    mixed = pdfs.scan_of(digital_policy, tmp_path / "mixed.pdf", pages={2})
    parsed = read_pdf(mixed, ocr=_plan(OcrSettings()))
    assert set(parsed.ocr_pages) == {2}
    digital = read_pdf(digital_policy)
    for page in (1, 3, 5):  # digital pages are read exactly as before
        assert [ln.text for ln in parsed.lines if ln.page == page] == [
            ln.text for ln in digital.lines if ln.page == page
        ]
    assert any("Gradual deterioration" in ln.text for ln in parsed.lines if ln.page == 2)


@needs_tesseract
def test_pages_under_the_confidence_floor_are_flagged_everywhere(tmp_path, scanned_policy):
    """A floor above what the scan reached: every OCR'd page is flagged in the outcome, the
    library listing and each citation's confidence (the app and CLI mark them)."""
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off", ocr={"confidence_floor": 99.9}))
    outcome = bot.ingest_file(scanned_policy)
    assert outcome.status == "ingested" and "low OCR confidence (under 100%)" in outcome.message
    [doc] = bot.library.documents().documents
    assert doc.ocr_flagged == sorted(doc.ocr_pages)
    top = bot.ask("Who counts as an insured person?", use_llm=False).shown_citations[0]
    assert top.ocr_confidence is not None and top.ocr_confidence < 99.9


def test_without_tesseract_doctor_says_what_to_install_and_scans_are_reported(tmp_path, scanned_pdf):
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off", ocr={"tesseract_cmd": NO_ENGINE}))
    check = next(c for c in run_checks(bot).checks if c.name == "ocr")
    assert not check.ok and not check.required and "apt-get install tesseract-ocr" in (check.fix or "")
    outcome = bot.ingest_file(scanned_pdf)
    assert outcome.status == "failed" and "apt-get install tesseract-ocr" in outcome.message
    mixed = pdfs.scan_of(pdfs.sample_policy(tmp_path / "acme.pdf"), tmp_path / "mixed.pdf", pages={2})
    outcome = bot.ingest_file(mixed)
    assert outcome.status == "ingested"
    assert "1 scanned page(s) not read: 2; install Tesseract" in outcome.message


def test_a_language_that_is_not_installed_is_named_with_its_package(tmp_path):
    engine = TesseractOCR(OcrSettings(language="eng+zzz"))
    health = engine.health()
    if not health.available:
        pytest.skip("tesseract is not installed")
    assert health.missing == ["zzz"] and "eng" in health.languages
    assert "tesseract-ocr-zzz" in health.fix("policybot doctor")
    bot = PolicyBot(make_settings(tmp_path / "home", ocr={"language": "eng+zzz"}))
    check = next(c for c in run_checks(bot).checks if c.name == "ocr")
    assert not check.ok and "zzz not installed" in check.detail


def test_ocr_turned_off_leaves_scans_out_and_says_so(tmp_path, scanned_pdf):
    bot = PolicyBot(make_settings(tmp_path / "home", ocr={"enabled": False}))
    outcome = bot.ingest_file(scanned_pdf)
    assert outcome.status == "failed" and "POLICYBOT_OCR__ENABLED" in outcome.message
    check = next(c for c in run_checks(bot).checks if c.name == "ocr")
    assert check.ok and "turned off" in check.detail


def _plan(settings: OcrSettings):
    from policybot.ingestion.pdf import OcrPlan

    return OcrPlan(TesseractOCR(settings), settings)


def test_hanging_list_numbers_go_back_to_their_items():
    """Tesseract reads a column of clause numbers as a block of its own ("20." "21." stacked);
    each goes back to the line beside it, so items keep their numbers and no chunk is bare numbers."""
    from policybot.ingestion.ocr import OcrLine, attach_markers

    def line(text, x0, y0, block, words=None):
        return OcrLine(
            text, x0, y0, x0 + 200, y0 + 10, block, 95.0, len(text), 0.1, words or [(text, (x0, y0, x0 + 200, y0 + 10))]
        )

    numbers = line("20. 21.", 50, 100, 1, [("20.", (50, 100, 62, 110)), ("21.", (50, 130, 62, 140))])
    first, second = line("Policy. The entire written contract", 70, 100, 2), line("Pollution damage means", 70, 131, 2)
    far = line("Unrelated text in the other column", 400, 100, 3)
    merged = attach_markers([numbers, first, second, far])
    assert [ln.text for ln in merged] == [
        "20. Policy. The entire written contract",
        "21. Pollution damage means",
        "Unrelated text in the other column",
    ]
    assert merged[0].x0 == 50


@pytest.mark.parametrize(
    "read, printed",
    [
        ("Il. DEFINITIONS", "II. DEFINITIONS"),
        ("Ill. PROPERTY INSURED", "III. PROPERTY INSURED"),
        ("Vi. DEDUCTIBLES", "VI. DEDUCTIBLES"),
        ("Vil. GENERAL CONDITIONS", "VII. GENERAL CONDITIONS"),
        ("1. AGREEMENT", "1. AGREEMENT"),
        ("i) the first item", "i) the first item"),
        ("Il. Lower case text", "Il. Lower case text"),
    ],
)
def test_roman_numerals_misread_by_ocr_are_restored_on_capitalised_headings(read, printed):
    from policybot.ingestion.ocr import roman_heading

    assert roman_heading(read) == printed


@needs_tesseract
def test_a_poor_scan_is_flagged_at_the_default_floor(tmp_path):
    """A page scanned at 100 dpi with heavy noise (the calibration's unreadable kind) is read,
    scores under the default floor, and is flagged; the clean digital pages are not OCR'd at all."""
    poor = pdfs.scan_of(pdfs.sample_policy(tmp_path / "acme.pdf"), tmp_path / "poor.pdf", pages={2}, dpi=100, noise=45)
    bot = PolicyBot(make_settings(tmp_path / "home", llm_mode="off"))
    outcome = bot.ingest_file(poor)
    [doc] = bot.library.documents().documents
    assert list(doc.ocr_pages) == [2]  # some words are read (52% with Tesseract 5.3), badly
    assert doc.ocr_pages[2] < bot.settings.ocr.confidence_floor and doc.ocr_flagged == [2]
    assert "low OCR confidence (under 80%) on page(s) 2" in outcome.message


@needs_tesseract
def test_the_cli_lists_and_cites_scanned_pages(tmp_path, scanned_policy):
    from tests.test_cli import plain, run

    home = tmp_path / "home"
    ingest = run(home, "ingest", str(scanned_policy))
    assert ingest.exit_code == 0 and "5 scanned page(s) read by OCR" in plain(ingest.output)
    listing = json.loads(run(home, "docs", "--json").output)["documents"][0]
    assert sorted(map(int, listing["ocr_pages"])) == [1, 2, 3, 4, 5] and listing["ocr_flagged"] == []
    assert "OCR" in plain(run(home, "docs").output)  # the table's column
    found = plain(run(home, "search", "cancel within fourteen days").output)
    assert "text read by OCR (" in found
    answer = plain(run(home, "ask", "Who counts as an insured person?", "--no-llm").output)
    assert "text read by OCR (" in answer and "compare with the page" in answer


# --- hostile files (issue 23) ----------------------------------------------------------------------


def huge_image_page(path: Path, side_pt: float) -> Path:
    """A few-KB PDF whose one page is ``side_pt`` points square and holds only a tiny image."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=side_pt, height=side_pt)
    pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 20, 20), False)
    pix.clear_with(200)
    page.insert_image(page.rect, pixmap=pix)
    doc.save(path)
    return path


def test_the_ocr_resolution_is_capped_by_pixels_per_page():
    import pymupdf

    letter, a0 = pymupdf.Rect(0, 0, 612, 792), pymupdf.Rect(0, 0, 2384, 3370)
    assert ocr_dpi(letter, 300, 40.0) == 300  # an ordinary page keeps its resolution
    lowered = ocr_dpi(a0, 300, 40.0)
    assert lowered is not None and MIN_OCR_DPI <= lowered < 300
    assert (a0.width / 72 * lowered) * (a0.height / 72 * lowered) <= 40e6
    assert ocr_dpi(pymupdf.Rect(0, 0, 7200, 7200), 300, 40.0) is None  # 100 inches square: not rendered at all
    assert ocr_dpi(pymupdf.Rect(0, 0, 0, 0), 300, 40.0) is None


@needs_tesseract
def test_a_page_too_large_to_render_is_reported_not_read(tmp_path, digital_policy):
    """A 5 KB PDF with a 100-inch page would take gigabytes at 300 dpi: it is named in plain words."""
    import pymupdf

    mixed = tmp_path / "mixed.pdf"
    with pymupdf.open(digital_policy) as doc, pymupdf.open(huge_image_page(tmp_path / "big.pdf", 7200)) as big:
        doc.insert_pdf(big)
        doc.save(mixed)
    outcome = PolicyBot(make_settings(tmp_path / "home", llm_mode="off")).ingest_file(mixed)
    assert outcome.status == "ingested", outcome.message
    assert "1 scanned page(s) too large to read by OCR: 6 (scan them at a normal page size)" in outcome.message
    only = PolicyBot(make_settings(tmp_path / "home2", llm_mode="off")).ingest_file(
        huge_image_page(tmp_path / "huge.pdf", 14400)
    )
    assert only.status == "failed" and "\n" not in only.message
    assert only.message.endswith("its 1 scanned page(s) are too large to read by OCR; scan them at a normal page size")


def test_a_document_over_the_page_limit_is_refused_in_one_line(tmp_path, digital_policy):
    outcome = PolicyBot(make_settings(tmp_path / "home", llm_mode="off", max_pages=3)).ingest_file(digital_policy)
    assert outcome.status == "failed"
    assert outcome.message.endswith("acme.pdf: 5 pages is over the 3-page limit (POLICYBOT_MAX_PAGES)"), outcome.message

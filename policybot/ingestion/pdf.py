"""Reading a PDF into page-numbered, section-labelled lines and whole tables.

Nothing here writes anywhere: a document is read completely (or rejected with one clear
``IngestError``) before the index is touched, which is what keeps ingestion atomic.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pymupdf

from policybot.errors import IngestError
from policybot.events import Progress, ProgressFn
from policybot.ingestion.files import check_file, sha256_of
from policybot.ingestion.ocr import INSTALL_HINT, OcrPage, TesseractOCR, attach_markers, roman_heading
from policybot.ingestion.sections import detect_sections
from policybot.ingestion.tables import table_markdown
from policybot.settings import OcrSettings

# Running headers and footers ("PAGE 19 OF 30") are not content and break sentences across
# pages. A line is taken for one only when it looks like one on every count: it sits in the
# top or bottom band of the page, is short, is no bigger than body text, stands in a text
# block of its own apart from the body, and the same text (numbers aside) is on most pages.
# Content that merely repeats (a clause-numbered first line on every page) fails the block
# and gap tests and is kept.
RUNNING_BAND = 0.08
RUNNING_MAX_WORDS = 12
RUNNING_MAX_CHARS = 80
# The gap to the nearest body line, in heights of the line itself.
RUNNING_MIN_GAP = 0.5
# A page is a scan when images cover at least this share of it and it has (almost) no text: a
# logo or a photo on a text page is not, a scanned sheet (edge to edge, or nearly) is.
IMAGE_PAGE_SHARE = 0.5
# Bold on a scanned page: its ink share over the page's usual one. Body lines of the scanned FEMA
# Dwelling Form and the HomeShield sample reach 1.09 (1.16 with a bold run-in term), headings
# start at 1.23: provisional, fitted on those two documents (eval/decisions/2026-11-24-ocr-engine.md).
BOLD_INK_RATIO = 1.18
# MuPDF's messages that mean a page's content could not be read as written.
_DAMAGE = re.compile(
    r"cannot load|format error|syntax error|not a stream|premature end|page may not be correct|non-page object", re.I
)
# Keep ligature expansion (no PRESERVE_LIGATURES) so "ﬁre" is indexed as "fire".
_TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP


@dataclass
class Line:
    """One line of text, or one whole table (``kind='table'``, Markdown)."""

    text: str
    page: int  # 1-based
    bold: bool = False
    size: float = 0.0
    kind: Literal["text", "table"] = "text"
    joins_next: bool = False  # ended in a soft hyphen: the word continues on the next line
    section: str = ""
    y0: float = -1.0  # vertical extent on the page; -1 when unknown (tables)
    y1: float = -1.0
    block: int = -1  # the PyMuPDF text block the line came from
    heading: bool = False  # read as an unnumbered heading: set apart from the text around it in a chunk


@dataclass
class ParsedDocument:
    path: Path
    file_name: str
    sha256: str
    title: str
    page_count: int
    lines: list[Line]
    toc: list[list] = field(default_factory=list)  # the PDF's outline: [level, title, page]
    sections_found: int = 0
    section_source: str = "none"
    empty_pages: list[int] = field(default_factory=list)
    tables: int = 0
    stripped_lines: int = 0  # running header/footer lines removed
    stripped_example: str = ""
    warnings: list[str] = field(default_factory=list)  # for the user: damage, repairs
    ocr_pages: dict[int, float] = field(default_factory=dict)  # page -> OCR confidence (0-100)
    ocr_unread: list[int] = field(default_factory=list)  # image-only pages left unread (no OCR)
    ocr_too_large: list[int] = field(default_factory=list)  # image-only pages too large to render for OCR
    ocr_seconds: float = 0.0

    def low_confidence_pages(self, floor: float) -> list[int]:
        return sorted(page for page, confidence in self.ocr_pages.items() if confidence < floor)


@dataclass
class OcrPlan:
    """How image-only pages are read: the engine (None: not at all) and its settings."""

    engine: TesseractOCR | None
    settings: OcrSettings
    fix: str = INSTALL_HINT  # what makes OCR usable, when engine is None


def _span_is_bold(span: dict) -> bool:
    return bool(span.get("flags", 0) & 16) or "bold" in str(span.get("font", "")).lower()


# PyMuPDF's find_tables (its "lines" strategy) builds a grid from the page's vector lines and
# rectangle sides of at least EDGE_MIN_LENGTH points: a table of two rows and two columns needs at
# least three horizontal and three vertical edges. A page with fewer cannot hold one.
EDGE_MIN_LENGTH = 3.0
MIN_GRID_EDGES = 3


def could_hold_table(page: pymupdf.Page) -> bool:
    """Whether the page's drawings hold enough horizontal and vertical edges for find_tables to
    find a table (a cheap test: find_tables costs about 0.2 s a page, this a few milliseconds)."""
    across = down = 0
    for path in page.get_cdrawings():
        for item in path.get("items", ()):
            if item[0] == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                if abs(y0 - y1) <= 1 and abs(x1 - x0) >= EDGE_MIN_LENGTH:
                    across += 1
                elif abs(x0 - x1) <= 1 and abs(y1 - y0) >= EDGE_MIN_LENGTH:
                    down += 1
            elif item[0] in ("re", "qu"):
                box = pymupdf.Rect(item[1]) if item[0] == "re" else pymupdf.Quad(item[1]).rect
                across += 2 if box.width >= EDGE_MIN_LENGTH else 0
                down += 2 if box.height >= EDGE_MIN_LENGTH else 0
            if across >= MIN_GRID_EDGES and down >= MIN_GRID_EDGES:
                return True
    return False


def _page_lines(page: pymupdf.Page, page_no: int, detect_tables: bool) -> tuple[list[Line], int]:
    tables = []
    if detect_tables and could_hold_table(page):
        try:
            found = page.find_tables()
            # A frame around the page is not a table: demand a real grid.
            grids = [t for t in found.tables if t.row_count >= 2 and t.col_count >= 2]
            tables = [(t, md) for t in grids if (md := table_markdown(t)) is not None]  # not text in a ruled box
        except Exception:  # table detection is best effort; text extraction is not
            tables = []
    boxes = [pymupdf.Rect(t.bbox) for t, _ in tables]
    emitted: set[int] = set()
    lines: list[Line] = []
    data = page.get_text("dict", flags=_TEXT_FLAGS)
    for block_no, block in enumerate(data.get("blocks", [])):
        for raw in block.get("lines", []):
            spans = raw.get("spans", [])
            text = "".join(s.get("text", "") for s in spans).replace("\t", " ").rstrip("\n")
            if not text.strip():
                continue
            bbox = pymupdf.Rect(raw["bbox"])
            inside = next(
                (
                    i
                    for i, box in enumerate(boxes)
                    if box.contains(pymupdf.Point((bbox.x0 + bbox.x1) / 2, (bbox.y0 + bbox.y1) / 2))
                ),
                None,
            )
            if inside is not None:
                if inside not in emitted:
                    emitted.add(inside)
                    lines.append(Line(tables[inside][1], page_no, kind="table"))
                continue
            visible = [s for s in spans if s.get("text", "").strip()]
            bold = bool(visible) and all(_span_is_bold(s) for s in visible)
            size = max((float(s.get("size", 0.0)) for s in visible), default=0.0)
            joins = text.rstrip().endswith("\xad")
            text = text.replace("\xad", "").strip() if joins else text.replace("\xad", "")
            lines.append(Line(text, page_no, bold, size, joins_next=joins, y0=bbox.y0, y1=bbox.y1, block=block_no))
    for i, (_, markdown) in enumerate(tables):  # tables with no text line inside still count
        if i not in emitted:
            lines.append(Line(markdown, page_no, kind="table"))
    return lines, len(tables)


def _running_key(text: str) -> str:
    return re.sub(r"\d+", "#", re.sub(r"\s+", " ", text.strip().lower()))


def _running_candidate(line: Line, page: list[Line], height: float, body_size: float) -> bool:
    """Whether a line looks like a running header or footer on its own page."""
    text = line.text.strip()
    if line.kind != "text" or not _in_band(line, height):
        return False
    # A line that ends in its page number ("… - 14 Elm Road - page 1 of 2") is page furniture however
    # many words name the document before it; the length cap still holds.
    numbered = bool(_PAGE_NUMBER.match(text))
    if len(text) > RUNNING_MAX_CHARS or (len(text.split()) > RUNNING_MAX_WORDS and not numbered):
        return False
    if line.size > body_size + 0.9:  # bigger than body text: a heading, not a running line
        return False
    same_block = [ln for ln in page if ln.block == line.block and ln.kind == "text"]
    if any(not _in_band(ln, height) for ln in same_block):  # part of a paragraph that runs on
        return False
    body = [
        ln for ln in page if ln.kind == "text" and ln.block != line.block and ln.y0 >= 0 and not _in_band(ln, height)
    ]
    if not body:
        return True
    top = line.y1 <= height * RUNNING_BAND
    gap = min(ln.y0 for ln in body) - line.y1 if top else line.y0 - max(ln.y1 for ln in body)
    return gap >= RUNNING_MIN_GAP * max(line.y1 - line.y0, 1.0)


# A line that is only a page number ("Page 2", "Page 1 of 5", "- 35 -", "3 / 12"), or ends in one of
# N ("Health Policy - UIN ASH-2026 - Page 1 of 2"): page furniture in a running line's place even where
# too few pages repeat it (a two-page guide).
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+\d+(?:\s*(?:of|/)\s*\d+)?|[-–]\s*\d+\s*[-–]|\d+\s*(?:of|/)\s*\d+|.*\bpage\s+\d+\s*(?:of|/)\s*\d+)$",
    re.I,
)


def _drop_running_lines(pages: list[list[Line]], heights: list[float]) -> tuple[int, str]:
    """Remove running headers and footers; returns how many lines went and one example."""
    from policybot.ingestion.sections import body_font_size

    body_size = body_font_size([ln for lines in pages for ln in lines if ln.kind == "text"])
    seen: Counter[str] = Counter()
    candidates: list[set[int]] = []
    for lines, height in zip(pages, heights):
        found = {i for i, ln in enumerate(lines) if _running_candidate(ln, lines, height, body_size)}
        candidates.append(found)
        seen.update({_running_key(lines[i].text) for i in found})
    threshold = max(3, (len(pages) + 1) // 2)
    running = (
        {key for key, count in seen.items() if count >= threshold}
        if len(pages) >= 3
        else _numbered_pair(pages, candidates, heights)
    )
    removed, example = 0, ""
    for idx, (lines, found) in enumerate(zip(pages, candidates)):
        drop = {i for i in found if _running_key(lines[i].text) in running or _PAGE_NUMBER.match(lines[i].text.strip())}
        if drop:
            removed += len(drop)
            example = example or lines[min(drop)].text.strip()
            pages[idx] = [ln for i, ln in enumerate(lines) if i not in drop]
    return removed, example


def _numbered_pair(pages: list[list[Line]], candidates: list[set[int]], heights: list[float]) -> set[str]:
    """The running lines of a two-page document, where a count of repeats says too little: a line in
    a running line's place on both pages, in the same margin, that is the same on both ("Roadsure
    Private Car Policy Booklet RS-PC-0426") or differs only by a number, one more on the second page
    ("JSY Operational Guidelines, Version 2.1 | 1" and "… | 2")."""
    if len(pages) != 2:
        return set()
    last: list[dict[str, int]] = [{}, {}]
    same: list[set[tuple[str, bool]]] = [set(), set()]
    for side, (lines, found, height) in enumerate(zip(pages, candidates, heights)):
        for i in found:
            text = " ".join(lines[i].text.split())
            same[side].add((text, lines[i].y1 <= height * RUNNING_BAND))  # the text, and whether at the top
            numbers = re.findall(r"\d+", text)
            if numbers:
                last[side][_running_key(text)] = int(numbers[-1])
    numbered = {key for key, n in last[0].items() if last[1].get(key) == n + 1}
    return numbered | {_running_key(text) for text, _ in same[0] & same[1]}


def _in_band(line: Line, height: float) -> bool:
    if line.y0 < 0 or height <= 0:
        return False
    return line.y1 <= height * RUNNING_BAND or line.y0 >= height * (1 - RUNNING_BAND)


def _title(doc: pymupdf.Document, first_page: list[Line], path: Path) -> str:
    """The metadata title, else the biggest line on page 1, else the file name (an outline's root,
    when there is one, wins over all of them: ``find_sections``)."""
    meta = (doc.metadata or {}).get("title") or ""
    meta = re.sub(r"\s+", " ", meta).strip()
    # Word processors often leave "Microsoft Word - draft3.docx" or the file name here.
    if meta and not re.search(r"\.(docx?|pdf|rtf)$|^untitled$|^microsoft word", meta, re.IGNORECASE):
        return meta
    text_lines = [ln for ln in first_page if ln.kind == "text" and 3 <= len(ln.text.strip()) <= 120]
    if text_lines:
        body = sorted(_title_size(ln) for ln in text_lines)[len(text_lines) // 2]
        biggest = max(text_lines, key=_title_size)
        if _title_size(biggest) >= body + 2:
            return re.sub(r"\s+", " ", biggest.text).strip()
    return path.stem.replace("_", " ").replace("-", " ").strip() or path.name


def _title_size(line: Line) -> float:
    """A line's font size; on a scanned page (size unknown) most of its height, enough to tell a
    title (twice the body's height) from body text."""
    return line.size if line.size or line.y0 < 0 else 0.8 * (line.y1 - line.y0)


def quiet_mupdf() -> None:
    """Keep MuPDF's own messages off stdout/stderr (``--json`` output must stay one JSON
    document); they are collected per file instead and reported in words."""
    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)


quiet_mupdf()
# MuPDF's message store is process-wide: one reader at a time owns it.
_MESSAGES_LOCK = threading.Lock()


def _mupdf_messages() -> list[str]:
    text = pymupdf.TOOLS.mupdf_warnings(reset=True) or ""
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def read_pdf(
    path: str | Path,
    *,
    detect_tables: bool = True,
    strip_running_headers: bool = True,
    max_mb: float = 100.0,
    max_pages: int = 3000,
    progress: ProgressFn | None = None,
    ocr: OcrPlan | None = None,
    sections: bool = True,
) -> ParsedDocument:
    """Read every page of a PDF; raise ``IngestError`` if the file cannot be used. Pages with an
    image and (almost) no text are read by ``ocr`` when given. ``progress`` hears of every page read
    (stage ``read``) and every page OCR'd (``ocr``); ``sections=False`` leaves the sections (and an
    outline's title) to ``find_sections``, the ingestion pipeline's next stage."""
    path = Path(path)
    check_file(path, max_mb)
    with _MESSAGES_LOCK:
        _mupdf_messages()  # drop what earlier work left behind
        parsed = _read_pdf(path, detect_tables, strip_running_headers, progress, ocr, max_pages)
    return find_sections(parsed) if sections else parsed


def find_sections(
    parsed: ParsedDocument, run_in_headings: bool = False, plain_headings: bool = False, heading_breaks: bool = False
) -> ParsedDocument:
    """Label every line with its section path (from the outline, else from numbered or styled
    headings, and run-in or unnumbered headings when asked); an outline's root names the document.
    ``heading_breaks``: mark the lines read as unnumbered headings (``Line.heading``)."""
    result = detect_sections(parsed.lines, parsed.toc, run_in_headings, plain_headings, heading_breaks)
    for i, (line, section) in enumerate(zip(parsed.lines, result.paths)):
        line.section = section
        line.heading = i in result.heading_lines
    parsed.sections_found, parsed.section_source = result.headings, result.source
    parsed.title = result.outline_title or parsed.title
    return parsed


@dataclass
class _Pages:
    """Every page's lines as read, before running headers are removed."""

    lines: list[list[Line]]
    heights: list[float]
    damaged: list[int]  # pages MuPDF read with errors
    tables: int
    image_only: list[int] = field(default_factory=list)  # pages with an image and (almost) no text
    too_large: list[int] = field(default_factory=list)  # image-only pages too large to render for OCR
    ocr: list[OcrPage] = field(default_factory=list)
    ocr_seconds: float = 0.0


def _read_pdf(
    path: Path,
    detect_tables: bool,
    strip_running_headers: bool,
    progress: ProgressFn | None,
    ocr: OcrPlan | None,
    max_pages: int = 3000,
) -> ParsedDocument:
    with _open(path) as doc:
        repaired = bool(doc.is_repaired) or any(_DAMAGE.search(m) for m in _mupdf_messages())
        total = doc.page_count
        if total > max_pages:
            raise IngestError(
                "too_large",
                f"{path.name}: {total} pages is over the {max_pages}-page limit (POLICYBOT_MAX_PAGES)",
                total,
            )
        pages = _read_pages(doc, path, detect_tables, progress, ocr.settings.min_chars if ocr else None)
        if pages.image_only and ocr is not None and ocr.engine is not None:
            _read_by_ocr(doc, pages, ocr, path.name, progress)
        toc = doc.get_toc(simple=True)
        stripped, example = _drop_running_lines(pages.lines, pages.heights) if strip_running_headers else (0, "")
        # Judged after removing running headers: a scan with a printed footer is still a scan.
        empty_pages = [i + 1 for i, lines in enumerate(pages.lines) if not lines]
        broken = repaired or bool(pages.damaged)
        if len(empty_pages) == total:
            raise _no_text(path, total, broken, ocr, len(pages.image_only), len(pages.too_large))
        lines = [line for page_lines in pages.lines for line in page_lines]
        return ParsedDocument(
            path=path,
            file_name=path.name,
            sha256=sha256_of(path),
            title=_title(doc, pages.lines[0], path),
            page_count=total,
            lines=lines,
            toc=toc,
            empty_pages=empty_pages,
            tables=pages.tables,
            stripped_lines=stripped,
            stripped_example=example,
            warnings=[_damage_warning(total, pages.damaged, empty_pages)] if broken else [],
            ocr_pages={p.page: p.confidence for p in pages.ocr},
            ocr_unread=[
                page for page in pages.image_only if page not in {p.page for p in pages.ocr} | set(pages.too_large)
            ],
            ocr_too_large=pages.too_large,
            ocr_seconds=round(pages.ocr_seconds, 2),
        )


def _open(path: Path) -> pymupdf.Document:
    """The PDF opened, or one clear reason why it cannot be."""
    try:
        doc = pymupdf.open(path)
    except Exception as exc:
        raise IngestError("corrupt", f"{path.name}: cannot be read as a PDF ({_short(exc, path)})") from exc
    if doc.needs_pass:
        pages = doc.page_count
        doc.close()
        raise IngestError(
            "encrypted",
            f"{path.name}: the PDF is password-protected; save an unprotected copy (e.g. `qpdf --decrypt in.pdf "
            "out.pdf`) and ingest that",
            pages,
        )
    is_pdf, pages = doc.is_pdf, doc.page_count
    if not is_pdf or pages == 0:
        doc.close()
        if not is_pdf:
            raise IngestError("not_pdf", f"{path.name}: not a PDF file")
        raise IngestError("corrupt", f"{path.name}: damaged PDF: no page could be read (get a fresh copy of the file)")
    return doc


def _read_pages(
    doc: pymupdf.Document, path: Path, detect_tables: bool, progress: ProgressFn | None, ocr_below: int | None
) -> _Pages:
    """Every page's text layer; pages with an image and fewer than ``ocr_below`` characters of
    text (None: no OCR asked) are noted as image-only."""
    total = doc.page_count
    pages = _Pages([], [], [], 0)
    try:
        for index in range(total):
            page = doc[index]
            lines, n_tables = _page_lines(page, index + 1, detect_tables)
            if any(_DAMAGE.search(m) for m in _mupdf_messages()):
                pages.damaged.append(index + 1)
            if (
                ocr_below is not None
                and sum(len(line.text.strip()) for line in lines) < max(ocr_below, 1)
                and _image_share(page) >= IMAGE_PAGE_SHARE
            ):
                pages.image_only.append(index + 1)  # a stamp or page number on it is read again by OCR
            pages.lines.append(lines)
            pages.heights.append(page.rect.height)
            pages.tables += n_tables
            if progress:
                progress(Progress(path.name, "read", index + 1, total))
    except Exception as exc:
        raise IngestError(
            "corrupt", f"{path.name}: page {len(pages.lines) + 1} cannot be read ({_short(exc, path)})", total
        ) from exc
    return pages


def _image_share(page: pymupdf.Page) -> float:
    """The share of the page that images cover (overlaps counted twice: only a threshold)."""
    area = abs(page.rect)
    if not area or not page.get_images():
        return 0.0
    covered = sum(abs(pymupdf.Rect(info["bbox"]) & page.rect) for info in page.get_image_info())
    return covered / area


def _read_by_ocr(doc: pymupdf.Document, pages: _Pages, plan: OcrPlan, name: str, progress: ProgressFn | None) -> None:
    """Read the image-only pages with the OCR engine, in parallel, and put their lines in place."""
    assert plan.engine is not None
    s = plan.settings
    dpis = {page: ocr_dpi(doc[page - 1].rect, s.dpi, s.max_megapixels) for page in pages.image_only}
    pages.too_large = [page for page, dpi in dpis.items() if dpi is None]
    readable = [(page, dpi) for page, dpi in dpis.items() if dpi is not None]
    # Rendered one at a time here (PyMuPDF is not thread-safe) as the engine takes them.
    images = (
        (page, dpi, doc[page - 1].get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY).tobytes("pgm"))
        for page, dpi in readable
    )
    started = time.perf_counter()
    on_page = (lambda done, total: progress(Progress(name, "ocr", done, total))) if progress else None
    read = plan.engine.read_pages(images, len(readable), on_page)
    pages.ocr_seconds = time.perf_counter() - started
    for result in read:
        if result.lines:
            pages.lines[result.page - 1] = _ocr_lines(result)
            pages.ocr.append(result)
    _first_roman_heading([pages.lines[r.page - 1] for r in pages.ocr])


# Under this resolution Tesseract misreads body text: a page that would need less is not read.
MIN_OCR_DPI = 100


def ocr_dpi(rect: pymupdf.Rect, dpi: int, max_megapixels: float) -> int | None:
    """The resolution a page is rendered at for OCR: ``dpi``, lowered so that the image has at
    most ``max_megapixels`` (a 5 KB PDF can hold a 100-inch page that would take gigabytes at
    300 dpi); None when that would be under ``MIN_OCR_DPI`` (the page is reported, not read)."""
    square_inches = (rect.width / 72) * (rect.height / 72)
    if square_inches <= 0:
        return None
    chosen = min(dpi, int(math.sqrt(max_megapixels * 1e6 / square_inches)))
    return chosen if chosen >= MIN_OCR_DPI else None


def _first_roman_heading(pages: list[list[Line]]) -> None:
    """ "1. AGREEMENT" is "I. AGREEMENT" misread when the document's other capitalised headings
    are numbered II., III., …: then it heads the same level, not a level of its own."""
    lines = [line for page in pages for line in page]
    if not any(re.match(r"II\.\s+[A-Z]{3}", line.text) for line in lines):
        return
    for line in lines:
        if re.fullmatch(r"1\.\s+[A-Z][A-Z ,'&-]{2,}", line.text):
            line.text = "I." + line.text[2:]


def _ocr_lines(result: OcrPage) -> list[Line]:
    """OCR lines as the page's lines, with bold told by ink: a line whose word boxes hold
    BOLD_INK_RATIO times the page's usual share of dark pixels is set in bold (headings are
    found by numbering plus bold or capitals, as on digital pages). Size stays 0: a line's pixel
    height varies with its ascenders and descenders more than headings differ from body text."""
    usual = _weighted_median([(line.ink, line.chars) for line in result.lines])
    return [
        Line(
            roman_heading(line.text),
            result.page,
            bold=usual > 0 and line.ink >= BOLD_INK_RATIO * usual,
            size=0.0,
            y0=line.y0,
            y1=line.y1,
            block=line.block,
        )
        for line in attach_markers(result.lines)
    ]


def _weighted_median(values: list[tuple[float, int]]) -> float:
    total = sum(weight for _, weight in values)
    seen = 0
    for value, weight in sorted(values):
        seen += weight
        if 2 * seen >= total:
            return value
    return 0.0


def _no_text(
    path: Path, total: int, broken: bool, ocr: OcrPlan | None, scanned: int, too_large: int = 0
) -> IngestError:
    if broken:  # a truncated or garbled file is not a scan: OCR would not help
        return IngestError(
            "corrupt",
            f"{path.name}: damaged PDF: none of its {total} pages could be read (the file is truncated or broken); get "
            "a fresh copy of it",
            total,
        )
    if ocr is not None and ocr.engine is None:
        how = f"its pages need OCR: {ocr.fix}"
    elif too_large and too_large == scanned:
        how = f"its {scanned} scanned page(s) are too large to read by OCR; scan them at a normal page size"
    elif ocr is not None and scanned:
        how = (
            f"OCR found no words on its {scanned} scanned page(s) (blank, or too faint or small to read); a sharper "
            "scan (300 dpi) may help"
        )
    else:
        how = "run OCR first (e.g. `ocrmypdf in.pdf out.pdf`) and ingest the result"
    return IngestError(
        "scanned", f"{path.name}: no extractable text on any of its {total} pages (a scan?); {how}", total
    )


def _damage_warning(total: int, damaged: list[int], empty_pages: list[int]) -> str:
    lost = set(damaged) & set(empty_pages)  # empty because of the damage, not by design
    where = f", pages read with errors: {_page_list(damaged)}" if damaged else " (the file was repaired on opening)"
    return f"damaged PDF: {total - len(lost)} of {total} pages recovered{where}; compare answers with the original"


def _page_list(pages: list[int]) -> str:
    shown = ", ".join(str(p) for p in pages[:10])
    return shown + (f" and {len(pages) - 10} more" if len(pages) > 10 else "")


def _short(exc: Exception, path: Path | None = None) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if path is not None:  # never show where an upload was parked, only its name
        text = text.replace(str(path), path.name)
    return text[:160]

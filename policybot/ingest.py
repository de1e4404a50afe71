"""Reading a PDF into page-numbered, section-labelled lines and whole tables.

Nothing here writes anywhere: a document is read completely (or rejected with one clear
``IngestError``) before the index is touched, which is what keeps ingestion atomic.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")

import pymupdf  # noqa: E402

from policybot.sections import detect_sections  # noqa: E402

ErrorKind = Literal["not_found", "not_pdf", "empty", "too_large", "corrupt", "encrypted", "scanned"]

# Lines in the top/bottom band of a page that repeat on most pages are running headers
# and footers ("PAGE 19 OF 30"): they are not content and break sentences across pages.
RUNNING_BAND = 0.08
# Keep ligature expansion (no PRESERVE_LIGATURES) so "ﬁre" is indexed as "fire".
_TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP


class IngestError(Exception):
    """A file that cannot be ingested, with a one-line reason a user can act on."""

    def __init__(self, kind: ErrorKind, message: str, pages: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.pages = pages


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


@dataclass
class ParsedDocument:
    path: Path
    file_name: str
    sha256: str
    title: str
    page_count: int
    lines: list[Line]
    sections_found: int
    section_source: str
    empty_pages: list[int] = field(default_factory=list)
    tables: int = 0


ProgressFn = Callable[[int, int], None]  # (pages done, pages total)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_file(path: Path, max_mb: float) -> None:
    """Reject what is plainly not an ingestible PDF before opening it."""
    if not path.is_file():
        raise IngestError("not_found", f"{path}: no such file")
    size = path.stat().st_size
    if size == 0:
        raise IngestError("empty", f"{path.name}: the file is empty (0 bytes)")
    if size > max_mb * 1024 * 1024:
        raise IngestError(
            "too_large", f"{path.name}: {size / 1048576:.1f} MB is over the {max_mb:g} MB limit (POLICYBOT_MAX_FILE_MB)"
        )
    with open(path, "rb") as handle:
        head = handle.read(1024)
    if b"%PDF-" not in head:
        raise IngestError("not_pdf", f"{path.name}: not a PDF file (no %PDF header); only PDF documents can be ingested")


def _span_is_bold(span: dict) -> bool:
    return bool(span.get("flags", 0) & 16) or "bold" in str(span.get("font", "")).lower()


def _page_lines(page: pymupdf.Page, page_no: int, detect_tables: bool) -> tuple[list[Line], int]:
    tables = []
    if detect_tables:
        try:
            found = page.find_tables()
            # A frame around the page is not a table: demand a real grid.
            tables = [t for t in found.tables if t.row_count >= 2 and t.col_count >= 2]
        except Exception:  # table detection is best effort; text extraction is not
            tables = []
    boxes = [pymupdf.Rect(t.bbox) for t in tables]
    emitted: set[int] = set()
    lines: list[Line] = []
    data = page.get_text("dict", flags=_TEXT_FLAGS)
    for block in data.get("blocks", []):
        for raw in block.get("lines", []):
            spans = raw.get("spans", [])
            text = "".join(s.get("text", "") for s in spans).replace("\t", " ").rstrip("\n")
            if not text.strip():
                continue
            bbox = pymupdf.Rect(raw["bbox"])
            inside = next((i for i, box in enumerate(boxes) if box.contains(pymupdf.Point((bbox.x0 + bbox.x1) / 2, (bbox.y0 + bbox.y1) / 2))), None)
            if inside is not None:
                if inside not in emitted:
                    emitted.add(inside)
                    lines.append(Line(tables[inside].to_markdown().strip(), page_no, kind="table"))
                continue
            visible = [s for s in spans if s.get("text", "").strip()]
            bold = bool(visible) and all(_span_is_bold(s) for s in visible)
            size = max((float(s.get("size", 0.0)) for s in visible), default=0.0)
            joins = text.rstrip().endswith("\xad")
            text = text.replace("\xad", "").strip() if joins else text.replace("\xad", "")
            lines.append(Line(text, page_no, bold, size, joins_next=joins, y0=bbox.y0, y1=bbox.y1))
    for i, table in enumerate(tables):  # tables with no text line inside still count
        if i not in emitted:
            lines.append(Line(table.to_markdown().strip(), page_no, kind="table"))
    return lines, len(tables)


def _running_key(text: str) -> str:
    return re.sub(r"\d+", "#", re.sub(r"\s+", " ", text.strip().lower()))


def _drop_running_lines(pages: list[list[Line]], heights: list[float]) -> None:
    """Remove header/footer lines that repeat (numbers aside) on at least half the pages."""
    if len(pages) < 3:
        return
    seen: Counter[str] = Counter()
    for lines, height in zip(pages, heights):
        keys = {_running_key(ln.text) for ln in lines if ln.kind == "text" and _in_band(ln, height)}
        seen.update(keys)
    threshold = max(3, len(pages) // 2)
    running = {key for key, count in seen.items() if count >= threshold}
    if not running:
        return
    for idx, (lines, height) in enumerate(zip(pages, heights)):
        pages[idx] = [ln for ln in lines if not (ln.kind == "text" and _in_band(ln, height) and _running_key(ln.text) in running)]


def _in_band(line: Line, height: float) -> bool:
    if line.y0 < 0 or height <= 0:
        return False
    return line.y1 <= height * RUNNING_BAND or line.y0 >= height * (1 - RUNNING_BAND)


def _title(doc: pymupdf.Document, outline_title: str | None, first_page: list[Line], path: Path) -> str:
    """Outline root, else metadata title, else the biggest line on page 1, else the file name."""
    if outline_title:
        return outline_title
    meta = (doc.metadata or {}).get("title") or ""
    meta = re.sub(r"\s+", " ", meta).strip()
    # Word processors often leave "Microsoft Word - draft3.docx" or the file name here.
    if meta and not re.search(r"\.(docx?|pdf|rtf)$|^untitled$|^microsoft word", meta, re.IGNORECASE):
        return meta
    text_lines = [ln for ln in first_page if ln.kind == "text" and 3 <= len(ln.text.strip()) <= 120]
    if text_lines:
        body = sorted(ln.size for ln in text_lines)[len(text_lines) // 2]
        biggest = max(text_lines, key=lambda ln: ln.size)
        if biggest.size >= body + 2:
            return re.sub(r"\s+", " ", biggest.text).strip()
    return path.stem.replace("_", " ").replace("-", " ").strip() or path.name


def read_pdf(
    path: str | Path,
    *,
    detect_tables: bool = True,
    strip_running_headers: bool = True,
    max_mb: float = 100.0,
    progress: ProgressFn | None = None,
) -> ParsedDocument:
    """Read every page of a PDF; raise ``IngestError`` if the file cannot be used."""
    path = Path(path)
    check_file(path, max_mb)
    try:
        doc = pymupdf.open(path)
    except Exception as exc:
        raise IngestError("corrupt", f"{path.name}: cannot be read as a PDF ({_short(exc, path)})") from exc
    with doc:
        if doc.needs_pass:
            raise IngestError(
                "encrypted",
                f"{path.name}: the PDF is password-protected; save an unprotected copy "
                "(e.g. `qpdf --decrypt in.pdf out.pdf`) and ingest that",
                doc.page_count,
            )
        if not doc.is_pdf:
            raise IngestError("not_pdf", f"{path.name}: not a PDF file")
        total = doc.page_count
        if total == 0:
            raise IngestError("corrupt", f"{path.name}: the PDF has no pages")
        pages: list[list[Line]] = []
        heights: list[float] = []
        tables = 0
        try:
            for index in range(total):
                page = doc[index]
                lines, n_tables = _page_lines(page, index + 1, detect_tables)
                pages.append(lines)
                heights.append(page.rect.height)
                tables += n_tables
                if progress:
                    progress(index + 1, total)
            toc = doc.get_toc(simple=True)
        except IngestError:
            raise
        except Exception as exc:
            raise IngestError("corrupt", f"{path.name}: page {len(pages) + 1} cannot be read ({_short(exc, path)})", total) from exc
        if strip_running_headers:
            _drop_running_lines(pages, heights)
        # Judged after removing running headers: a scan with a printed footer is still a scan.
        empty_pages = [i + 1 for i, lines in enumerate(pages) if not lines]
        if len(empty_pages) == total:
            raise IngestError(
                "scanned",
                f"{path.name}: no extractable text on any of its {total} pages (a scan?); "
                "run OCR first (e.g. `ocrmypdf in.pdf out.pdf`) and ingest the result",
                total,
            )
        lines = [line for page_lines in pages for line in page_lines]
        result = detect_sections(lines, toc)
        for line, section in zip(lines, result.paths):
            line.section = section
        return ParsedDocument(
            path=path,
            file_name=path.name,
            sha256=sha256_of(path),
            title=_title(doc, result.outline_title, pages[0], path),
            page_count=total,
            lines=lines,
            sections_found=result.headings,
            section_source=result.source,
            empty_pages=empty_pages,
            tables=tables,
        )


def _short(exc: Exception, path: Path | None = None) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if path is not None:  # never show where an upload was parked, only its name
        text = text.replace(str(path), path.name)
    return text[:160]

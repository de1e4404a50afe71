"""Build the sample HomeShield Household Policy PDF from its Markdown source.

Usage::

    python data/build_sample_policy.py [--source PATH] [--out PATH]

Defaults: reads ``data/source/homeshield-household-policy.md`` and writes
``data/homeshield-household-policy.pdf`` (paths relative to this script).

The source uses a deliberately tiny Markdown subset, one construct per line:

``# Title``
    Document title (exactly once, first). Paragraphs between the title and
    the first ``## `` heading form the cover block: the first is printed above
    the title as the issuer line, the others below it, the last one as a small
    italic note.
``## Heading``
    Section heading, e.g. ``## Section 4 General Exclusions``. Becomes a
    level-1 PDF bookmark.
``### Heading``
    Clause heading, e.g. ``### 4.1 Wear and tear``. Becomes a level-2 bookmark.
``- text``
    Bulleted list item (one source line).
``(a) text``
    Lettered list item (one source line); the label is kept in the text.
``| a | b |``
    Pipe table row. The first row is the header row and must be followed by a
    ``|---|---|`` separator row. Tables are drawn with ruled cell borders.
``**text**``
    Inline bold (anywhere in a paragraph, list item or table cell). A
    paragraph that is entirely bold is treated as a run-in sub-heading.

Anything else is body text; paragraphs are separated by blank lines and a
paragraph's lines are joined with spaces.

Layout is done with the PyMuPDF ``Story`` API (HTML + CSS). Pages are laid out
repeatedly so that no heading is stranded at the foot of a page and no table
is split across pages. The PDF is then reopened to add the running footer,
bookmarks (pages taken from the Story's element positions) and fixed metadata,
and saved reproducibly (same input gives a byte-identical file).
"""

from __future__ import annotations

import argparse
import html
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE / "source" / "homeshield-household-policy.md"
DEFAULT_OUT = HERE / "homeshield-household-policy.pdf"

PAGE = pymupdf.paper_rect("letter")  # 612 x 792 pt
CONTENT = pymupdf.Rect(58, 50, PAGE.width - 58, PAGE.height - 58)
FOOTER_BASELINE = PAGE.height - 30
KEEP_WITH_NEXT = 28.0  # pt a heading needs below it on its page (about two lines)
FIXED_DATE = "D:20250101000000+00'00'"

METADATA = {
    "title": "HomeShield Household Policy",
    "author": "Hearthstone Mutual Insurance",
    "subject": "Sample household buildings and contents insurance policy wording (fictional)",
    "keywords": "household insurance, buildings, contents, policy wording, sample",
    "creator": "PolicyBot data/build_sample_policy.py",
    "producer": "PyMuPDF",
    "creationDate": FIXED_DATE,
    "modDate": FIXED_DATE,
}

CSS = """
* { font-family: sans-serif; }
body { margin: 0; font-size: 10.5pt; line-height: 1.18; color: #1a1a1a; }
p { margin: 0 0 3.5pt 0; }
p.issuer { font-size: 12pt; font-weight: bold; color: #1f3a5f; margin: 6pt 0 4pt 0; }
h1 { font-size: 24pt; font-weight: bold; color: #1f3a5f; margin: 0 0 8pt 0; }
p.cover { font-size: 11.5pt; margin: 0 0 3pt 0; }
p.note { font-size: 9pt; font-style: italic; color: #444444; margin: 8pt 0 0 0; }
div.rule { border-bottom: 1.2pt solid #1f3a5f; margin: 10pt 0 6pt 0; }
h2 { font-size: 14pt; font-weight: bold; color: #1f3a5f; margin: 12pt 0 4pt 0; }
h3 { font-size: 11pt; font-weight: bold; color: #1f3a5f; margin: 7pt 0 2pt 0; }
h4 { font-size: 10.5pt; font-weight: bold; margin: 4pt 0 2pt 0; }
p.item { margin: 0 0 3pt 16pt; text-indent: -16pt; }
ul { margin: 0 0 5pt 0; padding-left: 18pt; }
li { margin: 0 0 2pt 0; }
table { border-collapse: collapse; width: 100%; margin: 10pt 0 8pt 0; }
th, td { border: 0.6pt solid #555555; padding: 3pt 5pt; text-align: left; vertical-align: top; font-size: 10pt; }
th { font-weight: bold; }
"""

ITEM_RE = re.compile(r"^\(([a-z]{1,4})\)\s+")
BOLD_RE = re.compile(r"\*\*(.+?)\*\*")
NO_LIGATURE_RE = re.compile(r"f(?=[fil])")


@dataclass
class Block:
    """One parsed source construct: a heading, paragraph, list item or table."""

    kind: str  # "h2" | "h3" | "p" | "bullet" | "item" | "table"
    text: str = ""
    rows: list[list[str]] = field(default_factory=list)


@dataclass
class PolicyDoc:
    """The parsed source: title, cover-block paragraphs and body blocks."""

    title: str
    cover: list[str]
    blocks: list[Block]


@dataclass
class Heading:
    """Where a laid-out heading (or other tracked element) ended up."""

    level: int  # HTML heading level, 0 for tables
    text: str
    page: int  # 1-based
    rect: pymupdf.Rect


def parse_source(text: str) -> PolicyDoc:
    """Parse the Markdown subset into a PolicyDoc."""
    title = ""
    cover: list[str] = []
    blocks: list[Block] = []
    para: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        nonlocal para, table
        if para:
            joined = " ".join(para)
            if title and not blocks:
                cover.append(joined)  # before the first heading: cover block
            else:
                blocks.append(Block("p", joined))
            para = []
        if table:
            blocks.append(Block("table", rows=table))
            table = []

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            flush()
        elif line.startswith("# "):
            flush()
            if title:
                raise ValueError("the document title ('# ') may appear only once")
            title = line[2:].strip()
        elif line.startswith("## ") or line.startswith("### "):
            flush()
            hashes, heading = line.split(" ", 1)
            blocks.append(Block("h2" if hashes == "##" else "h3", heading.strip()))
        elif line.startswith("|"):
            if para:
                flush()
            cells = [c.strip() for c in line.strip("|").split("|")]
            if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                continue  # header separator row
            table.append(cells)
        elif line.startswith("- "):
            flush()
            blocks.append(Block("bullet", line[2:].strip()))
        elif ITEM_RE.match(line):
            flush()
            blocks.append(Block("item", line))
        else:
            if table:
                flush()
            para.append(line)
    flush()
    if not title:
        raise ValueError("source has no '# ' title line")
    return PolicyDoc(title=title, cover=cover, blocks=blocks)


def inline(text: str) -> str:
    """Escape text for HTML and convert **bold** runs.

    MuPDF's layout turns "fi", "fl", "ff" etc. into ligature glyphs, which then
    extract as U+FB00..U+FB04 instead of plain letters. Wrapping each such "f"
    in its own span stops the ligature without changing the visible text.
    """
    escaped = html.escape(text, quote=False)
    escaped = NO_LIGATURE_RE.sub("<span>f</span>", escaped)
    return BOLD_RE.sub(r"<b>\1</b>", escaped)


def to_html(doc: PolicyDoc) -> str:
    """Render the parsed document as HTML for pymupdf.Story."""
    out: list[str] = []
    if doc.cover:
        out.append(f'<p class="issuer">{inline(doc.cover[0])}</p>')
    out.append(f"<h1>{inline(doc.title)}</h1>")
    rest = doc.cover[1:]
    for i, para in enumerate(rest):
        cls = "note" if i == len(rest) - 1 and len(rest) > 1 else "cover"
        out.append(f'<p class="{cls}">{inline(para)}</p>')
    out.append('<div class="rule"></div>')

    in_list = False
    table_no = 0
    for block in doc.blocks:
        if in_list and block.kind != "bullet":
            out.append("</ul>")
            in_list = False
        if block.kind in ("h2", "h3"):
            out.append(f"<{block.kind}>{inline(block.text)}</{block.kind}>")
        elif block.kind == "bullet":
            if not in_list:
                out.append("<ul>")
                in_list = True
            out.append(f"<li>{inline(block.text)}</li>")
        elif block.kind == "item":
            out.append(f'<p class="item">{inline(block.text)}</p>')
        elif block.kind == "table":
            table_no += 1
            header, *body = block.rows
            cells = "".join(f"<th>{inline(c)}</th>" for c in header)
            rows = [f"<tr>{cells}</tr>"]
            for row in body:
                rows.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>")
            out.append(f'<table id="table-{table_no}">{"".join(rows)}</table>')
        elif BOLD_RE.fullmatch(block.text):
            out.append(f"<h4>{inline(block.text[2:-2])}</h4>")  # run-in sub-heading
        else:
            out.append(f"<p>{inline(block.text)}</p>")
    if in_list:
        out.append("</ul>")
    return "<body>" + "\n".join(out) + "</body>"


def layout(body: str, page_bottoms: dict[int, float]) -> tuple[bytes, list[Heading]]:
    """Lay the HTML out on Letter pages; return PDF bytes and element positions.

    ``page_bottoms`` maps a 1-based page number to a shortened content bottom,
    used to push a stranded heading or a split table onto the next page.
    """
    story = pymupdf.Story(body, user_css=CSS, em=10.5)
    buffer = io.BytesIO()
    writer = pymupdf.DocumentWriter(buffer)
    found: list[Heading] = []

    def rectfn(rect_num: int, _filled: pymupdf.Rect) -> tuple[pymupdf.Rect, pymupdf.Rect, None]:
        page = rect_num + 1
        where = pymupdf.Rect(CONTENT)
        where.y1 = page_bottoms.get(page, CONTENT.y1)
        return PAGE, where, None

    def positionfn(pos: pymupdf.ElementPosition) -> None:
        is_table = (pos.id or "").startswith("table-")
        if is_table or (pos.heading and pos.open_close & 1):
            found.append(Heading(pos.heading, pos.text or pos.id or "", pos.page_num, pymupdf.Rect(pos.rect)))

    story.write(writer, rectfn, positionfn=positionfn)
    writer.close()
    return buffer.getvalue(), found


def first_bad_break(positions: list[Heading], page_bottoms: dict[int, float]) -> tuple[int, float] | None:
    """Find the first page where a heading is stranded or a table is split.

    Returns (page, new content bottom) or None when the layout is acceptable.
    """
    bad: list[tuple[int, float]] = []
    for pos in positions:
        bottom = page_bottoms.get(pos.page, CONTENT.y1)
        stranded = pos.level >= 2 and pos.rect.y1 > bottom - KEEP_WITH_NEXT
        # A table split over a page break is reported clipped to the page
        # bottom, so a table reaching the bottom is treated as split.
        split_table = pos.level == 0 and pos.rect.y1 > bottom - 8
        if stranded:
            bad.append((pos.page, pos.rect.y0 - 1))
        elif split_table:
            # Move the table, and its clause heading if that is just above it.
            top = pos.rect.y0
            for head in positions:
                if head.level == 3 and head.page == pos.page and 0 < top - head.rect.y0 < 90:
                    top = head.rect.y0
            bad.append((pos.page, top - 1))
    # Only cuts that shorten a page further (and leave something on it) count.
    bad = [(page, y) for page, y in bad if y < page_bottoms.get(page, CONTENT.y1) - 0.5 and y > CONTENT.y0 + 40]
    return min(bad) if bad else None


def build(source: Path, out: Path) -> None:
    """Build the PDF at ``out`` from the Markdown file ``source``."""
    doc_src = parse_source(source.read_text(encoding="utf-8"))
    body = to_html(doc_src)

    page_bottoms: dict[int, float] = {}
    for _ in range(200):
        pdf_bytes, positions = layout(body, page_bottoms)
        fix = first_bad_break(positions, page_bottoms)
        if fix is None:
            break
        page, bottom = fix
        # Pages after the one we shorten will reflow, so their cuts are stale.
        page_bottoms = {p: y for p, y in page_bottoms.items() if p < page}
        page_bottoms[page] = bottom
    else:
        raise RuntimeError("page layout did not settle")

    doc = pymupdf.open("pdf", pdf_bytes)
    add_footers(doc, doc_src.title)
    doc.set_toc(make_toc(positions))
    doc.set_metadata(METADATA)
    doc.subset_fonts()
    out.parent.mkdir(parents=True, exist_ok=True)
    doc.save(out, garbage=4, deflate=True, no_new_id=True, reproducible=True)
    doc.close()


def add_footers(doc: pymupdf.Document, title: str) -> None:
    """Add a centred running footer "<title> — page N of M" and a rule above it."""
    font = pymupdf.Font("helv")  # embedded (not base-14) so the em dash is encodable
    size = 8.5
    for page in doc:
        text = f"{title} \u2014 page {page.number + 1} of {doc.page_count}"
        x = (PAGE.width - font.text_length(text, fontsize=size)) / 2
        page.insert_font(fontname="FooterSans", fontbuffer=font.buffer)
        page.insert_text((x, FOOTER_BASELINE), text, fontname="FooterSans", fontsize=size, color=(0.35, 0.35, 0.35))
        y = FOOTER_BASELINE - 14
        page.draw_line((CONTENT.x0, y), (CONTENT.x1, y), color=(0.6, 0.6, 0.6), width=0.5)


def make_toc(positions: list[Heading]) -> list[list[int | str]]:
    """Bookmarks: level 1 for sections (h2), level 2 for clauses (h3)."""
    return [[pos.level - 1, pos.text, pos.page] for pos in positions if pos.level in (2, 3)]


def previous_edition(markdown: str) -> str:
    """The policy's edition 4 (effective 1 January 2023), derived from edition 5's source: the
    escape of water deductible was $500, clause 5.3 (subsidence deductible) did not exist yet,
    and a clause 5.5 (voluntary excess) that edition 5 removed was there. For tests of editions."""
    old = markdown.replace("(edition 5, effective 1 January 2025)", "(edition 4, effective 1 January 2023)")
    start, end = old.index("### 5.2 Escape of water deductible"), old.index("### 5.3 Subsidence deductible")
    old = old[:start] + old[start:end].replace("$750", "$500") + old[end:]
    subsidence_end = old.index("### 5.4 Deductible schedule")
    old = old[: old.index("### 5.3 Subsidence deductible")] + old[subsidence_end:]
    voluntary = (
        "### 5.5 Voluntary excess\n\n"
        "You may choose a voluntary excess of $100 or $250 in addition to the standard Deductible. "
        "If you do, we reduce your premium, and the voluntary excess is taken off every claim.\n\n"
    )
    section6 = old.index("## Section 6")
    return old[:section6] + voluntary + old[section6:]


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="Markdown source")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output PDF path")
    parser.add_argument(
        "--edition", type=int, choices=(4, 5), default=5, help="4: the previous edition (tests of editions)"
    )
    args = parser.parse_args()
    if args.edition == 4:
        derived = args.out.with_suffix(".md")
        derived.write_text(previous_edition(args.source.read_text(encoding="utf-8")), encoding="utf-8")
        build(derived, args.out)
        derived.unlink()
    else:
        build(args.source, args.out)
    with pymupdf.open(args.out) as doc:
        print(f"wrote {args.out} ({doc.page_count} pages, {len(doc.get_toc())} bookmarks)")


if __name__ == "__main__":
    main()

"""A table found on a page, as the Markdown it is indexed and shown by, or as no table at all.

PyMuPDF's ``find_tables`` builds a grid from a page's rule lines, and some documents draw rules
around running text: a contract's preamble set in a ruled box, a definitions list in a grid, a
chart's axis. Its ``to_markdown`` then fills every spanned cell with its neighbour's text, so one
sentence is written five times in a row: the passage's words are counted five times by BM25, its
vector drifts, and a citizen reads "|Col1|This Manufacturing Agreement (“|Col3|Col4|…".

Two rules, both about the grid and none about any document's wording:

- a grid where most cells are spanned (more than ``MAX_SPANNED_SHARE`` of them) is text drawn
  with rules, not a table: the page's lines are read as text instead (``None``);
- a kept table is written once per cell: spanned cells and columns empty in every row are
  left out, and an unnamed header cell ("Col3") is blank.

Measured in ``eval/decisions/2026-11-26-tables-as-text.md``.
"""

from __future__ import annotations

from typing import Any, Sequence

# Of the contract and guide PDFs' grids, real tables have at most a third of their cells spanned
# (a corner cell, a label over two columns); the ruled preambles and definition grids two thirds.
MAX_SPANNED_SHARE = 0.5


def table_markdown(table: Any) -> str | None:
    """``table`` (a PyMuPDF ``Table``) as Markdown, or None when it is text drawn with rules."""
    rows: list[list[str | None]] = [list(r) for r in table.extract()]
    header = table.header
    if getattr(header, "external", False):
        rows.insert(0, [None if _placeholder(n) else n for n in header.names])
    return grid_markdown(rows)


def grid_markdown(rows: Sequence[Sequence[str | None]]) -> str | None:
    """Rows of cells (None where a cell is spanned by its neighbour) as Markdown, first row the
    header; None when most cells are spanned."""
    cells = [c for row in rows for c in row]
    if not cells or sum(c is None for c in cells) > MAX_SPANNED_SHARE * len(cells):
        return None
    width = max(len(r) for r in rows)
    keep = [j for j in range(width) if any(_text(r[j]) for r in rows if j < len(r))]
    if len(keep) < 2 or len(rows) < 2:
        return None
    lines = ["|" + "|".join(_text(r[j]) if j < len(r) else "" for j in keep) + "|" for r in rows]
    lines.insert(1, "|" + "|".join("---" for _ in keep) + "|")
    return "\n".join(lines)


def _text(cell: str | None) -> str:
    return " ".join((cell or "").replace("|", "/").split())


def _placeholder(name: str | None) -> bool:
    return not name or (name.startswith("Col") and name[3:].isdigit())

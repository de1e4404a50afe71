"""Reviewers' marks as a regression set: each marked answer becomes a question of an eval set
("policybot eval dataset v1"), so a correction made today is a test of the next version.

- A citation marked right: its quote is gold (with no quote, its first page).
- A citation marked wrong with the page that holds the right passage: that page is gold (any
  passage of the document on it counts: ``metrics.relevant_chunks``).
- A citation marked wrong with no page says what is not the answer, but not what is: it is left
  out, and counted.

The set's documents are the library's own stored PDFs, linked into ``docs/`` under the names the
marks know them by (the library stores them by content hash; copied only where links cannot be
made); a marked document since deleted from the library leaves its marks out.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence


@dataclass
class MarksSet:
    """What ``write_marks_set`` wrote."""

    root: Path
    questions: int = 0
    golds: int = 0
    marks: int = 0
    without_page: int = 0  # wrong, with no right page: nothing to test against
    missing_documents: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{self.questions} question(s) with {self.golds} gold passage(s) from {self.marks} mark(s)"]
        if self.without_page:
            parts.append(f"{self.without_page} wrong mark(s) without the right page left out")
        if self.missing_documents:
            parts.append(f"marks on documents no longer in the library left out: {', '.join(self.missing_documents)}")
        return "; ".join(parts)


def _gold(mark: dict[str, Any]) -> dict[str, Any] | None:
    if mark["verdict"] == "right":
        return {"doc": mark["doc"], "page": mark["page_start"], "page_end": mark["page_end"], "text": mark["quote"]}
    if mark.get("correct_page"):
        page = int(mark["correct_page"])
        return {"doc": mark["doc"], "page": page, "page_end": page, "text": ""}
    return None


def write_marks_set(marks: Sequence[dict[str, Any]], stored_pdf: Callable[[str], Path | None], out: Path) -> MarksSet:
    """Write the regression set made of ``marks`` (``FeedbackStore.marks()``) to ``out``:
    ``questions.jsonl``, ``docs/`` and a README saying where it came from."""
    made = MarksSet(out, marks=len(marks))
    questions: dict[str, dict[str, Any]] = {}
    documents: dict[str, Path] = {}
    for mark in marks:
        gold = _gold(mark)
        if gold is None:
            made.without_page += 1
            continue
        pdf = documents.get(mark["doc"]) or stored_pdf(mark["doc"])
        if pdf is None:
            if mark["doc"] not in made.missing_documents:
                made.missing_documents.append(mark["doc"])
            continue
        documents[mark["doc"]] = pdf
        entry = questions.setdefault(
            mark["answer_key"],
            {"id": f"mark-{len(questions) + 1:03d}", "question": mark["question"], "answerable": True, "gold": []},
        )
        if gold not in entry["gold"]:
            entry["gold"].append(gold)
    docs = out / "docs"
    if docs.exists():
        shutil.rmtree(docs)  # the marks of today only: a document no longer marked leaves
    docs.mkdir(parents=True)
    for name, path in documents.items():
        try:
            (docs / name).symlink_to(path.resolve())
        except OSError:
            shutil.copy2(path, docs / name)
    (out / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions.values()), encoding="utf-8"
    )
    made.questions = len(questions)
    made.golds = sum(len(q["gold"]) for q in questions.values())
    (out / "README.md").write_text(
        f"# Reviewers' marks as a regression set\n\nMade by `policybot eval --marks` on "
        f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}: {made.summary()}.\n",
        encoding="utf-8",
    )
    return made

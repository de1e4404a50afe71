"""Thumbs up/down on answers and reviewers' marks on single citations, kept in SQLite with the
full answer so a rating can be checked later against exactly what the user saw (sources, quotes,
scores).

One record per answer: the app names each answer it shows (``answer_key``), and a second rating
of it updates the first. A citation is marked right or wrong (with the page that holds the right
passage, when the reviewer knows it); ``evaluation.marks`` turns the marks into a regression set."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, get_args

from policybot.schemas import Answer

Rating = Literal["up", "down"]
RATINGS: tuple[str, ...] = get_args(Rating)
Verdict = Literal["right", "wrong"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
MAX_COMMENT_CHARS = 2000

SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    mode TEXT NOT NULL,
    rating TEXT NOT NULL,
    comment TEXT NOT NULL,
    session TEXT NOT NULL,
    answer_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS citation_marks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    answer_key TEXT NOT NULL,
    question TEXT NOT NULL,
    n INTEGER NOT NULL,
    doc TEXT NOT NULL,
    page_start INTEGER NOT NULL,
    page_end INTEGER NOT NULL,
    chunk_id TEXT NOT NULL,
    quote TEXT NOT NULL,
    verdict TEXT NOT NULL,
    correct_page INTEGER,
    session TEXT NOT NULL,
    UNIQUE (answer_key, n)
);
"""
# Added after the first release: an existing database gets the column and its index on open.
ANSWER_KEY = """
CREATE UNIQUE INDEX IF NOT EXISTS feedback_by_answer ON feedback (answer_key) WHERE answer_key IS NOT NULL;
"""


class FeedbackStore:
    """Thread-safe feedback database: the Streamlit app shares one store across sessions."""

    def __init__(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.executescript(SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(feedback)")}
        if "answer_key" not in columns:
            self._db.execute("ALTER TABLE feedback ADD COLUMN answer_key TEXT")
        self._db.executescript(ANSWER_KEY)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> FeedbackStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(
        self,
        question: str,
        answer: Answer,
        rating: Rating,
        comment: str = "",
        session: str = "",
        answer_key: str | None = None,
    ) -> int:
        """Record one rating and return its id; a rating of an answer already rated (same
        ``answer_key``) replaces the earlier one in its record."""
        if rating not in RATINGS:
            raise ValueError(f"rating must be one of {', '.join(RATINGS)}, got {rating!r}")
        row = (
            _now(),
            question,
            answer.answer,
            answer.mode,
            rating,
            comment.strip()[:MAX_COMMENT_CHARS],
            session,
            answer.model_dump_json(),
            answer_key,
        )
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO feedback (created_at, question, answer, mode, rating, comment, session, answer_json,"
                " answer_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (answer_key) WHERE answer_key IS NOT NULL DO UPDATE SET created_at=excluded.created_at,"
                " rating=excluded.rating, comment=excluded.comment, answer_json=excluded.answer_json"
                " RETURNING id",
                row,
            )
            return int(cur.fetchone()[0])

    def mark(
        self,
        answer_key: str,
        answer: Answer,
        n: int,
        verdict: Verdict,
        correct_page: int | None = None,
        session: str = "",
    ) -> int:
        """Mark citation ``n`` of an answer right or wrong (a wrong one with the page that holds the
        right passage, if known); marking it again replaces the mark. Returns the mark's id."""
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
        cited = next((c for c in answer.citations if c.n == n), None)
        if cited is None:
            raise ValueError(f"the answer has no source [{n}]")
        if correct_page is not None and correct_page < 1:
            raise ValueError("a page number starts at 1")
        row = (
            _now(),
            answer_key,
            answer.question,
            n,
            cited.doc,
            cited.page_start,
            cited.page_end,
            cited.chunk_id,
            cited.quote or "",
            verdict,
            correct_page if verdict == "wrong" else None,
            session,
        )
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO citation_marks (created_at, answer_key, question, n, doc, page_start, page_end, chunk_id,"
                " quote, verdict, correct_page, session) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (answer_key, n) DO UPDATE SET created_at=excluded.created_at,"
                " verdict=excluded.verdict, correct_page=excluded.correct_page RETURNING id",
                row,
            )
            return int(cur.fetchone()[0])

    def marks(self) -> list[dict[str, Any]]:
        """Every citation mark, oldest first."""
        with self._lock:
            cur = self._db.execute("SELECT * FROM citation_marks ORDER BY id")
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]

    def all(self) -> list[dict[str, Any]]:
        """Every rating, newest first (ids order them: timestamps can tie within a second)."""
        with self._lock:
            cur = self._db.execute("SELECT * FROM feedback ORDER BY id DESC")
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM feedback").fetchone()[0])


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")

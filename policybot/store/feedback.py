"""Thumbs up/down on answers, kept in SQLite with the full answer so a rating can be
checked later against exactly what the user saw (sources, quotes, scores)."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, get_args

from policybot.schemas import Answer

Rating = Literal["up", "down"]
RATINGS: tuple[str, ...] = get_args(Rating)
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

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> FeedbackStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, question: str, answer: Answer, rating: Rating, comment: str = "", session: str = "") -> int:
        """Record one rating; returns its id."""
        if rating not in RATINGS:
            raise ValueError(f"rating must be one of {', '.join(RATINGS)}, got {rating!r}")
        row = (
            datetime.now(timezone.utc).isoformat(timespec="seconds"),
            question,
            answer.answer,
            answer.mode,
            rating,
            comment.strip()[:MAX_COMMENT_CHARS],
            session,
            answer.model_dump_json(),
        )
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO feedback (created_at, question, answer, mode, rating, comment, session, answer_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            return int(cur.lastrowid or 0)

    def all(self) -> list[dict[str, Any]]:
        """Every rating, newest first (ids order them: timestamps can tie within a second)."""
        with self._lock:
            cur = self._db.execute("SELECT * FROM feedback ORDER BY id DESC")
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM feedback").fetchone()[0])

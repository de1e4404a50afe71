"""Conversations kept on this machine (SQLite in the library's home), so a reload or a restart
finds them again: each turn is the question and the whole answer as it was shown (sources, quotes,
pages), in order. Never used in kiosk mode, where nothing of a visitor may outlive the visit.

A turn whose stored answer no longer reads as today's ``Answer`` (an older format) is skipped on
loading rather than breaking the conversation.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from policybot.schemas import Answer

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    conversation TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer_json TEXT NOT NULL,
    PRIMARY KEY (conversation, idx)
);
"""
TITLE_CHARS = 80


@dataclass(frozen=True)
class ConversationSummary:
    id: str
    title: str
    updated_at: str
    turns: int


class ConversationStore:
    """Thread-safe: the Streamlit app shares one store across its sessions."""

    def __init__(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def save_turn(self, conversation: str, index: int, question: str, answer: Answer) -> None:
        """Keep turn ``index`` (from 0) of a conversation; turns after it are dropped (the question
        was asked again or edited). The conversation is titled by its first question."""
        now = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        title = " ".join(question.split())[:TITLE_CHARS] or "Conversation"
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET updated_at=excluded.updated_at",
                    (conversation, title, now, now),
                )
                self._db.execute("DELETE FROM turns WHERE conversation=? AND idx>=?", (conversation, index))
                self._db.execute(
                    "INSERT INTO turns (conversation, idx, question, answer_json) VALUES (?, ?, ?, ?)",
                    (conversation, index, question, answer.model_dump_json()),
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def keep_first(self, conversation: str, turns: int) -> None:
        """Drop the turns after the first ``turns`` (a last question taken back to be asked again)."""
        with self._lock:
            self._db.execute("DELETE FROM turns WHERE conversation=? AND idx>=?", (conversation, turns))

    def load(self, conversation: str) -> list[tuple[str, Answer]]:
        """The conversation's turns in order; [] for one that is not kept (deleted, or never saved)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT question, answer_json FROM turns WHERE conversation=? ORDER BY idx", (conversation,)
            ).fetchall()
        out = []
        for question, stored in rows:
            try:
                out.append((question, Answer.model_validate_json(stored)))
            except ValidationError:
                continue  # an answer kept by an older version that no longer reads: leave it out
        return out

    def recent(self, limit: int = 30) -> list[ConversationSummary]:
        """The conversations, the last changed first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT c.id, c.title, c.updated_at, COUNT(t.idx) FROM conversations c"
                " LEFT JOIN turns t ON t.conversation = c.id GROUP BY c.id"
                " ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [ConversationSummary(r[0], r[1], r[2], int(r[3])) for r in rows]

    def delete(self, conversation: str) -> bool:
        """Remove a conversation and its turns; False when there was none."""
        with self._lock:
            cur = self._db.execute("DELETE FROM conversations WHERE id=?", (conversation,))
            return cur.rowcount > 0

"""The document registry (SQLite): what is indexed, with which model, and every chunk's text
and vector.

The registry is the source of truth: a document exists when its row exists. Vector and
BM25 entries are written before the row and removed after it, and searches only return
chunks of registered documents, so a failure at any step never shows half a document.
Each chunk's embedding is kept here too (float32 bytes), written in the same transaction:
the vector store and the BM25 index are derived from the registry and can be rebuilt from
it without re-embedding (a process killed while Chroma persists its HNSW files can leave
them torn, and Chroma then crashes on open).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from policybot.core.rows import ChunkRow, DocumentRow
from policybot.store.locks import opening

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    collection TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    title TEXT NOT NULL,
    pages INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    sections INTEGER NOT NULL,
    section_source TEXT NOT NULL,
    tables INTEGER NOT NULL,
    empty_pages TEXT NOT NULL,
    embedding_model TEXT NOT NULL,
    chunker TEXT NOT NULL,
    stored_path TEXT NOT NULL,
    source_path TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    ingest_seconds REAL NOT NULL,
    summary TEXT,
    probes TEXT,
    ocr_pages TEXT,
    effective_date TEXT,
    effective_source TEXT,
    family TEXT,
    family_status TEXT,
    PRIMARY KEY (collection, doc_id),
    UNIQUE (collection, name)
);
CREATE TABLE IF NOT EXISTS chunks (
    collection TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    text TEXT NOT NULL,
    index_text TEXT NOT NULL,
    section TEXT NOT NULL,
    page_start INTEGER NOT NULL,
    page_end INTEGER NOT NULL,
    kind TEXT NOT NULL,
    vector BLOB,
    PRIMARY KEY (collection, chunk_id)
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (collection, doc_id);
CREATE TABLE IF NOT EXISTS generations (collection TEXT PRIMARY KEY, value INTEGER NOT NULL);
-- An ingestion in progress: written before its stored file and vectors, removed in the
-- transaction that registers the document. A row left behind marks a crash to clean up.
CREATE TABLE IF NOT EXISTS pending (
    collection TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    stored_path TEXT NOT NULL,
    started_at TEXT NOT NULL,
    PRIMARY KEY (collection, doc_id)
);
"""


@dataclass
class PendingRow:
    collection: str
    doc_id: str
    stored_path: str
    started_at: str


class Registry:
    """Thread-safe access to the registry database."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with opening(path.parent):  # one process at a time creates the file and its tables
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(SCHEMA)
            self._lock = threading.RLock()
            self._migrate()

    def _migrate(self) -> None:
        """Registries made by earlier versions get the newer columns (their rows stay NULL)."""
        for table, column, kind in (
            ("chunks", "vector", "BLOB"),
            ("documents", "probes", "TEXT"),
            ("documents", "ocr_pages", "TEXT"),
            ("documents", "effective_date", "TEXT"),
            ("documents", "effective_source", "TEXT"),
            ("documents", "family", "TEXT"),
            ("documents", "family_status", "TEXT"),
        ):
            if column not in {r["name"] for r in self._rows(f"PRAGMA table_info({table})")}:
                with self._lock:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def close(self) -> None:
        self._db.close()

    def _rows(self, sql: str, args: Iterable = ()) -> list[dict[str, Any]]:
        with self._lock:
            cur = self._db.execute(sql, tuple(args))
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, row)) for row in cur.fetchall()]

    @staticmethod
    def _doc(row: dict[str, Any]) -> DocumentRow:
        row = dict(row)
        row["empty_pages"] = json.loads(row["empty_pages"])
        row["ocr_pages"] = {int(k): float(v) for k, v in json.loads(row.get("ocr_pages") or "{}").items()}
        return DocumentRow(**row)

    def documents(self, collection: str | None = None) -> list[DocumentRow]:
        if collection is None:
            rows = self._rows("SELECT * FROM documents ORDER BY name, collection")
        else:
            rows = self._rows("SELECT * FROM documents WHERE collection=? ORDER BY name", (collection,))
        return [self._doc(r) for r in rows]

    def by_name(self, collection: str, name: str) -> DocumentRow | None:
        rows = self._rows("SELECT * FROM documents WHERE collection=? AND name=?", (collection, name))
        return self._doc(rows[0]) if rows else None

    def by_sha(self, collection: str, sha256: str) -> DocumentRow | None:
        rows = self._rows("SELECT * FROM documents WHERE collection=? AND sha256=?", (collection, sha256))
        return self._doc(rows[0]) if rows else None

    def generation(self, collection: str) -> int:
        rows = self._rows("SELECT value FROM generations WHERE collection=?", (collection,))
        return int(rows[0]["value"]) if rows else 0

    def chunk_texts(self, collection: str, doc_id: str | None = None) -> list[tuple[str, str]]:
        """(chunk_id, indexed text) of every registered chunk (of one document), in a stable order."""
        if doc_id is not None:
            rows = self._rows(
                "SELECT chunk_id, index_text FROM chunks WHERE collection=? AND doc_id=? ORDER BY ord",
                (collection, doc_id),
            )
        else:
            rows = self._rows(
                "SELECT chunk_id, index_text FROM chunks WHERE collection=? ORDER BY doc_id, ord", (collection,)
            )
        return [(r["chunk_id"], r["index_text"]) for r in rows]

    def vector_rows(self, collection: str) -> list[tuple[str, str, bytes | None]]:
        """(chunk_id, doc_id, vector bytes or None) of every registered chunk, in a stable order."""
        rows = self._rows(
            "SELECT chunk_id, doc_id, vector FROM chunks WHERE collection=? ORDER BY doc_id, ord", (collection,)
        )
        return [(r["chunk_id"], r["doc_id"], r["vector"]) for r in rows]

    def chunk_count(self, collection: str) -> int:
        return int(self._rows("SELECT COUNT(*) AS n FROM chunks WHERE collection=?", (collection,))[0]["n"])

    def vectors(self, collection: str, chunk_ids: Iterable[str]) -> dict[str, np.ndarray | None]:
        """Stored vectors by chunk id (None where a chunk predates stored vectors)."""
        ids = list(chunk_ids)
        out: dict[str, np.ndarray | None] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for r in self._rows(
                f"SELECT chunk_id, vector FROM chunks WHERE collection=? AND chunk_id IN ({marks})", [collection, *part]
            ):
                out[r["chunk_id"]] = None if r["vector"] is None else np.frombuffer(r["vector"], dtype=np.float32)
        return out

    def chunks(self, collection: str, chunk_ids: Iterable[str]) -> dict[str, ChunkRow]:
        ids = list(chunk_ids)
        out: dict[str, ChunkRow] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for r in self._rows(
                f"SELECT chunk_id, doc_id, ord, text, index_text, section, page_start, page_end, kind "
                f"FROM chunks WHERE collection=? AND chunk_id IN ({marks})",
                [collection, *part],
            ):
                out[r["chunk_id"]] = ChunkRow(**r)
        return out

    def chunks_of(self, collection: str, doc_id: str) -> list[ChunkRow]:
        """A document's chunks in order."""
        rows = self._rows(
            "SELECT chunk_id, doc_id, ord, text, index_text, section, page_start, page_end, kind "
            "FROM chunks WHERE collection=? AND doc_id=? ORDER BY ord",
            (collection, doc_id),
        )
        return [ChunkRow(**r) for r in rows]

    def set_effective(self, collection: str, doc_id: str, when: str | None, source: str | None) -> None:
        with self._lock:  # the generation moves: which edition is current may change
            self._db.execute(
                "UPDATE documents SET effective_date=?, effective_source=? WHERE collection=? AND doc_id=?",
                (when, source, collection, doc_id),
            )
            self._bump(collection)

    def set_family(self, collection: str, doc_ids: Iterable[str], family: str | None, status: str | None) -> None:
        """Put documents in one edition family (or, with None, out of any), in one transaction;
        the generation moves, since which editions are current decides what is searched."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for doc_id in doc_ids:
                    self._db.execute(
                        "UPDATE documents SET family=?, family_status=? WHERE collection=? AND doc_id=?",
                        (family, status, collection, doc_id),
                    )
                self._bump(collection)
                self._db.execute("COMMIT")
            except BaseException:
                _rollback(self._db)
                raise

    def set_probes(self, collection: str, doc_id: str, probes: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE documents SET probes=? WHERE collection=? AND doc_id=?", (probes, collection, doc_id)
            )

    def chunk_ids_with_section(self, collection: str, fragment: str) -> list[tuple[str, str]]:
        """(chunk_id, section) of chunks whose section path contains ``fragment``."""
        rows = self._rows(
            "SELECT chunk_id, section FROM chunks WHERE collection=? AND instr(lower(section), lower(?)) > 0 ORDER BY "
            "doc_id, ord",
            (collection, fragment),
        )
        return [(r["chunk_id"], r["section"]) for r in rows]

    # --- ingestions in progress -----------------------------------------------------------
    def begin_pending(self, collection: str, doc_id: str, stored_path: str) -> None:
        """Record, before anything is written, what an ingestion is about to write."""
        from datetime import datetime, timezone

        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO pending VALUES (?, ?, ?, ?)",
                (collection, doc_id, stored_path, datetime.now(timezone.utc).isoformat(timespec="seconds")),
            )

    def end_pending(self, collection: str, doc_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM pending WHERE collection=? AND doc_id=?", (collection, doc_id))

    def pending(self) -> list[PendingRow]:
        return [PendingRow(**r) for r in self._rows("SELECT * FROM pending ORDER BY started_at")]

    def has_document(self, collection: str, doc_id: str) -> bool:
        return bool(self._rows("SELECT 1 FROM documents WHERE collection=? AND doc_id=? LIMIT 1", (collection, doc_id)))

    def stored_paths(self) -> set[str]:
        return {r["stored_path"] for r in self._rows("SELECT DISTINCT stored_path FROM documents")}

    def replace(
        self, doc: DocumentRow, chunks: list[ChunkRow], replaces: DocumentRow | None, vectors: np.ndarray | None = None
    ) -> None:
        """Register ``doc``, its chunks and their vectors, dropping ``replaces``, in one transaction."""
        blobs = (
            [None] * len(chunks) if vectors is None else [np.asarray(v, dtype=np.float32).tobytes() for v in vectors]
        )
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                if replaces is not None:
                    self._delete_rows(replaces.collection, replaces.doc_id)
                row = dict(doc.__dict__)
                row["empty_pages"] = json.dumps(doc.empty_pages)
                row["ocr_pages"] = json.dumps(doc.ocr_pages) if doc.ocr_pages else None
                cols = ",".join(row)
                db.execute(f"INSERT INTO documents ({cols}) VALUES ({','.join('?' * len(row))})", list(row.values()))
                db.executemany(
                    "INSERT INTO chunks (collection, chunk_id, doc_id, ord, text, index_text, section, page_start, "
                    "page_end, kind, vector)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    [
                        (
                            doc.collection,
                            c.chunk_id,
                            c.doc_id,
                            c.ord,
                            c.text,
                            c.index_text,
                            c.section,
                            c.page_start,
                            c.page_end,
                            c.kind,
                            blob,
                        )
                        for c, blob in zip(chunks, blobs)
                    ],
                )
                db.execute("DELETE FROM pending WHERE collection=? AND doc_id=?", (doc.collection, doc.doc_id))
                self._bump(doc.collection)
                db.execute("COMMIT")
            except BaseException:
                _rollback(db)
                raise

    def delete(self, doc: DocumentRow) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._delete_rows(doc.collection, doc.doc_id)
                self._bump(doc.collection)
                self._db.execute("COMMIT")
            except BaseException:
                _rollback(self._db)
                raise

    def _delete_rows(self, collection: str, doc_id: str) -> None:
        self._db.execute("DELETE FROM chunks WHERE collection=? AND doc_id=?", (collection, doc_id))
        self._db.execute("DELETE FROM documents WHERE collection=? AND doc_id=?", (collection, doc_id))

    def _bump(self, collection: str) -> None:
        self._db.execute(
            "INSERT INTO generations VALUES (?, 1) ON CONFLICT(collection) DO UPDATE SET value = value + 1",
            (collection,),
        )

    def stored_file_in_use(self, stored_path: str) -> bool:
        return bool(self._rows("SELECT 1 FROM documents WHERE stored_path=? LIMIT 1", (stored_path,)))


def _rollback(db: sqlite3.Connection) -> None:
    """Undo an unfinished transaction. SQLite may already have rolled it back itself (a full disk,
    an I/O error): then there is nothing to undo, and the original error is the one to report."""
    if db.in_transaction:
        db.execute("ROLLBACK")

"""The document index: vectors in ChromaDB, BM25 beside them, rows in the registry.

One Chroma collection per embedding model, so switching models never mixes vectors; a
collection records the model it was built with and refuses another. Writes are ordered
so that a failure at any point leaves every document either fully present or absent.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence
from urllib.parse import urlparse

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction

from policybot.core.rows import ChunkRow, DocumentRow
from policybot.errors import IndexUnavailable
from policybot.models.profiles import EmbeddingModel
from policybot.settings import Settings
from policybot.store.exact import ExactSearch
from policybot.store.lexical import LexicalIndex
from policybot.store.locks import LibraryLock, opening
from policybot.store.registry import Registry

log = logging.getLogger(__name__)


def collection_name(model: EmbeddingModel) -> str:
    return "policybot-" + re.sub(r"[^a-z0-9]+", "-", model.name.lower()).strip("-")


def library_id(home: Path) -> str:
    """A random id made once per library (HOME/library-id). On a Chroma server several libraries
    share one namespace: the id keeps each library's collection its own."""
    path = home / "library-id"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        home.mkdir(parents=True, exist_ok=True)
        try:
            with path.open("x") as out:  # exclusive: two processes starting at once agree on one id
                out.write(uuid.uuid4().hex[:12])
        except FileExistsError:
            pass
        return path.read_text().strip()


def server_collection_name(model: EmbeddingModel, home: Path) -> str:
    """The collection's name on a Chroma server: the model's collection, qualified by the library."""
    return f"{collection_name(model)}-{library_id(home)}"


_CLIENTS: dict[str, Any] = {}
_CLIENTS_LOCK = threading.Lock()
# Per embedded store (its path): the registry generation its open client is known to show, and how
# many times it was reopened (a collection handle from before a reopen is fetched again).
_SEEN: dict[str, int] = {}
_EPOCHS: dict[str, int] = {}


def _client_key(settings: Settings) -> str:
    return settings.chroma_url or str((settings.home / "chroma").resolve())


def chroma_client(settings: Settings) -> Any:
    """The process-wide Chroma client: embedded under HOME/chroma, or a server if configured.

    Chroma allows one client per path per process, so clients are shared.
    """
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    key = _client_key(settings)
    with _CLIENTS_LOCK:
        if key in _CLIENTS:
            return _CLIENTS[key]
        chroma_settings = ChromaSettings(anonymized_telemetry=False)
        if settings.chroma_url:
            url = urlparse(settings.chroma_url if "://" in settings.chroma_url else f"http://{settings.chroma_url}")
            client = chromadb.HttpClient(
                host=url.hostname or "localhost",
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                settings=chroma_settings,
            )
        else:
            with opening(settings.home):  # another process may be creating (or setting aside) the same store
                quarantine_if_interrupted(settings.home)
                Path(key).mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=key, settings=chroma_settings)
        _CLIENTS[key] = client
        return client


def write_marker(home: Path) -> Path:
    """Present while this library's embedded Chroma store is being written."""
    return home / "chroma.writing"


def quarantine_if_interrupted(home: Path) -> bool:
    """Set aside an embedded Chroma store whose last write never finished.

    Chroma persists its HNSW files in place; a process killed in the middle leaves them torn,
    and the next process to open them crashes (SIGSEGV in Chroma's Rust loader, not an
    exception). The store is derived data: it is moved aside (kept for inspection) and a
    fresh one is refilled from the registry's vectors by ``DocumentIndex.recover``. Only when
    no other process holds the library lock: a writer that is alive owns the marker.
    """
    marker = write_marker(home)
    if not marker.exists():
        return False
    with LibraryLock(home / "library.lock").hold(wait=False) as held:
        if not held or not marker.exists():
            return False
        store = home / "chroma"
        if store.exists():
            aside = home / f"chroma.interrupted-{int(time.time())}"
            store.rename(aside)
            log.warning(
                "the vector store's last write was interrupted; moved it to %s and rebuilding from the registry", aside
            )
        marker.unlink(missing_ok=True)
        return True


class ChromaEmbeddings(EmbeddingFunction[Documents]):
    """Our embedder, handed to Chroma so it never falls back to its own default model
    (which it would download). The config names the model, so a collection opened by
    other tools rebuilds the same embedder."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def __call__(self, input: Documents) -> Any:
        return list(self.embedder.embed(list(input)))

    @staticmethod
    def name() -> str:
        return "policybot"

    def get_config(self) -> dict[str, Any]:
        return {"model": self.embedder.model.vector_id}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "ChromaEmbeddings":
        from policybot.models.embeddings import get_embedder
        from policybot.models.profiles import model_with_vector_id

        model = model_with_vector_id(str(config.get("model")))
        if model is None:
            raise IndexUnavailable(f"unknown embedding model in collection config: {config.get('model')}")
        return ChromaEmbeddings(get_embedder(model, Settings()))

    def default_space(self) -> Any:
        return "cosine"


class VectorStore:
    """One Chroma collection (cosine HNSW) bound to one embedding model."""

    def __init__(self, settings: Settings, model: EmbeddingModel, embedder: Any) -> None:
        self.settings = settings
        self.model = model
        self.embedder = embedder
        self.name = collection_name(model)
        self._collection: Any = None
        self._epoch = 0

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Mark the embedded store as being written for the length of one write, so a kill in
        the middle is noticed at the next start (``quarantine_if_interrupted``)."""
        if self.settings.chroma_url:  # a server keeps its own files
            yield
            return
        marker = write_marker(self.settings.home)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(str(os.getpid()))
        yield
        # Not in a `finally`: a write that raised may have left the files half-written too,
        # so its marker stays and the next start rebuilds the store.
        marker.unlink(missing_ok=True)

    def _unreachable(self, exc: Exception) -> Exception:
        """A Chroma server that cannot be reached, said in one line with the fix; other errors as they are."""
        if not self.settings.chroma_url or isinstance(exc, IndexUnavailable):
            return exc
        return IndexUnavailable(
            f"the Chroma server at {self.settings.chroma_url} cannot be reached ({str(exc).splitlines()[0][:120]}); "
            "start it, or unset POLICYBOT_CHROMA_URL to use the library's own store"
        )

    def saw(self, generation: int) -> None:
        """This process wrote the store at ``generation``: its client shows it already."""
        with _CLIENTS_LOCK:
            _SEEN[_client_key(self.settings)] = generation

    def follow(self, generation: int) -> None:
        """Before a search: when another process changed the library since this one last looked
        (``policybot ingest`` beside a running app), reopen the embedded store, whose client keeps
        what it loaded in memory and would not find the new vectors. A server needs nothing."""
        if self.settings.chroma_url:
            return
        key = _client_key(self.settings)
        with _CLIENTS_LOCK:
            seen = _SEEN.setdefault(key, generation)
            if seen == generation:
                return
            _SEEN[key] = generation
            stale = _CLIENTS.pop(key, None)
            _EPOCHS[key] = _EPOCHS.get(key, 0) + 1
        if stale is not None:
            log.info("the library changed in another process: reopening its vector store")
            stale.close()

    @property
    def collection(self) -> Any:
        epoch = _EPOCHS.get(_client_key(self.settings), 0)
        if self._collection is None or self._epoch != epoch:
            self._collection, self._epoch = None, epoch
            # The registry and BM25 files keep the plain name; only the server's copy is qualified.
            remote = server_collection_name(self.model, self.settings.home) if self.settings.chroma_url else self.name
            try:
                col = chroma_client(self.settings).get_or_create_collection(
                    remote,
                    embedding_function=ChromaEmbeddings(self.embedder),
                    configuration={"hnsw": {"space": "cosine"}},
                    metadata={"embedding_model": self.model.vector_id},
                )
            except Exception as exc:
                raise self._unreachable(exc) from exc
            bound = (col.metadata or {}).get("embedding_model")
            if bound and bound != self.model.vector_id:
                raise IndexUnavailable(f"collection {self.name} holds vectors of {bound}, not {self.model.vector_id}")
            self._collection = col
        return self._collection

    def add(self, ids: Sequence[str], vectors: np.ndarray, texts: Sequence[str], metadatas: Sequence[dict]) -> None:
        col = self.collection
        step = 1000
        with self._writing():
            for start in range(0, len(ids), step):
                end = start + step
                col.upsert(
                    ids=list(ids[start:end]),
                    embeddings=vectors[start:end],
                    documents=list(texts[start:end]),
                    metadatas=list(metadatas[start:end]),
                )

    def delete_ids(self, ids: Sequence[str]) -> None:
        if ids:
            col = self.collection
            with self._writing():
                col.delete(ids=list(ids))

    def delete_doc(self, doc_id: str) -> None:
        col = self.collection
        with self._writing():
            col.delete(where={"doc_id": doc_id})

    def ids(self) -> set[str]:
        return set(self.collection.get(include=[])["ids"])

    def doc_ids(self) -> set[str]:
        got = self.collection.get(include=["metadatas"])
        return {m["doc_id"] for m in got["metadatas"] or [] if m}

    def count(self) -> int:
        return int(self.collection.count())

    def query(
        self, vector: np.ndarray, k: int, doc_ids: Sequence[str], library_docs: int | None = None
    ) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) of the nearest ``k`` chunks among ``doc_ids``.

        Chroma's metadata filter costs time in proportion to the collection (31 ms at 10k chunks,
        276 ms at 100k for a filter naming every document, against 1-2 ms unfiltered). When the
        scope is most of the library (``library_docs`` documents in all), the nearest chunks are
        fetched unfiltered, twice over, and those of other documents (or of none: leftovers of a
        crash) dropped; only if that leaves fewer than ``k`` is the filtered query run, so a
        scope never gets fewer results than it should."""
        if not doc_ids or k <= 0:
            return []
        try:
            return self._query(vector, k, doc_ids, library_docs)
        except Exception as exc:
            if self._epoch == _EPOCHS.get(_client_key(self.settings), 0):
                raise self._unreachable(exc) from exc
            return self._query(vector, k, doc_ids, library_docs)  # reopened meanwhile by another thread

    def _query(
        self, vector: np.ndarray, k: int, doc_ids: Sequence[str], library_docs: int | None
    ) -> list[tuple[str, float]]:
        allowed = set(doc_ids)
        if library_docs and 2 * len(allowed) >= library_docs:
            res = self.collection.query(query_embeddings=[vector], n_results=2 * k, include=["distances", "metadatas"])
            metas = res["metadatas"][0] if res.get("metadatas") else []
            near = [
                (cid, 1.0 - float(d))
                for cid, d, m in zip(res["ids"][0], res["distances"][0], metas)
                if m and m.get("doc_id") in allowed
            ]
            if len(near) >= k or len(res["ids"][0]) < 2 * k:
                return near[:k]
        where = {"doc_id": doc_ids[0]} if len(doc_ids) == 1 else {"doc_id": {"$in": list(doc_ids)}}
        res = self.collection.query(query_embeddings=[vector], n_results=k, where=where, include=["distances"])
        return [(cid, 1.0 - float(dist)) for cid, dist in zip(res["ids"][0], res["distances"][0])]


@dataclass
class Cleanup:
    """What a clean-up removed."""

    interrupted: int = 0  # ingestions that never finished
    vectors_of: int = 0  # unregistered documents whose vectors were removed
    files: int = 0  # stored or staged files no document uses
    restored: int = 0  # vectors put back from the registry (after a store was set aside)

    @property
    def total(self) -> int:
        return self.interrupted + self.vectors_of + self.files + self.restored


class DocumentIndex:
    """Everything indexed for one embedding model: vectors, BM25, registry rows, stored PDFs."""

    def __init__(self, settings: Settings, model: EmbeddingModel, embedder: Any, registry: Registry) -> None:
        self.settings = settings
        self.model = model
        self.registry = registry
        self.store = VectorStore(settings, model, embedder)
        self.exact = ExactSearch(settings.exact_search_max_chunks)
        self._sizes: tuple[int, int, int] | None = None  # (generation, documents, chunks)
        self.collection = self.store.name
        self.lexical = LexicalIndex(settings.home / "lexical" / self.collection)
        self.files_dir = settings.home / "files"
        self.uploads_dir = settings.home / "uploads"

    # --- reading ----------------------------------------------------------------------
    def document_count(self) -> int:
        """How many documents the library holds (remembered per registry generation)."""
        return self._size(self.registry.generation(self.collection))[1]

    def documents(self) -> list[DocumentRow]:
        return self.registry.documents(self.collection)

    def nearest(self, vector: np.ndarray, k: int, doc_ids: Sequence[str]) -> list[tuple[str, float]]:
        """The nearest chunks by cosine, as the library is now, even if another process changed it:
        exactly, over the registry's vectors, for a library of up to ``exact_search_max_chunks``
        chunks; by Chroma's approximate search beyond (``store.exact``)."""
        generation = self.registry.generation(self.collection)
        matrix = self.exact.matrix(
            generation, self._size(generation)[2], lambda: self.registry.vector_rows(self.collection)
        )
        if matrix is not None:
            return matrix.nearest(vector, k, doc_ids)
        self.store.follow(generation)
        return self.store.query(vector, k, doc_ids, self.document_count())

    def _size(self, generation: int) -> tuple[int, int, int]:
        """(generation, documents, chunks) of the library, remembered per registry generation."""
        if self._sizes is None or self._sizes[0] != generation:
            docs = self.registry.documents(self.collection)
            self._sizes = (generation, len(docs), sum(d.chunks for d in docs))
        return self._sizes

    def vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by chunk id: from the registry, or from Chroma for chunks indexed
        before the registry kept them."""
        found = {cid: v for cid, v in self.registry.vectors(self.collection, chunk_ids).items() if v is not None}
        missing = [cid for cid in chunk_ids if cid not in found]
        if missing:
            got = self.store.collection.get(ids=missing, include=["embeddings"])
            found.update({cid: np.asarray(v, dtype=np.float32) for cid, v in zip(got["ids"], got["embeddings"])})
        return found

    def lexical_ready(self) -> LexicalIndex:
        collection = self.collection
        self.lexical.ensure(
            self.registry.generation(collection),
            lambda: {d.doc_id: f"{d.sha256}:{d.chunks}" for d in self.registry.documents(collection)},
            lambda doc_id: self.registry.chunk_texts(collection, doc_id),
        )
        return self.lexical

    # --- writing ----------------------------------------------------------------------
    def store_file(self, source: Path, sha256: str) -> tuple[Path, bool]:
        """Keep a copy of the PDF (page images and downloads need it); True if newly written."""
        self.files_dir.mkdir(parents=True, exist_ok=True)
        target = self.files_dir / f"{sha256}.pdf"
        if target.exists():
            return target, False
        tmp = target.with_suffix(".part")
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
        return target, True

    def add(self, doc: DocumentRow, chunks: list[ChunkRow], vectors: np.ndarray, replaces: DocumentRow | None) -> None:
        """Add a fully prepared document; on any failure the index is left as it was.

        Document ids hash the content and the chunking, so new chunks never share ids
        with the ones they replace: the new vectors go in, the registry swaps rows in
        one transaction, and only then are the old vectors removed.
        """
        ids = [c.chunk_id for c in chunks]
        metadatas = [_metadata(doc.name, c) for c in chunks]
        try:
            self.store.add(ids, vectors, [c.index_text for c in chunks], metadatas)
            self.registry.replace(doc, chunks, replaces, vectors)
            self.store.saw(self.registry.generation(self.collection))
        except BaseException:
            self._quietly(self.store.delete_ids, ids)
            raise
        if replaces is not None:
            self._quietly(self.store.delete_doc, replaces.doc_id)
            self._drop_file_if_unused(replaces.stored_path)

    def delete(self, doc: DocumentRow) -> None:
        self.registry.delete(doc)
        self._quietly(self.store.delete_doc, doc.doc_id)
        self.store.saw(self.registry.generation(self.collection))
        self._drop_file_if_unused(doc.stored_path)

    def reconcile(self) -> int:
        """Remove vectors of documents the registry does not list (left by a crash).
        Reads every vector's metadata: the thorough part of a repair, not run at start-up."""
        known = {d.doc_id for d in self.documents()}
        orphans = self.store.doc_ids() - known
        for doc_id in orphans:
            self.store.delete_doc(doc_id)
        return len(orphans)

    def recover(self, lock: LibraryLock) -> Cleanup:
        """The cheap clean-up, run at start-up: undo ingestions that a crash interrupted (their
        vectors and stored file), and remove files no document uses. Skipped while another
        process holds the library lock: its ingestion in progress is not a leftover."""
        done = Cleanup()
        self.store.collection  # opening it sets aside a torn store; that takes the lock itself
        with lock.hold(wait=False) as held:
            if not held:
                return done
            for row in self.registry.pending():
                if row.collection != self.collection:
                    continue  # that model's index cleans up its own vectors when opened
                if not self.registry.has_document(row.collection, row.doc_id):
                    self.store.delete_doc(row.doc_id)
                    done.interrupted += 1
                self.registry.end_pending(row.collection, row.doc_id)
            done.files = self._remove_unused_files()
            done.restored = self._restore_vectors()
        if done.total:
            log.warning("cleaned up after an interrupted ingestion: %s", done)
        return done

    def _restore_vectors(self) -> int:
        """Put back the vectors of registered chunks that the store lacks: all of them after a
        torn store was set aside. Counting first keeps the usual start-up to two cheap calls."""
        expected = self.registry.chunk_count(self.collection)
        if expected == 0 or self.store.count() >= expected:
            return 0
        present = self.store.ids()
        missing = [cid for cid, _ in self.registry.chunk_texts(self.collection) if cid not in present]
        names = {d.doc_id: d.name for d in self.documents()}
        restored = 0
        for start in range(0, len(missing), 1000):
            part = missing[start : start + 1000]
            rows = self.registry.chunks(self.collection, part)
            stored = self.registry.vectors(self.collection, part)
            todo = [cid for cid in part if cid in rows]
            vectors = [stored.get(cid) for cid in todo]
            unstored = [i for i, v in enumerate(vectors) if v is None]  # rows from before vectors were kept
            if unstored:
                fresh = self.store.embedder.embed([rows[todo[i]].index_text for i in unstored])
                for i, vector in zip(unstored, fresh):
                    vectors[i] = vector
            filled = [v for v in vectors if v is not None]  # every gap was embedded above
            self.store.add(
                todo,
                np.vstack(filled) if filled else np.zeros((0, 1), dtype=np.float32),
                [rows[cid].index_text for cid in todo],
                [_metadata(names.get(rows[cid].doc_id, ""), rows[cid]) for cid in todo],
            )
            restored += len(todo)
        log.warning("restored %d vectors of %s from the registry", restored, self.collection)
        return restored

    def _remove_unused_files(self) -> int:
        """Stored PDFs no registered or pending document uses, half-copied files, upload staging."""
        used = self.registry.stored_paths() | {r.stored_path for r in self.registry.pending()}
        used_names = {Path(p).name for p in used if p}
        removed = 0
        if self.files_dir.is_dir():
            for path in self.files_dir.iterdir():
                if path.is_file() and (path.suffix == ".part" or path.name not in used_names):
                    path.unlink(missing_ok=True)
                    removed += 1
        if self.uploads_dir.is_dir():
            for path in self.uploads_dir.iterdir():
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
                removed += 1
        return removed

    def _drop_file_if_unused(self, stored_path: str) -> None:
        if stored_path and not self.registry.stored_file_in_use(stored_path):
            Path(stored_path).unlink(missing_ok=True)

    @staticmethod
    def _quietly(fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as exc:  # cleanup must not hide the original error
            log.warning("cleanup step failed (%s); `policybot doctor --repair` removes leftovers", exc)


def _metadata(name: str, chunk: ChunkRow) -> dict[str, Any]:
    """What Chroma keeps beside each vector (filters and inspection)."""
    return {
        "doc_id": chunk.doc_id,
        "name": name,
        "section": chunk.section,
        "page_start": chunk.page_start,
        "page_end": chunk.page_end,
        "kind": chunk.kind,
    }

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
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import urlparse

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction

from policybot.lexical import LexicalIndex
from policybot.profiles import EmbeddingModel
from policybot.registry import ChunkRow, DocumentRow, Registry
from policybot.settings import Settings

log = logging.getLogger(__name__)


class IndexError_(RuntimeError):
    """The index cannot be used as configured (wrong model, unreachable server)."""


def collection_name(model: EmbeddingModel) -> str:
    return "policybot-" + re.sub(r"[^a-z0-9]+", "-", model.name.lower()).strip("-")


_CLIENTS: dict[str, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def chroma_client(settings: Settings) -> Any:
    """The process-wide Chroma client: embedded under HOME/chroma, or a server if configured.

    Chroma allows one client per path per process, so clients are shared.
    """
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    key = settings.chroma_url or str((settings.home / "chroma").resolve())
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
            Path(key).mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(path=key, settings=chroma_settings)
        _CLIENTS[key] = client
        return client


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
        return {"model": self.embedder.model.hf_id}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "ChromaEmbeddings":
        from policybot.embeddings import get_embedder
        from policybot.profiles import EMBEDDING_MODELS

        model = next((m for m in EMBEDDING_MODELS.values() if m.hf_id == config.get("model")), None)
        if model is None:
            raise IndexError_(f"unknown embedding model in collection config: {config.get('model')}")
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

    @property
    def collection(self) -> Any:
        if self._collection is None:
            client = chroma_client(self.settings)
            col = client.get_or_create_collection(
                self.name,
                embedding_function=ChromaEmbeddings(self.embedder),
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"embedding_model": self.model.hf_id},
            )
            bound = (col.metadata or {}).get("embedding_model")
            if bound and bound != self.model.hf_id:
                raise IndexError_(f"collection {self.name} holds vectors of {bound}, not {self.model.hf_id}")
            self._collection = col
        return self._collection

    def add(self, ids: Sequence[str], vectors: np.ndarray, texts: Sequence[str], metadatas: Sequence[dict]) -> None:
        col = self.collection
        step = 1000
        for start in range(0, len(ids), step):
            end = start + step
            col.add(
                ids=list(ids[start:end]),
                embeddings=vectors[start:end],
                documents=list(texts[start:end]),
                metadatas=list(metadatas[start:end]),
            )

    def delete_ids(self, ids: Sequence[str]) -> None:
        if ids:
            self.collection.delete(ids=list(ids))

    def delete_doc(self, doc_id: str) -> None:
        self.collection.delete(where={"doc_id": doc_id})

    def doc_ids(self) -> set[str]:
        got = self.collection.get(include=["metadatas"])
        return {m["doc_id"] for m in got["metadatas"] or [] if m}

    def count(self) -> int:
        return int(self.collection.count())

    def query(self, vector: np.ndarray, k: int, doc_ids: Sequence[str]) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) of the nearest chunks among ``doc_ids``."""
        if not doc_ids or k <= 0:
            return []
        where = {"doc_id": doc_ids[0]} if len(doc_ids) == 1 else {"doc_id": {"$in": list(doc_ids)}}
        res = self.collection.query(query_embeddings=[vector], n_results=k, where=where, include=["distances"])
        return [(cid, 1.0 - float(dist)) for cid, dist in zip(res["ids"][0], res["distances"][0])]


class DocumentIndex:
    """Everything indexed for one embedding model: vectors, BM25, registry rows, stored PDFs."""

    def __init__(self, settings: Settings, model: EmbeddingModel, embedder: Any, registry: Registry) -> None:
        self.settings = settings
        self.model = model
        self.registry = registry
        self.store = VectorStore(settings, model, embedder)
        self.collection = self.store.name
        self.lexical = LexicalIndex(settings.home / "lexical" / self.collection)
        self.files_dir = settings.home / "files"

    # --- reading ----------------------------------------------------------------------
    def documents(self) -> list[DocumentRow]:
        return self.registry.documents(self.collection)

    def lexical_ready(self) -> LexicalIndex:
        self.lexical.ensure(self.registry.generation(self.collection), lambda: self.registry.chunk_texts(self.collection))
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
        metadatas = [
            {
                "doc_id": doc.doc_id,
                "name": doc.name,
                "section": c.section,
                "page_start": c.page_start,
                "page_end": c.page_end,
                "kind": c.kind,
            }
            for c in chunks
        ]
        try:
            self.store.add(ids, vectors, [c.index_text for c in chunks], metadatas)
            self.registry.replace(doc, chunks, replaces)
        except BaseException:
            self._quietly(self.store.delete_ids, ids)
            raise
        if replaces is not None:
            self._quietly(self.store.delete_doc, replaces.doc_id)
            self._drop_file_if_unused(replaces.stored_path)

    def delete(self, doc: DocumentRow) -> None:
        self.registry.delete(doc)
        self._quietly(self.store.delete_doc, doc.doc_id)
        self._drop_file_if_unused(doc.stored_path)

    def reconcile(self) -> int:
        """Remove vectors of documents the registry does not list (left by a crash)."""
        known = {d.doc_id for d in self.documents()}
        orphans = self.store.doc_ids() - known
        for doc_id in orphans:
            self.store.delete_doc(doc_id)
        return len(orphans)

    def _drop_file_if_unused(self, stored_path: str) -> None:
        if stored_path and not self.registry.stored_file_in_use(stored_path):
            Path(stored_path).unlink(missing_ok=True)

    @staticmethod
    def _quietly(fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as exc:  # cleanup must not hide the original error
            log.warning("cleanup step failed (%s); `policybot doctor --repair` removes leftovers", exc)

"""BM25 over the same chunks as the vector index, persisted beside it.

Policy questions often hinge on exact terms ("Coverage D", "60 days", "RCBAP") that
dense models blur; BM25 keeps them. The chunk texts live in the registry (SQLite); the
BM25 matrices are saved under ``HOME/lexical/<collection>`` with the registry generation
they were built from, and rebuilt only when documents were added or removed since.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from policybot.registry import doc_of

_WORD = re.compile(r"\w+", re.UNICODE)
# Short, common function words only: "not", "no" and numbers stay (they carry meaning here).
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with "
    "which who what when where how do does did can could would should shall may might you your we our us "
    "i me my he she they them their there these those if then than so such".split()
)


class Tokenizer:
    """Lowercase word tokens, English stopwords dropped, Snowball-stemmed when available."""

    def __init__(self, language: str = "english") -> None:
        try:
            import Stemmer

            self._stem = Stemmer.Stemmer(language).stemWords
        except Exception:  # stemming is an improvement, not a requirement
            self._stem = lambda words: words

    def __call__(self, text: str) -> list[str]:
        words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
        return self._stem(words)


class LexicalIndex:
    """A BM25 index over one collection's chunks."""

    def __init__(self, folder: Path, tokenizer: Tokenizer | None = None) -> None:
        self.folder = folder
        self.tokenizer = tokenizer or Tokenizer()
        self._bm25 = None
        self._ids: list[str] = []
        self._generation: int | None = None
        self._lock = threading.Lock()

    def ensure(self, generation: int, load_chunks) -> None:
        """Make the index match ``generation``: load from disk, or rebuild from the chunks.

        ``load_chunks()`` returns ``[(chunk_id, text), ...]`` and is only called on a rebuild.
        """
        if self._generation == generation:
            return
        with self._lock:
            if self._generation == generation:
                return
            if not self._load(generation):
                self._build(generation, load_chunks())

    def _load(self, generation: int) -> bool:
        stamp = self.folder / "stamp.json"
        if not stamp.is_file():
            return False
        try:
            meta = json.loads(stamp.read_text())
            if meta.get("generation") != generation:
                return False
            ids = meta["ids"]
            bm25 = None
            if ids:
                import bm25s

                bm25 = bm25s.BM25.load(str(self.folder / "bm25"), show_progress=False, verbosity=0)
        except Exception:
            return False
        self._bm25, self._ids, self._generation = bm25, ids, generation
        return True

    def _build(self, generation: int, chunks: Sequence[tuple[str, str]]) -> None:
        import bm25s

        # bm25s sets its own logger to DEBUG on import and logs every build.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        ids = [cid for cid, _ in chunks]
        bm25 = None
        tmp = self.folder.with_name(self.folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if ids:
            bm25 = bm25s.BM25()
            bm25.index([self.tokenizer(text) or ["\u2205"] for _, text in chunks], show_progress=False)
            bm25.save(str(tmp / "bm25"), show_progress=False)
        (tmp / "stamp.json").write_text(json.dumps({"generation": generation, "ids": ids}))
        # Swap the finished folder in whole, so a crash never leaves a half-written index.
        old = self.folder.with_name(self.folder.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if self.folder.exists():
            self.folder.rename(old)
        tmp.rename(self.folder)
        shutil.rmtree(old, ignore_errors=True)
        self._bm25, self._ids, self._generation = bm25, ids, generation

    def chunk_ids_with(self, word: str) -> list[str]:
        """The chunks whose text uses a word (its stem); all of them for a stopword."""
        tokens = self.tokenizer(word)
        if self._bm25 is None or not tokens:
            return list(self._ids)
        token = self._bm25.vocab_dict.get(tokens[0])
        if token is None:
            return []
        indptr, indices = self._bm25.scores["indptr"], self._bm25.scores["indices"]
        return [self._ids[int(i)] for i in indices[indptr[token] : indptr[token + 1]]]

    def search(self, query: str, k: int, allowed_docs: set[str] | None = None) -> list[tuple[str, float]]:
        """Best ``k`` (chunk_id, BM25 score) pairs with a positive score, from ``allowed_docs`` only."""
        if self._bm25 is None or not self._ids:
            return []
        tokens = self.tokenizer(query)
        if not tokens:
            return []
        mask = None
        if allowed_docs is not None:
            mask = np.fromiter((doc_of(cid) in allowed_docs for cid in self._ids), dtype=np.float32, count=len(self._ids))
            if not mask.any():
                return []
        k = min(k, len(self._ids))
        docs, scores = self._bm25.retrieve([tokens], k=k, show_progress=False, weight_mask=mask, n_threads=1)
        return [(self._ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]

"""BM25 over the same chunks as the vector index, persisted beside it, updated per document.

Policy questions often hinge on exact terms ("Coverage D", "60 days", "RCBAP") that dense
models blur; BM25 keeps them. The chunk texts live in the registry (SQLite). The index is kept
as one *shard per document* (its chunks' term counts, ``HOME/lexical/<collection>/<doc>.npz``)
plus corpus statistics (document frequencies, lengths) summed over the shards, and BM25 is
scored at query time from them. Adding or removing a document tokenises and writes only that
document: the cost of a new policy does not grow with the library (a whole-corpus rebuild took
tens of seconds at 100k chunks). Scores are those of bm25s's Lucene variant (k1 = 1.5, b = 0.75),
which the earlier whole-corpus index used, so rankings and calibrations carry over.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

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


K1 = 1.5
B = 0.75
Documents = Callable[[], Mapping[str, str]]  # doc_id -> a signature that changes when its chunks do
ChunksOf = Callable[[str], Sequence[tuple[str, str]]]  # doc_id -> [(chunk_id, indexed text)]


@dataclass
class Shard:
    """One document's chunks as BM25 sees them: per term, the rows that use it and how often.
    Postings are kept as three flat arrays with a term -> slot index (not an array pair per term):
    a library of 700 documents loads in a fraction of the time."""

    signature: str
    chunk_ids: list[str]
    lengths: np.ndarray  # tokens per chunk
    slots: dict[str, int]  # term -> its slot in offsets
    offsets: np.ndarray  # postings of slot i: rows/freqs[offsets[i]:offsets[i + 1]]
    rows: np.ndarray
    freqs: np.ndarray

    @classmethod
    def of(cls, signature: str, chunks: Sequence[tuple[str, str]], tokenizer: Tokenizer) -> Shard:
        rows: dict[str, list[int]] = {}
        freqs: dict[str, list[int]] = {}
        lengths = []
        for row, (_, text) in enumerate(chunks):
            counts = Counter(tokenizer(text))
            lengths.append(
                max(sum(counts.values()), 1)
            )  # an empty chunk counts as one token, as bm25s's placeholder did
            for term, n in counts.items():
                rows.setdefault(term, []).append(row)
                freqs.setdefault(term, []).append(n)
        terms = sorted(rows)
        offsets = np.cumsum([0] + [len(rows[t]) for t in terms]).astype(np.int64)
        flat_rows = np.asarray([r for t in terms for r in rows[t]], dtype=np.int32)
        flat_freqs = np.asarray([f for t in terms for f in freqs[t]], dtype=np.float32)
        return cls(
            signature,
            [cid for cid, _ in chunks],
            np.asarray(lengths, dtype=np.float32),
            dict(zip(terms, range(len(terms)))),
            offsets,
            flat_rows,
            flat_freqs,
        )

    def posting(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows, term frequencies) of the chunks that use ``term``, or None."""
        slot = self.slots.get(term)
        if slot is None:
            return None
        start, end = self.offsets[slot], self.offsets[slot + 1]
        return self.rows[start:end], self.freqs[start:end]

    def document_frequencies(self) -> dict[str, int]:
        """Per term, how many of this shard's chunks use it."""
        return dict(zip(self.slots, np.diff(self.offsets).tolist()))

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".part.npz")
        np.savez(
            tmp,
            signature=np.asarray(self.signature),
            chunk_ids=np.asarray(self.chunk_ids, dtype=str),
            lengths=self.lengths,
            terms=np.asarray(list(self.slots), dtype=str),
            offsets=self.offsets,
            rows=self.rows,
            freqs=self.freqs,
        )
        os.replace(tmp, path)  # a shard is whole or absent, never half-written

    @classmethod
    def load(cls, path: Path) -> Shard:
        with np.load(path, allow_pickle=False) as data:
            terms = data["terms"].tolist()
            return cls(
                str(data["signature"]),
                data["chunk_ids"].tolist(),
                data["lengths"],
                dict(zip(terms, range(len(terms)))),
                data["offsets"],
                data["rows"],
                data["freqs"],
            )


@dataclass(frozen=True)
class Corpus:
    """The shards in use and their summed statistics: replaced whole on a change, so a search
    running meanwhile always sees one consistent state."""

    shards: dict[str, Shard] = field(default_factory=dict)
    df: Counter = field(default_factory=Counter)  # term -> chunks using it
    chunks: int = 0
    tokens: float = 0.0

    def with_changes(self, added: Mapping[str, Shard], removed: Sequence[str]) -> Corpus:
        shards, df = dict(self.shards), Counter(self.df)
        chunks, tokens = self.chunks, self.tokens
        for doc_id in removed:
            old = shards.pop(doc_id)
            df.subtract(old.document_frequencies())
            chunks, tokens = chunks - len(old.chunk_ids), tokens - float(old.lengths.sum())
        for doc_id, shard in added.items():
            shards[doc_id] = shard
            df.update(shard.document_frequencies())
            chunks, tokens = chunks + len(shard.chunk_ids), tokens + float(shard.lengths.sum())
        return Corpus(shards, +df, chunks, tokens)  # +df drops terms no chunk uses any more


class LexicalIndex:
    """A BM25 index over one collection's chunks, one shard per document."""

    def __init__(self, folder: Path, tokenizer: Tokenizer | None = None) -> None:
        self.folder = folder
        self.tokenizer = tokenizer or Tokenizer()
        self._corpus = Corpus()
        self._generation: int | None = None
        self._lock = threading.Lock()

    def ensure(self, generation: int, documents: Documents, chunks_of: ChunksOf) -> None:
        """Make the index match the registry at ``generation``: shards of documents that came or
        changed are built (or read from disk), those of documents that went are dropped."""
        if self._generation == generation:
            return
        with self._lock:
            if self._generation == generation:
                return
            self._drop_whole_corpus_index()
            wanted = dict(documents())
            current = self._corpus.shards
            removed = [d for d, shard in current.items() if wanted.get(d) != shard.signature]
            added = {d: self._shard(d, sig, chunks_of) for d, sig in wanted.items() if d not in current or d in removed}
            self._corpus = self._corpus.with_changes(added, removed)
            self._forget(set(removed) - set(added))
            self._generation = generation

    def _shard(self, doc_id: str, signature: str, chunks_of: ChunksOf) -> Shard:
        path = self.folder / f"{doc_id}.npz"
        if path.is_file():
            try:
                shard = Shard.load(path)
                if shard.signature == signature:
                    return shard
            except Exception:  # unreadable or from another version: rebuilt below
                pass
        shard = Shard.of(signature, chunks_of(doc_id), self.tokenizer)
        self.folder.mkdir(parents=True, exist_ok=True)
        shard.save(path)
        return shard

    def _drop_whole_corpus_index(self) -> None:
        """The whole-corpus index of earlier versions (``bm25/`` + ``stamp.json``) is not used any more."""
        import shutil

        if (self.folder / "stamp.json").exists():
            shutil.rmtree(self.folder / "bm25", ignore_errors=True)
            (self.folder / "stamp.json").unlink(missing_ok=True)

    def _forget(self, doc_ids: set[str]) -> None:
        for doc_id in doc_ids:
            (self.folder / f"{doc_id}.npz").unlink(missing_ok=True)

    @property
    def chunk_count(self) -> int:
        return self._corpus.chunks

    def chunk_ids(self) -> list[str]:
        """Every chunk the index holds (for consistency checks)."""
        return [cid for shard in self._corpus.shards.values() for cid in shard.chunk_ids]

    def chunk_ids_with(self, word: str) -> list[str]:
        """The chunks whose text uses a word (its stem); all of them for a stopword."""
        corpus = self._corpus
        tokens = self.tokenizer(word)
        if not tokens:
            return [cid for shard in corpus.shards.values() for cid in shard.chunk_ids]
        out: list[str] = []
        for shard in corpus.shards.values():
            posting = shard.posting(tokens[0])
            if posting is not None:
                out.extend(shard.chunk_ids[int(r)] for r in posting[0])
        return out

    def uses(self, stem: str, doc_ids: Sequence[str]) -> bool:
        """Whether any of the documents uses a word, by its stem (as ``Tokenizer`` gives it)."""
        shards = self._corpus.shards
        return any(doc_id in shards and shards[doc_id].posting(stem) is not None for doc_id in doc_ids)

    def chunk_ids_using(self, stem: str, doc_ids: Sequence[str]) -> list[str]:
        """The chunks of the documents that use a word stem (as ``Tokenizer`` gives it)."""
        shards = self._corpus.shards
        out: list[str] = []
        for doc_id in doc_ids:
            posting = shards[doc_id].posting(stem) if doc_id in shards else None
            if posting is not None:
                out.extend(shards[doc_id].chunk_ids[int(r)] for r in posting[0])
        return out

    def share_using(self, word: str, doc_ids: Sequence[str]) -> float:
        """The share of the documents' passages that use a word (by its stem); 1.0 for a stopword,
        which BM25 reads in none and every passage holds."""
        tokens = self.tokenizer(word)
        if not tokens:
            return 1.0
        shards = self._corpus.shards
        total = sum(len(shards[d].chunk_ids) for d in doc_ids if d in shards)
        return len(self.chunk_ids_using(tokens[0], doc_ids)) / total if total else 0.0

    @property
    def generation(self) -> int | None:
        """The registry generation the index matches (changes whenever a document comes or goes)."""
        return self._generation

    def search(self, query: str, k: int, allowed_docs: set[str] | None = None) -> list[tuple[str, float]]:
        """Best ``k`` (chunk_id, BM25 score) pairs with a positive score, from ``allowed_docs``
        only (only their shards are scored: a one-document scope is as fast as a small library)."""
        corpus = self._corpus
        tokens = self.tokenizer(query)
        if not tokens or not corpus.chunks:
            return []
        average = corpus.tokens / corpus.chunks
        idf = {
            t: math.log(1 + (corpus.chunks - corpus.df[t] + 0.5) / (corpus.df[t] + 0.5))
            for t in set(tokens)
            if corpus.df.get(t)
        }
        if not idf:
            return []
        ids: list[str] = []
        parts: list[np.ndarray] = []
        for doc_id, shard in corpus.shards.items():
            if allowed_docs is not None and doc_id not in allowed_docs:
                continue
            scores = None
            norm = K1 * (1 - B + B * shard.lengths / average)
            for term in tokens:  # a repeated query word counts each time, as in bm25s
                posting = shard.posting(term)
                if posting is None or term not in idf:
                    continue
                rows, tf = posting
                if scores is None:
                    scores = np.zeros(len(shard.chunk_ids), dtype=np.float64)
                scores[rows] += idf[term] * tf / (tf + norm[rows])
            if scores is not None:
                ids.extend(shard.chunk_ids)
                parts.append(scores)
        if not parts:
            return []
        scores = np.concatenate(parts)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(ids[i], float(scores[i])) for i in top if scores[i] > 0]

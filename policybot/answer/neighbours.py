"""A question's words and the words a passage uses for the same things.

Citizens ask in their words ("bike", "kids", "condo", "stolen", "fridge"); policies answer in
theirs ("bicycle", "children", "condominium", "theft", "refrigerator"). Choosing a passage's quote
by the words it shares with the question misses such a sentence, and a stemmer does not join
them. Here each word is embedded on its own by the library's embedding model, and a passage's word
stands for a question's word when their cosine reaches the model's threshold
(``Settings.word_neighbour_thresholds``, record 2026-11-27-word-neighbours): nothing is listed by
hand, so it carries to any library and language the model reads.

Word vectors are kept for the process (a library's words recur from one question to the next), so
a question costs the embedding of the words not seen before.
"""

from __future__ import annotations

import re
import threading
from typing import AbstractSet as Set
from typing import Callable, Sequence

import numpy as np

from policybot.store.lexical import Tokenizer

Neighbours = dict[str, dict[str, float]]  # a question's stem -> {a passage's stem: cosine}
_WORD = re.compile(r"[^\W\d_]{3,}")  # letters only, at least three: no numbers, no "a", "of"
KEEP_WORDS = 50_000  # word vectors kept (384 floats each for MiniLM: about 75 MB at most)


class WordNeighbours:
    """Per question word, the passages' words that mean the same (cosine ≥ ``threshold``)."""

    def __init__(
        self, embed: Callable[[Sequence[str]], np.ndarray], threshold: float, tokenizer: Tokenizer | None = None
    ) -> None:
        self.embed = embed
        self.threshold = threshold
        self.tokenizer = tokenizer or Tokenizer()
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def run(self, question: str, texts: Sequence[str], skip: Set[str] = frozenset()) -> Neighbours:
        """The neighbours in ``texts`` of the question's words that the texts never use
        (``skip``: stems not to look up, such as the words that name a document). A word the
        passages use is the passages' own word for it: its neighbours there would stand for it
        twice ("site" for "website" where the policy says both)."""
        used = self._stems(" ".join(texts))
        own = set(used.values())
        asked = {w: s for w, s in self._stems(question).items() if s not in skip and s not in own}
        if not asked or not used:
            return {}
        words, candidates = list(asked), list(used)
        vectors = self._vectors_of(words + candidates)
        sims = np.stack([vectors[w] for w in words]) @ np.stack([vectors[w] for w in candidates]).T
        out: Neighbours = {}
        for i, j in zip(*np.nonzero(sims >= self.threshold)):  # never the word itself: the texts do not use it
            found = out.setdefault(asked[words[i]], {})
            near = used[candidates[j]]
            found[near] = max(found.get(near, 0.0), float(sims[i, j]))
        return out

    def _stems(self, text: str) -> dict[str, str]:
        return word_stems(text, self.tokenizer)

    def _vectors_of(self, words: list[str]) -> dict[str, np.ndarray]:
        with self._lock:
            known = {w: self._vectors[w] for w in words if w in self._vectors}
        new = [w for w in words if w not in known]
        if new:
            vectors = np.asarray(self.embed(new), dtype=np.float32)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            known.update(zip(new, vectors))
            with self._lock:
                if len(self._vectors) + len(new) > KEEP_WORDS:
                    self._vectors.clear()  # a bounded cache: start again rather than grow
                self._vectors.update(zip(new, vectors))
        return known


def word_stems(text: str, tokenizer: Tokenizer) -> dict[str, str]:
    """Each word of the text as the neighbour finder reads it (lowercase, letters only, three or
    more) and its stem, in order of first use; stopwords dropped."""
    out = {}
    for word in dict.fromkeys(_WORD.findall(text.lower())):
        stem = tokenizer(word)
        if stem:
            out[word] = stem[0]
    return out

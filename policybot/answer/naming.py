"""Which documents a question names: "Under the Dwelling Form, …", "my RCBAP", "the General
Property Form", "the privacy policy of Zacks".

Every document gets the phrases that name it and no other document of the library: word
sequences of its title (and of its file name), and the acronym of its title. A single word
names a document only when the library's own text uses it in no other document (a brand,
"Zacks"), never when it is common there ("dwelling" appears in all three flood forms, so
only "Dwelling Form" names that one). Nothing is tuned to a corpus: the phrases come from the
library at hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from policybot.core.rows import DocumentRow

# Words that name no document by themselves, whatever the library.
GENERIC = frozenset(
    "a an and the of for to in on at by with or policy policies form forms document documents standard general "
    "terms conditions insurance insured wording schedule agreement contract notice pdf final version edition "
    "privacy statement page www com org net gov html".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
MAX_NGRAM = 5


@dataclass(frozen=True)
class NamedDocument:
    doc: DocumentRow
    phrase: str  # what in the question named it


def words_of(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _ngrams(words: Sequence[str]) -> set[tuple[str, ...]]:
    out = set()
    for n in range(1, MAX_NGRAM + 1):
        for i in range(len(words) - n + 1):
            gram = tuple(words[i : i + n])
            if not all(w in GENERIC or w.isdigit() for w in gram):
                out.add(gram)
    return out


def _acronyms(title: str) -> set[str]:
    """ "RCBAP" for "... - Residential Condominium Building Association Policy": the initials of
    the capitalised words of each part of the title (parts split at dashes, commas, colons)."""
    out = set()
    for part in re.split(r"\s[-–—]\s|[,:;()]", title):
        initials = [w[0] for w in re.findall(r"\b[A-Z][a-zA-Z]+", part)]
        if len(initials) >= 3:
            out.add("".join(initials).lower())
    return out


def name_phrases(
    docs: Sequence[DocumentRow], used_elsewhere: Callable[[str, str], bool]
) -> dict[str, set[tuple[str, ...]]]:
    """For each document id, the phrases (word tuples) that name it and no other document.

    ``used_elsewhere(word, doc_id)`` tells whether the library's text uses a word in a
    document other than ``doc_id``: such a word needs company to name a document.
    """
    candidates: dict[str, set[tuple[str, ...]]] = {}
    acronyms: dict[str, set[str]] = {}
    for doc in docs:
        stem = re.sub(r"\.pdf$", "", doc.name, flags=re.IGNORECASE)
        acronyms[doc.doc_id] = _acronyms(doc.title)
        candidates[doc.doc_id] = (
            _ngrams(words_of(doc.title)) | _ngrams(words_of(stem)) | {(a,) for a in acronyms[doc.doc_id]}
        )
    out: dict[str, set[tuple[str, ...]]] = {}
    for doc_id, grams in candidates.items():
        others = set().union(*(g for d, g in candidates.items() if d != doc_id))
        out[doc_id] = {
            g
            for g in grams
            if g not in others
            and len("".join(g)) >= 3
            # A lone word names a document only if no other document's text uses it; an
            # acronym of its own title always does ("the RCBAP").
            and (len(g) > 1 or g[0] in acronyms[doc_id] or not used_elsewhere(g[0], doc_id))
        }
    return out


def named_documents(
    question: str, docs: Sequence[DocumentRow], phrases: dict[str, set[tuple[str, ...]]]
) -> list[NamedDocument]:
    """The documents the question names, longest naming phrase first; none when the
    library has a single document (there is nothing to choose)."""
    if len(docs) < 2:
        return []
    q = words_of(question)
    found: list[NamedDocument] = []
    for doc in docs:
        best = max((g for g in phrases.get(doc.doc_id, ()) if _contains(q, g)), key=len, default=None)
        if best is not None:
            found.append(NamedDocument(doc, " ".join(best)))
    return sorted(found, key=lambda n: -len(n.phrase))


def _contains(words: Sequence[str], gram: Iterable[str]) -> bool:
    g = list(gram)
    return any(list(words[i : i + len(g)]) == g for i in range(len(words) - len(g) + 1))

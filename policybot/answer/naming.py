"""Which documents a question names: "Under the Dwelling Form, …", "my RCBAP", "the General
Property Form", "the privacy policy of Zacks", "our agreement with AMAG".

Naming is evidence, not a filter: the pipeline favours a named document's passages and still
searches the rest (a clearly better passage elsewhere wins). So a phrase names a document only
when it is a real designation of it, never a phrase of common words that happens to be unique
to one title ("have a", "tax on", "limited company" when the question is about payroll):

- it comes from the document's title or file name, unique to that document, and neither starts
  nor ends with a function word;
- and it is the acronym of the title ("RCBAP"), or holds a word the library's text uses in no
  other document (a brand or a party, "Zacks", "AMAG"), or, of two words or more, covers at least
  half of the title's own words (those no other document's title or file name has: "Dwelling
  Form" for "NFIP Dwelling Form, October 2021" beside the other flood forms).

Nothing is tuned to a corpus: the phrases come from the library at hand.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
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
    # The question's capitalised runs beside a naming word that the document writes itself ("amag
    # pharmaceuticals"): names taken whole (``names_it_writes``).
    whole: frozenset[str] = frozenset()
    # Not named by the question: the document of the previous answer, which a follow-up continues
    # (``follow_up_document``). No word of the question names it, so none is taken out of its search.
    by_conversation: bool = False
    # Named by a name (an acronym, a word no other document uses), not only by a share of its title's
    # words ("intellectual property" for "Equifax Certegy Intellectual Property"): ``named_documents``.
    by_name: bool = True

    @property
    def words(self) -> frozenset[str]:
        """The words that designate the document: its title's, its file name's, the phrase's."""
        if self.by_conversation:
            return frozenset()
        stem = re.sub(r"\.pdf$", "", self.doc.name, flags=re.IGNORECASE)
        return frozenset(words_of(self.doc.title) + words_of(stem) + words_of(self.phrase))


def without_naming(question: str, named: Sequence[NamedDocument]) -> str:
    """The question without the words that name its documents: once a document is named they
    say which document, not which of its passages ("What law governs our manufacturing agreement
    with AMAG?" ranks AMAG's passages by "What law governs"). The question itself when nothing
    is left."""
    return split_naming(question, named)[0]


def split_naming(question: str, named: Sequence[NamedDocument]) -> tuple[str, str]:
    """The question without its naming words (``without_naming``), and those words
    ("manufacturing agreement AMAG"): "" when none name a document or nothing else is left."""
    kept, naming = _naming_split(question, named)
    if not any(words_of(t) for t in kept):
        return question, ""
    return " ".join(kept), " ".join(naming)


def _naming_split(question: str, named: Sequence[NamedDocument]) -> tuple[list[str], list[str]]:
    """The question's tokens split into those that ask and those that name. A name is taken
    whole: capitalised words run together with a naming word are part of it when the named
    document writes them so ("AMAG Pharmaceuticals", where the title says only "AMAG"), as every
    passage of a contract names its parties in full; "Coverage A" in "my Dwelling Form Coverage A"
    is what the question asks about, and stays."""
    whole = frozenset().union(*(n.whole for n in named))
    tokens, names = _naming_tokens(question, named)
    for run in _name_runs(tokens, names):
        if _phrase(tokens, run) in whole:
            for i in run:
                names[i] = True
    kept = [t for t, name in zip(tokens, names) if not name]
    return kept, [t for t, name in zip(tokens, names) if name]


def _naming_tokens(question: str, named: Sequence[NamedDocument]) -> tuple[list[str], list[bool]]:
    """The question's tokens, and for each whether its words all name one of the documents."""
    naming = frozenset().union(*(n.words for n in named))
    tokens = question.split()
    return tokens, [bool(words) and words <= naming for words in (set(words_of(t)) for t in tokens)]


def _name_runs(tokens: Sequence[str], names: Sequence[bool]) -> list[list[int]]:
    """Runs of neighbouring capitalised tokens that hold a naming token, and every stretch of two or
    more of them that does, longest first."""
    out = []
    for run in _capitalised_runs(tokens):
        for n in range(len(run), 1, -1):
            parts = [run[i : i + n] for i in range(len(run) - n + 1)]
            out += [part for part in parts if any(names[j] for j in part)]
    return out


def _phrase(tokens: Sequence[str], run: Sequence[int]) -> str:
    return " ".join(w for i in run for w in words_of(tokens[i]))


def names_it_writes(
    question: str, named: Sequence[NamedDocument], text_of: Callable[[DocumentRow], str]
) -> list[NamedDocument]:
    """The named documents, each with the question's capitalised runs beside its naming words that
    it writes itself (``text_of``: a document's words, lower case, one space apart): "AMAG
    Pharmaceuticals" in the contract's preamble is its party's name; "Dwelling Form Coverage A" is
    in no form, and only "Dwelling Form" names one."""
    if not named:
        return list(named)
    tokens, names = _naming_tokens(question, named)
    phrases = {_phrase(tokens, run) for run in _name_runs(tokens, names)}
    out = []
    for n in named:
        text = f" {text_of(n.doc)} " if phrases else ""
        out.append(replace(n, whole=frozenset(p for p in phrases if f" {p} " in text)))
    return out


def names_it_lacks(
    question: str, named: Sequence[NamedDocument], text_of: Callable[[DocumentRow], str]
) -> list[NamedDocument]:
    """The named documents without those named only by a share of their title's words whose text
    never writes a name the question writes (a capitalised word after its first): "intellectual
    property" in "Who owns the intellectual property created under our supply agreement with Philips?"
    is what the question asks about, not a name of "Equifax Certegy Intellectual Property", which never
    writes "Philips". The document's own title words are its name, not another ("my Dwelling Form").
    ``text_of`` as in ``names_it_writes``."""
    names = {w for token in _capitalised_words(question) for w in words_of(token)}
    return [n for n in named if n.by_name or _writes(text_of, n, names - n.words)]


def _writes(text_of: Callable[[DocumentRow], str], named: NamedDocument, words: set[str]) -> bool:
    """Whether the document writes every one of the words (its text read only when there are any)."""
    if not words:
        return True
    text = f" {text_of(named.doc)} "
    return all(f" {w} " in text for w in words)


def _capitalised_words(question: str) -> list[str]:
    """The question's words written with a capital, but for the first of each sentence and "I"."""
    out = []
    for sentence in re.split(r"(?<=[.?!])\s+", question.strip()):
        out += [t for t in sentence.split()[1:] if t[:1].isupper() and words_of(t)[:1] != ["i"]]
    return out


def _capitalised_runs(tokens: Sequence[str]) -> list[list[int]]:
    """Runs of two or more neighbouring capitalised tokens, by index (a run ends at punctuation)."""
    runs: list[list[int]] = []
    current: list[int] = []
    for i, token in enumerate(tokens):
        if token[:1].isupper():
            current.append(i)
        if not token[:1].isupper() or token[-1:] in ",;:?!.":
            if len(current) > 1:
                runs.append(current)
            current = []
    if len(current) > 1:
        runs.append(current)
    return runs


# Function words: a naming phrase never starts or ends with one ("appeal against", "have a").
_FUNCTION = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with which "
    "who what when where how do does did can could would should may my our your their we you i me us "
    "they them he she his her not no if than then so about into over under after before".split()
)
_MONTHS = frozenset("january february march april may june july august september october november december".split())


def words_of(text: str) -> list[str]:
    """Lower-case words, accents folded ("Piñon" and "pinon" are one word)."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return [w.lower() for w in _WORD.findall(folded)]


def _ngrams(words: Sequence[str]) -> set[tuple[str, ...]]:
    out = set()
    for n in range(1, MAX_NGRAM + 1):
        for i in range(len(words) - n + 1):
            gram = tuple(words[i : i + n])
            if gram[0] in _FUNCTION or gram[-1] in _FUNCTION:
                continue
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


# For each document id, the phrases (word tuples) that designate it and no other document, each with
# whether it holds a name (True: the title's acronym, or a word the library's text uses in no other
# document) or only covers half of the title's own words (False: "Dwelling Form", "intellectual property").
Phrases = dict[str, dict[tuple[str, ...], bool]]


def name_phrases(docs: Sequence[DocumentRow], used_elsewhere: Callable[[str, str], bool]) -> Phrases:
    """For each document id, the phrases that designate it and no other document (``Phrases``).

    ``used_elsewhere(word, doc_id)`` tells whether the library's text uses a word in a
    document other than ``doc_id``.
    """
    candidates: dict[str, set[tuple[str, ...]]] = {}
    acronyms: dict[str, set[str]] = {}
    designation: dict[str, set[str]] = {}
    for doc in docs:
        stem = re.sub(r"\.pdf$", "", doc.name, flags=re.IGNORECASE)
        words = words_of(doc.title) + words_of(stem)
        acronyms[doc.doc_id] = _acronyms(doc.title)
        designation[doc.doc_id] = {w for w in words if _meaningful(w)}
        candidates[doc.doc_id] = (
            _ngrams(words_of(doc.title)) | _ngrams(words_of(stem)) | {(a,) for a in acronyms[doc.doc_id]}
        )
    out: Phrases = {}
    for doc_id, grams in candidates.items():
        others = set().union(*(g for d, g in candidates.items() if d != doc_id))
        own = designation[doc_id] - set().union(*(w for d, w in designation.items() if d != doc_id))
        out[doc_id] = {}
        for g in grams - others:
            kind = _designates(g, acronyms[doc_id], own, lambda word: not used_elsewhere(word, doc_id))
            if kind and len("".join(g)) >= 3:
                out[doc_id][g] = kind == "name"
    return out


def _meaningful(word: str) -> bool:
    return word not in GENERIC and word not in _FUNCTION and word not in _MONTHS and not word.isdigit()


def _designates(
    gram: tuple[str, ...], acronyms: set[str], own: set[str], distinctive: Callable[[str], bool]
) -> str | None:
    """Whether a title or file-name phrase is a real designation of its document: "name" (an acronym,
    a word the library uses nowhere else), "title" (half or more of the title's own words), or None."""
    if len(gram) == 1 and gram[0] in acronyms:
        return "name"
    if any(distinctive(w) for w in gram if _meaningful(w)):
        return "name"
    covered = own & set(gram)
    return "title" if len(gram) > 1 and bool(own) and 2 * len(covered) >= len(own) else None


def named_documents(question: str, docs: Sequence[DocumentRow], phrases: Phrases) -> list[NamedDocument]:
    """The documents the question names, longest naming phrase first; none when the
    library has a single document (there is nothing to choose)."""
    if len(docs) < 2:
        return []
    q = words_of(question)
    spelled = _spelled_out(question)
    found: list[NamedDocument] = []
    for doc in docs:
        own = phrases.get(doc.doc_id, {})
        held = [g for g in own if _contains(q, g)]
        if held:
            longest: tuple[str, ...] = max(held, key=lambda g: len(g))
            found.append(NamedDocument(doc, " ".join(longest), by_name=any(own[g] for g in held)))
        elif initials := next((a for a in spelled if (a,) in own), None):
            found.append(NamedDocument(doc, spelled[initials]))
    return sorted(found, key=lambda n: -len(n.phrase))


def _spelled_out(question: str) -> dict[str, str]:
    """Acronyms the question spells out: "Companion Healthcare Technologies" for a document filed as
    "ehave-cht-license-reseller-agreement" (each run of three or more capitalised words, and the
    runs inside it, by their initials)."""
    out: dict[str, str] = {}
    for run in re.findall(r"\b[A-Z][^\W\d_]+(?:\s+[A-Z][^\W\d_]+){2,}", question):
        words = run.split()
        for n in range(3, len(words) + 1):
            for i in range(len(words) - n + 1):
                part = words[i : i + n]
                out.setdefault("".join(words_of("".join(w[0] for w in part))), " ".join(part))
    return out


def _contains(words: Sequence[str], gram: Iterable[str]) -> bool:
    g = list(gram)
    return any(list(words[i : i + len(g)]) == g for i in range(len(words) - len(g) + 1))

"""Words that mean the same in a citizen's mouth and in a policy, searched beside the question.

A British visitor asks about the "excess" of a policy that says "deductible" everywhere; a
policy says "jewelry", the visitor writes "jewellery"; "someone nicked my phone" names no word
of the theft clause. BM25 matches words, so the passage that answers shares none with the
question, and the small embedding model does not carry every such pair either ("excess" is
close to many things, "deductible" to few).

This table holds only pairs that mean the same thing wherever they appear: British and American
spellings and terms, and the everyday words for what policies name formally. None is taken from
one document's wording. A word with a second everyday sense is left out where that sense would
mislead ("fired" is stemmed as "fire"; "flat" is also a flat roof; "attorney" is also the person a
power of attorney appoints; "story" and "meter" are other things than "storey" and "metre").

A word of the question is searched also as its equivalents only where the documents searched
never use the word itself and do use an equivalent: a library that says "excess" is searched for
"excess" alone, and no question changes in a library that speaks the citizen's words. Both
searches take the added words: the small embedding model too finds "Can I choose a bigger excess?"
in the voluntary deductible clause only when told "deductible".

A word the documents use only inside a set phrase of another sense counts as a word they never use:
"in excess of" is "more than" and "excess insurance" is a policy that pays above another, neither of
them the part of a claim the policyholder pays; "actual cash value" is a way of settling a claim,
not money. The flood forms say both and never "excess" for their deductible, nor "cash" for money.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from policybot.store.lexical import Tokenizer

# Mutual: each word is searched as the others ("excess" as "deductible", "deductible" as "excess").
SAME = (
    # British and American terms
    "excess deductible",
    "holiday vacation",
    "garden yard",
    "lorry truck",
    "petrol gasoline",
    "solicitor lawyer",
    "fridge refrigerator",
    "telly television tv",
    "husband wife spouse",
    "postcode zipcode",
    "motorway highway freeway",
    "trip journey",
    "doctor physician",
    # British and American spellings
    "colour color",
    "neighbour neighbor",
    "neighbours neighbors",
    "mould mold",
    "jewellery jewelry",
    "licence license",
    "defence defense",
    "centre center",
    "tyre tire",
    "programme program",
    "organisation organization",
    "authorised authorized",
    "authorise authorize",
    "recognised recognized",
    "aluminium aluminum",
    "labour labor",
    "behaviour behavior",
    "harbour harbor",
    "instalment installment",
    "instalments installments",
    "judgement judgment",
    "enrol enroll",
    "fulfil fulfill",
    "ageing aging",
    "practise practice",
    "analyse analyze",
    "catalogue catalog",
    "grey gray",
)
# One way: an everyday word, searched as what policies call it ("nicked" as "stolen" and "theft";
# not "theft" as "nicked").
AS = (
    "nicked pinched swiped > stolen theft",
    "burgled robbed > burglary theft",
    "sacked > dismissed dismissal",
    "van car lorry truck motorbike motorcycle scooter > vehicle",
    "dog dogs cat cats puppy kitten pets > animals pet",
    "cash > money currency",
    "kids kid > children child",
    "condo > condominium",
    "boss > employer",
    "renter > tenant",
    "mum mom > mother parent",
    "dad > father parent",
    "cheque > check",
    "dentist > dental",
    "jab > vaccination",
    "specs glasses > spectacles",
    "meds > medication medicine",
    "cellphone > mobile phone",
    "mudslide mudslides > mudflow",
    "hurt hurts injured injures injuring > injury",
)
# Set phrases in which a word of the tables has another sense (see the module docstring): phrases of
# legal and insurance English at large, none taken from one document's wording.
SET_PHRASES = (
    "in excess of",
    "in excess over",
    "excess insurance",
    "actual cash value",
    "cash value",
)
Texts = Callable[[str], Iterable[str]]  # a stem -> the texts of the searched passages that use it


def _table(tokenize: Callable[[str], list[str]]) -> dict[str, list[str]]:
    """Each word's stem → the words it is also searched as."""
    table: dict[str, list[str]] = {}
    groups = [(line.split(), line.split()) for line in SAME]
    groups += [(left.split(), right.split()) for left, right in (line.split(">") for line in AS)]
    for sources, targets in groups:
        for word in sources:
            stems = tokenize(word)
            if stems:
                found = table.setdefault(stems[0], [])
                found += [t for t in targets if t != word and t not in found and tokenize(t) != stems]
    return table


def _pattern(phrase: str) -> re.Pattern[str]:
    """A set phrase in any spacing or case, its last word in the plural too ("actual cash values")."""
    return re.compile(r"\b" + r"\s+".join(map(re.escape, phrase.split())) + r"s?\b", re.IGNORECASE)


_PATTERNS = [_pattern(phrase) for phrase in SET_PHRASES]


def without_set_phrases(text: str, question: str) -> str:
    """The text without the set phrases the question does not say: "cash" in "I kept $3,000 in
    cash" is not the "cash" of "the actual cash value of the building", and a quote is not chosen
    for sharing it (a question that says "actual cash value" keeps it)."""
    said = [p for p in _PATTERNS if p.search(question)]

    def unsaid(match: re.Match[str]) -> str:
        return match.group(0) if any(p.search(match.group(0)) for p in said) else " "

    for pattern in _PATTERNS:
        text = pattern.sub(unsaid, text)
    return text


def _phrase_stems(tokenize: Callable[[str], list[str]]) -> set[str]:
    """The stems of the words the set phrases hold: only for those are the passages read."""
    return {stem for phrase in SET_PHRASES for stem in tokenize(phrase)}


class Equivalents:
    """The equivalents of a question's words that the searched documents use in their place (see
    the module docstring)."""

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self.tokenizer = tokenizer or Tokenizer()
        self.table = _table(self.tokenizer)
        self.phrase_stems = _phrase_stems(self.tokenizer)

    def run(self, query: str, uses: Callable[[str], bool], texts: Texts | None = None) -> str:
        """The words to search beside the question ("" when none). ``uses(stem)``: whether the
        documents searched use a word stem (``store.lexical.LexicalIndex.uses``); ``texts(stem)``:
        the searched passages that use it, read only for a word of a set phrase (without them, any
        use counts)."""
        added: list[str] = []
        for stem in dict.fromkeys(self.tokenizer(without_set_phrases(query, ""))):  # "actual cash value?": no money
            targets = [t for t in self.table.get(stem, []) if t not in added]
            if targets and not self._used(stem, uses, texts):
                added += [t for t in targets if uses(self.tokenizer(t)[0])]
        return " ".join(added)

    def _used(self, stem: str, uses: Callable[[str], bool], texts: Texts | None) -> bool:
        """Whether the documents use a word, a use inside a set phrase of another sense apart."""
        if not uses(stem):
            return False
        if stem not in self.phrase_stems or texts is None:
            return True
        return any(stem in self.tokenizer(without_set_phrases(text, "")) for text in texts(stem))

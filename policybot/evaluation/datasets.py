"""Retrieval evaluation on datasets in the "policybot eval dataset v1" format.

A folder holds ``docs/*.pdf`` and ``questions.jsonl``. A retrieved chunk is relevant to a
question when it comes from a gold document and contains a contiguous run of at least
half of a gold passage's text, comparing lowercase letters and digits only: word-overlap
tests are too loose for the short gold phrases of real sets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path


@dataclass
class Gold:
    doc: str
    page: int | None
    text: str
    # Other documents holding the same passage word for word (sibling forms): a chunk of theirs
    # answers as well, so it counts as relevant too (sets may list them as ``also_in``).
    also_in: tuple[str, ...] = ()


@dataclass
class Question:
    id: str
    question: str
    answerable: bool
    gold: list[Gold] = field(default_factory=list)
    answer: str | None = None
    category: str | None = None
    # Conversation sets: the turns of one conversation share an id, in order; a follow-up turn
    # needs the previous user question to be understood (a topic switch does not).
    conversation: str | None = None
    turn: int | None = None
    follow_up: bool | None = None
    # The sentences a conditional answer holds under ("severe disablement means at least 60%
    # disabled"), from sets that carry them (``answers[*].conditions``).
    conditions: list[str] = field(default_factory=list)


@dataclass
class Dataset:
    root: Path
    questions: list[Question]

    @property
    def docs(self) -> list[Path]:
        return dataset_documents(self.root)


# A set's documents kept elsewhere (the real forms in ../shared/eval-data, never copied into the
# repository): one path per line, relative to the set's folder.
SHARED_DOCS = "shared.txt"


def dataset_documents(root: Path) -> list[Path]:
    """The PDFs of a set: those in its ``docs/`` and those ``docs/shared.txt`` points to. A listed
    file that is missing raises ``FileNotFoundError`` naming it (the shared folder is not beside
    the project)."""
    docs = list((root / "docs").glob("*.pdf"))
    listing = root / "docs" / SHARED_DOCS
    if listing.is_file():
        for line in listing.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                path = (root / line.strip()).resolve()
                if not path.is_file():
                    raise FileNotFoundError(
                        f"{root.name}: {line.strip()} is missing (is ../shared beside the project?)"
                    )
                docs.append(path)
    return sorted(docs, key=lambda p: p.name)


def load_dataset(root: str | Path) -> Dataset:
    root = Path(root)
    qfile = root / "questions.jsonl"
    if not qfile.is_file() or not (root / "docs").is_dir():
        raise FileNotFoundError(f"{root}: not an eval dataset (needs docs/ and questions.jsonl)")
    questions = []
    for line in qfile.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        gold = [Gold(g["doc"], g.get("page"), g["text"], tuple(g.get("also_in") or ())) for g in raw.get("gold") or []]
        questions.append(
            Question(
                raw["id"],
                raw["question"],
                bool(raw["answerable"]),
                gold,
                raw.get("answer"),
                raw.get("category"),
                raw.get("conversation"),
                raw.get("turn"),
                raw.get("follow_up"),
                list(dict.fromkeys(c for a in raw.get("answers") or [] for c in a.get("conditions") or [])),
            )
        )
    return Dataset(root, questions)


def contains_half(chunk_alnum: str, gold_alnum: str) -> bool:
    """True if the chunk holds a contiguous run of at least half the gold passage."""
    if not gold_alnum:
        return False
    need = (len(gold_alnum) + 1) // 2
    if len(chunk_alnum) < need:
        return False
    match = SequenceMatcher(None, gold_alnum, chunk_alnum, autojunk=False).find_longest_match(
        0, len(gold_alnum), 0, len(chunk_alnum)
    )
    return match.size >= need

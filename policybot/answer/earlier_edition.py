"""The answer's last stage: when the best source's clause read differently in an older,
superseded edition of the same policy, the answer says what it said and shows that passage.
When the sources come from two editions that nobody has confirmed yet, it says that instead.

Older editions are outside a question's scope (a question searches the editions in force), so
this stage looks at the whole library, not the scope.
"""

from __future__ import annotations

from typing import Callable, Sequence

from policybot.core.editions import earlier_wording, edition_day, unconfirmed_editions
from policybot.core.passages import Passage
from policybot.core.rows import ChunkRow, DocumentRow, RowLookup
from policybot.schemas import Answer

Library = Callable[[], Sequence[DocumentRow]]  # every document of the library
ChunksOf = Callable[[DocumentRow], list[ChunkRow]]  # a document's chunks, in order


class EarlierEdition:
    """Adds ``edition_note`` and ``earlier_edition`` to an answer whose best source changed wording."""

    def __init__(self, library: Library, rows: RowLookup, chunks_of: ChunksOf) -> None:
        self.library = library
        self.rows = rows
        self.chunks_of = chunks_of

    def run(self, answer: Answer) -> Answer:
        shown = answer.shown_citations
        if answer.refused or not shown:
            return answer
        top = shown[0]
        docs = self.library()
        note = _editions_note([c.doc for c in shown], docs)
        if note:
            answer.edition_note = note
            return answer
        current = next((d for d in docs if d.name == top.doc), None)
        chunk = self.rows([top.chunk_id]).get(top.chunk_id)
        if current is None or chunk is None:
            return answer
        found = earlier_wording(current, chunk, docs, self.chunks_of)
        if found is None:
            return answer
        answer.edition_note = found.note(current)
        older = Passage(found.chunk, found.doc, 0.0).citation(len(answer.citations) + 1)
        reference = f"the {edition_day(found.doc)[:4]} edition of [{top.n}]"
        answer.earlier_edition = older.model_copy(update={"reference": reference, "referenced_by": [top.n]})
        return answer


def _editions_note(cited: Sequence[str], docs: Sequence[DocumentRow]) -> str | None:
    """When the cited passages come from documents that look like two editions of one policy that
    nobody has confirmed: say so, since they may differ (an amount, a period) and only one is in force."""
    by_name = {d.name: d for d in docs}
    shown = [by_name[name] for name in dict.fromkeys(cited) if name in by_name]
    for i, a in enumerate(shown):
        twin = next((b for b in shown[i + 1 :] if unconfirmed_editions(a, b)), None)
        if twin is not None:
            return (
                f"Two editions of one policy may be in the library ({a.name} and {twin.name}), and these sources "
                "come from both: check which edition applies to you. They are shown separately because their "
                "wording may differ."
            )
    return None

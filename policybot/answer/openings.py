"""Passages that open inside a list, given the list's lead-in from the passage before them.

Chunks overlap and split long lists, so a chunk can start at "(b) escape of oil;" with the words
that give the list its meaning ("When the Home is Unoccupied, we will not cover loss or damage
caused by:") only in the chunk before it. Quoted alone, "(f) Accidental Damage under clauses 2.18
and 3.14." reads as cover, and its role as a condition. The lead-in is read from the document's
own preceding chunks of the same section (at most ``LIST_LOOK_BACK``), never made up: a list whose
lead-in is further back, or in another section, keeps none.
"""

from __future__ import annotations

from itertools import takewhile

from policybot.core.passages import body_start, opening_lead_in
from policybot.core.quotes import LIST_LOOK_BACK, opening_item
from policybot.core.rows import RowLookup, chunk_id, doc_of
from policybot.schemas import Citation


class ListOpenings:
    """Sets ``Citation.lead_in`` on each source whose passage opens inside a list."""

    def __init__(self, rows: RowLookup) -> None:
        self.rows = rows

    def run(self, sources: list[Citation]) -> list[Citation]:
        items = {s.chunk_id: opening_item(s.text, body_start(s)) for s in sources if s.lead_in is None}
        opening = [s for s in sources if items.get(s.chunk_id)]
        if not opening:
            return sources
        wanted = {s.chunk_id: _before(s.chunk_id) for s in opening}
        rows = self.rows([cid for ids in wanted.values() for cid in ids])
        found: dict[str, str] = {}
        for src in opening:
            previous = takewhile(lambda cid: cid in rows, wanted[src.chunk_id])  # nearest first
            lead = opening_lead_in(src.section, src.text, ((rows[cid].section, rows[cid].text) for cid in previous))
            if lead:
                found[src.chunk_id] = lead
        return [s.model_copy(update={"lead_in": found[s.chunk_id]}) if s.chunk_id in found else s for s in sources]


def _before(cid: str) -> list[str]:
    """The ids of the ``LIST_LOOK_BACK`` chunks before ``cid`` in its document, nearest first."""
    doc, _, ord_text = cid.rpartition(":")
    if not ord_text.isdigit() or doc != doc_of(cid):
        return []
    return [chunk_id(doc, int(ord_text) - k) for k in range(1, LIST_LOOK_BACK + 1) if int(ord_text) - k >= 0]

"""Selecting passages: the paper's top-p cut-off over a ranking, and the context budget.

``top_p`` turns best-first scores into a probability distribution and keeps the smallest
prefix holding ``p`` of the mass: a dominant first passage keeps few, a flat ranking many.
``Selector`` applies it to the fused ranking (on RRF scores scaled to the best one) and then
fits the kept passages into the answer prompt's token budget, best first.
"""

from __future__ import annotations

import difflib
import math
from typing import Sequence

import numpy as np

from policybot.answer.retrieval import Fused
from policybot.core.editions import unconfirmed_editions
from policybot.core.passages import Passage
from policybot.core.rows import DocumentRow, RowLookup
from policybot.core.text import number_value, quantity_spans, words
from policybot.models.llm import estimate_tokens
from policybot.settings import Settings

# Cumulative mass may fall a rounding error short of p (0.1 * 5 summed is 0.49999...).
_MASS_TOLERANCE = 1e-9


def top_p(scores: Sequence[float], p: float, temperature: float, min_k: int, max_k: int) -> int:
    """How many of the best-first ``scores`` to keep under the paper's top-p filter.

    The scores (reranker outputs, sorted best first) become a probability distribution
    with ``softmax(scores / temperature)``; we keep the smallest prefix whose cumulative
    probability reaches ``p``. A dominant first score therefore keeps few passages, a
    flat distribution keeps many (``ceil(p * n)`` when all scores are equal). A lower
    temperature sharpens the distribution and keeps fewer; a higher one keeps more.

    The count is then clamped to ``[min_k, max_k]`` and never exceeds ``len(scores)``;
    an empty input keeps 0. The softmax subtracts the largest score first, so scores
    of any magnitude (say 1000) neither overflow nor underflow to nothing.

    Raises ``ValueError`` for a non-positive temperature, ``p`` outside [0, 1],
    negative ``min_k``, ``max_k < min_k`` or a non-finite score.
    """
    if temperature <= 0 or not math.isfinite(temperature):
        raise ValueError(f"temperature must be a positive number, got {temperature}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if min_k < 0 or max_k < min_k:
        raise ValueError(f"need 0 <= min_k <= max_k, got min_k={min_k}, max_k={max_k}")
    n = len(scores)
    if n == 0:
        return 0
    logits = np.asarray(scores, dtype=np.float64) / temperature
    if not np.all(np.isfinite(logits)):
        raise ValueError("scores must be finite numbers")
    weights = np.exp(logits - logits.max())
    mass = np.cumsum(weights / weights.sum())
    # First index whose cumulative mass reaches p; +1 turns it into a count.
    keep = int(np.searchsorted(mass, p - _MASS_TOLERANCE, side="left")) + 1
    return min(max(keep, min_k), max_k, n)


# Two passages of different documents at least this similar (word sequence) are the same text.
SAME_TEXT_RATIO = 0.9


# A difference in one of these words changes what a passage says, however small it is.
_TURNING_WORDS = frozenset("not no never nor none except unless excluding excluded without only".split())


def same_text(a: str, b: str) -> bool:
    """Whether two passages say the same thing word for word, allowing small differences (a
    form's name, a section number, line breaks, where a chunk starts or ends), but never a
    different amount, period or share ("$500" against "$750", "60 days" against "90 days") or
    a negation or exception one of them lacks."""
    ta, tb = words(a), words(b)
    wa, wb = [w for w, _, _ in ta], [w for w, _, _ in tb]
    matcher = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    if not (
        matcher.real_quick_ratio() >= SAME_TEXT_RATIO
        and matcher.quick_ratio() >= SAME_TEXT_RATIO
        and matcher.ratio() >= SAME_TEXT_RATIO
    ):
        return False
    return not _differs_in_substance(matcher.get_opcodes(), (a, ta), (b, tb))


Words = tuple[str, list[tuple[str, int, int]]]  # a text and its words with their spans


def _differs_in_substance(opcodes: Sequence[tuple[str, int, int, int, int]], a: Words, b: Words) -> bool:
    """Whether a difference inside the stretch both passages share (not where one chunk merely
    starts earlier or ends later) touches a turning word, or changes the number of a quantity
    ("60 days" and "sixty days" are one period; "$500" and "$750" are two amounts)."""
    equal = [i for i, op in enumerate(opcodes) if op[0] == "equal"]
    if not equal:
        return True
    for tag, i1, i2, j1, j2 in opcodes[equal[0] + 1 : equal[-1]]:
        if tag == "equal":
            continue
        sides = ((a, i1, i2), (b, j1, j2))
        if any(w in _TURNING_WORDS for (_, tokens), lo, hi in sides for w, _, _ in tokens[lo:hi]):
            return True
        numbers = [
            sorted(v for w, _, _ in tokens[lo:hi] if (v := number_value(w)) is not None)
            for (_, tokens), lo, hi in sides
        ]
        if numbers[0] != numbers[1] and any(
            _touches_quantity(text, tokens, lo, hi) for (text, tokens), lo, hi in sides
        ):
            return True
    return False


def _touches_quantity(text: str, tokens: list[tuple[str, int, int]], lo: int, hi: int) -> bool:
    """Whether the changed stretch of ``text`` (from the end of the last shared word to the start of
    the next) overlaps an amount, a period or a share."""
    start, end = tokens[lo - 1][2], tokens[hi][1] if hi < len(tokens) else len(text)
    return any(s < end and e > start for s, e in quantity_spans(text))


def same_source(a: Passage, b: Passage) -> bool:
    """Whether two passages may be shown as one source: other documents' copies of the same text
    (never two editions nobody has confirmed, which may be the one in force and the one not)."""
    return (
        a.doc.doc_id != b.doc.doc_id
        and not unconfirmed_editions(a.doc, b.doc)
        and same_text(a.chunk.text, b.chunk.text)
    )


def group_siblings(candidates: Sequence[Passage]) -> list[Passage]:
    """Passages with near-identical passages of other documents folded into the best-ranked
    one (its ``siblings``), in rank order. Two editions of one policy that nobody has confirmed
    are not siblings: each edition's passage stays a source of its own."""
    kept: list[Passage] = []
    for c in candidates:
        twin = next(
            (k for k in kept if c.doc.doc_id not in {s.doc.doc_id for s in k.siblings} and same_source(k, c)),
            None,
        )
        if twin is None:
            kept.append(c)
        else:
            twin.siblings.append(c)
    return kept


class Selector:
    """How many fused passages go on to scoring, and which ones fit the answer prompt."""

    def __init__(self, settings: Settings, rows: RowLookup) -> None:
        self.settings = settings
        self.rows = rows

    def candidates(self, fused: Sequence[Fused], scope: dict[str, DocumentRow]) -> list[Passage]:
        """Fused chunks as candidates (rows loaded; chunks outside the scope or deleted meanwhile dropped)."""
        rows = self.rows([f.chunk_id for f in fused])
        out = []
        for f in fused:
            row = rows.get(f.chunk_id)
            if row is not None and row.doc_id in scope:
                out.append(Passage(row, scope[row.doc_id], f.score))
        return out

    def keep_fused(self, fused: Sequence[Fused]) -> int:
        """Top-p over the fused ranking: its RRF scores scaled so the best is 1."""
        s = self.settings
        return top_p(
            _scaled([f.score for f in fused]),
            s.fusion_top_p,
            s.fusion_temperature,
            s.fusion_min_chunks,
            s.fusion_max_chunks,
        )

    def fit_budget(self, candidates: Sequence[Passage]) -> list[Passage]:
        """Best first, until the sources budget is used; lower-ranked chunks are dropped."""
        kept: list[Passage] = []
        used = 0
        for c in candidates:
            cost = estimate_tokens(c.chunk.text) + 24  # + its header line in the prompt
            if kept and used + cost > self.settings.context_max_tokens:
                break
            kept.append(c)
            used += cost
        return kept


def _scaled(scores: Sequence[float]) -> list[float]:
    top = max(scores, default=0.0)
    return [x / top for x in scores] if top > 0 else list(scores)

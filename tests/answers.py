"""Answers to store and export, shared by test_feedback and test_export."""

from __future__ import annotations

from policybot.schemas import Answer, Citation

DEFINITION = (
    "Insured Person means you, your spouse or partner, and members of your family who permanently live\n"
    "in your home, including children under twenty-one years of age studying away from home."
)
EARTHQUAKE = "Earthquake damage to the buildings is covered only when the schedule shows the earthquake extension."


def _citation(n: int, text: str, quote: str | None = None, cited: bool = True, verified: bool = True, **kw) -> Citation:
    start = text.index(quote) if quote else None
    values = dict(
        n=n,
        chunk_id=f"c{n}",
        doc="acme-home.pdf",
        title="Acme Home Insurance Policy",
        section="1.1 Insured Person",
        page_start=1,
        page_end=1,
        text=text,
        score=0.8,
        cited=cited,
        quote=quote,
        quote_start=start,
        quote_end=start + len(quote) if quote else None,
        verified=verified,
    )
    values.update(kw)
    return Citation(**values)


def generated() -> Answer:
    quote = "your spouse or partner, and members of your family who permanently live\nin your home"
    return Answer(
        question="Is my wife covered?",
        standalone_question="Is my wife covered?",
        answer='Yes: the insured person includes "your spouse or partner" [1]. Earthquakes need the extension [2].',
        mode="generated",
        refused=False,
        citations=[
            _citation(1, DEFINITION, quote),
            _citation(
                2,
                EARTHQUAKE,
                "covered only when the schedule shows",
                verified=False,
                section="2.2 Earthquake damage",
                page_start=2,
                page_end=3,
            ),
            _citation(3, "Wear and Tear means the gradual loss of value.", cited=False, verified=False),
        ],
        profile="lite",
    )


def refused() -> Answer:
    return Answer(
        question="And my dog?",
        standalone_question="Is my dog an insured person?",
        answer="I could not find this in the documents.",
        mode="refused",
        refused=True,
        refusal_reason="best cosine score 0.21 is below the threshold 0.35",
        citations=[_citation(1, DEFINITION, cited=False, verified=False)],
        profile="lite",
    )


def extractive() -> Answer:
    quote = "Insured Person means you, your spouse or partner"
    return Answer(
        question="Who is insured?",
        standalone_question="Who is insured?",
        answer=f'1. "{quote}" [1] — Acme Home Insurance Policy · 1.1 Insured Person · p.1',
        mode="extractive",
        refused=False,
        citations=[_citation(1, DEFINITION, quote)],
        profile="lite",
        notice="No generated summary is available: the language model is not running.",
    )


def draft():
    """What retrieval decided, for testing a writer on passages given by hand: a confident band."""
    from policybot.answer.writers import AnswerDraft

    return AnswerDraft("q", "q", ["q"], "skipped", 0.8, 0.8, 0.4, ["c1"], [0.8], "lite", None, band="confident")

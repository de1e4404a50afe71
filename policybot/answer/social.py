"""Turns that are not questions about the documents: "thanks", "hello", "ok", "bye".

A citizen at a kiosk says thank you; searched as a question, "thank you" found passages about
adjusting sums insured, shown under "Your documents may not say this directly", and "ok thanks"
after a question was searched with that question and answered it again. Such a turn gets a short
kind word back and nothing is searched; it is reported as not answered from the documents
(``refused``, reason ``schemas.NOT_A_QUESTION``), so the JSON, the evaluation and the exports read it as what it
is. It is skipped as context too: "thanks" and then "and the cash that was in it?" goes on from the
question before the thanks.

A turn is social only when every word of it is a greeting, a thank-you, a goodbye or an
acknowledgement, or a word that only fills them out ("thanks so much for your help"). A question
mark or any other word makes it a question ("thanks, and what about theft", "hello, is my shed
covered?"), searched as before. The words are everyday English, not any document's.
"""

from __future__ import annotations

import re

THANKS = "You're welcome. Ask another question about your documents whenever you like."
HELLO = (
    "Hello. Ask me about your documents in your own words: for example what is covered, what is not, "
    "or how to make a claim."
)
GOODBYE = "Goodbye. Come back with any other question about your documents."
NOTED = "Ask another question about your documents whenever you like."

_KINDS = tuple(  # the first kind a turn holds a word of decides the reply
    (reply, frozenset(words.split()))
    for reply, words in (
        (THANKS, "thanks thank thankyou thx ty cheers ta appreciated appreciate grateful"),
        (GOODBYE, "bye goodbye byebye later farewell goodnight"),
        (HELLO, "hi hello hey hiya howdy greetings morning afternoon evening"),
        (
            NOTED,
            "ok okay k kk great cool perfect fine nice good brilliant lovely excellent awesome understood "
            "right alright gotcha noted sure",
        ),
    )
)
# Words that only fill the social words out: "thank you so much for your help", "got it", "see you".
_FILLER = frozenset(
    "a again all and bot for got good guys help helpful helped helps i it its just lot mate me much oh see sir so "
    "that thats the there this u very well you your yours".split()
)
_WORD = re.compile(r"[a-z]+")


def social_reply(turn: str) -> str | None:
    """The reply to a turn that is only a greeting, thanks, goodbye or acknowledgement; else None."""
    text = turn.strip().lower().replace("\u2019", "'").replace("'", "")
    if not text or "?" in text or len(text) > 80 or re.search(r"\d", text):
        return None
    words = _WORD.findall(text)
    if not words:  # a thumbs-up, "!!!"
        return NOTED
    if any(w not in _FILLER and not any(w in vocabulary for _, vocabulary in _KINDS) for w in words):
        return None
    return next((reply for reply, vocabulary in _KINDS if vocabulary.intersection(words)), None)

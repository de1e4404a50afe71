"""Turns that are not questions about the documents: a kind word back, nothing searched."""

import pytest

from policybot.answer.social import GOODBYE, HELLO, NOTED, THANKS, social_reply


@pytest.mark.parametrize(
    "turn, reply",
    [
        ("thanks", THANKS),
        ("Thank you so much for your help!", THANKS),
        ("ok thanks", THANKS),  # after an answer: not a question to search with the one before
        ("great, thanks", THANKS),
        ("thank you 😊", THANKS),
        ("Cheers mate", THANKS),
        ("bye", GOODBYE),
        ("hello", HELLO),
        ("Hi there", HELLO),
        ("good morning", HELLO),
        ("ok", NOTED),
        ("👍", NOTED),
    ],
)
def test_a_greeting_a_thank_you_or_a_goodbye_gets_a_kind_word(turn, reply):
    assert social_reply(turn) == reply


@pytest.mark.parametrize(
    "turn",
    [
        "Thanks, and what about theft?",  # a question mark: a question
        "hello, is my shed covered",  # any other word: a question
        "thanks i only told the bank 2 days later",
        "I only told the bank 2 days later",
        "no",
        "",
        "How do I say thank you in Japanese?",
    ],
)
def test_anything_more_than_a_kind_word_is_searched(turn):
    assert social_reply(turn) is None

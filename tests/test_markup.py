"""Untrusted text shown literally: nothing in a passage, an answer or a name becomes Markdown,
HTML or a link."""

import re

import pytest

from policybot.markup import WORD_JOINER, escape_markdown, literal_block, literal_html, plain_text, unescape_markdown

HOSTILE = [
    "![pixel](http://127.0.0.1:8999/track.png) See the pond rules [click here](https://example.org/claim)",
    "<script>alert(1)</script> <img src=x onerror=alert(2)>",
    "[go](javascript:alert(3)) and <https://example.org/auto> and www.example.org and a@b.example",
    "Costs $500 to $750 $x^2$ :red[alarm] :smile: ~~gone~~ **bold** _it_ `code`",
    "# Heading\n- item\n1. first\n> quote\n    code block\n\n---\n| a | b |",
]
# GFM's autolink patterns (mdast-util-gfm-autolink-literal), which Streamlit applies to text
# after backslash escapes are resolved.
AUTOLINK = re.compile(r"(https?://|www(?=\.))|([-.+\w]+@[-\w]+(?:\.[-\w]+)+)", re.IGNORECASE)


@pytest.mark.parametrize("text", HOSTILE)
def test_one_line_escape_round_trips_and_leaves_no_syntax(text):
    md = escape_markdown(text)
    assert unescape_markdown(md) == " ".join(text.split())
    for i, ch in enumerate(md):
        if ch in "[]()!<>*_`#$:~|-." and (i == 0 or md[i - 1] != "\\"):
            pytest.fail(f"unescaped {ch!r} at {i} in {md!r}")
    # What the autolinker sees once the escapes are resolved: no URL or address it knows.
    assert not AUTOLINK.search(re.sub(r"\\(.)", r"\1", md))


@pytest.mark.parametrize("text", HOSTILE)
def test_text_block_is_one_line_of_raw_html_with_no_markup(text):
    block = literal_block(text)
    assert block.startswith('<div style="white-space: pre-wrap">') and block.endswith("</div>")
    inner = block[len('<div style="white-space: pre-wrap">') : -len("</div>")]
    assert "\n" not in block
    assert not re.search(r"[!-/:-@\[-`{-~]", re.sub(r"&#\d+;", "", inner)), inner  # punctuation only as references
    assert plain_text(block) == text.strip()


def test_labels_keep_unicode_and_read_the_same():
    assert unescape_markdown(escape_markdown("política-ñ [2].pdf")) == "política-ñ [2].pdf"
    assert escape_markdown("see www.example.org") == f"see www{WORD_JOINER}\\.example\\.org"


def test_literal_html_has_no_tags_or_newlines():
    out = literal_html("<b>a</b>\n\n![i](u)")
    assert "<" not in out and "\n" not in out and "[" not in out
    assert plain_text(out) == "<b>a</b>\n\n![i](u)"

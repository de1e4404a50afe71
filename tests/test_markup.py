"""Untrusted text shown literally: nothing in a passage, an answer or a name becomes Markdown,
HTML or a link."""

import re

import pytest

from policybot.display.markup import (
    WORD_JOINER,
    escape_markdown,
    highlight_html,
    literal_block,
    literal_html,
    plain_text,
    unescape_markdown,
)

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


# --- highlight_html ------------------------------------------------------------------


def test_highlight_html_marks_exactly_the_span():
    text = "Cover applies.\n  Flood is excluded."
    start = text.index("Flood")
    end = start + len("Flood is excluded")
    out = highlight_html(text, start, end)
    assert out.startswith('<div style="white-space: pre-wrap">') and out.endswith("</div>")
    assert "\n" not in out  # one line of raw HTML: a blank line would end the HTML block
    assert plain_text(out) == text
    assert plain_text(out.split("<mark>", 1)[1].split("</mark>", 1)[0]) == "Flood is excluded"


def test_highlight_html_escapes_and_keeps_offsets_with_markup_characters():
    text = "If A < B & C > D then <b>we pay</b> the claim."
    start = text.index("<b>we pay</b>")
    end = start + len("<b>we pay</b>")
    out = highlight_html(text, start, end)
    assert plain_text(out.split("<mark>", 1)[1].split("</mark>", 1)[0]) == "<b>we pay</b>"
    assert plain_text(out) == text
    assert "<b>" not in out and "&" not in out.replace("&#", "")


def test_highlight_html_leaves_no_markdown_to_interpret():
    text = (
        "See ![pixel](http://127.0.0.1:8999/t.png) and [claim](https://example.org)\n\n# Big $5 *x* `y` www.example.org"
    )
    out = highlight_html(text, 4, 10)
    for syntax in ("![", "](", "http://", "www.", "$", "*", "`", "#", "\n"):
        assert syntax not in out.replace("&#", "").replace("<mark>", "").replace("</mark>", "").replace(
            "<div", ""
        ).replace('style="white-space: pre-wrap">', "").replace("</div>", ""), syntax
    assert plain_text(out) == text


def test_highlight_html_without_span_and_with_odd_offsets():
    assert plain_text(highlight_html("a < b", None, None)) == "a < b"
    assert "<mark>" not in highlight_html("abc", 2, 2)
    assert "<mark>" not in highlight_html("abc", 3, 1)
    assert highlight_html("abc", 1, 99) == '<div style="white-space: pre-wrap">a<mark>bc</mark></div>'


def test_highlight_html_marks_every_quote_of_a_passage_once():
    text = "Cover applies. Unless the home is empty. Claims within 30 days."
    html_out = highlight_html(text, 0, 14, [(15, 40), (20, 30), (41, 64)])
    assert html_out.count("<mark>") == 3  # the overlapping span is one mark with the one it is in
    assert plain_text(html_out.split("<mark>")[2].split("</mark>")[0]) == "Unless the home is empty."
    assert plain_text(html_out) == text

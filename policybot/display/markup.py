"""Showing untrusted text (document passages, model output, file names, questions) literally.

Streamlit renders Markdown almost everywhere: in ``st.markdown``, captions, alerts and the
labels of expanders, buttons and checkboxes. Text from a PDF or from the model can carry
Markdown images (the browser fetches them: tracking pixels), links (phishing),
autolinked URLs, ``$...$`` maths and HTML. So:

* bodies of text (answers, questions, passages) become one block of raw HTML in which every
  punctuation mark and newline is a character reference: no tag and no Markdown can appear,
  and autolinking, which works on Markdown text, never sees it;
* one-line strings (labels, captions, alerts) are backslash-escaped, and URLs and e-mail
  addresses get an invisible WORD JOINER so Streamlit's autolinker (which runs on the text
  after escapes are resolved) does not recognise them.

The app's own formatting (the ``[n]`` markers, the quote highlight, line breaks) is then
the only formatting left.
"""

from __future__ import annotations

import html
import re
import string
from typing import Sequence

# CommonMark lets any ASCII punctuation be backslash-escaped, and an escaped character is
# always literal: no link, image, emphasis, maths ("$"), list or heading, and none of
# Streamlit's ":colour[...]" or ":emoji:" directives, can start.
_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
# In raw HTML, the same characters as numeric references: the browser shows them, and a
# Markdown parser that ever sees the text finds no syntax in it.
_HTML_ESCAPES = {ord(c): f"&#{ord(c)};" for c in string.punctuation}
_HTML_ESCAPES[ord("\n")] = "&#10;"


WORD_JOINER = "\u2060"
# What GFM autolinking looks for: "http://", "https://", "www." and "name@domain".
_AUTOLINK_START = re.compile(r"(?i)\b(https?|ftp|www)(?=[:.])|@")


def _break_autolinks(text: str) -> str:
    return _AUTOLINK_START.sub(lambda m: (m.group(1) + WORD_JOINER) if m.group(1) else "@" + WORD_JOINER, text)


def escape_markdown(text: str) -> str:
    """One line of text as Markdown that renders literally (labels, captions, names)."""
    return _PUNCTUATION.sub(r"\\\1", _break_autolinks(" ".join(str(text).split())))


def literal_block(text: str) -> str:
    """A body of text as one raw HTML block that shows it literally, line breaks kept
    (for ``st.markdown(..., unsafe_allow_html=True)``: every tag in it is ours)."""
    return f'<div style="white-space: pre-wrap">{literal_html(str(text).strip())}</div>'


def literal_html(text: str) -> str:
    """Text as HTML character data with every punctuation mark and newline as a numeric
    reference: no tag, no Markdown, and no blank line that would end an HTML block."""
    return str(text).translate(_HTML_ESCAPES)


def unescape_markdown(markdown: str) -> str:
    """The text an escaped Markdown string shows (for tests)."""
    return re.sub(r"\\([" + re.escape(string.punctuation) + "])", r"\1", markdown).replace(WORD_JOINER, "")


def plain_text(fragment: str) -> str:
    """The characters an HTML fragment made by ``literal_html`` shows."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def highlight_html(text: str, start: int | None, end: int | None, also: Sequence[tuple[int, int]] = ()) -> str:
    """The text as literal, whitespace-preserving HTML, with text[start:end] (and each ``also``
    span: other quotes of the same passage) in <mark>.

    Every punctuation mark and newline is a character reference (``markup.literal_html``), so
    the fragment is one line of raw HTML in which neither tags nor Markdown can appear.
    """
    spans = [(start, end)] if start is not None and end is not None else []
    spans += list(also)
    clipped = sorted((max(0, min(a, len(text))), max(0, min(b, len(text)))) for a, b in spans)
    merged: list[list[int]] = []
    for lo, hi in clipped:
        if hi <= lo:
            continue
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    # Offsets index the raw text, so each part is escaped on its own.
    body, at = "", 0
    for lo, hi in merged:
        body += literal_html(text[at:lo]) + f"<mark>{literal_html(text[lo:hi])}</mark>"
        at = hi
    body += literal_html(text[at:])
    return f'<div style="white-space: pre-wrap">{body}</div>'

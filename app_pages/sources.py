"""A source's panel, as the chat and the evidence table show it: the passage with its quote
marked, the page image with the quote highlighted, and the PDF to download."""

from __future__ import annotations

import streamlit as st

from policybot.display.markup import escape_markdown, highlight_html
from policybot.errors import PolicyBotError
from policybot.schemas import Citation
from policybot.service import PolicyBot


def citation_title(c: Citation, refused: bool) -> str:
    # Plain symbols (DejaVu has them): kiosk browsers often have no emoji font.
    mark = "" if refused or not c.cited else (" ✓ verified" if c.verified else " ⚠ unverified")
    extra = ""
    if c.referenced_by:
        extra += escape_markdown(f" · referenced by [{c.referenced_by[0]}] ({c.reference})")
    if c.same_text_in:
        extra += escape_markdown(f" · same text in: {'; '.join(c.same_text_in)}")
    if c.ocr_confidence is not None:
        extra += f" · OCR {c.ocr_confidence:.0f}%"
    score = "" if c.referenced_by else f" · score {c.score:.2f}"
    role = f"{c.role} · " if c.role and not refused else ""
    return f"{escape_markdown(f'[{c.n}] {role}{c.label}')}{mark}{extra}{score}"


def ocr_note(c: Citation, floor: float) -> None:
    """A passage read from a scanned page says so: OCR can misread a figure or a word."""
    if c.ocr_confidence is None:
        return
    if c.ocr_confidence < floor:
        st.warning(
            f"Text read by OCR with low confidence ({c.ocr_confidence:.0f}%, under {floor:.0f}%): it may be misread. "
            "Check it against the page image before relying on it."
        )
    else:
        st.caption(f"Text read by OCR, confidence {c.ocr_confidence:.0f}% — compare with the page image.")


def render_citation(
    bot: PolicyBot,
    c: Citation,
    refused: bool,
    key: str,
    expanded: bool = False,
    title: str | None = None,
    page_on_request: bool = False,
) -> None:
    """A source's panel: the chunk with the quote highlighted, the page image, the PDF.

    ``page_on_request``: the page image waits for a click. Streamlit redraws the whole history on
    every rerun, so images in earlier answers were rendered and sent again with each new question
    (turn 30 took 2.6 times as long as turn 10)."""
    with st.expander(title or citation_title(c, refused), expanded=expanded):
        ocr_note(c, bot.settings.ocr.confidence_floor)
        st.markdown(highlight_html(c.text, c.quote_start, c.quote_end), unsafe_allow_html=True)
        if page_on_request and not st.toggle(f"Show page {c.page_start}", key=f"page-{key}"):
            return
        try:
            image = bot.library.page_image(c.doc, c.page_start, c.quote)
        except PolicyBotError as exc:  # the document was deleted, or the page is gone
            st.caption(escape_markdown(f"{str(exc)[:1].upper()}{str(exc)[1:]}."))
            return
        st.image(image, caption=f"{c.doc}, page {c.page_start}" + (" — quote highlighted" if c.quote else ""))
        pdf = bot.library.stored_pdf(c.doc)
        if pdf is not None:
            st.download_button(
                escape_markdown(f"Download {c.doc} (see page {c.page_start})"),
                data=lambda: pdf.read_bytes(),  # read only when clicked, not on every rerun
                file_name=c.doc,
                mime="application/pdf",
                key=f"dl-{key}",
            )

"""A source's panel, as the chat and the evidence table show it: the passage with its quote
marked, the page image with the quote highlighted, and the PDF to download."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import streamlit as st

from app_pages.state import context
from app_pages.state import key as state_key
from policybot.display.markup import escape_markdown, highlight_html
from policybot.errors import PolicyBotError
from policybot.schemas import Answer, Citation
from policybot.service import PolicyBot

VERDICTS = {"Right": "right", "Wrong": "wrong"}
# On a phone a page image scaled to the screen is unreadable: there, a source's page keeps a readable
# size and scrolls sideways inside its panel (the crop to the quote is what is shown first); its
# caption is a line of its own below it, so it wraps within the panel instead of scrolling away.
PAGE_CSS = """<style>
/* The kiosk's "Still there?" countdown floats at the top of the window, wherever the visitor has scrolled. */
[class*="st-key-countdown"] {
  position: fixed; top: 4.5rem; left: 50%; transform: translateX(-50%); z-index: 999990;
  width: min(36rem, calc(100vw - 2rem)); background: var(--background-color, #fff);
  box-shadow: 0 4px 18px rgba(0, 0, 0, 0.25); border-radius: 0.5rem;
}
@media (max-width: 640px) {
  [data-testid="stExpanderDetails"] [data-testid="stImage"] { overflow-x: auto; }
  [data-testid="stExpanderDetails"] [data-testid="stImage"] img { width: 640px !important; max-width: none !important; }
}
</style>"""


def citation_title(
    c: Citation, refused: bool, generated: bool = False, shown: int | None = None, by_file: bool = False
) -> str:
    """The panel's label: number, role, title, clause, pages. "✓ quote checked" only where it
    means something: a written answer's quote, found in the passage (a copied quote always is).
    Scores are not here: they are in the panel, for reviewers."""
    # Plain symbols (DejaVu has them): kiosk browsers often have no emoji font.
    role = f"{c.role} · " if c.role and not refused else ""
    label = c.file_label if by_file else c.label  # two documents of one title (editions): their file names
    parts = [f"[{c.n}] {role}{label}"]
    if c.cited and generated and not refused:
        parts.append("✓ quote checked" if c.verified else "⚠ unchecked")
    note = c.referenced_note(shown)  # never a number with no panel
    if note:
        parts.append(note)
    if c.same_text_in:
        parts.append(f"same text in: {'; '.join(same_text_labels(c.same_text_in))}")
    if c.ocr_confidence is not None:
        parts.append(f"OCR {c.ocr_confidence:.0f}%")
    return escape_markdown(" · ".join(parts))


def same_text_labels(labels: list[str]) -> list[str]:
    """ "nfip-sfip-rcbap.pdf, p.17" as a person reads it: "NFIP … RCBAP, p.17" (the title)."""
    shown = []
    for label in labels:
        name, _, pages = label.rpartition(", ")
        shown.append(f"{context().shown_name(name)}, {pages}" if name else label)
    return shown


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
    generated: bool = False,
    reviewer: bool = False,
    shown: int | None = None,
    by_file: bool = False,
    marked: tuple[Answer, str] | None = None,
) -> None:
    """A source's panel: the chunk with the quote highlighted, the page image, the PDF.

    ``page_on_request``: the page image waits for a click. Streamlit redraws the whole history on
    every rerun, so images in earlier answers were rendered and sent again with each new question
    (turn 30 took 2.6 times as long as turn 10).

    ``marked`` (the answer and its key): a reviewer can mark this source right or wrong."""
    printed = bot.library.printed_page(c.doc, c.page_start)
    if title is None:
        title = citation_title(c, refused, generated, shown, by_file)
        title += " " + escape_markdown(f"(printed page {printed})") if printed else ""  # escaping trims spaces
    with st.expander(title, expanded=expanded):
        ocr_note(c, bot.settings.ocr.confidence_floor)
        if reviewer:  # the detail a reviewer checks against: the file, the full heading path, the score
            where = f"{c.doc} · {c.cited_section or 'no section'}"
            score = "" if c.referenced_by else f" · relevance score {c.score:.2f}"
            st.caption(escape_markdown(where + score))
        if c.lead_in:  # the chunk starts inside a list: what the list is about
            st.caption(escape_markdown(f"Continues the list under: “{c.lead_in}” (from the passage before)"))
        st.markdown(highlight_html(c.text, c.quote_start, c.quote_end, c.also_quoted), unsafe_allow_html=True)
        if marked is not None and reviewer:
            mark_source(bot, c, marked, key)
        pages = _pages(c)
        if page_on_request and not st.toggle(_show_pages(pages), key=state_key(f"page-{key}")):
            return
        if page_images(bot, c, key, pages, printed):
            pdf_links(bot, c, key, reviewer)


def page_images(bot: PolicyBot, c: Citation, key: str, pages: list[int], printed: str | None) -> bool:
    """Each page of the passage, cropped to the quote unless the whole page is asked for, captioned
    with its printed number; False when the document or the page is gone (said in a line)."""
    whole = st.toggle("Whole page", key=state_key(f"whole-{key}"), help="Show the whole page, not only the quote")
    also = tuple(c.text[s:e] for s, e in c.also_quoted)
    for page in pages:
        part = "start" if page == pages[0] else ("end" if page == c.page_end else "")
        try:
            view = bot.library.page_view(
                c.doc, page, c.quote, 110 if whole else 150, not whole, passage=c.text, part=part, also=also
            )
        except PolicyBotError as exc:  # the document was deleted, or the page is gone
            st.caption(escape_markdown(f"{str(exc)[:1].upper()}{str(exc)[1:]}."))
            return False
        own = printed if page == c.page_start else bot.library.printed_page(c.doc, page)
        caption = f"{c.title or c.doc}, page {page}" + (f" (printed page {own})" if own else "")
        caption += " — quote highlighted" if view.marked else (" — the passage goes on here" if page > pages[0] else "")
        st.image(view.png)  # on a phone the image scrolls sideways; its caption must not scroll with it
        st.caption(escape_markdown(caption))
    return True


def pdf_links(bot: PolicyBot, c: Citation, key: str, reviewer: bool) -> None:
    """The PDF opened at the page in the browser's own viewer, and downloaded."""
    # Not for a kiosk's visitors: a new tab in a kiosk browser (no tab bar) has no way back.
    url = served_pdf(c.doc) if reviewer else None
    if url is not None:
        st.link_button(f"Open the PDF at page {c.page_start}", f"{url}#page={c.page_start}")
    pdf = bot.library.stored_pdf(c.doc)
    if pdf is not None:
        st.download_button(
            escape_markdown(f"Download {c.doc if reviewer else 'the document'} (see page {c.page_start})"),
            data=lambda: pdf.read_bytes(),  # read only when clicked, not on every rerun
            file_name=c.doc,
            mime="application/pdf",
            key=state_key(f"dl-{key}"),
        )


# The stored PDFs the app serves itself (Streamlit's static serving of ./static, switched on in
# .streamlit/config.toml), so the browser's own viewer opens one at a page (#page=N) with no network.
# Each is a hard link to the library's copy (a copy where links cannot be made), named by its hash;
# Streamlit refuses symbolic links that lead out of ./static.
STATIC_PDFS = Path(__file__).resolve().parents[1] / "static" / "pdf"


def served_pdf(doc: str) -> str | None:
    """The app's own address of a document's PDF, published on first use; None when the app does
    not serve files or the document is not stored."""
    if not st.get_option("server.enableStaticServing"):
        return None
    info = next((d for d in context().listing.documents if d.name == doc), None)
    if info is None or not Path(info.stored_path).is_file():
        return None
    target = STATIC_PDFS / f"{info.sha256}.pdf"
    if not target.is_file():
        STATIC_PDFS.mkdir(parents=True, exist_ok=True)
        part = target.with_suffix(f".part-{os.getpid()}")
        try:
            os.link(info.stored_path, part)
        except OSError:
            shutil.copy2(info.stored_path, part)
        os.replace(part, target)
    return f"app/static/pdf/{target.name}"


def unpublish_removed(kept_hashes: set[str]) -> None:
    """Stop serving the PDFs of documents no longer in the library (after a delete)."""
    if not STATIC_PDFS.is_dir():
        return
    for path in STATIC_PDFS.glob("*.pdf"):
        if path.stem not in kept_hashes:
            path.unlink(missing_ok=True)


# The pages of one passage shown at most (a passage rarely spans more than two).
MAX_PAGES = 3


def _pages(c: Citation) -> list[int]:
    """Every page the passage spans, up to ``MAX_PAGES``."""
    return list(range(c.page_start, min(c.page_end, c.page_start + MAX_PAGES - 1) + 1))


def _show_pages(pages: list[int]) -> str:
    return f"Show page {pages[0]}" if len(pages) == 1 else f"Show pages {pages[0]}-{pages[-1]}"


def mark_source(bot: PolicyBot, c: Citation, marked: tuple[Answer, str], key: str) -> None:
    """A reviewer's verdict on this source, kept with the answer (one mark per source, updated when
    given again); a wrong one can name the page that holds the right passage. The marks become a
    regression set with `policybot eval --marks`."""
    answer, answer_key = marked
    row = st.container(horizontal=True, vertical_alignment="bottom")
    verdict = row.segmented_control("This source is", list(VERDICTS), key=state_key(f"verdict-{key}"))
    page = None
    if verdict == "Wrong":
        page = row.number_input(
            "Right page (optional)", min_value=1, step=1, value=None, key=state_key(f"right-page-{key}"), width=180
        )
    if verdict and row.button("Save mark", key=state_key(f"save-mark-{key}")):
        bot.mark_citation(
            answer_key, answer, c.n, VERDICTS[verdict], int(page) if page else None, st.session_state.session_id
        )
        st.toast("Mark saved on this machine.")

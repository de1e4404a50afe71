"""The library page: the documents, and (unless a kiosk is locked) adding PDFs, confirming a new
edition, setting an edition's date and deleting a document. Each change says what it did."""

from __future__ import annotations

from datetime import date
from typing import Callable

import streamlit as st

from app_pages.sources import unpublish_removed
from app_pages.state import PageContext, context, key
from policybot.display.markup import escape_markdown
from policybot.errors import AlreadyDeleted, PolicyBotError
from policybot.events import Progress
from policybot.schemas import DocumentInfo
from policybot.service import PolicyBot


def page(ctx: PageContext) -> None:
    docs = ctx.listing.documents
    st.subheader("Documents")
    library_notice()
    upload_report()
    if not docs:
        st.info("No documents yet." + (" Add PDFs below." if ctx.can_edit else ""))
    for d in docs:
        if not ctx.can_edit:  # a kiosk visitor: the titles of the documents in force, no file details
            if not d.superseded_by:
                st.caption(escape_markdown(d.title or d.name))
            continue
        added = d.ingested_at[:10]
        st.caption(
            f"**{escape_markdown(d.name)}** — {d.pages} pages, {d.chunks} passages, {d.sections} sections, added "
            f"{added}"
            f"{edition_summary(d)}{ocr_summary(d)}"
        )
    if ctx.can_edit:
        upload_box(ctx.bot)
        editions_box(ctx.bot, docs)
        effective_box(ctx.bot, docs)
        delete_box(ctx.bot, docs)


def edition_summary(d: DocumentInfo) -> str:
    text = f" · effective {d.effective_date}" if d.effective_date else ""
    if d.superseded_by:
        text += f" · superseded by {d.superseded_by}"
    elif d.edition_status == "proposed":
        text += " · a new edition? (confirm under Editions)"
    return escape_markdown(text)


def ocr_summary(d: DocumentInfo) -> str:
    """Which pages of a document were read by OCR, and which of them are flagged."""
    if not d.ocr_pages:
        return ""
    pages = sorted(d.ocr_pages)
    low, high = min(d.ocr_pages.values()), max(d.ocr_pages.values())
    text = f" · {len(pages)} scanned page(s) read by OCR ({page_span(pages)}), confidence {low:.0f}–{high:.0f}%"
    if d.ocr_flagged:
        text += f" · ⚠ low confidence on page(s) {page_span(d.ocr_flagged)}: check them against the page images"
    return escape_markdown(text)


def page_span(pages: list[int]) -> str:
    """1, 2, 3, 5 -> '1–3, 5'."""
    runs: list[list[int]] = []
    for page_no in pages:
        if runs and page_no == runs[-1][-1] + 1:
            runs[-1].append(page_no)
        else:
            runs.append([page_no])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def library_notice() -> None:
    """What the last library action (run in a callback) did."""
    notice = st.session_state.pop("library_notice", None)
    if notice:
        kind, text = notice
        (st.success if kind == "success" else st.warning)(escape_markdown(text))


def upload_box(bot: PolicyBot) -> None:
    """Add PDFs, each with its own progress bar. When they are in, the page is drawn again: the
    lists (here, and *Search in*) show the new documents, what happened to each file is said at
    the top, and the uploader is a new, empty one."""
    round_no = st.session_state.get("upload_round", 0)
    files = st.file_uploader("Add PDFs", type=["pdf"], accept_multiple_files=True, key=key(f"uploads-{round_no}"))
    if not files or not st.button("Add to library", key="do_upload"):
        return
    report: list[tuple[str, str]] = []
    for file in files:
        bar = st.progress(0.0, text=escape_markdown(f"{file.name[:80]}: starting"))

        def on_progress(event: Progress, bar=bar) -> None:
            fraction = event.done / event.total if event.total else 1.0
            bar.progress(min(fraction, 1.0), text=escape_markdown(event.label))

        report += add_file(bot, file.name, file.getvalue(), on_progress)
    st.session_state.upload_report = report
    st.session_state.upload_round = round_no + 1
    st.session_state.pop("scope_library", None)  # the default scope follows the library
    st.session_state.pop(key("scope"), None)
    st.rerun()


def add_file(bot: PolicyBot, name: str, data: bytes, on_progress: Callable[[Progress], None]) -> list[tuple[str, str]]:
    """Ingest one uploaded file; what happened, as (kind, text) lines."""
    try:
        outcome = bot.ingest_upload(name, data, progress=on_progress)
    except OSError as exc:  # the staging copy could not be written (disk full, permissions)
        return [("error", f"{name[:80]}: could not be saved for reading ({exc.strerror or exc})")]
    lines: list[tuple[str, str]]
    if outcome.status == "failed":
        lines = [("error", outcome.message)]  # the message already names the file
    elif outcome.status in ("duplicate", "unchanged"):
        lines = [("warning", f"{outcome.name}: {outcome.message}")]
    else:
        lines = [("success", f"{outcome.name}: {outcome.pages} pages, {outcome.chunks} passages")]
    return lines + [("warning", f"{outcome.name}: {warning}") for warning in outcome.warnings]


def upload_report() -> None:
    """What the last upload did, file by file (kept over the redraw that follows it)."""
    for kind, text in st.session_state.pop("upload_report", []):
        {"success": st.success, "warning": st.warning}.get(kind, st.error)(escape_markdown(text))


def editions_box(bot: PolicyBot, docs: list[DocumentInfo]) -> None:
    """Confirm the editions detected when a document was added."""
    proposed = [d for d in docs if d.edition_status == "proposed"]
    if not proposed:
        return
    with st.expander("Editions", expanded=True):
        for d in proposed:
            st.button(
                f"Confirm {d.name} as a new edition",
                key=f"confirm-{d.sha256[:16]}",
                on_click=confirm_edition,
                args=(bot, d.name),
            )


def effective_box(bot: PolicyBot, docs: list[DocumentInfo]) -> None:
    """Set by hand the date a document's edition takes effect (when it does not say, or says wrong)."""
    if not docs:
        return
    with st.expander("Edition date"):
        doc = pick_document(docs, "effective_doc")
        current = date.fromisoformat(doc.effective_date) if doc.effective_date else date.today()
        when = st.date_input("Takes effect on", value=current, key=f"effective_{doc.sha256[:16]}")
        st.button("Set the date", key="do_effective", on_click=set_effective, args=(bot, doc.name, when))


def set_effective(bot: PolicyBot, name: str, when: date) -> None:
    edition_change(lambda: f"{name} takes effect on {bot.library.set_effective(name, when).effective_date}.")


def confirm_edition(bot: PolicyBot, name: str) -> None:
    def change() -> str:
        bot.library.confirm_edition(name)
        return f"{name} is now an edition: questions use the edition in force."

    edition_change(change)


def edition_change(change: Callable[[], str]) -> None:
    """Run a change to dates or families, say what it did, and recompute the default scope:
    which editions are in force (and so searched) may have changed."""
    try:
        st.session_state.library_notice = ("success", change())
    except PolicyBotError as exc:
        st.session_state.library_notice = ("warning", str(exc))
    st.session_state.pop("scope_library", None)
    st.session_state.pop(key("scope"), None)


def pick_document(docs: list[DocumentInfo], key: str) -> DocumentInfo:
    """A select box of the library's documents, keyed by SHA-256 (a choice survives renames)."""
    by_sha = {d.sha256: d for d in docs}
    sha = st.selectbox("Document", list(by_sha), format_func=lambda value: by_sha[value].name, key=key)
    return by_sha[sha]


def delete_box(bot: PolicyBot, docs: list[DocumentInfo]) -> None:
    """Delete with a confirmation bound to one document: the click acts on the document that
    was shown and ticked (its SHA-256), never on whatever the list holds by then."""
    if not docs:
        return
    with st.expander("Delete a document"):
        doc = pick_document(docs, "delete_doc")
        sure = st.checkbox(
            f"Yes, delete {escape_markdown(doc.name)} and its passages", key=f"delete_sure_{doc.sha256[:16]}"
        )
        st.button(
            "Delete", key="do_delete", disabled=not sure, on_click=delete_document, args=(bot, doc.name, doc.sha256)
        )


def delete_document(bot: PolicyBot, name: str, sha256: str) -> None:
    """The Delete button's callback, with the document bound when the button was drawn."""
    try:
        bot.delete(name, sha256=sha256)
        listing = bot.library.documents()
        unpublish_removed({d.sha256 for d in listing.documents + listing.other_models})
        st.session_state.library_notice = ("success", f"Deleted {name}.")
    except AlreadyDeleted as exc:
        st.session_state.library_notice = ("warning", str(exc))
    st.session_state.pop(f"delete_sure_{sha256[:16]}", None)


page(context())

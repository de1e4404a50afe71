"""The ``policybot`` command line: a thin layer over ``policybot.service``."""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path
from typing import Any, List, Optional

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from policybot.settings import Settings
from policybot.startup import configure_process

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Ask policy documents, with page-exact citations.")
models_app = typer.Typer(no_args_is_help=True, help="Download models for offline use.")
app.add_typer(models_app, name="models")

out = Console(soft_wrap=True)
err = Console(stderr=True)


def _settings(ctx: typer.Context) -> Settings:
    return ctx.obj["settings"]


def _service(ctx: typer.Context) -> Any:
    from policybot.service import PolicyBot

    if "service" not in ctx.obj:
        ctx.obj["service"] = PolicyBot(_settings(ctx))
    return ctx.obj["service"]


def _print_json(model: BaseModel) -> None:
    sys.stdout.write(model.model_dump_json(indent=2) + "\n")


def _json_mode() -> bool:
    """Whether the command line asked for JSON: then every error is a JSON object on stdout too."""
    return "--json" in sys.argv[1:]


def _print_json_error(kind: str, message: str) -> None:
    import json

    sys.stdout.write(json.dumps({"error": {"kind": kind, "message": message}}) + "\n")


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    if _json_mode():
        _print_json_error("usage" if code == 2 else "failed", message)
    raise typer.Exit(code)


def _text(value: str) -> str:
    """A question or issue as text: bytes that are not UTF-8 (the shell passes them through as
    they are) become U+FFFD instead of crashing the tokenizer."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@app.callback()
def main_options(
    ctx: typer.Context,
    home: Optional[Path] = typer.Option(None, help="Data folder (index, registry, stored PDFs). Env: POLICYBOT_HOME."),
    profile: Optional[str] = typer.Option(None, help="auto, paper or lite. Env: POLICYBOT_PROFILE."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what happens."),
) -> None:
    configure_process(verbose)
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    overrides: dict[str, Any] = {}
    if home is not None:
        overrides["home"] = home
    if profile is not None:
        overrides["profile"] = profile
    try:
        ctx.obj = {"settings": Settings(**overrides)}
    except Exception as exc:
        _fail(f"invalid settings: {exc}")
    data = ctx.obj["settings"].home
    if data.exists() and not data.is_dir():
        _fail(f"the data folder {data} is a file, not a folder: give --home (or POLICYBOT_HOME) a folder")


@app.command()
def ingest(
    ctx: typer.Context,
    paths: List[Path] = typer.Argument(..., help="PDF files or folders (searched recursively for *.pdf)."),
    as_json: bool = typer.Option(False, "--json", help="Print the IngestReport as JSON."),
    effective: Optional[str] = typer.Option(
        None,
        "--effective",
        metavar="YYYY-MM-DD",
        help="The date these documents' edition takes effect (else read from each document where it states one).",
    ),
) -> None:
    """Add PDFs to the library. Unchanged files are skipped; changed ones replace their old version."""
    from policybot.ingestion.files import expand_paths

    when = _iso_date(effective, "--effective") if effective else None
    bot = _service(ctx)
    files = expand_paths(paths)
    if not files:
        _fail(f"no PDF files found in {', '.join(map(str, paths))}")
    report = _ingest_with_progress(bot, files)
    if when is not None:
        _set_effective(bot, report, when)
    if as_json:
        _print_json(report)
    else:
        _print_ingest(report, bot.status().profile_reason)
    if report.failed:
        raise typer.Exit(1)


def _ingest_with_progress(bot: Any, files: List[Path]) -> Any:
    """Ingest with a progress bar per file (on stderr, gone when done) and one for the whole run."""
    from policybot.events import INGEST_STAGES

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        overall = bar.add_task(f"{len(files)} file(s)", total=len(files))
        current: dict[str, Any] = {}

        def on_progress(event: Any) -> None:
            task = current.get(event.file)
            if task is None:
                task = current[event.file] = bar.add_task(event.file, total=event.total)
            description = f"{event.file}: {INGEST_STAGES[event.stage]}"
            bar.update(task, description=description, completed=event.done, total=event.total)
            if event.stage == "done":
                bar.remove_task(task)
                current.pop(event.file, None)
                bar.advance(overall)

        return bot.ingest(files, progress=on_progress)


def _print_ingest(report: Any, profile_reason: str) -> None:
    err.print(f"profile {report.profile} ({profile_reason}); chunker {report.chunker}", highlight=False)
    for o in report.outcomes:
        if o.status == "failed":
            out.print(f"[red]FAILED[/red]    {escape(o.message)}", highlight=False)
            continue
        detail = f"{o.pages} pages, {o.chunks} chunks, {o.sections} sections, {o.tables} tables"
        note = f" — {o.message}" if o.message else ""
        line = f"[green]{o.status:<9}[/green] {escape(o.name)}: {detail} ({o.seconds:.1f} s){escape(note)}"
        out.print(line, highlight=False)
        for warning in o.warnings:
            out.print(f"[yellow]warning[/yellow]   {escape(o.name)}: {escape(warning)}", highlight=False)


@app.command()
def docs(
    ctx: typer.Context,
    delete: Optional[str] = typer.Option(None, "--delete", metavar="NAME", help="Delete a document by name."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the library, or delete a document (vectors, BM25 entries, registry row, stored PDF)."""
    from policybot.errors import PolicyBotError

    bot = _service(ctx)
    if delete is not None:
        try:
            report = bot.delete(delete)
        except PolicyBotError as exc:
            _fail(str(exc))
        if as_json:
            _print_json(report)
        else:
            out.print(f"deleted {report.name}", highlight=False)
        return
    listing = bot.library.documents()
    if as_json:
        _print_json(listing)
        return
    if not listing.documents and not listing.other_models:
        out.print("No documents yet. Add some with: policybot ingest data/")
        return
    table = Table(title=f"Documents ({listing.embedding_model})")
    for col in ("name", "title", "pages", "chunks", "sections", "tables", "OCR", "model", "ingested", "effective"):
        table.add_column(col, overflow="fold")
    for d in listing.documents + listing.other_models:
        model = d.embedding_model.split("/")[-1] + (
            "" if d.embedding_model == listing.embedding_model else " (not searched)"
        )
        when = f"{d.effective_date}{' (by hand)' if d.effective_source == 'user' else ''}" if d.effective_date else ""
        table.add_row(
            d.name,
            d.title,
            str(d.pages),
            str(d.chunks),
            str(d.sections),
            str(d.tables),
            _ocr_cell(d),
            model,
            d.ingested_at,
            when,
        )
    out.print(table)


def _iso_date(text: str, option: str) -> Any:
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        _fail(f"{option}: '{text}' is not a date; write it as YYYY-MM-DD, e.g. 2024-04-01")


def _set_effective(bot: Any, report: Any, when: Any) -> None:
    """--effective: the user's date for every document this run ingested or found unchanged."""
    for outcome in report.outcomes:
        if outcome.status != "failed":
            info = bot.library.set_effective(outcome.name, when)
            outcome.message = "; ".join(
                m for m in (outcome.message, f"effective {info.effective_date} (set by hand)") if m
            )


def _ocr_cell(d: Any) -> str:
    """'3 pages, 91-95%' (and the flagged pages) for a document with scanned pages."""
    if not d.ocr_pages:
        return ""
    values = d.ocr_pages.values()
    cell = f"{len(d.ocr_pages)} page(s), {min(values):.0f}-{max(values):.0f}%"
    return cell + (f"; low on p. {', '.join(map(str, d.ocr_flagged))}" if d.ocr_flagged else "")


@app.command()
def editions(
    ctx: typer.Context,
    confirm: Optional[str] = typer.Option(
        None, "--confirm", metavar="NAME", help="Confirm NAME as another edition of the policy it was matched to."
    ),
    separate: Optional[str] = typer.Option(
        None, "--separate", metavar="NAME", help="Take NAME out of its edition family (searched on its own)."
    ),
) -> None:
    """Editions of the same policy: which is in force, which are superseded, which await confirmation."""
    from policybot.errors import PolicyBotError

    bot = _service(ctx)
    try:
        if confirm:
            bot.library.confirm_edition(confirm)
        if separate:
            bot.library.confirm_edition(separate, confirm=False)
    except PolicyBotError as exc:
        _fail(str(exc))
    families: dict[str, list[Any]] = {}
    for d in bot.library.documents().documents:
        if d.edition_of:
            families.setdefault(d.edition_of, []).append(d)
    if not any(len(members) > 1 for members in families.values()):
        out.print("No editions: every document is searched on its own.")
        return
    for members in families.values():
        if len(members) < 2:
            continue
        out.print("[bold]Editions[/bold]", highlight=False)
        for d in sorted(members, key=lambda m: m.effective_date or m.ingested_at):
            state = (
                "awaiting confirmation"
                if d.edition_status == "proposed"
                else (f"superseded by {d.superseded_by}" if d.superseded_by else "in force")
            )
            out.print(
                f"  {escape(d.name)}  effective {d.effective_date or '(no date)'}  {escape(state)}", highlight=False
            )


@app.command()
def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="What to look for.", callback=_text),
    k: int = typer.Option(10, "--k", min=1, max=100, help="Number of passages."),
    doc: Optional[List[str]] = typer.Option(None, "--docs", help="Search only these documents (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the SearchResponse as JSON."),
    as_of: Optional[str] = typer.Option(
        None, "--as-of", metavar="YYYY-MM-DD", help="Search the editions in force on this date (default: today)."
    ),
) -> None:
    """Find the passages that best match a query (dense + BM25, fused with RRF)."""
    from policybot.errors import PolicyBotError

    bot = _service(ctx)
    try:
        response = bot.search(query, k=k, docs=doc, as_of=_iso_date(as_of, "--as-of") if as_of else None)
    except PolicyBotError as exc:
        _fail(str(exc))
    if as_json:
        _print_json(response)
        return
    for hit in response.hits:
        ocr = f"  text read by OCR ({hit.ocr_confidence:.0f}%)" if hit.ocr_confidence is not None else ""
        out.print(f"[bold]{hit.rank}. {escape(hit.citation)}[/bold]  score {hit.score:.4f}{ocr}", highlight=False)
        snippet = " ".join(hit.text.split())
        out.print(f"   {snippet[:300]}{'…' if len(snippet) > 300 else ''}", highlight=False)
    if response.notice:
        err.print(f"[yellow]{escape(response.notice)}[/yellow]", highlight=False)
    err.print(
        f"{len(response.hits)} passages in {response.seconds:.2f} s ({response.profile} profile)", highlight=False
    )


@app.command()
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="Your question about the documents.", callback=_text),
    as_json: bool = typer.Option(False, "--json", help="Print the Answer as JSON (no streaming)."),
    fast: bool = typer.Option(False, "--fast", help="No query expansion: no LLM call before the answer."),
    no_llm: bool = typer.Option(False, "--no-llm", help="Answer extractively: quote the best passages."),
    doc: Optional[List[str]] = typer.Option(None, "--docs", help="Ask only these documents (repeatable)."),
    as_of: Optional[str] = typer.Option(
        None, "--as-of", metavar="YYYY-MM-DD", help="Use the editions in force on this date (default: today)."
    ),
) -> None:
    """Answer a question from the documents, with checked citations."""
    from policybot.errors import PolicyBotError
    from policybot.events import ANSWER_STAGES, AnswerEvent, StageEvent, StandaloneEvent
    from policybot.options import AskOptions

    bot = _service(ctx)
    answer = None
    options = AskOptions(
        docs=doc or None, fast=fast or None, use_llm=not no_llm, as_of=_iso_date(as_of, "--as-of") if as_of else None
    )
    try:
        for event in bot.ask_stream(question, options=options):
            if isinstance(event, AnswerEvent):
                answer = event.answer
            elif as_json:
                continue
            elif isinstance(event, StageEvent):
                err.print(f"[dim]{ANSWER_STAGES[event.name]}[/dim]", highlight=False)
            elif isinstance(event, StandaloneEvent):
                err.print(f"[dim]searched as: {escape(event.question)}[/dim]", highlight=False)
            # The model's words are not printed as they come: every sentence is checked against
            # its passage first, and a draft that does not check out is never shown (issue 21).
    except PolicyBotError as exc:
        _fail(str(exc))
    assert answer is not None
    if as_json:
        _print_json(answer)
    else:
        _print_answer(answer, bot.library.documents().shown_names())
        if answer.mode == "extractive" and not no_llm and not answer.notice:
            _llm_setup_hint(bot)


def _llm_setup_hint(bot: Any) -> None:
    """Why no language model wrote the answer, with the command that starts one: said here, in
    Status and by `policybot doctor`, never inside the answer or its export."""
    notice = bot.status().llm_notice
    if notice:
        err.print(f"[yellow]{escape(notice)}[/yellow]", highlight=False)


@app.command()
def evidence(
    ctx: typer.Context,
    issue: str = typer.Argument(
        ..., help='The issue, e.g. "escape of water" or "cancellation and refunds".', callback=_text
    ),
    doc: Optional[List[str]] = typer.Option(None, "--docs", help="Collect only from these documents (repeatable)."),
    max_steps: Optional[int] = typer.Option(
        None, "--max-steps", min=1, max=20, help="Agent steps before it is stopped (default 6)."
    ),
    no_llm: bool = typer.Option(False, "--no-llm", help="Use the deterministic planner even when an LLM is running."),
    as_json: bool = typer.Option(False, "--json", help="Print the EvidenceReport as JSON."),
    as_csv: bool = typer.Option(False, "--csv", help="Print the table as CSV."),
    as_md: bool = typer.Option(False, "--md", help="Print the table and trace as Markdown."),
) -> None:
    """Collect everything the documents say on an issue: a table of cited passages with their roles."""
    from policybot.display.export import evidence_csv, evidence_markdown
    from policybot.errors import PolicyBotError
    from policybot.events import EvidenceDoneEvent, EvidenceStepEvent
    from policybot.options import EvidenceOptions

    if sum([as_json, as_csv, as_md]) > 1:
        _fail("choose one of --json, --csv, --md")
    bot = _service(ctx)
    report = None
    try:
        for event in bot.evidence_stream(
            issue, EvidenceOptions(docs=doc or None, max_steps=max_steps, use_llm=not no_llm)
        ):
            if isinstance(event, EvidenceStepEvent):
                step = event.step
                new = f" → rows {', '.join(map(str, step.new_rows))}" if step.new_rows else ""
                err.print(f"[dim]{step.step}. {escape(f'{step.action}[{step.argument}]')}{new}[/dim]", highlight=False)
            elif isinstance(event, EvidenceDoneEvent):
                report = event.report
    except PolicyBotError as exc:
        _fail(str(exc))
    assert report is not None
    if report.notice:
        err.print(f"[yellow]{escape(report.notice)}[/yellow]", highlight=False)
    if report.mode == "planner" and not no_llm:
        _llm_setup_hint(bot)
    if as_json:
        _print_json(report)
    elif as_csv:
        sys.stdout.write(evidence_csv(report))
    elif as_md:
        sys.stdout.write(evidence_markdown(report))
    else:
        _print_evidence(report)


def _print_evidence(report: Any) -> None:
    from policybot.core.passages import quote_as_read

    table = Table(title=f"Evidence: {escape(report.issue)}", show_lines=True)
    for column in ("#", "Source", "Role", "Quote", "Why"):
        table.add_column(column, overflow="fold")
    for row in report.rows:
        c = row.citation
        source = c.label + (f"\nsame text in: {'; '.join(c.same_text_in)}" if c.same_text_in else "")
        quote = " ".join(quote_as_read(c).split()) + ("" if c.verified else " (unverified)")
        table.add_row(str(row.n), escape(source), row.role, escape(quote), escape(row.why))
    out.print(table)
    err.print(
        f"{len(report.rows)} passages, {len(report.trace)} steps, {report.seconds:.1f} s; stopped: "
        f"{escape(report.stopped)}",
        highlight=False,
    )


def _print_answer(answer: Any, titles: dict[str, str] | None = None) -> None:
    """The checked answer, its notice, its sources and its cost. ``titles``: each document as a person
    reads it (``DocumentList.shown_names``)."""
    titles = titles or {}
    out.print(escape(answer.answer), highlight=False)
    if answer.mode == "generated" and answer.removed_markers:
        err.print(f"[dim]{answer.removed_markers} citation(s) to missing sources removed[/dim]", highlight=False)
    if answer.notice:
        err.print(f"[yellow]{escape(answer.notice)}[/yellow]", highlight=False)
    if answer.named_documents:
        err.print(
            f"[dim]searched mainly in {escape(', '.join(titles.get(n, n) for n in answer.named_documents))}: "
            "the question names it[/dim]",
            highlight=False,
        )
    if answer.continued_documents:
        err.print(
            f"[dim]searched mainly in {escape(', '.join(titles.get(n, n) for n in answer.continued_documents))}: "
            "the answer before it came from there[/dim]",
            highlight=False,
        )
    if answer.social:  # "thanks", "hello": nothing was searched
        return
    title = "Closest passages" if answer.refused else "Sources"
    out.print(f"\n[bold]{title}[/bold]", highlight=False)
    shown = answer.shown_citations
    for c in shown:
        if answer.refused or not c.cited:
            mark = ""
        else:
            mark = " [green]✓ verified[/green]" if c.verified else " [yellow]unverified[/yellow]"
        notes = ""
        note = c.referenced_note(len(shown))
        if note:
            notes += f"  {note}"
        if c.same_text_in:
            notes += f"  same text in: {'; '.join(c.same_text_in)}"
        if c.ocr_confidence is not None:
            notes += f"  text read by OCR ({c.ocr_confidence:.0f}%): compare with the page"
        out.print(f"{escape(f'[{c.n}] {c.label}')}  score {c.score:.2f}{mark}{escape(notes)}", highlight=False)
    if answer.edition_note:
        out.print(f"\n[yellow]{escape(answer.edition_note)}[/yellow]", highlight=False)
    if answer.earlier_edition is not None:
        out.print(f"{escape('[earlier edition] ' + answer.earlier_edition.file_label)}", highlight=False)
    llm = answer.llm
    err.print(
        f"[dim]{answer.mode}; {llm.calls} LLM call(s), {llm.prompt_tokens} prompt + {llm.output_tokens} output tokens; "
        f"{sum(answer.timings.values()):.2f} s; expansion {escape(answer.expansion)}[/dim]",
        highlight=False,
    )


@app.command("kiosk-units")
def kiosk_units(
    ctx: typer.Context,
    out: Path = typer.Option(Path("."), "--out", help="Folder to write the two systemd units in."),
    user: str = typer.Option(..., "--user", help="The account the app and the browser run as."),
    port: int = typer.Option(8501, "--port", min=1, max=65535, help="The app's port (127.0.0.1 only)."),
    browser: str = typer.Option("/usr/bin/chromium", "--browser", help="The Chromium executable."),
) -> None:
    """Write the systemd units of a field kiosk: the app, started at boot and restarted if it dies,
    and Chromium in kiosk mode on it. Then: sudo cp them to /etc/systemd/system and
    `sudo systemctl enable --now policybot-kiosk-browser.service`."""
    from policybot.deploy import KioskPlan, write_units

    app_dir = Path(__file__).resolve().parents[1]
    if not (app_dir / "app.py").is_file():
        _fail(f"app.py is not beside the installed package ({app_dir}): install PolicyBot from its folder (-e .)")
    settings = _settings(ctx)
    plan = KioskPlan(
        app_dir=app_dir,
        venv=Path(sys.prefix),
        home=settings.home.resolve(),
        user=user,
        port=port,
        browser=browser,
        idle_minutes=settings.kiosk_idle_minutes,
    )
    for path in write_units(plan, out):
        out_path = escape(str(path))
        err.print(f"wrote {out_path}", highlight=False)


@app.command()
def doctor(
    ctx: typer.Context,
    repair: bool = typer.Option(False, "--repair", help="Remove leftovers of interrupted ingestions."),
    as_json: bool = typer.Option(False, "--json", help="Print the DoctorReport as JSON."),
) -> None:
    """Check models, index and Ollama; print the command that fixes each problem."""
    from policybot.doctor import run_checks

    report = run_checks(_service(ctx), repair=repair)
    if as_json:
        _print_json(report)
    else:
        out.print(f"profile: [bold]{report.profile}[/bold] — {report.profile_reason}", highlight=False)
        for c in report.checks:
            mark = "[green]ok[/green]  " if c.ok else ("[red]FAIL[/red]" if c.required else "[yellow]warn[/yellow]")
            out.print(f"{mark} {c.name}: {c.detail}", highlight=False)
            if c.fix:
                out.print(f"      fix: {c.fix}", highlight=False)
    if not report.ok:
        raise typer.Exit(1)


@app.command("eval")
def eval_command(
    ctx: typer.Context,
    datasets: Optional[List[Path]] = typer.Argument(
        None, help="Dataset folders: docs/*.pdf + questions.jsonl, or docs/*.pdf + issues.jsonl (evidence mode)."
    ),
    marks: bool = typer.Option(
        False,
        "--marks",
        help="Also evaluate the reviewers' marks kept in this library, written as a set to OUT/marks-set.",
    ),
    config: Optional[List[str]] = typer.Option(
        None,
        "--config",
        help="Configuration name (repeatable). Default: hybrid and fast; for an evidence set "
        "evidence-single, evidence-planner and evidence-react.",
    ),
    grid: bool = typer.Option(False, "--grid", help="Run every configuration (ablations)."),
    out_dir: Path = typer.Option(Path("eval/results"), "--out", help="Results folder."),
    cache: Path = typer.Option(Path(".policybot-eval"), "--cache", help="Where evaluation indexes are kept."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Only the first N questions or issues (smoke runs)."),
) -> None:
    """Measure retrieval, refusals, citations and cost on evaluation datasets, or evidence-mode
    clause recall on evidence sets (issues.jsonl)."""
    missing = [m for m in ("ranx", "matplotlib", "rouge_score") if importlib.util.find_spec(m) is None]
    if missing:
        _fail(f"policybot eval needs {', '.join(missing)}: run `pip install -e '.[eval]'` (or `make eval`)")
    from policybot.evaluation.evidence import EVIDENCE_CONFIGS, is_evidence_dataset
    from policybot.evaluation.harness import CONFIGS, GRID, run_grid

    datasets = list(datasets or [])
    if marks:
        datasets.append(_marks_set(ctx, out_dir / "marks-set"))
    if not datasets:
        _fail("name a dataset folder, or give --marks to evaluate the reviewers' marks")
    evidence_sets = [d for d in datasets if is_evidence_dataset(d)]
    evidence_names = list(EVIDENCE_CONFIGS) if grid or not config else config
    names = GRID if grid else (config or ["hybrid", "fast"])
    for dataset in datasets:
        known, wanted = (EVIDENCE_CONFIGS, evidence_names) if dataset in evidence_sets else (CONFIGS, names)
        unknown = [n for n in wanted if n not in known]
        if unknown:
            _fail(f"{dataset}: unknown configuration(s): {', '.join(unknown)} (choose from {', '.join(known)})")
        if dataset not in evidence_sets and not (dataset / "questions.jsonl").is_file():
            _fail(f"{dataset}: not an eval dataset (needs docs/ and questions.jsonl, or issues.jsonl)")
    for dataset in evidence_sets:
        _eval_evidence(ctx, dataset, evidence_names, out_dir, cache, limit)
    say = lambda m: err.print(f"[dim]{m}[/dim]", highlight=False)  # noqa: E731
    for dataset in [d for d in datasets if d not in evidence_sets]:
        results, report = run_grid(dataset, names, out_dir, cache, limit, _settings(ctx), say=say)
        for r in results:
            out.print(_eval_line(r), highlight=False)
        out.print(f"report: {report}", highlight=False)


def _marks_set(ctx: typer.Context, out: Path) -> Path:
    """The library's citation marks written as an eval set; fails with a line when there are none."""
    from policybot.evaluation.marks import write_marks_set

    bot = _service(ctx)
    kept = bot.components.feedback.marks()
    if not kept:
        _fail("no citation marks in this library yet: mark sources right or wrong in the app's answers first")
    made = write_marks_set(kept, bot.library.stored_pdf, out)
    err.print(f"marks: {made.summary()} -> {out}", highlight=False)
    if not made.questions:
        _fail("none of the marks can be tested (each needs a right source, or the page of the right passage)")
    return out


def _eval_line(r: dict[str, Any]) -> str:
    """One configuration's result on one set, in a line."""
    if "skipped" in r:
        return f"{r['dataset']} / {r['config']}: skipped — {r['skipped']}"
    m, ref = r["metrics"]["retrieval"], r["metrics"]["refusal"]
    line = (
        f"{r['dataset']} / {r['config']}: R@1 {m.get('R@1', 0):.3f} R@5 {m.get('R@5', 0):.3f} "
        f"R@10 {m.get('R@10', 0):.3f} MRR@10 {m.get('mrr@10', 0):.3f} nDCG@10 {m.get('ndcg@10', 0):.3f}; "
        f"refusal AUROC {ref.get('auroc')}"
    )
    if "false_refusal_rate" in ref:
        line += (
            f"; refused: answerable {ref.get('false_refusal_rate')}, "
            f"out of scope {ref.get('out_of_scope_refusal_rate')}"
        )
    return line


def _eval_evidence(
    ctx: typer.Context, dataset: Path, names: List[str], out_dir: Path, cache: Path, limit: Optional[int]
) -> None:
    """Evidence mode on an evidence set (issues.jsonl): clause recall of each configuration."""
    from policybot.evaluation.evidence import EvidenceDatasetError, run_evidence, summary_line

    try:
        results, report = run_evidence(
            dataset,
            names,
            out_dir,
            cache,
            limit,
            _settings(ctx),
            say=lambda m: err.print(f"[dim]{escape(m)}[/dim]", highlight=False),
        )
    except EvidenceDatasetError as exc:
        _fail(str(exc))
    for r in results:
        out.print(summary_line(r), highlight=False, markup=False)
    out.print(f"report: {report}", highlight=False)


@models_app.command("pull")
def models_pull(
    ctx: typer.Context,
    profile: str = typer.Option("paper", "--profile", help="Profile whose models to download."),
) -> None:
    """Download a profile's models into POLICYBOT_MODELS_DIR and pull its LLM into Ollama."""
    from policybot.models.downloads import pull_profile
    from policybot.models.profiles import PROFILES

    if profile not in PROFILES:
        _fail(f"unknown profile '{profile}' (choose from {', '.join(PROFILES)})")
    os.environ.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)  # downloads should show their bars
    settings = _settings(ctx)
    last: dict[str, str] = {}

    def on_event(event: Any) -> None:
        line = event.status
        if event.total:
            line += f" {100 * (event.completed or 0) / event.total:.0f}%"
        if last.get(event.model) != line:
            last[event.model] = line
            err.print(f"{event.model}: {line}", highlight=False)

    problems = pull_profile(PROFILES[profile], settings, on_event)
    for problem in problems:
        err.print(f"[red]problem:[/red] {problem}", highlight=False)
    if problems:
        raise typer.Exit(1)
    out.print(f"profile {profile} is ready offline (models in {settings.resolved_models_dir})", highlight=False)


@models_app.command("export-onnx")
def models_export_onnx(
    ctx: typer.Context,
    profile: str = typer.Option(
        "", "--profile", help="Profile whose embedding model to export (default: the one in use)."
    ),
) -> None:
    """Export the embedding model to ONNX (fp32 and int8) from its local weights, for a fast start
    without torch; checked against torch's vectors before it is used."""
    from policybot.models.onnx import OnnxUnavailable, export_onnx
    from policybot.models.profiles import EMBEDDING_MODELS, PROFILES, resolve_profile

    settings = _settings(ctx)
    if profile and profile not in PROFILES:
        _fail(f"unknown profile '{profile}' (choose from {', '.join(PROFILES)})")
    model = PROFILES[profile].embedding if profile else resolve_profile(settings).profile.embedding
    model = EMBEDDING_MODELS[model.base_name]
    try:
        report = export_onnx(model, settings, say=lambda step: err.print(f"{model.name}: {step}", highlight=False))
    except OnnxUnavailable as exc:
        _fail(str(exc))
    out.print(
        f"{model.name} exported to {report.folder} in {report.seconds:.0f} s; vectors against torch: "
        f"fp32 lowest cosine {report.fp32_min_cosine:.6f} (the same vectors: `auto` uses it on a CPU), "
        f"int8 lowest {report.int8_min_cosine:.4f}, mean {report.int8_mean_cosine:.4f} "
        "(POLICYBOT_EMBEDDING_BACKEND=onnx-int8: an index of its own)",
        highlight=False,
    )


def main() -> None:
    """The ``policybot`` command. A usage error (an unknown option, a bad value) under ``--json``
    is also written to stdout as ``{"error": {...}}``, so a script reading stdout never gets nothing."""
    try:  # Typer 0.29 carries its own copy of Click; earlier versions use Click itself
        from typer._click.exceptions import ClickException
    except ImportError:  # pragma: no cover - depends on the installed Typer
        from click.exceptions import ClickException  # type: ignore[assignment]

    try:
        code = app(standalone_mode=False)
    except ClickException as exc:
        if _json_mode():
            _print_json_error("usage", exc.format_message())
        exc.show()
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()

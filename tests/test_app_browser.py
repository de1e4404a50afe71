"""End to end in a real browser: the Streamlit app answers a question, and the first citation
opens on its highlighted quote and the rendered PDF page.

The Evidence page is driven the same way (a table of quotes, a row opening its page).

Drives Debian's `chromium` (never a browser downloaded by `playwright install`) through the
Playwright Python package. Skipped, with the reason, when either is missing; `make test`
installs chromium with apt-get when it can (`make browser`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from policybot.service import PolicyBot
from tests.conftest import NO_OLLAMA, SAMPLE_POLICY, make_settings, sample_home

# One test process runs them all under `pytest -n`: they share one app server (``shared_app``).
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

ROOT = Path(__file__).resolve().parents[1]
DOC = SAMPLE_POLICY.name  # homeshield-household-policy.pdf
TITLE = "HomeShield Household Policy"  # what a person reads in a source's label
QUESTION = "How does the deductible apply to water damage?"
# Read at import: the autouse _isolated_env fixture removes every POLICYBOT_* variable.
SCREENSHOT_DIR = os.environ.get("POLICYBOT_SCREENSHOT_DIR")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SERVER_START_S = 90
# The first question loads the embedding model and the index (~20 s on 2 CPU cores).
ANSWER_TIMEOUT_MS = 180_000


def chromium_path() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None)
    if not path:
        pytest.skip("Debian's chromium is not installed (run `make browser` as root, or `apt-get install chromium`)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_tail(log: Path, lines: int = 40) -> str:
    text = log.read_text(errors="replace") if log.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def wait_for_http(url: str, server: subprocess.Popen, log: Path, timeout: float = SERVER_START_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"streamlit exited with code {server.returncode} before answering:\n{log_tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    pytest.fail(f"streamlit did not answer on {url} within {timeout:.0f} s:\n{log_tail(log)}")


def stop(server: subprocess.Popen) -> None:
    if server.poll() is not None:
        return
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=15)


def fit_viewport_to_content(page) -> None:
    """Streamlit scrolls an inner container, so a full-page screenshot only shows the window:
    grow the window to the content's height first."""
    measure = """() => Math.max(document.documentElement.scrollHeight,
        ...Array.from(document.querySelectorAll('*')).map(e => {
            const s = getComputedStyle(e).overflowY;
            return (s === 'auto' || s === 'scroll') ? e.scrollHeight : 0;
        }))"""
    for _ in range(4):  # resizing re-lays out the page: repeat until the height settles
        size = page.viewport_size
        height = min(max(size["height"], int(page.evaluate(measure)) + 160), 8000)
        if height == size["height"]:
            break
        page.set_viewport_size({"width": size["width"], "height": height})
        page.wait_for_timeout(1000)


def test_question_answer_and_citation_in_browser(shared_app, tmp_path):
    """The shared app runs with the flags `make run` used to pass (``MAKE_RUN_FLAGS``)."""
    executable = chromium_path()
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the playwright package is not installed (pip install -e '.[dev]')"
    )
    url, log = shared_app
    shot = tmp_path / "answer.png"
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport={"width": 1400, "height": 1000}, permissions=["clipboard-read", "clipboard-write"]
            )
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(url)

            chat = page.get_by_test_id("stChatInputTextArea")
            chat.wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
            chat.fill(QUESTION)
            chat.press("Enter")

            expanders = page.locator("details").filter(has=page.locator("summary", has_text=TITLE))
            first = expanders.first
            first.locator("summary").wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
            title = first.locator("summary").inner_text()
            assert TITLE in title and "p.11" in title and DOC not in title, (
                f"first citation: {title!r}\n{log_tail(log)}"
            )

            first.locator("summary").click()
            quote = first.locator("mark").first  # the quote; the conditions it depends on are marked after it
            quote.wait_for(state="visible")
            image = first.locator('[data-testid="stImage"] img')
            image.wait_for(state="visible")
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())

            assert first.get_attribute("open") is not None
            body = page.locator("body").inner_text()
            assert QUESTION in body
            assert DOC in body and "p.11" in body
            assert "$750" in quote.inner_text()
            assert image.evaluate("img => img.naturalWidth") > 200
            assert TITLE in first.inner_text() and DOC in first.inner_text()  # the caption; the reviewer's detail
            # The app serves the PDF itself, for the browser's viewer to open at the page.
            opener = first.get_by_role("link", name="Open the PDF at page 11")
            href = opener.get_attribute("href")
            assert href and href.endswith(".pdf#page=11"), href
            import urllib.request

            with urllib.request.urlopen(url + href.split("#")[0].lstrip("/")) as served:
                assert served.headers["Content-Type"] == "application/pdf"
                assert served.read() == SAMPLE_POLICY.read_bytes()

            fit_viewport_to_content(page)
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.is_file() and shot.stat().st_size > 20_000, (
        f"screenshot too small: {shot.stat().st_size if shot.exists() else 'missing'}"
    )
    if SCREENSHOT_DIR:
        Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
        shutil.copy2(shot, Path(SCREENSHOT_DIR) / shot.name)


class Tracker:
    """A local HTTP listener standing in for a tracking server: it logs every request."""

    def __init__(self) -> None:
        import http.server
        import threading

        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def start_app(
    home: Path, tmp_path: Path, extra_args: list[str] = (), env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str, Path]:
    """`streamlit run app.py` as a user would type it: the server settings come from the
    project's .streamlit/config.toml, not from flags."""
    port = free_port()
    env = dict(
        os.environ,
        POLICYBOT_HOME=str(home),
        POLICYBOT_MODELS_DIR=str(home / "models"),
        POLICYBOT_PROFILE="lite",
        OLLAMA_HOST=NO_OLLAMA,
        HF_HUB_OFFLINE="1",
        PYTHONUNBUFFERED="1",
        **(env or {}),
    )
    log = tmp_path / "streamlit.log"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        *extra_args,
    ]
    with log.open("wb") as out:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    wait_for_http(url, server, log)
    return server, url, log


def test_document_and_file_names_cannot_plant_links_or_call_out(tmp_path):
    """Issue 8: Markdown, HTML and scripts inside a PDF, and in uploaded file names, are shown
    as text; the browser makes no request anywhere but the app."""
    from tests import pdfs

    executable = chromium_path()
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the playwright package is not installed (pip install -e '.[dev]')"
    )
    tracker = Tracker()
    home = tmp_path / "home"
    report = PolicyBot(make_settings(home)).ingest([pdfs.hostile_markdown_pdf(tmp_path / "ponds.pdf", tracker.url)])
    assert [o.status for o in report.outcomes] == ["ingested"], report.model_dump_json()
    server, url, log = start_app(home, tmp_path)
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(60_000)
                requests: list[str] = []
                page.on("request", lambda r: requests.append(r.url))
                page.goto(url)
                chat = page.get_by_test_id("stChatInputTextArea")
                chat.wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
                chat.fill("Are garden ponds covered for storm damage?")
                chat.press("Enter")
                panel = page.locator("details").filter(has=page.locator("summary", has_text="Garden ponds")).first
                panel.locator("summary").wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
                panel.locator("summary").click()
                panel.locator('[data-testid="stImage"] img').wait_for(state="visible")

                # Upload files whose names carry Markdown, a path and an overlong name.
                hostile_name = f"![x]({tracker.url}/pixel-from-name.png) [y](javascript:alert(5)).pdf"
                pdf = pdfs.simple_pdf(tmp_path / "u.pdf", ["Bicycles are covered away from home."]).read_bytes()
                files = [
                    {"name": hostile_name, "mimeType": "application/pdf", "buffer": pdf},
                    {
                        "name": "n" * 240 + ".pdf",
                        "mimeType": "application/pdf",
                        "buffer": pdfs.simple_pdf(tmp_path / "v.pdf", ["Sheds."]).read_bytes(),
                    },
                ]
                page.get_by_role("link", name="Library", exact=True).click()  # the top navigation
                page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(files)
                page.get_by_role("button", name="Add to library").click()
                page.get_by_text("pixel-from-name.png y javascript alert 5.pdf", exact=False).first.wait_for(
                    timeout=ANSWER_TIMEOUT_MS
                )
                page.wait_for_timeout(1500)
                library_body = page.locator("body").inner_text()

                # Back in the chat, the conversation is as it was, document text shown as text.
                page.get_by_role("link", name="Chat", exact=True).click()
                panel.locator("summary").wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
                body = page.locator("body").inner_text() + library_body
                assert f"![pixel]({tracker.url}/track.png)" in " ".join(body.split()), body[:2000]
                assert page.evaluate("() => window.pwned") is None
                planted = page.evaluate(
                    r"""(tracker) => [
                        ...Array.from(document.querySelectorAll('img')).map(e => e.src)
                            .filter(s => s.includes(tracker) || s.endsWith('/x')),
                        ...Array.from(document.querySelectorAll('a')).map(e => e.getAttribute('href') || '')
                            .filter(h => /^(https?:|javascript:|mailto:|www\.)/i.test(h)
                                && !h.startsWith(location.origin)),
                        ...Array.from(document.querySelectorAll('script')).map(e => e.textContent)
                            .filter(t => t.includes('pwned')),
                    ]""",
                    tracker.url,
                )
                assert planted == [], planted
                assert "Traceback" not in body and "File name too long" not in body
                if SCREENSHOT_DIR:
                    fit_viewport_to_content(page)
                    Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(Path(SCREENSHOT_DIR) / "hostile.png"), full_page=True)
            finally:
                browser.close()
        origin = url.rstrip("/")
        outside = [r for r in requests if not r.startswith((origin, "data:", "blob:"))]
        assert outside == [], outside
        assert tracker.hits == [], tracker.hits
    finally:
        stop(server)
        tracker.close()


def test_evidence_table_in_browser(shared_app):
    """The Evidence page: the issue is collected step by step into a table; selecting a row
    opens its passage on the page image; the browser makes no request but to the app."""
    url, log = shared_app
    requests: list[str] = []
    with chat_page(url, log, 1400, 1000, on_request=lambda r: requests.append(r.url)) as (page, _, log):
        page.get_by_role("link", name="Evidence", exact=True).click()  # the top navigation
        issue = page.get_by_label("Issue", exact=True)
        issue.wait_for(state="visible")
        assert page.get_by_test_id("stChatInputTextArea").count() == 0  # the chat is not drawn here
        issue.fill("escape of water")
        page.get_by_role("button", name="Collect evidence").click()

        grid = page.get_by_test_id("stDataFrame")
        grid.wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
        # The grid draws on a canvas; its accessible copy holds the cells' text.
        page.wait_for_function("g => g.textContent.includes('2.5 Escape of water')", arg=grid.element_handle())
        cells = grid.text_content()
        assert (
            "Section 2 Buildings Cover > 2.5 Escape of water" in cells and "5.2 Escape of water deductible" in cells
        ), cells[:1000]
        body = page.locator("body").inner_text()
        assert "collected by the deterministic planner (no LLM)" in body, f"{body[:2000]}\n{log_tail(log)}"
        assert page.get_by_role("button", name="Download CSV").is_visible()
        steps = page.locator("details").filter(has=page.locator("summary", has_text="Step 1: Search[escape of water]"))
        steps.first.wait_for(state="visible")  # the trace, below the table and the panels
        assert steps.count() == 1

        # Select row 2 (its row marker, left of the first column): its panel opens.
        box = grid.bounding_box()
        header, row_height = 35, 84  # Streamlit's header row; the table's tall rows (quotes wrap)
        page.mouse.click(box["x"] + 15, box["y"] + header + row_height + row_height / 2)
        opened = page.locator("details[open]").filter(has=page.locator("summary", has_text=TITLE))
        opened.first.locator("mark").first.wait_for(state="visible")
        assert opened.count() == 1
        title = opened.first.locator("summary").inner_text()
        assert "[2]" in title and "2.5 Escape of water" in title and "verified" not in title, title
        images = opened.first.locator('[data-testid="stImage"] img')
        image = images.first
        image.wait_for(state="visible")
        page.wait_for_function("img => img.complete && img.naturalWidth > 200", arg=image.element_handle())
        assert images.count() == 2  # 2.5 runs over pages 4 and 5: both are shown
        assert "Traceback" not in page.locator("body").inner_text()
        if SCREENSHOT_DIR:
            fit_viewport_to_content(page)
            Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SCREENSHOT_DIR) / "evidence.png"), full_page=True)
    origin = url.rstrip("/")
    outside = [r for r in requests if not r.startswith((origin, "data:", "blob:"))]
    assert outside == [], outside


# How many finished answers (with their buttons under them) the page shows, at least.
ANSWERED = """n => [...document.querySelectorAll('[data-testid="stChatMessage"]')]
    .filter(m => m.querySelector('[class*="st-key-answered-"]')).length >= n"""
HOSPITAL = [
    "Someone stole my bike from the garden. Am I covered?",
    "My son knocked the TV over and broke it, is that covered?",
    "I was in hospital for 2 months and the house was empty. Does that matter?",
    "and if it was only 3 weeks?",
]


# The flags `make run` used to pass, on top of .streamlit/config.toml (they must agree). No file
# watcher: nothing is edited during the tests, and watching the repo floods the log.
MAKE_RUN_FLAGS = [
    "--server.headless",
    "true",
    "--browser.gatherUsageStats",
    "false",
    "--server.fileWatcherType",
    "none",
]


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory):
    """One app on the sample policy for the drives that only read the library, as a kiosk serves
    one visitor after another: each drive opens its own browser, so its own session. (url, log)"""
    chromium_path()
    tmp = tmp_path_factory.mktemp("shared-app")
    server, url, log = start_app(sample_home(tmp / "home"), tmp, MAKE_RUN_FLAGS)
    try:
        yield url, log
    finally:
        stop(server)


def watch_troubles(page) -> list[str]:
    """What the browser sees go wrong on ``page`` (script errors, failed requests, the server's
    connection opening and closing), kept for a failure's message: a blank page says nothing."""
    troubles: list[str] = []
    page.on("console", lambda m: troubles.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: troubles.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: troubles.append(f"failed {r.url}: {r.failure}"))
    page.on("response", lambda r: troubles.append(f"{r.status} {r.url}") if r.status >= 400 else None)

    def on_websocket(socket) -> None:
        troubles.append(f"websocket {socket.url}")
        socket.on("close", lambda _: troubles.append("websocket closed"))

    page.on("websocket", on_websocket)
    return troubles


@contextmanager
def chat_page(url: str, log: Path, width: int = 1280, height: int = 720, on_request=None):
    """A new browser on the app, its chat box ready: (page, chat box, server log)."""
    executable = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(60_000)
            if on_request is not None:
                page.on("request", on_request)
            troubles = watch_troubles(page)
            page.goto(url)
            chat = page.get_by_test_id("stChatInputTextArea")
            try:
                chat.wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
            except sync_api.TimeoutError:
                body = page.locator("body").inner_text()
                pytest.fail(
                    f"no chat box within {ANSWER_TIMEOUT_MS // 1000} s; the page read:\n{body}\n"
                    + "\n".join(dict.fromkeys(troubles))  # each trouble once, in order
                    + f"\n{log_tail(log)}"
                )
            yield page, chat, log
        finally:
            browser.close()


@contextmanager
def sample_chat(tmp_path: Path, width: int = 1280, height: int = 720, env: dict[str, str] | None = None):
    """An app of its own on the sample policy (for drives that change its settings or its library),
    in Chromium, its chat box ready: (page, chat box, server log)."""
    chromium_path()
    server, url, log = start_app(sample_home(tmp_path / "home"), tmp_path, env=env)
    try:
        with chat_page(url, log, width, height) as ready:
            yield ready
    finally:
        stop(server)


def type_question(page, chat, question: str, turn: int) -> None:
    """Type a question, press Enter, and wait until the ``turn``-th answer is shown."""
    chat.wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
    chat.fill(question)
    chat.press("Enter")
    page.wait_for_function(ANSWERED, arg=turn, timeout=ANSWER_TIMEOUT_MS, polling=500)


def test_the_hospital_conversation_never_snowballs_in_browser(shared_app):
    """Issue 20: four turns typed into the chat; the follow-up is searched with the previous user
    question only, and one click searches it on its own."""
    with chat_page(*shared_app) as (page, chat, log):
        for turn, question in enumerate(HOSPITAL, start=1):
            type_question(page, chat, question, turn)
        searched = page.get_by_text("Searched as:", exact=False)
        texts = [searched.nth(i).inner_text() for i in range(searched.count())]
        # Never a snowball: a searched-as text is at most the previous user question and this one.
        assert texts and all(t.count("; ") <= 1 for t in texts), texts
        assert not any("bike" in t.lower() and "hospital" in t.lower() for t in texts), texts
        assert any(t.endswith("Does that matter; and if it was only 3 weeks?") for t in texts), texts
        if SCREENSHOT_DIR:
            Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SCREENSHOT_DIR) / "follow-up.png"))
        page.get_by_role("button", name="Search my question on its own").click()
        page.wait_for_function(
            "() => !document.body.innerText.includes('Search my question on its own')",
            timeout=ANSWER_TIMEOUT_MS,
        )
        page.wait_for_function(ANSWERED, arg=4, timeout=ANSWER_TIMEOUT_MS)
        page.wait_for_timeout(1500)
        assert page.get_by_role("button", name="Search my question on its own").count() == 0
        body = page.locator("body").inner_text()
        assert body.count("and if it was only 3 weeks?") == 1, log_tail(log)  # replaced, not added
        assert "Traceback" not in body


SLOW_LEAK = "A slow leak under the sink ruined my kitchen floor. Will you pay?"


def test_the_slow_leak_answer_leads_with_the_exclusion_in_browser(shared_app):
    """Issue 21: the clause that decides a coverage question comes first, labelled Not covered,
    and its panel highlights that item; asked next "…only 3 weeks?" after an empty-house question,
    the definition of Unoccupied is quoted."""
    with chat_page(*shared_app, height=900) as (page, chat, log):
        type_question(page, chat, SLOW_LEAK, 1)
        message = page.get_by_test_id("stChatMessage").nth(1)
        first = next(line for line in message.inner_text().splitlines() if line.startswith("1. "))
        assert first.startswith('1. Not covered: "What is not covered … (c) Damage caused by water'), first + log_tail(
            log
        )
        panel = message.locator("details").filter(has=page.locator("summary", has_text="Not covered")).first
        summary = panel.locator("summary")
        assert "2.5 Escape of water" in summary.inner_text()
        summary.click()
        marks = panel.locator("mark")
        marks.first.wait_for(state="visible")
        # The item is highlighted; a second quote of the same passage may be too (2.5(b), "…sinks").
        assert any(m.startswith("(c) Damage caused by water escaping gradually") for m in marks.all_inner_texts())
        if SCREENSHOT_DIR:
            Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SCREENSHOT_DIR) / "slow-leak.png"))

        for turn, question in enumerate(HOSPITAL[2:], start=2):
            type_question(page, chat, question, turn)
        last = page.get_by_test_id("stChatMessage").last.inner_text()
        assert 'Definition: "The Home has not been lived in' in last and "60 consecutive days" in last, last
        if SCREENSHOT_DIR:
            page.screenshot(path=str(Path(SCREENSHOT_DIR) / "three-weeks.png"))


DRAFT = "my private draft: my address is 12 Elm St"


def test_the_next_kiosk_visitor_finds_nothing_of_the_last_in_browser(tmp_path):
    """Issue 23: a visitor asks, starts typing another question and walks away. A countdown warns
    first ("I'm still here" keeps the page); then the page is reset, and the next visitor finds
    neither the conversation nor the unsent draft, nor any note about them."""
    kiosk = {"POLICYBOT_KIOSK": "1", "POLICYBOT_KIOSK_IDLE_MINUTES": "0.25"}  # 15 s idle, a 3.75 s countdown
    with sample_chat(tmp_path, env=kiosk) as (page, chat, log):
        type_question(page, chat, QUESTION, 1)
        chat.fill(DRAFT)  # typed, never sent: the server cannot see it
        countdown = page.get_by_text("Still there? This page clears for the next visitor in", exact=False)
        countdown.wait_for(state="visible", timeout=60_000)
        page.get_by_role("button", name="I'm still here").click()
        countdown.wait_for(state="hidden", timeout=10_000)
        assert QUESTION in page.locator("body").inner_text()  # the visitor who stayed keeps the page

        countdown.wait_for(state="visible", timeout=60_000)
        if SCREENSHOT_DIR:
            Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SCREENSHOT_DIR) / "kiosk-countdown.png"))
        page.wait_for_function("q => !document.body.innerText.includes(q)", arg=QUESTION, timeout=60_000, polling=500)
        chat = page.get_by_test_id("stChatInputTextArea")
        # The new visit's box replaces the old one; on a loaded machine both are briefly on the page.
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=\"stChatInputTextArea\"]').length === 1", timeout=60_000
        )
        chat.wait_for(state="visible")
        page.wait_for_timeout(1000)
        body = page.locator("body").inner_text()
        assert chat.input_value() == "", "the unsent draft survived the reset"
        assert "12 Elm St" not in body and "cleared" not in body.lower() and "Traceback" not in body, body
        assert page.get_by_test_id("stChatMessage").count() == 0
        assert f"Ask about {TITLE}" in body  # greeted as the first visitor was
        assert ".pdf" not in body and "passages" not in body, "a visitor sees no file names or chunk counts"
        if SCREENSHOT_DIR:
            page.screenshot(path=str(Path(SCREENSHOT_DIR) / "kiosk-next-visitor.png"))

        type_question(page, chat, "What is not covered?", 1)  # the next visitor's own first answer
        assert QUESTION not in page.locator("body").inner_text(), log_tail(log)


def settled_width(page, image, timeout_s: float = 15.0) -> float:
    """The image's drawn width once it has one: a rerun can replace the image element just after
    it was first seen (its box is then briefly empty), so the locator is read again until it is."""
    width = 0.0
    for _ in range(int(timeout_s * 4)):
        width = image.evaluate("img => img.getBoundingClientRect().width")
        if width > 0:
            return width
        page.wait_for_timeout(250)
    return width


def open_panel(panel) -> None:
    """Open a source panel and wait for its page image. A click that lands while the answer is
    still being drawn again (its rerun) can be lost, so it is tried again; a panel the browser
    kept open over a reload is left open."""
    image = panel.locator('[data-testid="stImage"] img').first
    for _ in range(5):
        if panel.get_attribute("open") is None:
            panel.locator("summary").click()
        try:
            image.wait_for(state="visible", timeout=10_000)
            return
        except Exception:  # noqa: BLE001 - playwright's timeout: try the click again
            continue
    image.wait_for(state="visible")


def test_a_citizen_and_a_reviewer_at_three_screen_sizes_in_browser(shared_app, tmp_path):
    """Issue 22: the same conversation at 1400×1000, 1280×720 and 390×844 (each a reload, which
    reopens it from the address): the source's page cropped to the quote, buttons whole at 1280,
    and on a phone a readable page image and evidence cards instead of the grid."""
    with chat_page(*shared_app, width=1400, height=1000) as (page, chat, log):
        type_question(page, chat, SLOW_LEAK, 1)
        assert "?c=" in page.url, page.url  # the conversation is named in the address
        message = page.get_by_test_id("stChatMessage").nth(1)
        panel = message.locator("details").filter(has=page.locator("summary", has_text="Not covered")).first
        open_panel(panel)
        image = panel.locator('[data-testid="stImage"] img').first
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
        width, height = image.evaluate("img => [img.naturalWidth, img.naturalHeight]")
        assert height < width, (width, height)  # a band around the quote, not the whole page
        shots = Path(SCREENSHOT_DIR) if SCREENSHOT_DIR else tmp_path
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "size-1400.png"))

        page.set_viewport_size({"width": 1280, "height": 720})
        page.reload()
        page.get_by_text(SLOW_LEAK).first.wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)  # reopened
        for name in ("New conversation", "Export Markdown", "Export JSON"):
            button = page.get_by_role("button", name=name).first
            assert button.evaluate("b => b.scrollWidth <= b.clientWidth + 1"), f"{name} is cut at 1280 px"
        page.screenshot(path=str(shots / "size-1280.png"))

        page.set_viewport_size({"width": 390, "height": 844})
        page.reload()
        page.get_by_text(SLOW_LEAK).first.wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
        message = page.get_by_test_id("stChatMessage").nth(1)
        panel = message.locator("details").filter(has=page.locator("summary", has_text="Not covered")).first
        panel.locator("summary").wait_for(state="visible")
        open_panel(panel)
        image = panel.locator('[data-testid="stImage"] img').first
        assert settled_width(page, image) >= 600  # readable; it scrolls sideways
        caption = panel.get_by_text("quote highlighted").first  # below the image, wrapped within the panel
        right = "e => e.getBoundingClientRect().right"
        assert caption.evaluate(right) <= panel.evaluate(right) + 1, "the page's caption is cut on a phone"
        page.screenshot(path=str(shots / "size-390.png"))

        page.goto(page.url.split("?")[0] + "evidence")
        issue = page.get_by_label("Issue", exact=True)
        issue.wait_for(state="visible")
        issue.fill("escape of water")
        page.get_by_role("button", name="Collect evidence").click()
        cards = page.locator(".st-key-evidence-cards")
        cards.wait_for(state="visible", timeout=ANSWER_TIMEOUT_MS)
        assert not page.locator(".st-key-evidence-grid").is_visible()  # the grid is for wide screens
        assert "Limit · HomeShield Household Policy" in cards.inner_text()
        page.screenshot(path=str(shots / "size-390-evidence.png"))
        assert "Traceback" not in page.locator("body").inner_text(), log_tail(log)


def test_a_reviewer_checks_a_two_page_passage_and_marks_it_wrong_in_browser(tmp_path):
    """Issue 22's reviewer drive: open a passage over two pages and see both, each cropped to its
    part; open the PDF at the page (served by the app); mark the source wrong with the right page;
    then the mark, as `policybot eval --marks` writes it, is a regression question gold by that page."""
    import json

    from policybot.evaluation.marks import write_marks_set

    timeout = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").TimeoutError

    with sample_chat(tmp_path, width=1400, height=1000) as (page, chat, log):
        type_question(page, chat, SLOW_LEAK, 1)
        message = page.get_by_test_id("stChatMessage").nth(1)
        panel = message.locator("details").filter(has=page.locator("summary", has_text="pp.4-5")).first
        open_panel(panel)
        images = panel.locator('[data-testid="stImage"] img')
        page.wait_for_function("n => n >= 2", arg=images.count())
        assert images.count() == 2, log_tail(log)  # page 4 and page 5
        for i in range(2):
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=images.nth(i).element_handle())
            width, height = images.nth(i).evaluate("img => [img.naturalWidth, img.naturalHeight]")
            assert height < width  # each cropped to the passage's part of its page

        link = panel.get_by_role("link", name="Open the PDF at page 4")
        href = link.get_attribute("href")
        assert href and href.endswith("#page=4"), href
        served = page.request.get(page.url.split("?")[0].rstrip("/") + "/" + href.split("#")[0].lstrip("/"))
        assert served.ok and served.body().startswith(b"%PDF"), served.status

        box = panel.get_by_label("Right page (optional)")
        chosen = panel.get_by_role("radio", name="Wrong", checked=True)  # the segmented control's option
        for attempt in range(3):  # a click that lands while Streamlit redraws the panel is lost: click again
            if not chosen.count():
                panel.get_by_role("radio", name="Wrong").click()
            try:
                box.wait_for(state="visible", timeout=20_000)
                break
            except timeout:
                if attempt == 2:
                    raise
        assert chosen.count() == 1  # the option the reviewer chose is shown chosen
        box.fill("11")
        box.press("Enter")
        panel.get_by_role("button", name="Save mark").click()
        page.get_by_text("Mark saved on this machine.").wait_for(state="visible")
        if SCREENSHOT_DIR:
            page.screenshot(path=str(Path(SCREENSHOT_DIR) / "reviewer-mark.png"))

    # What `policybot eval --marks` writes from the library (its run is tested in tests/test_marks.py).
    bot = PolicyBot(make_settings(tmp_path / "home"))
    made = write_marks_set(bot.components.feedback.marks(), bot.library.stored_pdf, tmp_path / "marks-set")
    assert made.questions == 1 and made.golds == 1, made.summary()
    questions = [json.loads(line) for line in (tmp_path / "marks-set" / "questions.jsonl").open()]
    assert [q["question"] for q in questions] == [SLOW_LEAK]
    assert any(g["page"] == 11 for g in questions[0]["gold"]), questions

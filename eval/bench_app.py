"""Benchmark the Streamlit app in a real browser: cold start to a usable chat, first answer,
a second answer, and the server's memory.

    python eval/bench_app.py [--home .policybot] [--question "..."]

Needs Debian's chromium and the playwright package (`make browser`, `pip install -e '.[dev]'`).
The home must already hold documents (`policybot ingest data/`).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def rss_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=".policybot")
    ap.add_argument("--question", default="How does the deductible apply to water damage?")
    ap.add_argument("--second", default="What is the waiting period for accidental damage?")
    args = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "POLICYBOT_HOME": args.home, "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        while True:
            try:
                urllib.request.urlopen(url, timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        t_server = time.perf_counter() - t0
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
            page = browser.new_page()
            page.goto(url)
            chat = page.locator('[data-testid="stChatInputTextArea"]')
            chat.wait_for(state="visible", timeout=300_000)
            t_page = time.perf_counter() - t0  # the page, the library and the chat box are there
            page.get_by_text("Loading the models").wait_for(state="detached", timeout=300_000)
            t_ready = time.perf_counter() - t0  # the models are loaded (loaded in the background meanwhile)
            # Source panels only ("[1] doc, p.3"): the "Searching the documents…" status is a <details> too.
            panels = (
                "() => [...document.querySelectorAll('details summary')].filter(s => "
                "/\\[\\d+\\]/.test(s.textContent)).length"
            )
            for label, question in (("first", args.question), ("second", args.second)):
                before = page.evaluate(panels)
                start = time.perf_counter()
                chat.fill(question)
                chat.press("Enter")
                page.wait_for_function(f"() => ({panels})() > {before}", timeout=300_000)
                print(f"{label} answer with its source panels: {time.perf_counter() - start:.2f} s")
            browser.close()
        print(
            f"server answering HTTP after {t_server:.1f} s; page with library and chat box after {t_page:.1f} s; "
            f"models loaded after {t_ready:.1f} s from start"
        )
        print(f"machine load (1, 5, 15 min): {os.getloadavg()}")
        print(f"server memory: now {rss_mb(server.pid, 'VmRSS'):.0f} MB, peak {rss_mb(server.pid, 'VmHWM'):.0f} MB")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()

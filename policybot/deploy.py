"""Setting up a field kiosk: the files that start the app at boot, restart it if it dies, and
open Chromium in kiosk mode on it.

A kiosk is installed once, often from a USB stick (``make bundle`` / ``make install-offline``),
and then never sees a network. Two systemd units do the rest: the app (Streamlit on
127.0.0.1 only, ``POLICYBOT_KIOSK=1``, restarted whenever it stops) and the browser (Chromium
in ``--kiosk`` mode, started after the app answers, restarted if a visitor closes it). Paths
are written in full, because systemd does not search a PATH or read a shell profile.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

APP_UNIT = "policybot-kiosk.service"
BROWSER_UNIT = "policybot-kiosk-browser.service"


@dataclass(frozen=True)
class KioskPlan:
    """Where the kiosk's pieces are on this machine."""

    app_dir: Path  # holds app.py
    venv: Path  # the virtual environment PolicyBot is installed in
    home: Path  # the library (POLICYBOT_HOME)
    user: str  # the account the app and the browser run as
    port: int = 8501
    browser: str = "/usr/bin/chromium"
    display: str = ":0"
    idle_minutes: float = 5.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


def app_unit(plan: KioskPlan) -> str:
    """The systemd unit that runs the app, offline, restarted whenever it stops."""
    streamlit = shlex.join(
        [
            str(plan.venv / "bin" / "streamlit"),
            "run",
            str(plan.app_dir / "app.py"),
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(plan.port),
            "--server.headless",
            "true",
        ]
    )
    return f"""[Unit]
Description=PolicyBot kiosk (answers questions about the policies on this machine)
After=network.target

[Service]
User={plan.user}
WorkingDirectory={plan.app_dir}
Environment=POLICYBOT_KIOSK=1
Environment=POLICYBOT_HOME={plan.home}
Environment=POLICYBOT_KIOSK_IDLE_MINUTES={plan.idle_minutes:g}
Environment=HF_HUB_OFFLINE=1
Environment=STREAMLIT_BROWSER_GATHER_USAGE_STATS=false
# Set the admin PIN in an override: systemctl edit {APP_UNIT}, then Environment=POLICYBOT_KIOSK_PIN=...
ExecStart={streamlit}
Restart=always
RestartSec=3

[Install]
WantedBy=multi-user.target
"""


def browser_unit(plan: KioskPlan) -> str:
    """The systemd unit that opens Chromium in kiosk mode on the app once it answers."""
    wait = f"/bin/sh -c 'until curl -sf {plan.url} >/dev/null; do sleep 1; done'"
    chromium = shlex.join(
        [
            plan.browser,
            "--kiosk",
            "--incognito",
            "--no-first-run",
            "--disable-sync",
            "--disable-background-networking",
            "--disable-component-update",
            "--noerrdialogs",
            plan.url,
        ]
    )
    return f"""[Unit]
Description=PolicyBot kiosk browser (Chromium in kiosk mode)
After={APP_UNIT} graphical.target
Requires={APP_UNIT}

[Service]
User={plan.user}
Environment=DISPLAY={plan.display}
ExecStartPre={wait}
ExecStart={chromium}
Restart=always
RestartSec=3

[Install]
WantedBy=graphical.target
"""


def write_units(plan: KioskPlan, folder: Path) -> list[Path]:
    """Write both units into ``folder`` (e.g. /etc/systemd/system); the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in ((APP_UNIT, app_unit(plan)), (BROWSER_UNIT, browser_unit(plan))):
        path = folder / name
        path.write_text(text)
        written.append(path)
    return written

"""A field kiosk's systemd units (`policybot kiosk-units`): the app offline on 127.0.0.1 in kiosk
mode, restarted if it dies; Chromium in kiosk mode on it once it answers."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from policybot.cli import app
from policybot.deploy import APP_UNIT, BROWSER_UNIT, KioskPlan, app_unit, browser_unit

ROOT = Path(__file__).resolve().parents[1]
PLAN = KioskPlan(
    app_dir=Path("/opt/policy bot/app"), venv=Path("/opt/policy bot/.venv"), home=Path("/srv/pb"), user="kiosk"
)


def values(unit: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith(f"{key}=")]


def test_the_app_unit_runs_the_kiosk_offline_and_restarts_it():
    unit = app_unit(PLAN)
    [start] = values(unit, "ExecStart")
    argv = shlex.split(start)  # paths with spaces stay one argument
    assert argv[:3] == ["/opt/policy bot/.venv/bin/streamlit", "run", "/opt/policy bot/app/app.py"]
    assert argv[argv.index("--server.address") + 1] == "127.0.0.1"
    env = values(unit, "Environment")
    assert {"POLICYBOT_KIOSK=1", "POLICYBOT_HOME=/srv/pb", "HF_HUB_OFFLINE=1"} <= set(env)
    assert values(unit, "Restart") == ["always"] and values(unit, "User") == ["kiosk"]
    assert not [e for e in env if e.startswith("POLICYBOT_KIOSK_PIN")], "the PIN belongs in a private override"


def test_the_browser_unit_opens_chromium_in_kiosk_mode_after_the_app():
    unit = browser_unit(PLAN)
    [start] = values(unit, "ExecStart")
    argv = shlex.split(start)
    assert argv[0] == "/usr/bin/chromium" and "--kiosk" in argv and argv[-1] == "http://127.0.0.1:8501/"
    assert values(unit, "Requires") == [APP_UNIT] and APP_UNIT in values(unit, "After")[0]
    assert "curl -sf http://127.0.0.1:8501/" in values(unit, "ExecStartPre")[0]
    assert values(unit, "Restart") == ["always"]


def test_the_cli_writes_both_units(tmp_path):
    result = CliRunner().invoke(
        app, ["--home", str(tmp_path / "home"), "kiosk-units", "--user", "kiosk", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    app_text = (tmp_path / APP_UNIT).read_text()
    assert f"WorkingDirectory={ROOT}" in app_text and f"POLICYBOT_HOME={(tmp_path / 'home').resolve()}" in app_text
    assert (tmp_path / BROWSER_UNIT).read_text().count("--kiosk") == 1


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_the_units(tmp_path):
    for name, text in ((APP_UNIT, app_unit(PLAN)), (BROWSER_UNIT, browser_unit(PLAN))):
        (tmp_path / name).write_text(text)
    done = subprocess.run(
        ["systemd-analyze", "verify", *map(str, tmp_path.glob("*.service"))], capture_output=True, text=True
    )
    assert "Unknown" not in done.stderr and "Invalid" not in done.stderr, done.stderr

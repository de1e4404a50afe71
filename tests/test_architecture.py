"""The shape of the code: pipeline stages import only earlier stages, nothing below the facade
imports it, the library never imports Streamlit, and the app talks to the facade only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "policybot"
# The answering pipeline, in the order a question goes through it.
STAGES = ["query", "retrieval", "selection", "scoring", "guard", "citations", "writers", "pipeline"]
# What the app may import from the library: the facade, the typed schemas/options/events and
# presentation helpers that hold no pipeline logic.
APP_ALLOWED = {"service", "schemas", "settings", "options", "events", "markup", "kiosk", "export", "startup"}


def imports_of(path: Path) -> set[str]:
    """The policybot modules a file imports (at any level, TYPE_CHECKING included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("policybot"):
            found.add(node.module.split(".")[1] if "." in node.module else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("policybot."))
    return found


def third_party(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
    return found


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_never_imports_a_later_one(stage):
    later = set(STAGES[STAGES.index(stage) + 1 :])
    assert not imports_of(PACKAGE / f"{stage}.py") & later


def test_nothing_below_the_facade_imports_it():
    above = {"service", "cli", "doctor", "eval_harness", "evidence_eval", "__main__"}
    for path in PACKAGE.glob("*.py"):
        if path.stem not in above:
            assert not imports_of(path) & {"service", "cli", "eval_harness", "evidence_eval"}, path.name
    for stage in STAGES + ["components", "library"]:
        assert "components" not in imports_of(PACKAGE / f"{stage}.py") or stage == "library", stage


def test_the_library_never_imports_streamlit():
    for path in PACKAGE.glob("*.py"):
        assert "streamlit" not in third_party(path), path.name


def test_the_app_uses_only_the_facade_and_the_schemas():
    assert imports_of(ROOT / "app.py") <= APP_ALLOWED, imports_of(ROOT / "app.py") - APP_ALLOWED


def test_no_function_is_longer_than_sixty_lines():
    long = []
    for path in [*PACKAGE.glob("*.py"), ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60:
                long.append(f"{path.name}:{node.lineno} {node.name}")
    assert not long


def test_library_code_never_changes_the_environment():
    """Only the entry points' start-up (policybot/startup.py) sets environment variables."""
    for path in PACKAGE.glob("*.py"):
        if path.stem in {"startup", "cli"}:
            continue
        text = path.read_text()
        assert "os.environ[" not in text and "os.environ.setdefault" not in text and "putenv" not in text, path.name

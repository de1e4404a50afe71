"""The shape of the code, as rooms and the doors between them.

``policybot/`` is grouped by role (see the README's "How the code is arranged"): ``core`` is what
every room shares; ``models`` and ``store`` stand on it; ``ingestion`` and ``answer`` stand on
those and never on each other; ``evidence`` builds on ``answer``; ``display`` shows things; the
facade (``service``, with ``components`` and ``library``) composes them all; ``cli``, ``doctor``
and ``evaluation`` sit on top. The vocabulary every room speaks (settings, schemas, errors,
events, options) lies at the package root. The app (``app.py`` + ``app_pages/``) talks to the
facade only, and Streamlit never enters the library.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "policybot"
APP_FILES = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py"))]
TOOLS = [PACKAGE / "doctor.py", *sorted((PACKAGE / "evaluation").glob("*.py")), *sorted((ROOT / "eval").glob("*.py"))]

# What every room may import: the vocabulary at the package root.
VOCABULARY = {"settings", "schemas", "errors", "events", "options"}
# Room -> the rooms it may import (besides itself and the vocabulary).
ALLOWED = {
    "core": set(),
    "models": {"core"},
    "store": {"core", "models"},
    "display": {"core"},
    "ingestion": {"core", "models", "store"},
    "answer": {"core", "models", "store"},
    "evidence": {"core", "models", "store", "answer"},
    "components": {"core", "models", "store", "ingestion", "answer", "evidence"},
    "library": {"core", "models", "store", "display", "components"},
    "service": {
        "core",
        "models",
        "store",
        "ingestion",
        "answer",
        "evidence",
        "display",
        "components",
        "library",
        "warmup",
    },
    "doctor": {"core", "models", "store", "ingestion", "service"},
    "evaluation": {"core", "models", "store", "answer", "service", "components"},
    "warmup": set(),
    "startup": set(),
    "deploy": set(),
    **{word: VOCABULARY for word in VOCABULARY},
}
# The answering pipeline, in the order a question goes through it.
STAGES = ["query", "retrieval", "selection", "scoring", "guard", "citations", "writers", "earlier_edition", "pipeline"]
# What the app may import from the library: the facade, the vocabulary, presentation helpers.
APP_ALLOWED = {"service", "display", "startup", *VOCABULARY}


def imported_modules(path: Path) -> set[str]:
    """The ``policybot`` modules a file imports (at any level, TYPE_CHECKING included), dotted."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "policybot":
            found.add(node.module)
            if node.module == "policybot":
                found.update(f"policybot.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "policybot")
    return found


def room_of_module(dotted: str) -> str:
    """policybot.answer.query -> answer; policybot.settings -> settings."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "policybot"


def room_of_file(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def package_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def third_party(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
    return found


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_a_room_imports_only_the_rooms_below_it(room):
    files = [p for p in package_files() if room_of_file(p) == room and p.name != "__init__.py"]
    assert files, f"no files for room {room}"
    for path in files:
        rooms = {room_of_module(m) for m in imported_modules(path)} - {room}
        assert rooms <= ALLOWED[room] | VOCABULARY, (
            f"{path.relative_to(ROOT)} imports {sorted(rooms - ALLOWED[room] - VOCABULARY)}"
        )


def test_every_file_of_the_library_is_in_a_known_room():
    unknown = {room_of_file(p) for p in package_files()} - set(ALLOWED) - {"__init__", "__main__", "cli"}
    assert not unknown, f"rooms without a rule: {sorted(unknown)} (add them to ALLOWED)"


def test_answering_never_needs_ingestion_and_neither_needs_the_facade():
    facade = {"service", "components", "library", "cli", "doctor"}
    for path in package_files():
        room = room_of_file(path)
        rooms = {room_of_module(m) for m in imported_modules(path)}
        if room == "answer":
            assert "ingestion" not in rooms, path.name
        if room == "ingestion":
            assert "answer" not in rooms, path.name
        if room in {"answer", "ingestion", "core", "store", "models", "evidence", "display"}:
            assert not rooms & facade, f"{path.relative_to(ROOT)} imports {sorted(rooms & facade)}"


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_never_imports_a_later_one(stage):
    later = {f"policybot.answer.{s}" for s in STAGES[STAGES.index(stage) + 1 :]}
    assert not imported_modules(PACKAGE / "answer" / f"{stage}.py") & later


def test_the_library_never_imports_streamlit():
    for path in package_files():
        assert "streamlit" not in third_party(path), path.name


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: p.name)
def test_the_app_uses_only_the_facade_and_the_vocabulary(path):
    rooms = {room_of_module(m) for m in imported_modules(path)}
    assert rooms <= APP_ALLOWED, f"{path.name} imports {sorted(rooms - APP_ALLOWED)}"


def test_the_app_pages_folder_is_not_streamlits_legacy_pages_folder():
    assert (ROOT / "app_pages").is_dir() and not (ROOT / "pages").exists()


@pytest.mark.parametrize("path", TOOLS, ids=lambda p: str(p.relative_to(ROOT)))
def test_tools_use_the_facade_or_components_never_private_attributes(path):
    """doctor, the evaluation and the benchmarks reach the library through ``PolicyBot`` and its
    ``components``, never through another object's private attributes."""
    private = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if owner not in {"self", "cls"}:
                private.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert not private


def test_no_function_is_longer_than_sixty_lines():
    long = []
    for path in [*package_files(), *APP_FILES]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60:
                long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not long


def test_library_code_never_changes_the_environment():
    """Only the entry points' start-up (policybot/startup.py) sets environment variables."""
    for path in package_files():
        if path.stem in {"startup", "cli"}:
            continue
        text = path.read_text()
        assert "os.environ[" not in text and "os.environ.setdefault" not in text and "putenv" not in text, path.name


def test_the_public_facade_is_exported_from_the_package_root():
    import policybot
    from policybot.service import PolicyBot

    assert policybot.PolicyBot is PolicyBot
    assert {"PolicyBot", "Settings", "AskOptions", "PolicyBotError"} <= set(policybot.__all__)

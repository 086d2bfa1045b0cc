"""Imports point down only: the rules are pure, the referee never reaches up into the arena."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN_IN_RULES = {"flask", "requests", "redis", "rq", "sqlalchemy", "urllib3", "socket", "http", "time"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_rules_modules_import_no_io_library() -> None:
    """A rules module that imports flask, requests, redis, rq or sqlalchemy (or a clock) fails here."""
    offenders = []
    for path in sorted((ROOT / "referee" / "games").rglob("*.py")):
        for name in _imports(path):
            if name.split(".")[0] in FORBIDDEN_IN_RULES:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_importing_the_games_loads_no_io_library() -> None:
    code = (
        "import sys, referee.games; "
        "bad = sorted(m for m in ('flask','requests','redis','rq','sqlalchemy') if m in sys.modules); "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""


def test_the_referee_never_imports_the_arena() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "referee").rglob("*.py"))
        for name in _imports(path)
        if name.split(".")[0] == "arena"
    ]
    assert offenders == []


def test_modules_stay_small() -> None:
    """Small modules with names that explain themselves: none above 400 lines."""
    big = []
    for package in ("arena", "referee", "sample_bots"):
        for path in (ROOT / package).rglob("*.py"):
            lines = path.read_text(encoding="utf-8").count("\n")
            if lines > 400:
                big.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert big == []


def test_every_module_uses_postponed_annotations() -> None:
    missing = []
    for package in ("arena", "referee", "sample_bots", "bench"):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            defines = "\ndef " in text or "\nclass " in text
            if defines and "from __future__ import annotations" not in text:
                missing.append(str(path.relative_to(ROOT)))
    assert missing == []


IO_LIBRARIES = {"flask", "requests", "redis", "rq", "sqlalchemy", "urllib3", "socket", "http"}


def _offenders(folder: str, forbidden: set[str], allowed_files: tuple[str, ...] = ()) -> list[str]:
    """Imports under ``folder`` whose module starts with one of ``forbidden`` (a package or a dotted prefix)."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if path.name in allowed_files:
            continue
        for name in _imports(path):
            if any(name == bad or name.startswith(bad + ".") for bad in forbidden):
                found.append(f"{path.relative_to(ROOT)} imports {name}")
    return found


def test_ratings_and_the_domain_are_pure() -> None:
    """Ratings maths and tournament design: no I/O library, nothing of the arena's adapters or web."""
    layers = {"arena.services", "arena.storage", "arena.runtime", "arena.web", "arena.cli", "arena.composition"}
    assert _offenders("arena/ratings", IO_LIBRARIES | layers) == []
    assert _offenders("arena/domain", IO_LIBRARIES | layers) == []


def test_services_never_reach_up_into_the_web_or_the_cli() -> None:
    assert _offenders("arena/services", {"arena.web", "arena.cli", "flask"}) == []
    assert _offenders("arena/storage", {"arena.services", "arena.web", "arena.cli", "arena.runtime"}) == []


def test_the_web_goes_through_the_services() -> None:
    """Views call service functions; they read no storage model and start no runtime part (the WSGI entry
    point alone sets up logging)."""
    assert _offenders("arena/web", {"arena.storage", "arena.runtime"}, allowed_files=("wsgi.py",)) == []


def test_the_architecture_page_names_only_modules_that_exist() -> None:
    """docs/architecture.md stays true: every ``arena/...py`` or ``referee/...py`` path it names exists."""
    import re

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\b((?:arena|referee|sample_bots)/[\w/]+\.py)\b", text))
    assert named, "the page names no module"
    assert sorted(path for path in named if not (ROOT / path).exists()) == []

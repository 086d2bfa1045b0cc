"""``scripts/lib.sh``: what the demo and test scripts do before they start, checked against a fake venv."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _ensure_venv(folder: Path, *args: str) -> list[str]:
    subprocess.run(["bash", "-c", f'source "{ROOT}/scripts/lib.sh" && ensure_venv {" ".join(args)}'], cwd=folder,
                   check=True, timeout=30)
    return (folder / "pip.log").read_text().splitlines() if (folder / "pip.log").exists() else []


def test_ensure_venv_installs_again_only_when_pyproject_changed(tmp_path) -> None:
    """Regression: every ``bash scripts/demo.sh`` reinstalled the project and printed pip's and setuptools'
    warnings above the arena's first lines."""
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "$*" >> "{tmp_path}/pip.log"\n')  # a fake that logs each pip call
    python.chmod(0o755)
    first = _ensure_venv(tmp_path)
    assert first[-1] == "-m pip install -q -e ."
    assert _ensure_venv(tmp_path) == first  # nothing changed: no pip at all
    assert _ensure_venv(tmp_path, "test")[-1] == "-m pip install -q -e .[test]"  # another extra: installed once
    later = os.stat(tmp_path / ".venv" / ".arena-installed").st_mtime + 10
    os.utime(tmp_path / "pyproject.toml", (later, later))
    assert len(_ensure_venv(tmp_path)) == len(first) + 4  # pyproject.toml changed: pip runs again

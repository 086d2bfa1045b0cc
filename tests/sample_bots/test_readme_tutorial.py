"""The README's five-minute tutorial works as written for each language: its shell block runs in a
scratch folder that sees the repository's ``sample_bots`` and ``.venv`` (only the ports are changed to
free ones, so parallel runs cannot collide)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sample_bots.starter_processes import ROOT, free_port, go_env

LANGUAGES = {"Python": "9007", "JavaScript (Node.js)": "9005", "Go": "9006"}


def tutorial_block(heading: str) -> str:
    """The first ``sh`` block under ``### heading`` of the README's "first bot" section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Your first bot in five minutes"):]
    part = section[section.index(f"### {heading}\n"):]
    match = re.search(r"```sh\n(.*?)```", part, re.S)
    assert match is not None
    return match.group(1)


@pytest.mark.parametrize("heading", list(LANGUAGES))
def test_readme_tutorial_runs_verbatim(heading: str, tmp_path: Path) -> None:
    port = str(free_port())
    script = tutorial_block(heading).replace(LANGUAGES[heading], port)
    (tmp_path / "sample_bots").symlink_to(ROOT / "sample_bots")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=go_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):  # the bot a failed block left running
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == 0, out
    assert "ready to play" in out and "commitments checked: OK" in out, out
    assert (tmp_path / "replay.json").exists()

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
import time
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


def test_readme_one_function_bot_runs_as_written(tmp_path: Path) -> None:
    """The README's "a bot is one function" example, saved and started as it says, passes ``arena check``.
    (Regression: the example it replaced was a rule weaker than the random bot, presented as a strategy.)"""
    from referee.health import check_bot

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    part = readme[readme.index("a bot is one function"):]
    match = re.search(r"```python\n(.*?)```", part, re.S)
    assert match is not None
    (tmp_path / "my_bot.py").write_text(match.group(1), encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(tmp_path / "my_bot.py"), "--port", str(port)], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        report = None
        for _ in range(100):
            report = check_bot(url, "", "piranha-pedro")
            if report.ok or not any("connection" in p for p in report.problems):
                break
            time.sleep(0.1)
        assert report is not None and report.ok, report.problems if report else None
    finally:
        proc.kill()
        proc.wait()

"""The short version of the load benchmark (bench/load.py): pages under wrk while a tournament runs,
no errors at all."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (scripts/test.sh installs it)")
def test_pages_under_load_while_a_tournament_runs_answer_without_errors() -> None:
    run = subprocess.run([sys.executable, "-m", "bench.load", "--duration", "10", "--connections", "2", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    for name, page in result["pages"].items():
        assert page["requests"] > 20, name
        assert page["non_2xx"] == 0 and page["socket_errors"] == 0, (name, page)
    assert result["matches_recorded_during_load"] > 0

"""A worker's memory does not grow across 1,000 matches against hostile bots (bench.hostile_memory, run
as its own process, as a worker is)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_referee_memory_stays_flat_over_1000_hostile_matches() -> None:
    run = subprocess.run([sys.executable, "-m", "bench.hostile_memory", "--matches", "1000", "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode in (0, 1), run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["matches"] == 1000 and result["faults"] >= 2000
    assert result["growth_mib"] <= result["goal_mib"], result["rss_mib"]

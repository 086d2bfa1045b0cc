"""``python -m bench.ladder sim --quick`` runs the real planner against the real fit end to end (small boards)
and reports all three benchmarks; the load cap is judged even in a quick run."""

from __future__ import annotations

import sys
import types

import pytest

import bench
from bench import ladder


def test_the_quick_simulation_runs_and_reports_every_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    assert ladder.main(["sim", "--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count("1. Kendall tau") == 2  # 3 and 4 players
    assert "2. newcomer in a settled" in out
    assert "load never over capacity (times over): ratio 0.000 (goal <= 0.0): PASS" in out
    assert "fair share" in out


def test_e2e_is_dispatched_to_the_end_to_end_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    """``e2e`` calls ``bench.ladder_e2e.main()`` with its own options in ``sys.argv`` (imported only then)."""
    seen: list[list[str]] = []

    def fake_main() -> int:
        seen.append(sys.argv[1:])
        return 0

    fake = types.ModuleType("bench.ladder_e2e")
    fake.main = fake_main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench.ladder_e2e", fake)
    monkeypatch.setattr(bench, "ladder_e2e", fake, raising=False)
    monkeypatch.setattr(sys, "argv", ["bench/ladder.py", "e2e", "--bots", "8"])
    assert ladder.main(["e2e", "--bots", "8"]) == 0
    assert seen == [["--bots", "8"]]

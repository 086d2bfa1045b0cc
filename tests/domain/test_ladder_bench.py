"""``python -m bench.ladder sim --quick`` runs the real planner against the real fit end to end (small boards)
and reports all three benchmarks; the load cap is judged even in a quick run. ``oracle`` seats tables from
the true strengths (``bench.ladder_oracle``): its designs seat what they say."""

from __future__ import annotations

import random
import sys
import types

import pytest

import bench
from bench import ladder, ladder_oracle, ladder_sim


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


def test_an_oracle_of_width_zero_seats_each_anchor_with_its_true_neighbours() -> None:
    """Width 0 is the chain design (true neighbours); every table disjoint, one slot per bot."""
    board = ladder_sim.Board([0.0, 10.0, 500.0, 510.0, -400.0, -390.0], players=2)
    tables = ladder_oracle.oracle("0", 0.0, 0.0)(board, 2, 3, random.Random(1))
    assert sorted(sorted(t.bot_ids) for t in tables) == [[0, 1], [2, 3], [4, 5]]


def test_an_oracle_of_infinite_width_seats_bots_far_apart_too() -> None:
    """Width inf is random tables: over many rounds some table holds two bots 900 Elo apart."""
    board = ladder_sim.Board([0.0, 10.0, 500.0, 510.0, -400.0, -390.0], players=2)
    schedule = ladder_oracle.oracle("inf", 0.0, 0.0)
    rng = random.Random(2)
    pairs = {tuple(sorted(t.bot_ids)) for _ in range(50) for t in schedule(board, 2, 3, rng)}
    assert (2, 4) in pairs or (3, 5) in pairs or (2, 5) in pairs or (3, 4) in pairs


def test_the_wrong_width_seats_a_bot_the_fit_has_in_the_wrong_order() -> None:
    board = ladder_sim.Board([0.0, 100.0, 300.0, 310.0], players=2)  # 1 and 2 are not each other's nearest
    board.rows = {b: ladder_sim.LeaderboardRow(bot=b, rank=1, rank_low=1, rank_high=4, elo=elo, elo_low=elo - 50,
                                               elo_high=elo + 50, games=10, wins=5, draws=0, losses=5, los_next=None)
                  for b, elo in enumerate([1500.0, 1700.0, 1600.0, 1800.0])}  # 1 and 2 in the wrong order
    tables = ladder_oracle.oracle("wrong", 1.0, 0.0, actual=True)(board, 2, 1, random.Random(3))
    assert sorted(tables[0].bot_ids) == [1, 2]


def test_the_oracle_sweep_is_dispatched_and_prints_every_design(capsys: pytest.CaptureFixture[str]) -> None:
    assert ladder.main(["oracle", "--players", "3", "--widths", "1sd", "--focus", "1", "--seeds", "1",
                        "--limit", "48", "--planner"]) == 0
    out = capsys.readouterr().out
    assert "3 players, random tables:" in out and "3 players, the planner:" in out
    assert "3 players, w=1sd focus=1 long=0 need=expected:" in out

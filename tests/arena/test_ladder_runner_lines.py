"""What the ladder scheduler tells the terminal (``arena up``, ``arena demo``): placements by bot name,
once per bot, so the demo shows the bots being placed instead of a line per table."""

from __future__ import annotations

import logging

import pytest

from arena.domain.ladder_planner import Table
from arena.runtime.ladder_runner import LadderRunner, placed_bot, placement_line
from arena.services.ladder_scheduler import TickReport

NAMES = {1: "pp-random-1", 2: "pp-heuristic-1", 3: "pp-random-2"}


def _table(reason: str) -> Table:
    return Table(bot_ids=(2, 1, 3), reason=reason)


def test_a_placement_names_its_bots() -> None:
    assert placed_bot(_table("placement of 1")) == 1
    line = "placing pp-random-1: a table with pp-heuristic-1 and pp-random-2"
    assert placement_line(_table("placement of 1"), NAMES) == line
    assert placement_line(_table("placement of 9"), {}) == "placing bot 9: a table with bot 2, bot 1 and bot 3"


def test_a_bot_placement_is_told_once_not_at_every_table() -> None:
    """Regression (the demo read as a user): every table of a provisional bot is a placement, so the
    terminal printed two placement lines a second, by bot id, burying the boards' lines."""
    said: list[str] = []
    runner = LadderRunner.__new__(LadderRunner)  # no Redis needed to tell what a tick did
    runner.say, runner.names, runner.placed, runner.settled = said.append, {7: "piranha-pedro, 3 players"}, set(), {}
    report = TickReport(placements=[(7, _table("placement of 1"))])
    runner._tell(report, 0.01, NAMES)
    runner._tell(report, 0.01, NAMES)
    runner._tell(TickReport(placements=[(7, _table("placement of 3"))]), 0.01, NAMES)
    assert said == ["piranha-pedro, 3 players: placing pp-random-1: a table with pp-heuristic-1 and pp-random-2",
                    "piranha-pedro, 3 players: placing pp-random-2: a table with pp-heuristic-1 and pp-random-1"]


def _settling_said(tell_settling: bool, caplog) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    said: list[str] = []
    runner = LadderRunner.__new__(LadderRunner)
    runner.say, runner.names, runner.placed, runner.settled = said.append, {7: "piranha-pedro, 3 players"}, set(), {}
    runner.tell_settling = tell_settling
    with caplog.at_level(logging.INFO, logger="arena.ladder"):
        runner._tell(TickReport(settled={7: True}), 0.01, NAMES)
    return said, [r.getMessage() for r in caplog.records if r.name == "arena.ladder"]


def test_regression_the_demo_printed_a_board_settled_before_its_own_line_still_showing_a_provisional_bot(
        caplog, monkeypatch) -> None:
    """Under ``arena demo`` the scheduler's "settled" line (its process) and the demo's board lines (read
    from the same database by another process) raced: "settled" could come a second before a demo line
    still marking a bot provisional. The demo runs the scheduler with ``--quiet-settling``: the scheduler
    logs the settling, and the demo's own lines alone tell it on the terminal."""
    assert _settling_said(True, caplog)[0] == ["piranha-pedro, 3 players: settled, now at the maintenance rate"]
    caplog.clear()
    said, logged = _settling_said(False, caplog)
    assert said == [] and logged == ["piranha-pedro, 3 players: settled, now at the maintenance rate"]

    from arena.cli import build_parser, main
    from arena.runtime import stack

    made: list[stack.Stack] = []

    class Started(Exception):
        pass

    def start(self, host: str, port: int):  # type: ignore[no-untyped-def]
        made.append(self)
        raise Started

    monkeypatch.setenv("ARENA_LOG_LEVEL", "WARNING")  # what cmd_demo would set for the rest of the run
    monkeypatch.setattr(stack.Stack, "start", start)
    monkeypatch.setattr(stack.Stack, "install_signal_handlers", lambda self: None)
    monkeypatch.setattr(stack.Stack, "stop", lambda self, quiet=False: 0.0)
    with pytest.raises(Started):
        main(["demo", "--exit"])
    command = made[0].scheduler_command()
    assert command[-3:] == ["ladder", "run", "--quiet-settling"]
    assert build_parser().parse_args(command[-3:]).quiet_settling  # and the scheduler takes it


def test_regression_a_bot_waiting_for_its_restart_was_told_every_minute() -> None:
    """A user's trial: "bot N still runs without its new secret" came once a minute for every waiting bot,
    188 of 321 lines in 16 minutes. It is told once per wait; what changes is told again."""
    from arena.services.probation import NOT_RESTARTED, Recheck

    said: list[str] = []
    runner = LadderRunner.__new__(LadderRunner)
    runner.say, runner.told_waiting = said.append, set()
    waiting = Recheck(1, resumed=False, problems=[NOT_RESTARTED], new_secret=True)
    for _minute in range(5):
        runner.tell_rechecks([waiting], {1: "pp-mine"})
    assert len(said) == 1 and said[0].startswith("bot pp-mine still answers unsigned requests")
    runner.tell_rechecks([Recheck(1, resumed=True, new_secret=True)], {1: "pp-mine"})
    assert said[-1] == "bot pp-mine restarted with its secret: on the ladder"
    runner.tell_rechecks([waiting], {1: "pp-mine"})  # given a new secret later: a new wait, told again
    assert len(said) == 3

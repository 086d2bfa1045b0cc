"""What ``arena demo`` tells the terminal while the ladder places its bots: one line per change, each bot's
placement once, the board's settling once, and at the end whether every board settled or the time was up."""

from __future__ import annotations

from typing import Any

from arena.cli import demo, ladder_demo
from arena.cli.ladder_demo import BoardWatch, board_line, clock, outcome_lines, watch_ladders


def _entry(bot_id: int, name: str, elo: float, half: float, games: int, los_next: float | None = None) -> dict:
    return {"bot_id": bot_id, "name": name, "rank": bot_id, "elo": elo, "elo_low": elo - half,
            "elo_high": elo + half, "games": games, "provisional": 2 * half > 300, "los_next": los_next}


def _board(matches: int, entries: list[dict], settled: bool = False) -> dict[str, Any]:
    return {"game": "piranha-pedro", "players": 3, "matches": matches, "entries": entries,
            "ladder": {"settled": settled}}


NEW = _board(6, [_entry(1, "pp-heuristic", 1600, 300, 6, 0.7), _entry(2, "pp-random", 1400, 300, 6)])
PLACED = _board(30, [_entry(1, "pp-heuristic", 1650, 120, 30, 0.9), _entry(2, "pp-random", 1350, 200, 30)])
SETTLED = _board(60, [_entry(1, "pp-heuristic", 1700, 80, 60, 0.99), _entry(2, "pp-random", 1300, 90, 60)],
                 settled=True)


def test_a_board_line_lists_every_bot_with_its_interval_and_marks_the_provisional_ones() -> None:
    assert board_line(PLACED, 75) == ("[ 1:15] piranha-pedro, 3 players: 30 matches, 1 provisional | "
                                      "pp-heuristic 1650±120, pp-random 1350±200*")
    assert board_line(SETTLED, 600).startswith("[10:00] piranha-pedro, 3 players: 60 matches, settled |")
    assert clock(3599.9) == "[59:59]"


def test_a_board_with_no_rated_match_does_not_say_0_provisional() -> None:
    """Regression: the first line said "0 matches, 0 provisional" while no bot had been placed yet, so every
    bot read as placed; the next line said "3 provisional"."""
    assert board_line(_board(0, []), 0) == "[ 0:00] piranha-pedro, 3 players: no rated match yet"


def test_the_settled_line_does_not_claim_every_rank_resolved() -> None:
    """Regression: "SETTLED ...: every rank resolved" was followed by a final table ranking two bots 1-2: a board
    also settles when two neighbours are both within 150 Elo without being told apart."""
    said = BoardWatch().update(SETTLED, 90)
    settled = next(line for line in said if "SETTLED" in line)
    assert "every rank resolved" not in settled and "told apart or both within 150 Elo" in settled


def test_a_placement_and_the_settling_are_told_once_each() -> None:
    watch = BoardWatch()
    first = watch.update(NEW, 5)
    assert first == [board_line(NEW, 5)]
    placed = watch.update(PLACED, 40)
    assert placed[0] == ("[ 0:40] piranha-pedro, 3 players: pp-heuristic placed after 30 matches (interval 1530-1770, "
                         "rank 1): no longer provisional")
    assert placed[1:] == [board_line(PLACED, 40)]
    settled = watch.update(SETTLED, 90)
    assert [line.split(": ", 1)[1].split(" ", 1)[0] for line in settled[:2]] == ["pp-random", "SETTLED"]
    assert watch.settled_at == 90
    assert watch.update(SETTLED, 93) == []  # nothing changed: nothing said


def test_a_board_whose_order_and_marks_stay_gets_a_line_only_now_and_then() -> None:
    watch = BoardWatch()
    watch.update(PLACED, 0)
    more = {**PLACED, "matches": 33}
    assert watch.update(more, ladder_demo.QUIET_LINE_S - 1) == []
    assert watch.update(more, ladder_demo.QUIET_LINE_S) == [board_line(more, ladder_demo.QUIET_LINE_S)]
    assert watch.update(more, 3 * ladder_demo.QUIET_LINE_S) == []  # no new match: no line


def test_time_up_says_what_each_unsettled_board_still_lacks() -> None:
    lines = outcome_lines([PLACED], {("piranha-pedro", 3): BoardWatch()}, 600, stopped=False)
    assert lines[0].startswith("[10:00] time up: not every board settled")
    assert "provisional: pp-random" in lines[1]
    assert "neighbours neither told apart nor both within 150 Elo: pp-heuristic/pp-random" in lines[1]


def test_the_watch_ends_when_every_board_settled_and_says_so(monkeypatch) -> None:
    reads = iter([[NEW], [PLACED], [SETTLED]])
    monkeypatch.setattr(ladder_demo, "read_boards", lambda context, boards: next(reads))
    monkeypatch.setattr(ladder_demo, "SHOW_EVERY_S", 0.0)
    said: list[str] = []
    assert watch_ladders(None, [("piranha-pedro", 3)], 3600, lambda: False, said.append) is True  # type: ignore[arg-type]
    assert "every board settled (piranha-pedro, 3 players at " in said[-1]
    assert sum("SETTLED" in line for line in said) == 1


def test_the_watch_ends_when_the_time_is_up_and_says_so(monkeypatch) -> None:
    monkeypatch.setattr(ladder_demo, "read_boards", lambda context, boards: [PLACED])
    said: list[str] = []
    assert watch_ladders(None, [("piranha-pedro", 3)], 0, lambda: False, said.append) is False  # type: ignore[arg-type]
    assert "time up" in said[-2] and "settling (provisional: pp-random" in said[-1]


def test_the_demo_population_had_identical_bots_that_only_the_tie_rule_could_settle() -> None:
    """Regression: two random and two heuristic bots per board; identical bots are never told apart, so the
    board waited for both intervals to narrow within 150 Elo (about 100 matches per bot) and the demo ended
    at 100 matches per board still provisional. Now every bot plays a different share of random moves."""
    shares = [share for _suffix, share in demo.LADDER_BOTS]
    assert len(set(shares)) == len(shares) == len({suffix for suffix, _ in demo.LADDER_BOTS})
    assert len(shares) >= max(seats for _game, _prefix, seats in demo.DEMO_GAMES)
    assert min(shares) == 0.0 and max(shares) == 1.0 and shares == sorted(shares)

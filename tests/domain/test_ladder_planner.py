"""The ladder planner's choices on made-up rating states: placement first, near-strength opponents, the most
uncertain pairs, caps, no repetition, settled boards and fair shares between ladders."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest

from arena.domain.ladder_planner import (
    Entrant,
    Table,
    board_settled,
    choose_tables,
    ladder_settled,
    pair_key,
    settled_width,
    share_slots,
)
from arena.ratings.provisional import is_provisional


def settled(bot: int, elo: float, width: float = 100.0, free: int = 1, matches: int = 60, n: int = 20) -> Entrant:
    return Entrant(bot, elo, elo - width / 2, elo + width / 2, 1, n, matches, False, free)


def newcomer(bot: int, elo: float = 1500.0, width: float = 1500.0, free: int = 1, matches: int = 0,
             n: int = 20) -> Entrant:
    return Entrant(bot, elo, elo - width / 2, elo + width / 2, 1, n, matches, True, free)


def spread_board(n: int = 20, width: float = 100.0, free: int = 1) -> list[Entrant]:
    """Settled bots 50 Elo apart from 1000 up: neighbours overlap, distant bots do not."""
    return [settled(i, 1000.0 + 50.0 * i, width, free, n=n) for i in range(n)]


def test_a_provisional_bot_is_placed_first() -> None:
    board = [*spread_board(), newcomer(99)]
    tables = choose_tables(board, players=3, slots=1, recent={}, rng=random.Random(1))
    assert len(tables) == 1
    assert 99 in tables[0].bot_ids
    assert tables[0].reason == "placement of 99"


def test_the_fewest_matches_are_placed_first() -> None:
    board = [*spread_board(), newcomer(98, matches=6, width=500), newcomer(99, matches=0)]
    first = choose_tables(board, players=2, slots=2, recent={}, rng=random.Random(2))
    assert [t.reason for t in first] == ["placement of 99", "placement of 98"]


def test_a_newcomer_meets_opponents_near_its_estimate() -> None:
    board = [*spread_board(), newcomer(99, elo=1800.0, width=400.0, matches=4)]
    (table,) = choose_tables(board, players=3, slots=1, recent={}, rng=random.Random(3))
    opponents = [b for b in table.bot_ids if b != 99]
    estimates = {e.bot_id: e.elo for e in board}
    assert all(abs(estimates[b] - 1800.0) <= 100.0 for b in opponents), opponents


def test_a_newcomer_is_placed_against_known_bots_not_another_newcomer() -> None:
    board = [*spread_board(), newcomer(98), newcomer(99)]
    tables = choose_tables(board, players=2, slots=2, recent={}, rng=random.Random(4))
    assert {98, 99} not in [set(t.bot_ids) for t in tables]


def test_the_most_overlapping_pair_is_chosen_among_settled_bots() -> None:
    # 0..4 far apart and pinned down; 10 and 11 ten Elo apart with wide overlapping intervals
    board = [settled(i, 1000.0 + 300.0 * i, width=60.0) for i in range(5)]
    board += [settled(10, 1600.0, width=200.0), settled(11, 1610.0, width=200.0)]
    (table,) = choose_tables(board, players=2, slots=1, recent={}, rng=random.Random(5))
    assert set(table.bot_ids) == {10, 11}
    assert table.reason in ("uncertain rank of 10", "uncertain rank of 11")


def test_settled_bots_rest_while_one_bot_is_still_uncertain() -> None:
    """Only an unsettled bot starts a table; settled bots play as its opponents, not among themselves."""
    board = [*spread_board(width=100.0), settled(50, 1510.0, width=260.0)]
    tables = choose_tables(board, players=3, slots=5, recent={}, rng=random.Random(11))
    assert len(tables) == 1
    assert 50 in tables[0].bot_ids
    assert tables[0].reason == "uncertain rank of 50"


def test_a_pair_that_met_lately_gives_way() -> None:
    board = [settled(10, 1600.0, 200.0), settled(11, 1610.0, 200.0), settled(12, 1300.0, 200.0),
             settled(13, 1330.0, 200.0)]
    (fresh,) = choose_tables(board, players=2, slots=1, recent={}, rng=random.Random(6))
    (after,) = choose_tables(board, players=2, slots=1, recent={(10, 11): 3}, rng=random.Random(6))
    assert set(fresh.bot_ids) == {10, 11}
    assert set(after.bot_ids) == {12, 13}


def test_pairs_rotate_over_many_ticks() -> None:
    """Ticks feeding their own tables back as ``recent``: many pairs meet, none dominates."""
    board = spread_board(12, width=150.0)
    recent: Counter[tuple[int, int]] = Counter()
    rng = random.Random(7)
    for _ in range(40):
        for table in choose_tables(board, players=3, slots=4, recent=recent, rng=rng):
            for a, b in combinations(table.bot_ids, 2):
                recent[pair_key(a, b)] += 1
    total = sum(recent.values())
    assert len(recent) >= 25
    assert max(recent.values()) <= 0.1 * total


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_no_bot_gets_more_tables_than_its_free_slots(players: int) -> None:
    rng = random.Random(players)
    for _ in range(20):
        board = [Entrant(i, rng.gauss(1500, 200), 0, 0, 1, 30, rng.randrange(40), rng.random() < 0.3,
                         rng.choice((0, 0, 1, 1, 2, 3))) for i in range(30)]
        board = [Entrant(e.bot_id, e.elo, e.elo - (w := rng.uniform(50, 900)) / 2, e.elo + w / 2, 1, 30,
                         e.matches, e.provisional, e.free_slots) for e in board]
        tables = choose_tables(board, players, slots=50, recent={}, rng=rng)
        seats = Counter(b for t in tables for b in t.bot_ids)
        free = {e.bot_id: e.free_slots for e in board}
        assert all(seats[b] <= free[b] for b in seats)
        assert all(len(set(t.bot_ids)) == players for t in tables)
        # it stops only when too few bots have a slot left or only settled bots do
        left = [e for e in board if e.free_slots > seats[e.bot_id]]
        assert len(left) < players or all(board_settled([e]) for e in left) or len(tables) == 50


def test_at_most_slots_tables_and_none_without_enough_free_bots() -> None:
    board = spread_board(12, free=3)
    assert len(choose_tables(board, players=4, slots=5, recent={}, rng=random.Random(8))) == 5
    assert choose_tables(board, players=4, slots=0, recent={}, rng=random.Random(8)) == []
    few = [settled(1, 1500), settled(2, 1500), settled(3, 1500, free=0)]
    assert choose_tables(few, players=3, slots=4, recent={}, rng=random.Random(8)) == []


def test_the_same_rng_gives_the_same_tables() -> None:
    board = [*spread_board(16, width=180.0, free=2), newcomer(40), newcomer(41, elo=1700, width=600, matches=3)]
    one = choose_tables(board, players=3, slots=8, recent={(1, 2): 1}, rng=random.Random(9))
    two = choose_tables(board, players=3, slots=8, recent={(1, 2): 1}, rng=random.Random(9))
    assert one == two
    assert all(isinstance(t, Table) for t in one)


def test_settled_board() -> None:
    assert board_settled(spread_board(width=100.0))
    assert not board_settled([*spread_board(width=100.0), newcomer(99)])
    assert not board_settled(spread_board(width=400.0))
    pinned = [Entrant(1, 1500, 1200, 1800, 1, 1, 50, False, 1), Entrant(2, 900, 850, 950, 2, 2, 50, False, 1)]
    assert board_settled(pinned)  # a wide interval whose rank is resolved anyway
    assert board_settled([])


def test_maintenance_tables_on_a_settled_board() -> None:
    tables = choose_tables(spread_board(width=100.0), players=3, slots=2, recent={}, rng=random.Random(10))
    assert [t.reason for t in tables] == ["maintenance", "maintenance"]


def test_provisional_is_an_interval_not_a_count() -> None:
    assert is_provisional(1000.0, 1400.0)
    assert not is_provisional(1400.0, 1600.0)


def test_share_slots_splits_equal_ladders_equally() -> None:
    demand = {"a": 10, "b": 10, "c": 10}
    assert share_slots(demand, 9) == {"a": 3, "b": 3, "c": 3}
    assert sum(share_slots(demand, 100).values()) == 30


def test_share_slots_gives_what_a_small_ladder_leaves_to_the_others() -> None:
    assert share_slots({"a": 1, "b": 10, "c": 10}, 9) == {"a": 1, "b": 4, "c": 4}
    assert share_slots({"a": 0, "b": 10}, 4) == {"a": 0, "b": 4}


def test_share_slots_rounds_in_favour_of_the_ladder_that_played_least() -> None:
    demand = {"a": 5, "b": 5, "c": 5}
    assert share_slots(demand, 4, played={"a": 10, "b": 3, "c": 7}) == {"a": 1, "b": 2, "c": 1}
    played = Counter[str]()
    for _ in range(30):
        for ladder, units in share_slots(demand, 2, played=played).items():
            played[ladder] += units
    assert max(played.values()) - min(played.values()) <= 1


def test_share_slots_by_weight() -> None:
    assert share_slots({"a": 10, "b": 10}, 9, weights={"a": 2.0, "b": 1.0}) == {"a": 6, "b": 3}


def test_a_settled_ladder_does_not_reopen_over_bootstrap_noise() -> None:
    board = spread_board(width=140.0)
    assert ladder_settled(board, was_settled=False)
    noisy = [*board[:-1], settled(19, board[-1].elo, width=165.0)]  # a little over the settled width
    assert not ladder_settled(noisy, was_settled=False)
    assert ladder_settled(noisy, was_settled=True)
    assert not ladder_settled([*board[:-1], settled(19, board[-1].elo, width=260.0)], was_settled=True)
    # the noisy bot does not start tables on a settled ladder: maintenance
    tables = choose_tables(noisy, players=3, slots=1, recent={}, rng=random.Random(12),
                           settled_width=settled_width(True))
    assert [t.reason for t in tables] == ["maintenance"]


def test_a_newcomer_does_not_reopen_a_settled_ladder_for_the_others() -> None:
    noisy = [*spread_board(width=140.0)[:-1], settled(19, 1950.0, width=165.0), newcomer(99)]
    assert ladder_settled(noisy, was_settled=True)
    assert not board_settled(noisy, settled_width(True))  # the newcomer still wakes the ladder's rate
    tables = choose_tables(noisy, players=3, slots=4, recent={}, rng=random.Random(13),
                           settled_width=settled_width(True))
    assert [t.reason for t in tables] == ["placement of 99"]

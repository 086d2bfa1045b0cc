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
    placing,
    share_slots,
    unsettled_bots,
)
from arena.ratings.provisional import is_provisional, is_settled


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
    # 0..4 far apart (none within 150 Elo of 1600) and pinned down; 10 and 11 ten Elo apart with wide
    # overlapping intervals
    board = [settled(i, 1150.0 + 300.0 * i, width=60.0) for i in range(5)]
    board += [settled(10, 1600.0, width=200.0), settled(11, 1610.0, width=200.0)]
    (table,) = choose_tables(board, players=2, slots=1, recent={}, rng=random.Random(5))
    assert set(table.bot_ids) == {10, 11}
    assert table.reason in ("uncertain rank of 10", "uncertain rank of 11")


def test_settled_bots_rest_while_one_bot_is_still_uncertain() -> None:
    """Only an unsettled bot (the wide one and its two neighbours, whose order with it is open) starts a
    table; the other settled bots play as their opponents, not among themselves."""
    board = [*spread_board(width=100.0), settled(50, 1510.0, width=260.0)]
    assert unsettled_bots(board) == {50, 10, 11}
    tables = choose_tables(board, players=3, slots=5, recent={}, rng=random.Random(11))
    assert tables[0].reason == "uncertain rank of 50" and 50 in tables[0].bot_ids
    anchors = [int(t.reason.rsplit(" ", 1)[-1]) for t in tables]
    assert set(anchors) <= {50, 10, 11} and len(tables) <= 3  # never 5: the rest of the board rests


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
        left = [e for e in board if e.free_slots > seats[e.bot_id]]
        # it stops only when too few bots have a slot left or none left may anchor (settled, or already anchored)
        unsettled = unsettled_bots(board)
        anchors = {t.reason.rsplit(" ", 1)[-1] for t in tables}
        assert len(left) < players or len(tables) == 50 or all(
            e.bot_id not in unsettled or str(e.bot_id) in anchors for e in left)


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
    pinned = [Entrant(1, 1500, 1360, 1640, 1, 1, 50, False, 1), Entrant(2, 900, 850, 950, 2, 2, 50, False, 1)]
    assert board_settled(pinned)  # a wide interval whose rank is told apart from its neighbour's anyway
    assert not board_settled([])  # no data: as the leaderboard's ``settled`` says


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
    noisy = [*board[:-1], settled(19, board[-1].elo, width=165.0)]  # a little over the tie width
    assert not ladder_settled(noisy, was_settled=False)
    assert ladder_settled(noisy, was_settled=True)
    assert not ladder_settled([*board[:-1], settled(19, board[-1].elo, width=260.0)], was_settled=True)
    # the noisy bot does not start tables on a settled ladder: maintenance
    tables = choose_tables(noisy, players=3, slots=1, recent={}, rng=random.Random(12), was_settled=True)
    assert [t.reason for t in tables] == ["maintenance"]


def test_a_newcomer_does_not_reopen_a_settled_ladder_for_the_others() -> None:
    noisy = [*spread_board(width=140.0)[:-1], settled(19, 1950.0, width=165.0), newcomer(99)]
    assert ladder_settled(noisy, was_settled=True)
    assert not board_settled(noisy, was_settled=True)  # the newcomer still wakes the ladder's rate
    tables = choose_tables(noisy, players=3, slots=4, recent={}, rng=random.Random(13), was_settled=True)
    assert [t.reason for t in tables] == ["placement of 99"]


def test_placing_is_provisional_or_far_fewer_matches_than_the_board() -> None:
    board = [*spread_board(), settled(30, 1525.0, width=200.0, matches=20), newcomer(31, matches=2)]
    assert placing(board) == {30, 31}
    assert placing(spread_board()) == set()
    assert placing([]) == set()


def test_a_settled_ladder_stays_settled_while_a_newcomer_past_provisional_is_placed() -> None:
    """Benchmark 2's regression: once a newcomer's interval left ``provisional`` (under 300 Elo) but its
    rank was still open, the ladder reopened and every bot near the tie width played again."""
    board = [*spread_board(width=140.0), settled(30, 1525.0, width=220.0, matches=15)]
    assert not board_settled(board, was_settled=True)  # the newcomer's rank is open: no maintenance rate
    assert ladder_settled(board, was_settled=True)  # but the settled bots are not reopened for it
    tables = choose_tables(board, players=3, slots=5, recent={}, rng=random.Random(14), was_settled=True)
    assert [t.reason for t in tables] == ["uncertain rank of 30"]
    # the same bot with as many matches as the others is no newcomer: its open rank reopens the ladder
    assert not ladder_settled([*spread_board(width=140.0), settled(30, 1525.0, width=220.0)], was_settled=True)


def test_a_bot_being_placed_anchors_before_a_more_uncertain_settled_one() -> None:
    board = [*spread_board(width=100.0), settled(30, 1525.0, width=180.0, matches=10),
             settled(31, 1275.0, width=290.0, matches=60)]
    tables = choose_tables(board, players=3, slots=2, recent={}, rng=random.Random(15))
    assert tables[0].reason == "uncertain rank of 30"


def test_the_ladder_and_the_leaderboard_share_one_settled_rule() -> None:
    """``board_settled`` is the leaderboard's ``is_settled`` on the same rows: no second definition."""
    rng = random.Random(16)
    outcomes = set()
    for round_ in range(200):
        board = [newcomer(99)] if round_ % 10 == 0 else []  # now and then a provisional bot as well
        for i in range(12):
            elo, width = rng.gauss(1500, 150), rng.uniform(60, 180)
            board.append(Entrant(i, elo, elo - width / 2, elo + width / 2, 1, 12, 40,
                                 is_provisional(elo - width / 2, elo + width / 2), 1, rng.choice((0.6, 0.97))))
        settled_here = board_settled(board)
        assert settled_here == is_settled(sorted(board, key=lambda e: -e.elo))
        outcomes.add(settled_here)
    assert outcomes == {True, False}  # both cases were met


def test_opponents_close_in_as_intervals_narrow() -> None:
    """A Thompson draw: wide intervals give nearly random tables (long-range links), narrow ones tables of
    near-equal bots."""
    def spread_within_tables(width: float) -> float:
        board = [settled(i, 1000.0 + 25.0 * i, width=width, n=40) for i in range(40)]
        rng = random.Random(17)
        gaps = [max(t.bot_ids) - min(t.bot_ids) for _ in range(30)
                for t in choose_tables(board, players=3, slots=8, recent={}, rng=rng)]
        return sum(gaps) / len(gaps)

    assert spread_within_tables(800.0) > 3 * spread_within_tables(120.0)


def test_regression_one_owners_bots_sat_at_one_table_and_pooled_their_hands() -> None:
    """A red-team owner submitted two bots served by one process: the scheduler seated them together in 180 of
    255 matches (it logged "placing spy-b: a table with pj-heuristic and spy-a"), so that process saw two hands
    at once, and a third bot made all-mallory tables that farmed rating. No table seats two bots of one owner
    now; the arena's own bots (owner None: its organizers') still may share one."""
    from dataclasses import replace

    board = [replace(e, owner=f"owner-{e.bot_id % 5}") for e in spread_board(n=15, free=3)]
    board += [replace(newcomer(99, free=3), owner="owner-0")]
    for seed in range(30):
        for table in choose_tables(board, players=3, slots=6, recent={}, rng=random.Random(seed)):
            owners = [next(e.owner for e in board if e.bot_id == b) for b in table.bot_ids]
            assert len(set(owners)) == 3, (table, owners)
    mallory = [replace(settled(i, 1500.0 + i, free=2), owner="mallory") for i in range(4)]
    assert choose_tables([*mallory, replace(newcomer(9), owner="alice")], players=3, slots=4, recent={},
                         rng=random.Random(1)) == []  # no table for mallory's bots but with each other
    house = [replace(settled(i, 1500.0 + 10 * i), owner=None) for i in range(3)]
    assert len(choose_tables(house, players=3, slots=1, recent={}, rng=random.Random(1))) == 1


def test_table_room_counts_what_the_owner_rule_lets_the_free_slots_fill() -> None:
    from dataclasses import replace

    from arena.domain.ladder_planner import table_room

    def bots(owner, count: int, free: int = 1) -> list[Entrant]:
        return [replace(settled(hash((owner, i)) % 10_000, 1500.0, free=free), owner=owner) for i in range(count)]

    assert table_room(bots("mallory", 6), 3) == 0  # one owner: no table at all
    assert table_room(bots("a", 2) + bots("b", 1), 3) == 0  # two owners: no table of three
    assert table_room(bots("a", 4) + bots("b", 2) + bots("c", 2), 3) == 2
    assert table_room(bots("a", 6) + bots("b", 1) + bots("c", 1), 3) == 1  # each table needs a b and a c
    assert table_room(bots(None, 6), 3) == 2  # the arena's own bots count one by one
    assert table_room(bots("a", 1, free=4) + bots("b", 1, free=4) + bots("c", 1, free=2), 3) == 2


def test_regression_two_accounts_put_one_server_behind_two_seats() -> None:
    """A second red-team review: two accounts submitted bots at the same URL and sat together at every
    rotation of a table, one server seeing two hands. Bots served at one address count as one owner."""
    from arena.domain.ladder_planner import seating_owners

    owners = seating_owners([(1, 10, "http://127.0.0.1:5402"), (2, 11, "http://127.0.0.1:5402/"),
                             (3, 12, "http://127.0.0.1:5403"), (4, 13, "http://127.0.0.1:5404"),
                             (5, 13, "http://127.0.0.1:5403/other"), (6, None, "http://127.0.0.1:5402"),
                             (7, None, "http://127.0.0.1:5402")])
    assert owners[1] == owners[2]  # one server, two accounts
    assert owners[3] == owners[4] == owners[5]  # account 13 serves at 5404 and at 5403, where account 12 is
    assert owners[1] != owners[3]
    assert owners[6] is None and owners[7] is None  # the arena's own bots may share a table

"""Schedules: seats balanced exactly, pairs as equal as the design allows, one seed per table."""

from __future__ import annotations

import random
from itertools import combinations
from math import comb

import pytest

from arena.domain.schedules import design_tables, pair_counts, round_robin, seat_counts, table_seeds

SIZES = [(n, k) for n in range(2, 14) for k in range(2, 7) if k <= n]


def bots(n: int) -> list[str]:
    return [f"bot{i}" for i in range(n)]


@pytest.mark.parametrize(("n", "k"), SIZES)
def test_every_bot_holds_every_seat_equally_often_and_meets_everyone(n: int, k: int) -> None:
    schedule = round_robin(bots(n), k)
    counts = seat_counts(schedule)
    assert set(counts) == set(bots(n))
    assert len({count for seats in counts.values() for count in seats}) == 1
    assert set(pair_counts(schedule)) == {frozenset(pair) for pair in combinations(bots(n), 2)}


@pytest.mark.parametrize(("n", "k"), SIZES)
def test_each_table_is_played_in_all_rotations_on_one_seed(n: int, k: int) -> None:
    schedule = round_robin(bots(n), k, seed=11)
    by_table: dict[int, list] = {}
    for match in schedule:
        by_table.setdefault(match.table, []).append(match)
    seeds = [matches[0].seed for matches in by_table.values()]
    assert len(set(seeds)) == len(seeds)  # distinct across tables
    for matches in by_table.values():
        assert [m.rotation for m in matches] == list(range(k))
        assert len({m.seed for m in matches}) == 1  # shared by the rotations
        for seat in range(k):
            assert len({m.bots[seat] for m in matches}) == k  # every member in every seat once


def test_eight_bots_four_seats_is_the_14_table_affine_design() -> None:
    """AG(3,2): 14 planes, every pair on exactly 3, resolvable (each plane's complement is a plane, so the
    14 split into 7 rounds of two disjoint tables). Played in 4 rotations: 56 matches, each bot 7 times in
    each seat, each pair together 3 * 4 = 12 times."""
    tables = design_tables(8, 4)
    assert len(tables) == 14
    assert all(sum(set(pair) <= set(t) for t in tables) == 3 for pair in combinations(range(8), 2))
    assert {tuple(sorted(set(range(8)) - set(t))) for t in tables} == set(tables)
    schedule = round_robin(bots(8), 4)
    assert len(schedule) == 56
    assert all(seats == [7, 7, 7, 7] for seats in seat_counts(schedule).values())
    assert set(pair_counts(schedule).values()) == {12}


@pytest.mark.parametrize("n", range(2, 10))
def test_two_seats_is_a_round_robin_of_colour_swapped_pairs(n: int) -> None:
    schedule = round_robin(bots(n), 2)
    assert len(schedule) == n * (n - 1)
    assert set(pair_counts(schedule).values()) == {2}
    for first, second in zip(schedule[::2], schedule[1::2], strict=True):
        assert second.bots == first.bots[::-1] and second.seed == first.seed


@pytest.mark.parametrize(
    ("n", "k", "cap", "tables", "together"),
    [
        (5, 4, 70, 5, 3 * 4),  # all 4-subsets: every pair in C(3, 2) = 3
        (6, 3, 70, 20, 4 * 3),  # all 3-subsets: C(4, 1) = 4
        (6, 4, 70, 15, 6 * 4),  # all 4-subsets: C(4, 2) = 6
        (7, 3, 70, 7, 1 * 3),  # Fano plane
        (13, 4, 70, 13, 1 * 4),  # cyclic difference set {0, 1, 3, 9} mod 13
        (15, 3, 70, 35, 1 * 3),  # PG(3, 2) lines
        (16, 4, 140, 140, 7 * 4),  # AG(4, 2) planes, once the cap allows 140 tables
        (9, 4, 126, 126, 21 * 4),  # all 4-subsets of 9: C(7, 2) = 21
    ],
)
def test_balanced_designs_meet_every_pair_equally(n: int, k: int, cap: int, tables: int, together: int) -> None:
    assert len(design_tables(n, k, cap)) == tables
    if tables == comb(n, k):
        assert sorted(design_tables(n, k, cap)) == list(combinations(range(n), k))
    assert set(pair_counts(round_robin(bots(n), k, max_tables=cap)).values()) == {together}


@pytest.mark.parametrize(("n", "tables"), [(50, 250), (16, 32), (9, 9)])
def test_without_a_design_under_the_cap_pairs_stay_close(n: int, tables: int) -> None:
    """The greedy cyclic design: every pair at 1 or 2 tables (4 or 8 matches), seats exactly balanced. For
    16 bots the 140-table AG(4, 2) and for 9 bots the 126 4-subsets exceed the default cap of 70."""
    schedule = round_robin(bots(n), 4)
    assert len(schedule) == 4 * tables
    assert set(pair_counts(schedule).values()) == {4, 8}
    assert len({tuple(seats) for seats in seat_counts(schedule).values()}) == 1


def test_cycles_repeat_the_design_on_fresh_seeds() -> None:
    one = round_robin(bots(8), 4, seed=3)
    two = round_robin(bots(8), 4, seed=3, cycles=2)
    assert [m.bots for m in two] == [m.bots for m in one] * 2
    assert [m.table for m in two[-4:]] == [27] * 4
    assert len({m.seed for m in two}) == 28
    assert two[: len(one)] == one  # deterministic from the tournament seed
    assert {m.seed for m in round_robin(bots(8), 4, seed=4)}.isdisjoint({m.seed for m in one})


def test_refused_inputs() -> None:
    with pytest.raises(ValueError):
        round_robin(bots(3), 4)
    with pytest.raises(ValueError):
        round_robin(["a", "a", "b"], 2)
    with pytest.raises(ValueError):
        round_robin(bots(4), 2, cycles=0)
    with pytest.raises(ValueError):
        design_tables(4, 1)


def test_seeds_regression_the_public_tournament_seed_predicted_every_deal() -> None:
    """Bug: match seeds were ``random.Random(tournament seed).sample(...)``, and the tournament seed was
    public, so anyone could compute every deal before it was played. Seeds are now keyed: the same seed
    and key give the same deals (an organizer's rerun), another key (another arena) gives others, and the
    old public derivation predicts none of them."""
    keyed = [m.seed for m in round_robin(bots(5), 3, seed=7, key=b"arena-a")]
    assert keyed == [m.seed for m in round_robin(bots(5), 3, seed=7, key=b"arena-a")]
    other_arena = {m.seed for m in round_robin(bots(5), 3, seed=7, key=b"arena-b")}
    tables = len(set(keyed))
    old_derivation = set(random.Random(7).sample(range(1, 2**63), tables))
    assert set(keyed).isdisjoint(other_arena) and set(keyed).isdisjoint(old_derivation)
    assert all(0 < seed < 2**63 for seed in keyed)
    assert len(table_seeds(7, 1000, b"k")) == len(set(table_seeds(7, 1000, b"k"))) == 1000


@pytest.mark.parametrize(("n", "k"), [(2, 2), (4, 3), (7, 3), (8, 4)])
def test_independent_deals_give_every_match_its_own_seed_and_keep_seats_balanced(n: int, k: int) -> None:
    duplicate = round_robin(bots(n), k, seed=3, key=b"k", cycles=2)
    independent = round_robin(bots(n), k, seed=3, key=b"k", cycles=2, duplicate=False)
    assert [(m.table, m.rotation, m.bots) for m in independent] == [(m.table, m.rotation, m.bots) for m in duplicate]
    assert len({m.seed for m in independent}) == len(independent)
    assert seat_counts(independent) == seat_counts(duplicate)

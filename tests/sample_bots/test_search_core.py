"""The search bots' shared bandit: sequential halving on common worlds, with and without an incumbent."""

from __future__ import annotations

from sample_bots.search_core import Budget, halving_search


def _capped(iterations: int) -> Budget:
    return Budget(stop_at=float("inf"), max_iterations=iterations)


def _rewards(table: dict[int, list[float]]):  # type: ignore[no-untyped-def]
    """simulate(arm, k): arm's k-th reward, cycling through its list (a fake playout)."""
    return lambda arm, k: table[arm][k % len(table[arm])]


def test_halving_finds_the_arm_that_wins_every_world() -> None:
    simulate = _rewards({0: [0.2], 1: [0.3], 2: [0.9, 0.8], 3: [0.1], 4: [0.4], 5: [0.0]})
    result = halving_search(6, simulate, _capped(200))
    assert result.best() == 2
    assert result.visits[2] == max(result.visits)


def test_the_incumbent_stays_when_another_arm_leads_by_noise_only() -> None:
    # arm 1's mean is higher (0.55 against 0.5) but its lead is a fraction of a standard error
    simulate = _rewards({0: [0.5], 1: [1.0, 0.1], 2: [0.2]})
    assert halving_search(3, simulate, _capped(90)).best() == 1  # no incumbent: the higher mean
    result = halving_search(3, simulate, _capped(90), incumbent=0)
    assert result.best() == 0
    assert 0 in result.alive


def test_the_incumbent_gives_way_to_a_clearly_better_arm() -> None:
    simulate = _rewards({0: [0.1, 0.2], 1: [0.9, 0.8], 2: [0.0]})
    result = halving_search(3, simulate, _capped(90), incumbent=0)
    assert result.best() == 1


def test_the_incumbent_is_never_dropped_even_when_it_trails() -> None:
    simulate = _rewards({0: [0.0], 1: [1.0], 2: [0.5], 3: [0.6]})
    result = halving_search(4, simulate, _capped(120), incumbent=0)
    assert 0 in result.alive and result.visits[0] == max(result.visits)
    assert result.best() == 1

"""How good a leaderboard is, by simulation: rank accuracy and interval coverage by matches played.

Boards are simulated with known strengths ~ N(0, 200 Elo) and Plackett-Luce races (Bradley-Terry pairwise),
so every fitted table can be held against the truth:

* ``ladder`` boards: 60 bots, twelve each aiming at 100, 20, 5, 2 and 1 matches (tables drawn with
  probability proportional to the matches a bot still has to play): the settled bots and the newcomers of a
  ladder in one table. Coverage is counted per bucket of matches played (1, 2, 4-6, 15-25, 80-120).
* ``sparse`` boards: 50 bots and 50 matches, tables drawn uniformly (the case measured at 73 % before).
* ``deals`` boards: like ``ladder``, but every table is a duplicate deal played in all its k seat rotations,
  each rotation repeating the deal's first finishing order with probability 1/2 (the results of one deal
  are correlated; each is still a race of the true strengths). Fitted with the deals given and without.

Accuracy is Kendall's tau between fitted and true strengths over all bots of a board (averaged over boards);
coverage is the share of bots whose true strength, relative to its group's reference (the fit's anchor: the
mean of the bots a chain of matches links to it, ``arena.ratings.groups``, each weighted by the information
the fit has on it, ``arena.ratings.reference``; the weights are read off the table's own Elo, so they are
the ones the fit used), lies inside their 95 % interval. Of ``bench.ratings``' boards, two-player sparse
ones are often split (71 of 100, 9 % of their bots outside the largest group), two-player deal and ladder
boards now and then (15 and 3 of 100), the others never. Bots that never played are in no table and in no
reference (the deal boards leave some out: their coverage was measured against the mean of every simulated
bot until 2026-12). Until 2026-12-05 the reference was the group's plain mean.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from arena.ratings import ELO_PER_LOGIT, MatchOutcome, groups, reference
from arena.ratings.packed import pack, pair_tally

SPREAD_ELO = 200.0
DEAL_REPEAT = 0.5
BUCKETS = {1: (1, 1), 2: (2, 2), 5: (4, 6), 20: (15, 25), 100: (80, 120)}
TARGETS = (100, 20, 5, 2, 1)
PER_TARGET = 12


@dataclass
class Board:
    """A simulated log and the truth behind it (logits by bot)."""

    strength: dict[str, float]
    log: list[MatchOutcome]


def race(rng: random.Random, strength: Callable[[str], float], table: Sequence[str],
         deal: object = None) -> MatchOutcome:
    """A Plackett-Luce finish: finishing times exponential with rate e^strength."""
    finish = sorted(table, key=lambda bot: rng.expovariate(math.exp(strength(bot))))
    ranks = tuple(finish.index(bot) + 1 for bot in table)
    if deal is None:
        return MatchOutcome(tuple(table), ranks, "ranked")
    return MatchOutcome(tuple(table), ranks, "ranked", deal)


def strengths(rng: random.Random, bots: int) -> dict[str, float]:
    return {f"b{i:03d}": rng.gauss(0.0, SPREAD_ELO / ELO_PER_LOGIT) for i in range(bots)}


def ladder_tables(rng: random.Random, players: int) -> list[list[str]]:
    """Tables of a board whose bots aim at 100, 20, 5, 2 and 1 matches (PER_TARGET bots each)."""
    names = [f"b{i:03d}" for i in range(PER_TARGET * len(TARGETS))]
    left = np.array([target for target in TARGETS for _ in range(PER_TARGET)], dtype=float)
    gen = np.random.default_rng(rng.getrandbits(64))
    tables = []
    while np.count_nonzero(left) >= players:
        chosen = gen.choice(len(names), players, replace=False, p=left / left.sum())
        left[chosen] -= 1
        tables.append([names[i] for i in chosen])
    return tables


def ladder_board(seed: int, players: int) -> Board:
    rng = random.Random(seed)
    truth = strengths(rng, PER_TARGET * len(TARGETS))
    return Board(truth, [race(rng, truth.__getitem__, table) for table in ladder_tables(rng, players)])


def sparse_board(seed: int, players: int, bots: int = 50, matches: int = 50) -> Board:
    rng = random.Random(seed)
    truth = strengths(rng, bots)
    names = sorted(truth)
    return Board(truth, [race(rng, truth.__getitem__, rng.sample(names, players)) for _ in range(matches)])


def deal_board(seed: int, players: int) -> Board:
    """Each table of ``ladder_tables`` played as a duplicate deal, in its k seat rotations: with probability
    ``DEAL_REPEAT`` a rotation repeats the deal's first finishing order (the cards decided it), else it is
    a fresh race. Every match is still a Plackett-Luce race of the true strengths, but the rotations of one
    deal are correlated, so counting them as independent matches overstates what the log knows."""
    rng = random.Random(seed)
    truth = strengths(rng, PER_TARGET * len(TARGETS))
    log = []
    tables = ladder_tables(rng, players)
    for number, table in enumerate(tables[: max(1, len(tables) // players)]):
        first = race(rng, truth.__getitem__, table)
        order = sorted(table, key=lambda bot: first.ranks[table.index(bot)])
        log.append(MatchOutcome(first.bots, first.ranks, "ranked", ("deal", number)))
        for shift in range(1, players):
            rotated = table[shift:] + table[:shift]
            if rng.random() < DEAL_REPEAT:
                ranks = tuple(order.index(bot) + 1 for bot in rotated)
                log.append(MatchOutcome(tuple(rotated), ranks, "ranked", ("deal", number)))
            else:
                log.append(race(rng, truth.__getitem__, rotated, deal=("deal", number)))
    return Board(truth, log)


def without_deals(log: Sequence[MatchOutcome]) -> list[MatchOutcome]:
    return [MatchOutcome(m.bots, m.ranks, m.kind) for m in log]


def true_elo(board: Board, table: Sequence) -> dict[str, float]:
    """Each played bot's true strength as the table's interval reads it: Elo relative to its group's
    reference, weighted as the fit weighted it (from the table's Elo: the weights depend on differences only)."""
    log = pack(board.log)
    tally = pair_tally(log)
    games = tally.score + tally.score.T
    group = groups.labels(games)
    fitted = {row.bot: row.elo / ELO_PER_LOGIT for row in table}
    weights = reference.weights(games, np.array([fitted[bot] for bot in log.bots]), group)
    strength = np.array([board.strength[bot] for bot in log.bots])
    relative = reference.centred(strength, group, weights)
    return {bot: 1500.0 + ELO_PER_LOGIT * float(x) for bot, x in zip(log.bots, relative, strict=True)}


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-a between two sequences (no ties in continuous strengths)."""
    x, y = np.asarray(a), np.asarray(b)
    upper = np.triu_indices(len(x), 1)
    concordance = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    return float(concordance[upper].mean())


@dataclass
class Score:
    """Coverage counts per bucket and the boards' Kendall taus."""

    inside: dict[object, int]
    total: dict[object, int]
    taus: list[float]

    @classmethod
    def empty(cls) -> Score:
        return cls({}, {}, [])

    def coverage(self, bucket: object) -> float | None:
        return self.inside[bucket] / self.total[bucket] if self.total.get(bucket) else None

    def add(self, board: Board, table: Sequence) -> None:
        truth = true_elo(board, table)
        rated = [row for row in table]
        self.taus.append(kendall_tau([row.elo for row in rated], [board.strength[row.bot] for row in rated]))
        for row in rated:
            hit = row.elo_low <= truth[row.bot] <= row.elo_high
            buckets = ["all"] + [b for b, (lo, hi) in BUCKETS.items() if lo <= row.games <= hi]
            for bucket in buckets:
                self.inside[bucket] = self.inside.get(bucket, 0) + hit
                self.total[bucket] = self.total.get(bucket, 0) + 1

"""The ladder in simulation: a board of bots of known strength, tables played in rotations on one deal, the
real fit refreshed in coalesced batches, and the planner or random tables choosing what to play
(the benchmarks themselves: ``bench/ladder.py``'s docstring)."""

from __future__ import annotations

import copy
import inspect
import math
import random
from collections import Counter, deque
from collections.abc import Callable, Sequence

import numpy as np

from arena.domain.ladder_planner import (
    Entrant,
    Table,
    board_settled,
    choose_tables,
    ladder_settled,
    pair_key,
    share_slots,
)
from arena.ratings.bradley_terry import BASE_ELO, DEFAULT_PRIOR_SD, ELO_PER_LOGIT
from arena.ratings.leaderboard import LeaderboardRow, packed_leaderboard
from arena.ratings.packed import from_ids
from arena.ratings.provisional import is_provisional

BOOTSTRAP_SEED = 20261129  # services.leaderboards.refit's seed: the same log gives the same table
STRENGTH_SD = 200.0  # Elo
DEAL_SD = 50.0  # Elo of luck a deal gives each seat, shared by the table's rotations
SLOTS = 8  # tables asked for per round
REFIT_EVERY = 1  # refit after every round: one refit for the batch of matches that finished together
REFIT_EVERY_LOAD = 24  # benchmark 3 has no rounds: a refit per 24 finished matches of a ladder
MAINTENANCE_SLOTS = 1  # tables per round on a settled board (the maintenance rate)
RECENT_TABLES = 100  # the window of ``recent``
Z95 = 1.959963984540054
DEALS_AS_UNITS = "deals" in inspect.signature(from_ids).parameters  # a fit that resamples deals as units
FIT_OPTIONS: dict[str, int] = {}  # as the refit calls it; exploration runs may lower the resamples

Scheduler = Callable[["Board", int, int, random.Random], list[Table]]


class Board:
    """One leaderboard in simulation: true strengths, the finished matches, and the latest fit."""

    def __init__(self, strengths: Sequence[float], players: int, refit_every: int = REFIT_EVERY) -> None:
        self.truth = list(strengths)
        self.players = players
        self.refit_every = refit_every
        self.seats: list[list[int]] = []
        self.ranks: list[list[int]] = []
        self.deals: list[int] = []  # the table (deal) of each match: its rotations share it
        self.rows: dict[int, LeaderboardRow] = {}
        self.fitted_at = 0
        self.refits = 0
        self.recent: deque[tuple[int, ...]] = deque(maxlen=RECENT_TABLES)
        self.tables_played = 0  # tables played so far (the next deal's number)
        self.was_settled = False  # what the runtime keeps as Ladder.settled_at

    @property
    def matches(self) -> int:
        return len(self.seats)

    def add_bot(self, strength: float) -> int:
        self.truth.append(strength)
        return len(self.truth) - 1

    def play(self, table: Sequence[int], rng: random.Random) -> None:
        """All rotations of one table on one deal: seat s carries the same luck in every rotation."""
        k = len(table)
        luck = [rng.gauss(0.0, DEAL_SD) for _ in range(k)]
        for rotation in range(k):
            seated = [table[(rotation + s) % k] for s in range(k)]
            # Plackett-Luce race: finishing times ~ Exp(strength); the fastest ranks first
            times = [rng.expovariate(math.exp((self.truth[b] + luck[s]) / ELO_PER_LOGIT)) for s, b in enumerate(seated)]
            order = sorted(range(k), key=times.__getitem__)
            ranks = [0] * k
            for place, seat in enumerate(order):
                ranks[seat] = place + 1
            self.seats.append(seated)
            self.ranks.append(ranks)
            self.deals.append(self.tables_played)
        self.recent.append(tuple(table))
        self.tables_played += 1

    def maybe_refit(self, force: bool = False) -> bool:
        """Refit once ``refit_every`` matches have finished since the last one (the real refit's coalescing)."""
        if self.matches == self.fitted_at or (not force and self.matches - self.fitted_at < self.refit_every):
            return False
        deals = {"deals": np.array(self.deals)} if DEALS_AS_UNITS else {}  # as the refit passes them, where it does
        log = from_ids(np.array(self.seats), np.array(self.ranks), "ranked", **deals)
        start = {bot: row.elo for bot, row in self.rows.items()}
        table = packed_leaderboard(log, rng=random.Random(BOOTSTRAP_SEED), start=start, **FIT_OPTIONS)
        self.rows = {int(row.bot): row for row in table}
        self.fitted_at = self.matches
        self.refits += 1
        return True

    def estimate(self, bot: int) -> float:
        row = self.rows.get(bot)
        return row.elo if row else BASE_ELO

    def entrants(self, free: Callable[[int], int] = lambda _bot: 1) -> list[Entrant]:
        """The planner's view: the latest fit (the prior for a bot it has not seen) and each bot's free slots."""
        n = len(self.truth)
        out = []
        for bot in range(n):
            row = self.rows.get(bot)
            if row is None:
                wide = Z95 * DEFAULT_PRIOR_SD
                out.append(Entrant(bot, BASE_ELO, BASE_ELO - wide, BASE_ELO + wide, 1, n, 0, True, free(bot)))
            else:
                out.append(Entrant(bot, row.elo, row.elo_low, row.elo_high, row.rank_low, row.rank_high, row.games,
                                   is_provisional(row.elo_low, row.elo_high), free(bot), row.los_next))
        return out

    def recent_pairs(self) -> Counter[tuple[int, int]]:
        met: Counter[tuple[int, int]] = Counter()
        for table in self.recent:
            for x in range(len(table)):
                for y in range(x + 1, len(table)):
                    met[pair_key(table[x], table[y])] += 1
        return met

    def kendall_tau(self) -> float:
        """Tau-b between the leaderboard's Elo (the prior for unseen bots) and the true strengths."""
        est = np.array([self.estimate(b) for b in range(len(self.truth))])
        true = np.array(self.truth)
        i, j = np.triu_indices(len(true), 1)
        a, b = np.sign(est[i] - est[j]), np.sign(true[i] - true[j])
        denom = math.sqrt(float((a != 0).sum()) * float((b != 0).sum()))
        return float((a * b).sum()) / denom if denom else 0.0

    def true_rank(self, bot: int) -> int:
        return 1 + sum(1 for s in self.truth if s > self.truth[bot])


def planner(board: Board, players: int, slots: int, rng: random.Random,
            free: Callable[[int], int] = lambda _bot: 1) -> list[Table]:
    """The planner as the runtime calls it, with the settled ladder's hysteresis (``was_settled``)."""
    entrants = board.entrants(free)
    board.was_settled = bool(board.rows) and ladder_settled(entrants, board.was_settled)
    if board_settled(entrants, board.was_settled):
        slots = min(slots, MAINTENANCE_SLOTS)  # the runtime's maintenance rate, in rounds
    return choose_tables(entrants, players, slots, board.recent_pairs(), rng, board.was_settled)


def random_tables(board: Board, players: int, slots: int, rng: random.Random,
                  free: Callable[[int], int] = lambda _bot: 1) -> list[Table]:
    """Uniformly random tables among the bots with a free slot (each bot one table per round)."""
    idle = [b for b in range(len(board.truth)) if free(b) > 0]
    rng.shuffle(idle)
    count = min(slots, len(idle) // players)
    return [Table(tuple(idle[t * players:(t + 1) * players]), "random") for t in range(count)]


def strengths(n: int, rng: random.Random) -> list[float]:
    return [rng.gauss(0.0, STRENGTH_SD) for _ in range(n)]


def play_round(board: Board, scheduler: Scheduler, slots: int, rng: random.Random) -> int:
    """One tick: ask for tables, play them all, refit if due; the matches played."""
    tables = scheduler(board, board.players, slots, rng)
    for table in tables:
        board.play(table.bot_ids, rng)
    board.maybe_refit()
    return len(tables) * board.players


def matches_to_tau(bots: int, players: int, scheduler: Scheduler, seed: int, goal: float = 0.9,
                   limit: int = 20_000, stream: int = 0) -> tuple[int, int]:
    """Benchmark 1: matches until the fitted order's Kendall tau with the truth first reaches ``goal``
    (checked after every refit), and the refits it took; ``limit`` if never. ``stream`` > 0: the same
    strengths, other results (another draw of the play and the schedulers' randomness)."""
    rng = random.Random(seed if stream == 0 else seed * 1_000_003 + stream)
    board = Board(strengths(bots, random.Random(seed * 7919)), players)
    while board.matches < limit:
        fitted = board.fitted_at
        play_round(board, scheduler, SLOTS, rng)
        if board.fitted_at != fitted and board.kendall_tau() >= goal:
            return board.matches, board.refits
    return limit, board.refits


def settled_ladder(bots: int, players: int, seed: int, limit: int = 20_000) -> Board:
    """Benchmark 2's starting point: ``bots`` bots played by the planner until ``board_settled``."""
    rng = random.Random(seed)
    board = Board(strengths(bots, random.Random(seed * 7919)), players)
    while board.matches < limit and not (board.rows and board_settled(board.entrants())):
        if not play_round(board, planner, SLOTS, rng):
            break
    board.was_settled = bool(board.rows) and board_settled(board.entrants())
    return board


def newcomer_only(board: Board, players: int, slots: int, rng: random.Random) -> list[Table]:
    """The stricter baseline: one table a round, the newest bot and random opponents."""
    new = len(board.truth) - 1
    return [Table((new, *rng.sample(range(new), players - 1)), "newcomer")]


def matches_to_place(base: Board, strength: float, scheduler: Scheduler, seed: int, span: int = 5,
                     limit: int = 3_000) -> tuple[int, int]:
    """Benchmark 2: a new bot joins ``base``; matches (all the ladder plays) until its 95 % rank range is at
    most ``span`` ranks wide and holds its true rank, and the newcomer's own matches; ``limit`` if never."""
    board = copy.deepcopy(base)
    new = board.add_bot(strength)
    rng = random.Random(seed)
    start = board.matches
    own = 0
    while board.matches - start < limit:
        fitted = board.fitted_at
        tables = scheduler(board, board.players, SLOTS, rng)
        for table in tables:
            board.play(table.bot_ids, rng)
            own += board.players if new in table.bot_ids else 0
        if not tables:
            break
        board.maybe_refit()
        row = board.rows.get(new)
        if board.fitted_at != fitted and row is not None and row.rank_high - row.rank_low + 1 <= span \
                and row.rank_low <= board.true_rank(new) <= row.rank_high:
            return board.matches - start, own
    return limit, own


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def shared_budget(games: int, bots: int, players: int, budget: int, tables: int, seed: int
                  ) -> tuple[dict[str, int], float, int]:
    """Benchmark 3: ``games`` ladders of ``bots`` bots (capacities 1-3) share ``budget`` tables in flight
    through ``share_slots``; tables take the sum of k match durations (exponential, mean 1). Runs until
    ``tables`` tables have finished; returns matches finished per game, the worst in-flight / capacity ratio
    any bot reached, and how many times any bot was over its capacity."""
    rng = random.Random(seed)
    boards = {f"game{g + 1}": Board(strengths(bots, random.Random(seed * 7919 + g)), players, REFIT_EVERY_LOAD)
              for g in range(games)}
    capacity = {name: [rng.choice((1, 1, 2, 3)) for _ in range(bots)] for name in boards}
    busy = {name: [0] * bots for name in boards}
    running: list[tuple[float, str, tuple[int, ...]]] = []
    started: Counter[str] = Counter()
    finished: Counter[str] = Counter()
    worst, over, now, done = 0.0, 0, 0.0, 0
    while done < tables:
        flying = Counter(name for _, name, _ in running)
        plans = {name: planner(board, players, budget, rng, lambda b, n=name: capacity[n][b] - busy[n][b])
                 for name, board in boards.items()}
        target = share_slots({n: flying[n] + len(p) for n, p in plans.items()}, budget, played=started)
        for name, plan in plans.items():
            for table in plan[:max(0, target[name] - flying[name])]:
                running.append((now + sum(rng.expovariate(1.0) for _ in range(players)), name, table.bot_ids))
                started[name] += 1
                for bot in table.bot_ids:
                    busy[name][bot] += 1
                    worst = max(worst, busy[name][bot] / capacity[name][bot])
                    over += busy[name][bot] > capacity[name][bot]
        if not running:
            break
        running.sort()
        now, name, bots_at = running.pop(0)
        boards[name].play(bots_at, rng)
        boards[name].maybe_refit()
        for bot in bots_at:
            busy[name][bot] -= 1
        finished[name] += players
        done += 1
    return dict(finished), worst, over


ALL = frozenset(("1", "2", "3"))


def run(quick: bool = False, seeds: int | None = None, only: set[str] | frozenset[str] = ALL) -> int:
    """Print benchmarks 1-3 and their verdicts; 1 if a judged ratio fails (a quick run judges only the caps)."""
    count = seeds or (1 if quick else 4)
    bots1, goal, bots2 = (16, 0.8, 12) if quick else (50, 0.9, 30)
    smoke = ", QUICK smoke run (small boards, not judged)" if quick else ""
    print(f"ladder simulation: {count} seed(s) per setting{smoke}; refit after every round of up to {SLOTS} "
          f"tables (benchmark 3: every {REFIT_EVERY_LOAD} matches);"
          " only match counts are judged (the machine may be shared)")
    failed = False
    if "1" in only:
        for players in (3, 4):
            runs = {name: [matches_to_tau(bots1, players, scheduler, seed, goal)[0] for seed in range(1, count + 1)]
                    for name, scheduler in (("planner", planner), ("random", random_tables))}
            ratio = median(runs["planner"]) / median(runs["random"])
            failed |= _verdict(f"1. Kendall tau {goal} with {bots1} bots, {players} players: matches planner "
                               f"{runs['planner']} (median {median(runs['planner']):.0f}) vs random {runs['random']} "
                               f"(median {median(runs['random']):.0f})", ratio, 0.6, quick)
    if "1" in only or "bound" in only:
        bounds = [oracle_bound(strengths(bots1, random.Random(seed * 7919)), goal) for seed in range(1, count + 1)]
        print(f"   context, not judged: in an idealised model (oracle_bound) a scheduler that knew every strength "
              f"would need {median([b[0] for b in bounds]):.2f} of random's games by splitting games between bots "
              f"best, {median([b[1] for b in bounds]):.2f} if every game were also against an equal opponent "
              f"(seeds: {', '.join(f'{a:.2f}/{b:.2f}' for a, b in bounds)})")
    if "2" in only:
        totals: dict[str, list[int]] = {"planner": [], "newcomer": [], "random": []}
        own: dict[str, list[int]] = {"planner": [], "newcomer": [], "random": []}
        for seed in range(1, count + 1):
            base = settled_ladder(bots2, 3, seed)
            strength = random.Random(seed * 31).gauss(0.0, STRENGTH_SD)
            line = [f"   seed {seed}: settled after {base.matches} matches; newcomer {strength:+.0f} Elo:"]
            for name, scheduler in (("planner", planner), ("newcomer", newcomer_only), ("random", random_tables)):
                total, mine = matches_to_place(base, strength, scheduler, seed)
                totals[name].append(total)
                own[name].append(mine)
                line.append(f"{name} {total} ({mine} its own)")
            print(" ".join(line))
        ratio = median(totals["planner"]) / median(totals["random"])
        failed |= _verdict(f"2. newcomer in a settled {bots2}-bot ladder, rank range <= 5 holding its true rank: "
                           f"ladder matches planner median {median(totals['planner']):.0f} vs uniformly random "
                           f"tables {median(totals['random']):.0f}", ratio, 0.5, quick)
        print(f"   stricter baseline (one table a round, the newcomer and random opponents): its own matches "
              f"planner median {median(own['planner']):.0f} vs {median(own['newcomer']):.0f}, ratio "
              f"{median(own['planner']) / median(own['newcomer']):.2f}; all ladder matches "
              f"{median(totals['planner']) / median(totals['newcomer']):.2f} (shown, not judged)")
    if "3" in only:
        for seed in range(1, count + 1):
            played, worst, over = shared_budget(3, 20, 3, budget=10, tables=60 if quick else 300, seed=seed)
            spread = (max(played.values()) - min(played.values())) / (sum(played.values()) / len(played))
            print(f"3. seed {seed}: matches per game {played}; busiest bot at {worst:.2f} of its capacity, "
                  f"{over} times over it")
            failed |= _verdict("   load never over capacity (times over)", float(over), 0.0, False)
            failed |= _verdict("   fair share: (max - min) / mean matches per game", spread, 0.1, quick)
    return 1 if failed else 0


def _verdict(label: str, ratio: float, goal: float, quick: bool) -> bool:
    """Print one judged figure; whether it failed (a quick run's figures are shown, not judged)."""
    ok = ratio <= goal
    verdict = "not judged (quick)" if quick else "PASS" if ok else "FAIL"
    print(f"{label}: ratio {ratio:.3f} (goal <= {goal}): {verdict}")
    return not ok and not quick


def oracle_bound(strengths_elo: Sequence[float], goal: float) -> tuple[float, float]:
    """What knowing the truth could save at best, in an idealised model (context for benchmark 1, not judged).

    Bot i's error is independent with variance C / n_i after n_i games (C drops out of every ratio); a pair
    is misordered with probability Phi(-|d| / sqrt(C/n_i + C/n_j)); Kendall tau reaches ``goal`` when the
    misordered share is (1 - goal) / 2. Returns (games with the best split of games between bots / games with
    an equal split, the same when every game is also against an equal opponent: Fisher information 1/4 per
    game instead of the average p(1 - p) of random pairs)."""
    s = np.asarray(strengths_elo, dtype=float)
    n_bots = len(s)
    i, j = np.triu_indices(n_bots, 1)
    gap = np.abs(s[i] - s[j])
    target = (1.0 - goal) / 2.0 * len(gap)
    erfc = np.vectorize(math.erfc, otypes=[float])

    def misordered(games: np.ndarray) -> float:
        spread = np.sqrt(1.0 / games[i] + 1.0 / games[j])
        return float(0.5 * erfc(gap / spread / math.sqrt(2.0)).sum())

    low, high = 1e-6, 1.0
    while misordered(np.full(n_bots, high)) > target:
        high *= 2.0
    for _ in range(50):
        mid = (low + high) / 2.0
        low, high = (low, mid) if misordered(np.full(n_bots, mid)) <= target else (mid, high)
    equal = high * n_bots
    games = np.full(n_bots, high / 20.0)
    step = equal / 2000.0
    while misordered(games) > target:
        spread = np.sqrt(1.0 / games[i] + 1.0 / games[j])
        x = gap / spread
        term = np.exp(-x * x / 2.0) * gap / spread**3  # d(misordered)/d(1/n) per pair, up to a constant
        gain = (np.bincount(i, term, n_bots) + np.bincount(j, term, n_bots)) / games**2
        games[int(np.argmax(gain))] += step
    p = 1.0 / (1.0 + np.exp(-(s[i] - s[j]) / ELO_PER_LOGIT))
    matched = 0.25 / float((p * (1.0 - p)).mean())
    best = float(games.sum()) / equal
    return best, best / matched

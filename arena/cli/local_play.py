"""Tournaments and head-to-head tests against running bots, without the web service (as cutechess-cli
does for chess engines): the referee plays the matches in threads, the ratings are computed at the end."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.domain.schedules import ScheduledMatch, round_robin
from arena.ratings.leaderboard import LeaderboardRow, leaderboard
from arena.ratings.outcomes import MatchOutcome
from arena.ratings.sprt import Sprt, SprtStatus
from referee.games import get_game
from referee.protocol import TimeControls
from referee.runner import BotSpec, play_match

Progress = Callable[[int, int], None]


def _play_all(game: str, jobs: Sequence[tuple[Any, list[BotSpec], int, dict]], tc: TimeControls,
              workers: int) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Play every (key, bots, seed, params) job, ``workers`` at a time; yields (key, replay) as they end."""
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        pending: dict[Future, Any] = {}
        queue = iter(jobs)
        for key, bots, seed, params in queue:
            pending[pool.submit(play_match, game, bots, seed, params, tc, match_id=_match_id(seed, key))] = key
            if len(pending) >= workers:
                break
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                key = pending.pop(future)
                yield key, future.result()
                nxt = next(queue, None)
                if nxt is not None:
                    k, bots, seed, params = nxt
                    pending[pool.submit(play_match, game, bots, seed, params, tc, match_id=_match_id(seed, k))] = k


def _match_id(seed: int, key: Any) -> str:
    """The id the bots see: from the job alone, so seeded bots play a local run the same way every time."""
    return f"local-{seed}-{key}"


@dataclass
class LocalTournament:
    schedule: list[ScheduledMatch]
    replays: list[dict[str, Any]]
    table: list[LeaderboardRow]
    names: dict[int, str]


def run_tournament(game: str, urls: Sequence[str], seats: int, cycles: int, tc: TimeControls, workers: int,
                   seed: int, secret: str = "", out_dir: Path | None = None,
                   progress: Progress | None = None) -> LocalTournament:
    """A seat-balanced round robin between the bots at ``urls``; every replay kept in ``out_dir``."""
    spec = get_game(game).spec
    params = {"allow_two_players": True} if seats < spec.min_players else {}
    names = {i: url.split("://", 1)[-1] for i, url in enumerate(urls)}
    schedule = round_robin(list(range(len(urls))), seats, cycles=cycles, seed=seed)
    jobs = [(index, [BotSpec(urls[b], secret, names[b], b) for b in m.bots], m.seed, params)
            for index, m in enumerate(schedule)]
    replays: list[dict[str, Any] | None] = [None] * len(schedule)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    for done, (index, replay) in enumerate(_play_all(game, jobs, tc, workers), start=1):
        replays[index] = replay
        if out_dir is not None:
            (out_dir / f"match-{index:05d}.json").write_text(json.dumps(replay), encoding="utf-8")
        if progress is not None:
            progress(done, len(schedule))
    finished = [r for r in replays if r is not None]
    outcomes = [MatchOutcome.from_result([p["bot_id"] for p in r["players"]], r["result"], spec.ranking)
                for r in finished]
    table = leaderboard(outcomes, rng=random.Random(seed)) if outcomes else []
    return LocalTournament(schedule, finished, table, names)


def pair_score(replay: dict[str, Any], seat_of_a: int) -> float:
    """Bot A's game score in a two-seat match: 1 win, 0.5 draw, 0 loss."""
    ranks = replay["result"]["ranks"]
    mine, theirs = ranks[seat_of_a], ranks[1 - seat_of_a]
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def run_sprt(game: str, url_a: str, url_b: str, elo0: float, elo1: float, tc: TimeControls, workers: int,
             seed: int, alpha: float = 0.05, beta: float = 0.05, max_pairs: int = 5000, secret: str = "",
             progress: Callable[[SprtStatus], None] | None = None) -> SprtStatus:
    """Colour-swapped pairs (same seed, seats swapped) until the GSPRT decides or ``max_pairs`` runs out."""
    spec = get_game(game).spec
    params = {"allow_two_players": True} if spec.min_players > 2 else {}
    sprt = Sprt(elo0, elo1, alpha, beta)
    rng = random.Random(seed)
    a, b = BotSpec(url_a, secret, "A", "A"), BotSpec(url_b, secret, "B", "B")
    pending_pairs: dict[int, list[float | None]] = {}
    pair_seeds = [rng.randrange(1, 2**62) for _ in range(max_pairs)]

    def jobs() -> Iterator[tuple[Any, list[BotSpec], int, dict]]:
        for number, pair_seed in enumerate(pair_seeds):
            yield (number, 0), [a, b], pair_seed, params
            yield (number, 1), [b, a], pair_seed, params

    status = sprt.status()
    for (number, order), replay in _play_all(game, list(jobs()), tc, workers):
        scores = pending_pairs.setdefault(number, [None, None])
        scores[order] = pair_score(replay, 0 if order == 0 else 1)
        if None not in scores:
            sprt.add_pair(scores[0], scores[1])  # type: ignore[arg-type]
            del pending_pairs[number]
            status = sprt.status()
            if progress is not None:
                progress(status)
            if status.decision != "continue":
                break
    return status

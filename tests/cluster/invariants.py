"""What must hold after every scenario, read from the cluster's database and the bots' request log.

1. Every scheduled match (of the scenarios' tournaments, and every ladder match) is finished or
   cancelled, and its stored replay is the one its last claim played (a replay from an older attempt
   means a stale lease wrote it).
1b. The ladder scheduled no table twice (each table's rotations exactly once, each on a deal of its own, no
   deal dealt twice, the table numbers without gaps or repeats) and never had a bot in more ladder matches at
   once than its capacity, whichever scheduler was active when its host was cut off or killed.
2. Nothing was counted twice: seat results, live Elo games, tournament tallies and head-to-head pairs all
   agree with the finished matches.
3. Every stored leaderboard equals a fresh fit of the match log.
4. No bot received a request for a match after that match's result was recorded.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import permutations
from pathlib import Path

from sqlalchemy import func, or_, select

from arena.config import load_settings
from arena.ratings.leaderboard import leaderboard as fit_leaderboard
from arena.services.bot_owner import effective_capacity
from arena.services.leaderboards import BOOTSTRAP_SEED, match_log
from arena.storage.db import Database
from arena.storage.models import (
    Bot,
    Ladder,
    LiveRating,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    TournamentPair,
    TournamentScore,
)
from arena.storage.replays import decompress

DONE = {MatchStatus.FINISHED, MatchStatus.CANCELLED}


def check_all(db: Database, bot_log: Path, tournament_ids: list[int]) -> list[str]:
    """Every broken invariant, in words (empty when all hold)."""
    problems: list[str] = []
    with db.session(readonly=True) as session:
        problems += _every_match_done_once(session, tournament_ids)
        problems += _ladder_tables_once(session)
        problems += _no_bot_over_its_capacity(session)
        problems += _nothing_counted_twice(session)
        problems += _leaderboards_equal_a_fresh_fit(session)
        finished_at = {m: t.timestamp() for m, t in session.execute(
            select(Match.id, Match.finished_at).where(Match.finished_at.is_not(None))).all()}
    problems += _no_request_after_the_result(bot_log, finished_at)
    return problems


def _every_match_done_once(session, tournament_ids: list[int]) -> list[str]:  # type: ignore[no-untyped-def]
    problems = []
    rows = session.execute(select(Match.id, Match.status, Match.attempts, Match.replay_gz, Match.worker)
                           .where(or_(Match.tournament_id.in_(tournament_ids), Match.ladder_id.is_not(None)))).all()
    if not rows:
        return ["no match was scheduled"]
    for match_id, status, attempts, blob, worker in rows:
        if status not in DONE:
            faults = [(f["seat"], f["path"], f["kind"], f["message"][:120]) for f in decompress(blob)["faults"][:4]] \
                if blob else []
            problems.append(f"match {match_id} ended {getattr(status, 'value', status)} (worker {worker}, "
                            f"attempts {attempts}; faults {faults})")
        elif status == MatchStatus.FINISHED:
            played = decompress(blob)["match_id"]
            if played != f"m{match_id}a{attempts}":
                problems.append(f"match {match_id}: the stored replay is attempt {played}, the last claim was "
                                f"attempt {attempts} (a stale lease recorded it)")
    return problems


def _ladder_tables_once(session) -> list[str]:  # type: ignore[no-untyped-def]
    problems = []
    seats: dict[int, list[int]] = {}
    for match_id, bot_id in session.execute(select(MatchSeat.match_id, MatchSeat.bot_id).join(
            Match, Match.id == MatchSeat.match_id).where(Match.ladder_id.is_not(None)).order_by(MatchSeat.seat)):
        seats.setdefault(match_id, []).append(bot_id)
    tables: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for match_id, ladder_id, table, rotation, seed in session.execute(
            select(Match.id, Match.ladder_id, Match.table_index, Match.rotation, Match.seed)
            .where(Match.ladder_id.is_not(None))):
        tables.setdefault((ladder_id, table), []).append((rotation, seed, match_id))
    for ladder_id, count, players in session.execute(select(Ladder.id, Ladder.tables, Ladder.players)):
        numbers = sorted(t for (lid, t) in tables if lid == ladder_id)
        if numbers != list(range(count)):
            problems.append(f"ladder {ladder_id} counts {count} tables, its matches hold tables {numbers}")
        seeds = Counter()
        for table in numbers:
            rows = sorted(tables[(ladder_id, table)])
            first = seats[rows[0][2]]
            expected = [(r, first[r:] + first[:r]) for r in range(players)]
            if [(r, seats[m]) for r, _seed, m in rows] != expected:
                problems.append(f"ladder {ladder_id} table {table}: rotations {rows} are not each seat rotation once")
            seeds.update(seed for _r, seed, _m in rows)
        problems += [f"ladder {ladder_id}: deal {seed} dealt to {n} matches" for seed, n in seeds.items() if n > 1]
    return problems


def _no_bot_over_its_capacity(session) -> list[str]:  # type: ignore[no-untyped-def]
    """No bot ever played more ladder matches at once (from the last claim's start to the record) than its
    capacity: what it declared in ``GET /`` or its owner set, within the arena's cap (the SDK's bots, which
    the bots host serves, declare 2)."""
    settings = load_settings({})
    capacity = {bot.id: effective_capacity(bot, settings) for bot in session.scalars(select(Bot))}
    events: dict[int, list[tuple[float, int, int]]] = {}
    for match_id, bot_id, started, finished in session.execute(
            select(Match.id, MatchSeat.bot_id, Match.started_at, Match.finished_at)
            .join(MatchSeat, MatchSeat.match_id == Match.id)
            .where(Match.ladder_id.is_not(None), Match.status == MatchStatus.FINISHED)):
        events.setdefault(bot_id, []).extend([(started.timestamp(), 1, match_id), (finished.timestamp(), -1, match_id)])
    problems = []
    for bot_id, marks in events.items():
        playing: set[int] = set()
        for _when, step, match_id in sorted(marks, key=lambda m: (m[0], m[1])):  # an end before a start
            if step < 0:
                playing.discard(match_id)
                continue
            playing.add(match_id)
            if len(playing) > capacity[bot_id]:
                problems.append(f"bot {bot_id} (capacity {capacity[bot_id]}) played ladder matches "
                                f"{sorted(playing)} at once")
    return problems[:20]


def _nothing_counted_twice(session) -> list[str]:  # type: ignore[no-untyped-def]
    problems = []
    finished = Match.status == MatchStatus.FINISHED
    seats = Counter(dict(session.execute(
        select(MatchSeat.bot_id, func.count()).join(Match, Match.id == MatchSeat.match_id).where(finished)
        .group_by(MatchSeat.bot_id)).all()))
    live = Counter()
    for bot_id, games in session.execute(select(LiveRating.bot_id, LiveRating.games)).all():
        live[bot_id] += games
    if +live != +seats:
        problems.append(f"live Elo counted {dict(live)} games, the finished matches hold {dict(seats)}")
    tallied = session.execute(
        select(Match.tournament_id, MatchSeat.bot_id, func.count()).join(Match, Match.id == MatchSeat.match_id)
        .where(finished, Match.tournament_id.is_not(None)).group_by(Match.tournament_id, MatchSeat.bot_id)).all()
    expected = {(t, b): n for t, b, n in tallied}
    scores = {(t, b): n for t, b, n in session.execute(
        select(TournamentScore.tournament_id, TournamentScore.bot_id, TournamentScore.matches)).all() if n}
    if scores != expected:
        problems.append(f"tournament tallies {scores} differ from the finished matches {expected}")
    problems += _pairs_counted_once(session)
    return problems


def _pairs_counted_once(session) -> list[str]:  # type: ignore[no-untyped-def]
    """Every ordered pair of bots met in a finished tournament match is counted exactly once per match."""
    met: Counter = Counter()
    rows = session.execute(select(Match.tournament_id, MatchSeat.match_id, MatchSeat.bot_id)
                           .join(Match, Match.id == MatchSeat.match_id)
                           .where(Match.status == MatchStatus.FINISHED, Match.tournament_id.is_not(None))).all()
    by_match: dict[tuple[int, int], list[int]] = {}
    for tournament_id, match_id, bot_id in rows:
        by_match.setdefault((tournament_id, match_id), []).append(bot_id)
    for (tournament_id, _match), bots in by_match.items():
        for a, b in permutations(bots, 2):
            met[(tournament_id, a, b)] += 1
    counted = {(t, a, b): w + d + lost for t, a, b, w, d, lost in session.execute(
        select(TournamentPair.tournament_id, TournamentPair.bot_id, TournamentPair.other_id, TournamentPair.wins,
               TournamentPair.draws, TournamentPair.losses)).all() if w + d + lost}
    return [] if counted == dict(met) else [f"head-to-head tallies {counted} differ from the meetings {dict(met)}"]


def _leaderboards_equal_a_fresh_fit(session) -> list[str]:  # type: ignore[no-untyped-def]
    problems = []
    boards = session.execute(select(Match.game, Match.num_players).where(Match.status == MatchStatus.FINISHED)
                             .distinct()).all()
    for game, players in boards:
        log, _last = match_log(session, game, players)
        stored = {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.game == game,
                                                                            Rating.players == players))}
        fresh = fit_leaderboard(log, rng=random.Random(BOOTSTRAP_SEED))
        if {row.bot for row in fresh} != set(stored):
            problems.append(f"{game}/{players}: stored bots {sorted(stored)} differ from the fit's")
            continue
        for row in fresh:
            mine = stored[row.bot]
            same = (mine.games == row.games and (mine.rank, mine.rank_low, mine.rank_high)
                    == (row.rank, row.rank_low, row.rank_high)
                    and all(abs(a - b) < 1e-6 for a, b in ((mine.elo, row.elo), (mine.elo_low, row.elo_low),
                                                          (mine.elo_high, row.elo_high))))
            if not same:
                problems.append(f"{game}/{players}: bot {row.bot} stored {mine.games} games, Elo {mine.elo:.3f}; "
                                f"a fresh fit says {row.games} games, Elo {row.elo:.3f}")
    return problems


def _no_request_after_the_result(bot_log: Path, finished_at: dict[int, float]) -> list[str]:
    late = []
    for line in bot_log.read_text().splitlines():
        entry = json.loads(line)
        name = entry.get("match") or ""
        if not name.startswith("m") or "a" not in name:
            continue  # a health check or an `arena check`, not a match
        match_id = int(name[1:].split("a", 1)[0])
        recorded = finished_at.get(match_id)
        if recorded is not None and entry["t"] > recorded:
            late.append(f"bot :{entry['port']} got {entry['path']} turn {entry['turn']} of {name} "
                        f"{entry['t'] - recorded:.2f} s after match {match_id} was recorded")
    return late[:20]

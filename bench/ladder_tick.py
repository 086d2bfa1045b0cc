"""The ladder scheduler's tick on a database that has played for a while: CPU milliseconds per tick
(``time.process_time``: the tick's own cost on a shared machine) against the ladder matches stored, and
the same with the last-hour count's index (revision 0009, ``ix_matches_ladder_created``) dropped, to show
what the index buys.

    python -m bench.ladder_tick [--matches 0 20000 100000] [--bots 30] [--ticks 20]

Each database holds ``--bots`` bots on the piranha-pedro 3-player ladder, rated, and that many finished
ladder matches (three seats each) created over the past 30 days, none in the last hour; every tick plans
and releases on it as the running scheduler does (probation review included) and is rolled back, so each
tick sees the same state. Judged: the tick's CPU time at the largest history over its time at none
(goal: at most 2: a tick costs what is owed and what the last hour made, not what was ever played).
"""

from __future__ import annotations

import argparse
import inspect
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sqlalchemy import insert, select, text

from arena.config import load_settings
from arena.services.accounts import create_account
from arena.services.ladder_scheduler import tick
from arena.services.ladders import ensure_ladders
from arena.storage.db import Database
from arena.storage.models import Bot, Ladder, Match, MatchSeat, MatchStatus, Rating, utcnow

GAME, PLAYERS = "piranha-pedro", 3
GOAL_RATIO = 2.0
WORKERS = {"workers": 3} if "workers" in inspect.signature(tick).parameters else {}  # older code: no such argument


def fill(db: Database, bots: int, matches: int, rng: random.Random) -> None:
    """Bots, their ratings and ``matches`` finished ladder matches, in bulk."""
    settings = replace(load_settings(), ladder=True, ladder_players=str(PLAYERS))
    with db.session() as session:
        ensure_ladders(session, settings)
        owners = [create_account(session, f"owner-{i}")[0] for i in range(bots)]  # one table may seat them all
        rows = [Bot(owner_id=owners[i].id, name=f"b{i}", url=f"http://127.0.0.1:{20000 + i}", game=GAME, secret="s",
                    info={}) for i in range(bots)]
        session.add_all(rows)
        session.flush()
        ids = [b.id for b in rows]
        ladder_id = session.scalar(select(Ladder.id).where(Ladder.game == GAME, Ladder.players == PLAYERS))
        for rank, bot_id in enumerate(ids, 1):  # 30 games each: never newcomers, so every history plans alike
            session.add(Rating(game=GAME, players=PLAYERS, bot_id=bot_id, elo=1500 + 10 * rank, elo_low=1400,
                               elo_high=1600 + 10 * rank, rank=rank, rank_low=max(1, rank - 3),
                               rank_high=min(bots, rank + 3), games=30, provisional=False))
    now = utcnow()
    span = timedelta(days=30) - timedelta(hours=2)
    with db.engine.begin() as connection:
        for start in range(0, matches, 5000):
            batch = range(start, min(matches, start + 5000))
            made = [now - timedelta(days=30) + span * (i / max(matches, 1)) for i in batch]
            connection.execute(insert(Match), [
                {"ladder_id": ladder_id, "game": GAME, "num_players": PLAYERS, "seed": i // PLAYERS,
                 "params": {}, "time_limit_ms": 1000, "table_index": i // PLAYERS, "rotation": i % PLAYERS,
                 "status": MatchStatus.FINISHED, "created_at": at, "started_at": at,
                 "finished_at": at + timedelta(seconds=5)} for i, at in zip(batch, made, strict=True)])
            first = connection.scalar(select(Match.id).order_by(Match.id.desc()).limit(1)) - len(batch) + 1
            seats = []
            for offset in range(len(batch)):
                for seat, bot_id in enumerate(rng.sample(ids, PLAYERS)):
                    seats.append({"match_id": first + offset, "seat": seat, "bot_id": bot_id, "rank": seat + 1})
            connection.execute(insert(MatchSeat), seats)
    # no ANALYZE: the arena never runs it on SQLite (with statistics that say every match is finished,
    # SQLite would scan rather than look the few open matches up by status)


def time_ticks(db: Database, ticks: int) -> tuple[list[float], list[int]]:
    """CPU milliseconds and SQLite instructions (thousands: steady however loaded the machine) of each
    tick; every tick rolled back."""
    settings = replace(load_settings(), ladder=True, ladder_players=str(PLAYERS), ladder_per_hour=3600)
    key = b"k" * 32
    spent, steps = [], []
    for n in range(ticks):
        session = db.sessions()
        counted = [0]

        def count(counted: list[int] = counted) -> int:
            counted[0] += 1
            return 0

        try:
            session.connection().connection.driver_connection.set_progress_handler(count, 1000)
            now = utcnow()
            began = time.process_time()
            report = tick(session, settings, key, random.Random(n), now, now - timedelta(seconds=10), **WORKERS)
            spent.append((time.process_time() - began) * 1000)
            steps.append(counted[0])
            assert report.tables, "the tick planned nothing: the benchmark would time an idle tick"
        finally:
            session.rollback()
            session.close()
    return spent, steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, nargs="+", default=[0, 20000, 100000])
    parser.add_argument("--bots", type=int, default=30)
    parser.add_argument("--ticks", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"ladder tick on SQLite, {args.bots} bots, {args.ticks} ticks each; CPU ms per tick (process_time)")
    print(f"{'stored matches':>15} {'index':>9} {'cpu p50':>8} {'cpu max':>8} {'wall p50':>9} {'sqlite k-instr':>15}")
    medians: dict[tuple[int, bool], float] = {}
    for matches in args.matches:
        with tempfile.TemporaryDirectory(prefix="ladder-tick-") as folder:
            db = Database(f"sqlite:///{Path(folder) / 'arena.db'}")
            db.migrate()
            fill(db, args.bots, matches, random.Random(1))
            for indexed in (True, False):
                if not indexed:
                    with db.engine.begin() as connection:
                        connection.execute(text("DROP INDEX IF EXISTS ix_matches_ladder_created"))
                time_ticks(db, 2)  # warm: the page cache and SQLAlchemy's statement cache
                wall = time.perf_counter()
                spent, steps = time_ticks(db, args.ticks)
                wall_ms = (time.perf_counter() - wall) * 1000 / args.ticks
                medians[(matches, indexed)] = statistics.median(spent)
                print(f"{matches:>15} {'yes' if indexed else 'dropped':>9} {statistics.median(spent):>8.1f} "
                      f"{max(spent):>8.1f} {wall_ms:>9.1f} {statistics.median(steps):>15.0f}", flush=True)
            db.dispose()
    low, high = min(args.matches), max(args.matches)
    ratio = medians[(high, True)] / max(medians[(low, True)], 1e-9)
    print(f"ratio judged: cpu p50 at {high} stored / at {low}, with the index: {ratio:.2f} (goal <= {GOAL_RATIO})")
    return 0 if ratio <= GOAL_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())

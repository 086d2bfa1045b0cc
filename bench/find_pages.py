"""The index pages' queries and the bot page's parts on a big arena, one at a time: CPU and wall
milliseconds per call, judged by CPU max / 100 ms (the CPU column is the query's own cost when other
processes share the machine, as they do on the 2-core CI machine kind).

    python -m bench.find_pages [--matches 100000] [--bots 200] [--calls 20]

Fills a fresh SQLite database as ``bench.pages`` does (bulk inserts: seats, rating points, live
ratings, replays for a few), refits every leaderboard, then calls each service function the pages
call: the match list under every filter (first page and a page deep in the list), head to head, the
bot, tournament and leaderboard lists, and the bot page's parts (its rating chart included).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.services import find_lists, find_matches, page_queries, rating_history
from arena.services.find_matches import MatchFilter
from arena.services.leaderboards import refit
from arena.storage.db import Database
from arena.web.pages.charts import rating_chart
from bench.pages import fill

GOAL_MS = 100.0


def calls(ids: dict[str, Any], rng: random.Random) -> dict[str, Callable[[Any, int], Any]]:
    deep = max(2, ids["rows"]["matches"] // 50)  # near the oldest match
    others = ids["bots"]
    return {
        "bot page: ratings": lambda s, b: page_queries.bot_ratings(s, b),
        "bot page: chart": lambda s, b: [rating_chart(x) for x in rating_history.history(s, b)],
        "bot page: results by seat": lambda s, b: page_queries.results_by_seat(s, b),
        "bot page: latency": lambda s, b: page_queries.latency_summary(s, b),
        "matches: newest": lambda s, b: find_matches.find_matches(s, MatchFilter()),
        "matches: deep page": lambda s, b: find_matches.find_matches(s, MatchFilter(before=deep)),
        "matches: leaderboard": lambda s, b: find_matches.find_matches(s, MatchFilter(game="pajarracos", players=3)),
        "matches: status finished": lambda s, b: find_matches.find_matches(s, MatchFilter(status="finished")),
        "matches: tournament": lambda s, b: find_matches.find_matches(
            s, MatchFilter(tournament=rng.choice(ids["tournaments"]))),
        "matches: bot": lambda s, b: find_matches.find_matches(s, MatchFilter(bot=b)),
        "matches: bot deep": lambda s, b: find_matches.find_matches(s, MatchFilter(bot=b, before=deep)),
        "matches: bot + opponent": lambda s, b: find_matches.find_matches(
            s, MatchFilter(bot=b, opponent=rng.choice([x for x in others if x != b]))),
        "matches: bot won": lambda s, b: find_matches.find_matches(s, MatchFilter(bot=b, result="win")),
        "matches: bot shared first": lambda s, b: find_matches.find_matches(s, MatchFilter(bot=b, result="draw")),
        "head to head": lambda s, b: find_matches.head_to_head(s, b, rng.choice([x for x in others if x != b])),
        "bots list": lambda s, b: find_lists.find_bots(s, find_lists.ListFilter()),
        "tournaments of a bot": lambda s, b: find_lists.find_tournaments(s, find_lists.ListFilter(bot=b)),
        "leaderboards": lambda s, b: find_lists.leaderboards(s),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--calls", type=int, default=20, help="calls per query (one bot each)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        db = Database(f"sqlite:///{Path(folder) / 'bench.db'}")
        db.migrate()
        started = time.perf_counter()
        ids = fill(db, args.bots, args.matches, 30)
        for game, players in ids["boards"]:
            refit(db, game, players)
        print(f"SQLite: filled {ids['rows']} and refitted in {time.perf_counter() - started:.0f} s")
        rng = random.Random(1)
        bots = rng.sample(ids["bots"], min(args.calls, len(ids["bots"])))
        print(f"{'query':28} {'cpu p50':>8} {'cpu max':>8} {'wall p50':>9} {'cpu max/100ms':>14}")
        worst = 0.0
        for name, call in calls(ids, rng).items():
            cpu, wall = [], []
            with db.session(readonly=True) as session:
                for bot in bots:
                    c0, w0 = time.process_time(), time.perf_counter()
                    call(session, bot)
                    cpu.append((time.process_time() - c0) * 1000)
                    wall.append((time.perf_counter() - w0) * 1000)
            worst = max(worst, max(cpu) / GOAL_MS)
            print(f"{name:28} {statistics.median(cpu):8.2f} {max(cpu):8.2f} {statistics.median(wall):9.2f} "
                  f"{max(cpu) / GOAL_MS:14.2f}")
        db.dispose()
    print(f"worst cpu max / {GOAL_MS:.0f} ms = {worst:.2f} (goal <= 1): {'PASS' if worst <= 1 else 'FAIL'}")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())

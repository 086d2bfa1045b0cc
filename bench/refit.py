"""One leaderboard refit at 1,000 bots and 100,000 matches, timed on a kept database: CPU as well as wall.

    python -m bench.refit --db /tmp/arena-scale.db [--runs 4] [--profile]

Why besides ``bench.scale``: that benchmark fills a fresh database each run (two minutes on a busy machine)
and judges the wall clock, which on a shared 2-core machine measures the queue for a core as much as the
refit. This one fills ``--db`` (SQLite) once with ``bench.scale``'s arena and then only refits its big
leaderboard, printing wall and CPU seconds per run, so several versions of the code can be timed on the
same data in one session: point ``PYTHONPATH`` at a directory holding another checkout's ``arena`` and this
``bench``. ``--profile`` adds a cProfile (CPU clock) of one more refit. Not judged: ``bench.scale`` is.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

from arena.services.leaderboards import refit
from arena.storage.db import Database
from bench.scale import BIG, fill


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="SQLite file, filled on first use")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    fresh = not Path(args.db).exists()
    db = Database(f"sqlite:///{args.db}")
    if fresh:
        db.migrate()
        t0 = time.perf_counter()
        fill(db, 1000, 100_000, 0)
        refit(db, *BIG)  # the first refit packs the bulk-loaded outcome rows
        print(f"filled {args.db} in {time.perf_counter() - t0:.1f} s")
    for _ in range(args.runs):
        t0, c0 = time.perf_counter(), time.process_time()
        matches = refit(db, *BIG)
        print(f"refit {BIG[0]}/{BIG[1]} ({matches} matches): wall {time.perf_counter() - t0:.3f} s, "
              f"CPU {time.process_time() - c0:.3f} s, load average {os.getloadavg()[0]:.1f}")
    if args.profile:
        profile = cProfile.Profile(time.process_time)
        profile.runcall(refit, db, *BIG)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(r"arena", 25)
    db.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())

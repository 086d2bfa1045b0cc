"""Random, heuristic and search bots in one arena tournament per game, over HTTP on loopback.

    python -m bench.search_strength [--games NAME ...] [--cycles N] [--copies C] [--workers W] [--seed S]

Starts one bot of each kind (``--copies`` for more) as separate processes (``python -m
sample_bots.<kind>_bot --port 0``, exactly as a bot author would), runs a seat-balanced round robin per game through
``arena.cli.local_play.run_tournament`` (what ``arena tournament`` runs), and prints per game: the Elo
table with 95% intervals, whether every search bot ranks above every heuristic bot with
non-overlapping intervals, each bot's slowest decision against the time limit (from the replays'
``latency_ms``) and its faults (there must be none).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from arena.cli.local_play import LocalTournament, run_tournament
from referee.protocol import TimeControls

KINDS = ("random", "heuristic", "search")
#: Players per match and round-robin cycles per game. Two players in Piranha Pedro (in the basic
#: games everyone but the loser shares the win, so more seats would hide who played well); the
#: official minimum of three in Pajarracos. One copy of each kind: copies split the games that decide
#: the search-heuristic gap between more bots, each with a wider interval (simulated with the arena's
#: own fit at a 71% score between them: 2 copies and 12 cycles, 360 matches, separate the intervals in
#: 2 of 20 runs; 1 copy and 60 cycles, 360 matches, in 18 of 20).
PLAN = {
    "piranha-pedro": (2, 50),
    "piranha-pedro-ko": (2, 50),
    "piranha-pedro-ko-advanced": (2, 50),
    "pajarracos": (3, 60),
}
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class BotProcess:
    label: str
    command: list[str]
    process: subprocess.Popen
    url: str


def _start(label: str, kind: str, port: int) -> BotProcess:
    command = [sys.executable, "-m", f"sample_bots.{kind}_bot", "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()  # "<name> bot listening on http://127.0.0.1:PORT (games: ...)"
    match = re.search(r"(http://\S+)", line)
    if match is None:
        process.kill()
        raise RuntimeError(f"{label} did not start: {line!r}")
    return BotProcess(label, command, process, match.group(1))


@contextmanager
def running_bots(base_port: int = 0, copies: int = 1) -> Iterator[list[BotProcess]]:
    """``copies`` bots of each kind, each in its own process (own interpreter, own GIL), stopped at the
    end; on ports ``base_port``, ``base_port + 1``, ... (0: free ports)."""
    bots: list[BotProcess] = []
    try:
        for kind in KINDS:
            for copy in range(1, copies + 1):
                port = base_port + len(bots) if base_port else 0
                bots.append(_start(f"{kind}-{copy}", kind, port))
        yield bots
    finally:
        for bot in bots:
            bot.process.terminate()
        for bot in bots:
            try:
                bot.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                bot.process.kill()


@dataclass
class BotStats:
    decisions: int = 0
    max_latency_ms: float = 0.0
    faults: int = 0
    timeouts: int = 0


def latency_and_faults(result: LocalTournament, bots: int) -> list[BotStats]:
    """Per bot: decisions answered, the slowest one, faults and timeouts, from the replays."""
    stats = [BotStats() for _ in range(bots)]
    for replay in result.replays:
        owner = {p["seat"]: p["bot_id"] for p in replay["players"]}
        for step in replay["steps"]:
            for decision in step["decisions"]:
                bot = stats[owner[decision["seat"]]]
                if decision["latency_ms"] is not None:
                    bot.decisions += 1
                    bot.max_latency_ms = max(bot.max_latency_ms, decision["latency_ms"])
        for fault in replay["faults"]:
            bot = stats[owner[fault["seat"]]]
            bot.faults += 1
            bot.timeouts += fault["kind"] == "timeout"
    return stats


def separated(result: LocalTournament, labels: list[str]) -> bool:
    """Every search bot's 95% interval lies wholly above every heuristic bot's."""
    rows = {labels[row.bot]: row for row in result.table}
    search = [r for name, r in rows.items() if name.startswith("search")]
    heuristic = [r for name, r in rows.items() if name.startswith("heuristic")]
    return min(r.elo_low for r in search) > max(r.elo_high for r in heuristic)


def report(game: str, seats: int, cycles: int, seed: int, result: LocalTournament, labels: list[str],
           tc: TimeControls, urls: list[str], workers: int, seconds: float) -> tuple[bool, bool]:
    """Print one game's table, verdict and latencies; (search above heuristic, no faults and in time)."""
    stats = latency_and_faults(result, len(labels))
    print(f"\n## {game}: {seats} seats, {cycles} cycles, {len(result.replays)} matches, seed {seed}, "
          f"{seconds / 60:.0f} min")
    bots = " ".join(f"--bot {url}" for url in urls)
    print(f"command: arena tournament --game {game} {bots} --seats {seats} --cycles {cycles} "
          f"--time-limit-ms {tc.decision_ms} --workers {workers} --seed {seed}")
    print("\n| rank | bot | Elo | 95% interval | matches | decisions | slowest decision (ms) | faults |")
    print("|---:|---|---:|---|---:|---:|---:|---:|")
    for row in result.table:
        ranks = str(row.rank) if row.rank_low == row.rank_high else f"{row.rank_low}-{row.rank_high}"
        s = stats[row.bot]
        print(f"| {ranks} | {labels[row.bot]} | {row.elo:.0f} | [{row.elo_low:.0f}, {row.elo_high:.0f}] | "
              f"{row.games} | {s.decisions} | {s.max_latency_ms:.0f} | {s.faults} |")
    above = separated(result, labels)
    clean = all(s.faults == 0 and s.max_latency_ms < tc.decision_ms for s in stats)
    slowest = max(s.max_latency_ms for s, label in zip(stats, labels, strict=True) if label.startswith("search"))
    print(f"\nsearch above heuristic with non-overlapping 95% intervals: {'yes' if above else 'NO'}; "
          f"slowest search decision {slowest:.0f} ms of {tc.decision_ms} ms; "
          f"faults {sum(s.faults for s in stats)} (timeouts {sum(s.timeouts for s in stats)})", flush=True)
    return above, clean


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="*", default=list(PLAN), choices=list(PLAN))
    parser.add_argument("--cycles", type=int, default=None, help="round-robin cycles (default: per game, PLAN)")
    parser.add_argument("--copies", type=int, default=1, help="bots of each kind")
    parser.add_argument("--workers", type=int, default=2, help="matches at once (the bots share the cores)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--time-limit-ms", type=int, default=1000)
    parser.add_argument("--base-port", type=int, default=0, help="bots on this port and the next ones (0: free)")
    parser.add_argument("--out", type=Path, help="keep every replay under this folder, one subfolder per game")
    args = parser.parse_args(argv)
    tc = TimeControls(decision_ms=args.time_limit_ms)
    ok = True
    with running_bots(args.base_port, args.copies) as bots:
        labels = [bot.label for bot in bots]
        urls = [bot.url for bot in bots]
        print("bots: " + ", ".join(f"{b.label} = `{' '.join(['python', *b.command[1:]])}` at {b.url}" for b in bots))
        for game in args.games:
            seats, cycles = PLAN[game]
            cycles = args.cycles or cycles
            started = time.perf_counter()
            out = args.out / game if args.out else None
            result = run_tournament(game, urls, seats, cycles, tc, args.workers, args.seed, out_dir=out,
                                    progress=_progress)
            above, clean = report(game, seats, cycles, args.seed, result, labels, tc, urls, args.workers,
                                  time.perf_counter() - started)
            ok = ok and above and clean
    return 0 if ok else 1


def _progress(done: int, total: int) -> None:
    sys.stderr.write(f"\r{done}/{total} matches")
    sys.stderr.flush()
    if done == total:
        sys.stderr.write("\n")


if __name__ == "__main__":
    sys.exit(main())

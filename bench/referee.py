"""Referee overheads against real bots on loopback, each judged by a ratio measured in one run.

    python -m bench.referee [--hog]

1. Referee time per decision (turn-based Pajarracos, one seat acting: engine, encoding, signing, the
   call, vetting, commitment) / a bare kept-alive ``http.client`` round trip of the same /act bodies to
   the same bots: goal <= 1.5.
2. A simultaneous step of 6 bots that each take 100 ms / 100 ms: goal <= 1.02; and a simultaneous step
   of 6 instant bots / one bare round trip: goal <= 2 (the calls overlap). A 100 ms bot answers 100 ms
   after its request line arrived and does its own work (reading, parsing, act, encoding) at 50 ms, as
   a bot on a machine of its own takes none of the referee's CPU (``bench/bot_fleet.py``).
3. A bot that never answers, and one that drips a byte every 50 ms, limit 500 ms: worst step <=
   limit + 5 ms; ``--hog`` runs a busy loop on every core beside the whole benchmark.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from bench.bot_fleet import DEFER, BotFleet
from bench.busy import busy_loops
from referee.protocol import TimeControls
from referee.runner import BotSpec, play_match
from sample_bots.random_bot import make_bot
from sample_bots.sdk import start_in_thread
from tests import bot_zoo

LIMIT_MS = 500


def bare_round_trips(bodies: list[tuple[str, bytes]], repeat: int = 3, cpu: list[float] | None = None) -> float:
    """Median kept-alive ``http.client`` round trip (one connection per bot) of the given /act bodies:
    what the wire and the bot cost with no referee at all. ``cpu`` gets each round trip's CPU time in
    this process (us)."""
    cpu = [] if cpu is None else cpu
    conns: dict[str, http.client.HTTPConnection] = {}
    times: list[float] = []
    try:
        for _ in range(repeat):
            for url, body in bodies:
                conn = conns.get(url)
                if conn is None:
                    parts = urlsplit(url)
                    conn = conns[url] = http.client.HTTPConnection(parts.hostname or "", parts.port)
                t0, c0 = time.perf_counter(), time.process_time()
                conn.request("POST", "/act", body=body, headers={"Content-Type": "application/json"})
                conn.getresponse().read()
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1e6)
    finally:
        for conn in conns.values():
            conn.close()
    return statistics.median(times)


def bare_fan_out(bodies: list[tuple[str, bytes]], limit: int | None = None) -> tuple[float, int]:
    """Median time to send every request of one simultaneous step at once and read all the answers,
    with kept-alive ``http.client`` connections and no threads: the floor a fan-out can reach when the
    bots share the machine's cores; and how many answers that read."""
    steps: dict[tuple[str, int], list[tuple[str, bytes]]] = {}
    for url, body in bodies:
        request = json.loads(body)
        steps.setdefault((request["match_id"], request["turn"]), []).append((url, body))
    conns: dict[str, http.client.HTTPConnection] = {}
    times = []
    groups = [group for group in steps.values() if len(group) >= 6][:limit]
    try:
        for group in groups:
            for url, _body in group:
                if url not in conns:
                    parts = urlsplit(url)
                    conns[url] = http.client.HTTPConnection(parts.hostname or "", parts.port)
            t0 = time.perf_counter()
            for url, body in group:
                conns[url].request("POST", "/act", body=body, headers={"Content-Type": "application/json"})
            for url, _body in group:
                conns[url].getresponse().read()
            times.append((time.perf_counter() - t0) * 1000)
    finally:
        for conn in conns.values():
            conn.close()
    return statistics.median(times), sum(len(group) for group in groups)


def per_decision(matches: int = 20) -> tuple[float, float, float, float]:
    """Median referee wall time per decision (from the end of one step to the end of the next), the
    median bare round trip of the very same /act bodies to the same bots, and the medians of the CPU
    time this process spent per decision (all its threads, user + system) and per bare round trip:
    figures the machine's load blurs far less than wall time."""
    steps_ms: list[float] = []
    cpu_us: list[float] = []
    with BotFleet(3) as fleet:
        for seed in range(matches):
            last = [0.0, 0.0]

            def on_step(turn: int, decisions: list[dict], last: list[float] = last) -> None:
                now, cpu = time.perf_counter(), time.process_time()
                if turn > 1:
                    steps_ms.append((now - last[0]) * 1000)
                    cpu_us.append((cpu - last[1]) * 1e6)
                last[0], last[1] = now, cpu

            play_match("pajarracos", [BotSpec(u) for u in fleet.urls], seed=seed, on_step=on_step)
        bare_cpu: list[float] = []
        bare_ms = bare_round_trips(fleet.bodies(), cpu=bare_cpu)
    return statistics.median(steps_ms), bare_ms, statistics.median(cpu_us), statistics.median(bare_cpu)


@dataclass
class Six:
    """A 6-seat simultaneous step, measured: wall medians in ms, CPU in us."""

    step_ms: float  # median wall time of a 6-seat step, from the end of one step to the end of the next
    bare_ms: float  # median bare round trip of the same bodies (one request at a time)
    fan_ms: float  # median bare fan-out of the same steps (all six sent, then all read): the floor
    late_ms: list[float]  # how late the delayed bots answered after their delay
    step_late_ms: list[float]  # per referee step, how late the latest of its delayed answers left
    cpu_us: float  # median CPU of this process per step
    bot_own_ms: list[float]  # per delayed /act, how long the bot's write of its answer took
    bot_cpu_us: float  # the bots' CPU per answer in the bare fan-out (all six processes, summed / answers)


def simultaneous_six(delay_s: float, seeds: int = 3) -> Six:
    """A 6-seat simultaneous Piranha Pedro step when every bot takes ``delay_s`` (from its request's
    arrival), against the bare round trip and the bare fan-out of the same bodies."""
    marks: list[tuple[float, float, int, float]] = []  # each step's start and end, seats, CPU
    with BotFleet(6, delay_s) as fleet:
        for seed in range(seeds):
            last = [time.perf_counter(), time.process_time()]

            def on_step(turn: int, decisions: list[dict], last: list[float] = last) -> None:
                now, cpu = time.perf_counter(), time.process_time()
                if turn > 1:
                    marks.append((last[0], now, len(decisions), cpu - last[1]))
                last[0], last[1] = now, cpu

            play_match("piranha-pedro", [BotSpec(u) for u in fleet.urls], seed=seed, on_step=on_step,
                       time_controls=TimeControls(decision_ms=1000))
        own = fleet.own_ms()
        bodies = fleet.bodies()
        bare_ms = bare_round_trips(bodies[:300] if not delay_s else bodies[:30], repeat=1)
        cpu0 = fleet.cpu_s()
        fan_ms, answers = bare_fan_out(bodies, None if not delay_s else 20)
        bot_cpu_us = (fleet.cpu_s() - cpu0) / answers * 1e6
        late_marks = fleet.late_marks()
    six = [(start, end, cpu) for start, end, n, cpu in marks if n == 6]
    in_step = [[late for due, late in late_marks if start < due <= end] for start, end, _cpu in six]
    step_late = [max(lates) for lates in in_step if lates]
    cpu_us = statistics.median(cpu for _start, _end, cpu in six) * 1e6
    return Six(statistics.median(end - start for start, end, _cpu in six) * 1000, bare_ms, fan_ms,
               [late for _due, late in late_marks], step_late, cpu_us, own, bot_cpu_us)


def _waited_ns(tid: int) -> int:
    """How long a thread of this process has waited on a run queue, runnable but given no core (ns, the
    scheduler's own count: the second field of /proc/self/task/<tid>/schedstat); 0 where there is none."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat") as stats:
            return int(stats.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _all_waited_ns() -> dict[int, int]:
    """``_waited_ns`` of every thread of this process, by thread id (the bots' threads here too: while one that
    holds the GIL waits for a core, the referee's thread waits for the GIL, which the scheduler does not count)."""
    tids = os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else []
    return {int(tid): _waited_ns(int(tid)) for tid in tids}


def _waited_since(before: dict[int, int], now: dict[int, int]) -> float:
    """Milliseconds the threads waited for a core between two ``_all_waited_ns`` (a thread that ended meanwhile
    is not counted)."""
    return sum(ns - before.get(tid, 0) for tid, ns in now.items()) / 1e6


def misbehaving_cost(behaviour: bot_zoo.Behaviour, limit_ms: int = LIMIT_MS) -> tuple[float, float, float]:
    """Worst wall time of a step in which a misbehaving bot alone acts and times out, and how long in that step
    the referee's thread (the one that plays the match) and all of this process's threads waited for a core."""
    with bot_zoo.zoo_bot(bot_zoo.on_act(behaviour)) as zoo:
        marks = []
        tid = threading.get_native_id()
        last = [time.perf_counter(), _waited_ns(tid), _all_waited_ns()]

        def on_step(turn: int, decisions: list[dict]) -> None:
            now, waited, all_waited = time.perf_counter(), _waited_ns(tid), _all_waited_ns()
            if any(d["fault"] and d["fault"]["kind"] == "timeout" for d in decisions):
                marks.append(((now - last[0]) * 1000, (waited - last[1]) / 1e6, _waited_since(last[2], all_waited)))
            last[:] = [now, waited, all_waited]

        random_bot = start_in_thread(make_bot(2))
        try:
            play_match("pajarracos", [BotSpec(zoo.url), BotSpec(random_bot.url), BotSpec(random_bot.url)],
                       seed=1, on_step=on_step,
                       time_controls=TimeControls(decision_ms=limit_ms, strike_limit=3))
        finally:
            random_bot.shutdown()
            random_bot.server_close()
    return max(marks)


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def run(verdicts: list[bool]) -> None:
    referee_ms, bare_ms, cpu_us, bare_cpu_us = per_decision()
    ratio = referee_ms / bare_ms
    verdicts.append(ratio <= 1.5)
    print(f"1. referee median {referee_ms:.3f} ms/decision vs bare http.client round trip {bare_ms:.3f} ms: "
          f"ratio {ratio:.2f} (goal <= 1.5) {_verdict(ratio <= 1.5)}; CPU of this process: referee {cpu_us:.0f} "
          f"us/decision, bare round trip {bare_cpu_us:.0f} us", flush=True)
    slow = simultaneous_six(0.1)
    ratio = slow.step_ms / 100
    verdicts.append(ratio <= 1.02)
    print(f"2. 6 bots x 100 ms simultaneous step: median {slow.step_ms:.2f} ms: ratio {ratio:.4f} (goal <= 1.02) "
          f"{_verdict(ratio <= 1.02)}; the bots answer 100 ms after the request line arrived, late by median "
          f"{statistics.median(slow.late_ms):.3f} ms (max {max(slow.late_ms):.3f}; the latest of each step's six: "
          f"median {statistics.median(slow.step_late_ms):.3f} ms), then take median "
          f"{statistics.median(slow.bot_own_ms):.3f} ms to write it (read, parsed, act and encoded at "
          f"{DEFER * 100:.0f} ms); "
          f"one bare round trip to such a bot takes {slow.bare_ms:.2f} ms; the floor, a bare fan-out of the "
          f"same steps, {slow.fan_ms:.2f} ms (ratio {slow.fan_ms / 100:.4f}): referee - floor "
          f"{slow.step_ms - slow.fan_ms:+.2f} ms; referee CPU {slow.cpu_us:.0f} us/step", flush=True)
    fast = simultaneous_six(0.0, seeds=10)
    ratio = fast.step_ms / fast.bare_ms
    verdicts.append(ratio <= 2)
    cores = os.cpu_count() or 1
    floor_ms = (6 * fast.bot_cpu_us + fast.cpu_us) / cores / 1000  # all the CPU a step needs, on every core
    print(f"2. 6 instant bots simultaneous step: median {fast.step_ms:.3f} ms vs one bare round trip "
          f"{fast.bare_ms:.3f} ms: ratio {ratio:.2f} (goal <= 2) {_verdict(ratio <= 2)}; a bare fan-out of the same "
          f"steps (all sent, then all read, no threads) takes {fast.fan_ms:.3f} ms: referee / bare fan-out "
          f"{fast.step_ms / fast.fan_ms:.2f}; referee CPU {fast.cpu_us:.0f} us/step; the bots' CPU "
          f"{fast.bot_cpu_us:.0f} us per answer, so six answers need at least {6 * fast.bot_cpu_us / cores / 1000:.3f} "
          f"ms on {cores} cores ({6 * fast.bot_cpu_us / cores / 1000 / fast.bare_ms:.2f} round trips), and with the "
          f"referee's CPU {floor_ms:.3f} ms ({floor_ms / fast.bare_ms:.2f} round trips)", flush=True)
    for label, behaviour in (("never answers", bot_zoo.silent), ("drips 1 byte / 50 ms", bot_zoo.drip(0.05))):
        cost, waited, all_waited = misbehaving_cost(behaviour)
        over = cost - LIMIT_MS
        verdicts.append(over <= 5)
        print(f"3. bot that {label}, limit {LIMIT_MS} ms: worst step {cost:.1f} ms: {over:+.1f} ms over the limit "
              f"(goal <= +5) {_verdict(over <= 5)}; in that step the referee's thread waited {waited:.1f} ms for a "
              f"core (runnable, not running: its run-queue delay), this process's threads {all_waited:.1f} ms in all",
              flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hog", action="store_true", help="a busy loop on every core beside the benchmark")
    args = parser.parse_args(argv)
    verdicts: list[bool] = []
    with busy_loops((os.cpu_count() or 1) if args.hog else 0):
        run(verdicts)
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())

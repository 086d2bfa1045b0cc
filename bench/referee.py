"""Referee overheads against real bots on loopback, each judged by a ratio measured in one run.

    python -m bench.referee

1. Referee time per decision against a local bot / a bare ``requests`` round trip of the same
   payloads to the same bot: goal <= 1.25 (turn-based Pajarracos: one decision per step).
2. A simultaneous decision of 6 bots that each take 100 ms / 100 ms: goal <= 1.15.
3. A bot that never answers, and one that drips a byte every 50 ms: cost of the call / (limit + 30 ms):
   goal <= 1.0.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

import requests

from referee import protocol
from referee.protocol import TimeControls
from referee.runner import BotSpec, play_match
from sample_bots.random_bot import make_bot
from sample_bots.sdk import Bot, start_in_thread
from tests import bot_zoo


def per_decision_overhead(matches: int = 20) -> tuple[float, float]:
    """Median referee wall time per decision (one step of turn-based Pajarracos, from the end of one
    step to the end of the next: engine, encoding, signing, the call, vetting, commitment) against the
    median bare ``requests`` round trip of the very same /act bodies to the same bots."""
    servers = [start_in_thread(make_bot(i)) for i in range(3)]
    steps_ms: list[float] = []
    bodies: list[tuple[str, bytes]] = []
    try:
        for seed in range(matches):
            last = [0.0]

            def on_step(turn: int, decisions: list[dict], last: list[float] = last) -> None:
                now = time.perf_counter()
                if turn > 1:
                    steps_ms.append((now - last[0]) * 1000)
                last[0] = now

            bots = [BotSpec(s.url) for s in servers]
            replay = play_match("pajarracos", bots, seed=seed, on_step=on_step)
            for step in replay["steps"]:
                d = step["decisions"][0]
                view = d["view"]
                body = protocol.encode(protocol.act_body(
                    replay["match_id"], "pajarracos", d["seat"], step["turn"], d["decision"], 1000, 0, view,
                    [d["action"]], None))
                bodies.append((servers[d["seat"]].url, body))
        bare_ms = []
        sessions: dict[str, requests.Session] = {}
        for url, body in bodies:
            session = sessions.setdefault(url, requests.Session())
            t0 = time.perf_counter()
            _ = session.post(url + "/act", data=body, headers={"Content-Type": "application/json"}).content
            bare_ms.append((time.perf_counter() - t0) * 1000)
    finally:
        for s in servers:
            s.shutdown()
    return statistics.median(steps_ms), statistics.median(bare_ms)


def simultaneous_six(delay_s: float = 0.1) -> float:
    """Median wall time of a 6-seat simultaneous step when every bot takes ``delay_s``."""
    rng_bot = make_bot(1)

    def slow_act(request: dict[str, Any]) -> Any:
        time.sleep(delay_s)
        return rng_bot.act(request)

    servers = [start_in_thread(Bot(name=f"slow{i}", act=slow_act, games=["piranha-pedro"])) for i in range(6)]
    marks: list[tuple[float, int]] = []
    try:
        for seed in range(3):
            last = [time.perf_counter()]

            def on_step(turn: int, decisions: list[dict], last: list[float] = last) -> None:
                now = time.perf_counter()
                marks.append((now - last[0], len(decisions)))
                last[0] = now

            play_match("piranha-pedro", [BotSpec(s.url) for s in servers], seed=seed, on_step=on_step,
                       time_controls=TimeControls(decision_ms=1000))
    finally:
        for s in servers:
            s.shutdown()
    six = [dt for dt, n in marks[1:] if n == 6]
    return statistics.median(six) * 1000


def misbehaving_cost(behaviour: bot_zoo.Behaviour, limit_ms: int = 500) -> float:
    """Worst wall time of one ask to a misbehaving bot (the step it alone acts in)."""
    with bot_zoo.zoo_bot(bot_zoo.on_act(behaviour)) as zoo:
        marks = []
        last = [time.perf_counter()]

        def on_step(turn: int, decisions: list[dict]) -> None:
            now = time.perf_counter()
            if any(d["fault"] and d["fault"]["kind"] == "timeout" for d in decisions):
                marks.append((now - last[0]) * 1000)
            last[0] = now

        random_bot = start_in_thread(make_bot(2))
        try:
            play_match("pajarracos", [BotSpec(zoo.url), BotSpec(random_bot.url), BotSpec(random_bot.url)],
                       seed=1, on_step=on_step,
                       time_controls=TimeControls(decision_ms=limit_ms, strike_limit=3))
        finally:
            random_bot.shutdown()
    return max(marks)


def sdk_round_trip_ms(samples: int = 2000) -> float:
    """Median kept-alive round trip to an SDK bot with the standard library's client (no requests
    overhead): how fast the SDK itself answers a decision."""
    import http.client

    server = start_in_thread(make_bot(5))
    body = protocol.encode(protocol.act_body("m", "piranha-pedro", 0, 1, "choose_card", 1000, 0, {}, ["N1", "E2"],
                                             None))
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1])
        times = []
        for i in range(samples + 50):
            t0 = time.perf_counter()
            conn.request("POST", "/act", body=body, headers={"Content-Type": "application/json"})
            conn.getresponse().read()
            if i >= 50:
                times.append((time.perf_counter() - t0) * 1000)
        conn.close()
    finally:
        server.shutdown()
    return statistics.median(times)


def main() -> int:
    verdicts = []
    print(f"0. SDK bot decision round trip (http.client, kept alive): median {sdk_round_trip_ms():.3f} ms")
    referee_ms, bare_ms = per_decision_overhead()
    ratio = referee_ms / bare_ms
    verdicts.append(ratio <= 1.25)
    print(f"1. referee median {referee_ms:.3f} ms/decision vs bare requests median {bare_ms:.3f} ms: "
          f"ratio {ratio:.3f} "
          f"(goal <= 1.25) {'PASS' if ratio <= 1.25 else 'FAIL'}")
    six_ms = simultaneous_six()
    ratio = six_ms / 100
    verdicts.append(ratio <= 1.15)
    print(f"2. 6 bots x 100 ms simultaneous step: median {six_ms:.1f} ms: ratio {ratio:.3f} (goal <= 1.15) "
          f"{'PASS' if ratio <= 1.15 else 'FAIL'}")
    for label, behaviour in (("never answers", bot_zoo.silent), ("drips 1 byte / 50 ms", bot_zoo.drip(0.05))):
        cost = misbehaving_cost(behaviour)
        ratio = cost / (500 + 30)
        verdicts.append(ratio <= 1.0)
        print(f"3. bot that {label}, limit 500 ms: worst step {cost:.1f} ms: ratio to limit+30 ms {ratio:.3f} "
              f"(goal <= 1.0) {'PASS' if ratio <= 1.0 else 'FAIL'}")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())

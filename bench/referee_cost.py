"""The referee's own cost per decision, split by what it does: instruction counts, which load does not blur.

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.%p \\
        .venv/bin/python -m bench.referee_cost --callgrind [--game piranha-pedro] [--matches 10]
    .venv/bin/python -m bench.referee_cost           # the same split in CPU time (load blurs it)

Plays Pajarracos matches against ``BotFleet(3)`` (or Piranha Pedro, simultaneous, against ``BotFleet(6)``;
SDK random bots, each in a process of its own: not counted), then runs each part of a step alone over
the very same steps: the engine (view, legal actions, decision kind, canonical action, apply),
encoding the /act bodies, signing them, the wire (the step's calls on kept-alive connections through
``Asker``: request bytes, send, poll, response parse, JSON decode), vetting and the commitments; and
the bare kept-alive ``http.client`` round trip of the same bodies (issue 19 goal 1's yardstick), one
at a time and as a fan-out (a step's requests all sent, then all answers read: goal 2's floor).
``/start`` and ``/end`` on new connections are measured apart; "other" is the whole match minus all
that (the replay's records, per-match setup). Both are spread over the steps.
With ``--callgrind`` the counters are read with ``callgrind_control -e`` between phases (each phase's
figure is corrected by an empty phase: the cost of asking).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from bench.bot_fleet import BotFleet
from referee import call_pool, commitments, protocol
from referee.asker import Asker
from referee.bot_client import BotClient, Call, Reply, parse_json
from referee.call_pool import shared_pool
from referee.connection_keeper import ConnectionKeeper
from referee.games import get_game
from referee.protocol import TimeControls
from referee.results import final_result
from referee.runner import BotSpec, play_match, vet_action
from referee.watchdog import shared_watchdog


class Counter:
    """Instructions so far (callgrind) or CPU time so far in ns (without it)."""

    def __init__(self, callgrind: bool) -> None:
        self.callgrind = callgrind
        self.unit = "instructions" if callgrind else "CPU ns"
        self.pid = str(os.getpid())

    def read(self) -> int:
        if not self.callgrind:
            return time.process_time_ns()
        out = subprocess.run(["callgrind_control", "-e", "Ir", self.pid], check=True, capture_output=True,
                             text=True).stdout
        threads = re.findall(r"^\s*Th\s+\d+\s+([\d,]+)", out, re.MULTILINE)  # the counts of every thread
        if not threads:
            raise RuntimeError(f"no counts in callgrind_control's answer: {out!r}")
        return sum(int(count.replace(",", "")) for count in threads)

    def switch(self, on: bool) -> None:
        if self.callgrind:
            subprocess.run(["callgrind_control", f"--instr={'on' if on else 'off'}", self.pid], check=True,
                           capture_output=True)


class Decision:
    """One recorded decision: the state before it and what went over the wire."""

    __slots__ = ("action", "answer", "body", "headers", "legal", "match_id", "seat", "seed", "state", "turn", "url",
                 "view")

    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self, name, value)


def steps_of(fleet: BotFleet, game: Any, replays: list[dict[str, Any]]) -> list[list[Decision]]:
    """Every step of the replays, as the decisions made in it, with the states rebuilt."""
    out: list[list[Decision]] = []
    for replay in replays:
        state = game.initial_state(len(replay["players"]), replay["seed"], replay["params"])
        for step in replay["steps"]:
            turn, decisions = step["turn"], []
            for d in step["decisions"]:
                seat = d["seat"]
                legal = game.legal_actions(state, seat)
                body = protocol.encode(protocol.act_body(replay["match_id"], game.spec.name, seat, turn, d["decision"],
                                                         1000, 0, d["view"], legal, d["latency_ms"]))
                answer = json.dumps({"action": d["action"]}, separators=(",", ":")).encode()
                decisions.append(Decision(action=d["action"], answer=answer, body=body, legal=legal,
                                          headers=protocol.headers(replay["match_id"], turn, "", body),
                                          match_id=replay["match_id"], seat=seat, seed=replay["seed"],
                                          state=state, turn=turn,
                                          url=fleet.urls[seat], view=d["view"]))
            out.append(decisions)
            state = game.apply(state, {d.seat: d.action for d in decisions})
    return out


def parts(game: Any, steps: list[list[Decision]], fleet: BotFleet) -> dict[str, Callable[[], None]]:
    """Each part of a step, run over every recorded step."""
    decisions = [d for step in steps for d in step]
    name = game.spec.name
    clients = {url: BotClient(url) for url in fleet.urls}
    asker = Asker(shared_pool(), shared_watchdog())
    salt = commitments.new_salt()
    for url, client in clients.items():  # the first call opens the connection: kept from then on
        first = next(d for d in decisions if d.url == url)
        asker.ask({0: Call(client, "POST", "/act", first.body, first.headers, 5.0)})

    views = getattr(game, "views", None)  # a step's views at once (absent before 2026-12-02 06:30)

    def view() -> None:
        for step in steps:
            if views is None:
                [game.view(d.state, d.seat) for d in step]
            else:
                views(step[0].state, [d.seat for d in step])

    def legal() -> None:
        for d in decisions:
            game.decision(d.state, d.seat)
            game.legal_actions(d.state, d.seat)

    caches = [getattr(module, name) for module in list(sys.modules.values())
              if getattr(module, "__name__", "").startswith("referee.games.")
              for name, value in vars(module).items() if hasattr(value, "cache_clear")]

    def legal_cold() -> None:  # as on a hand the engine's small caches have not seen yet
        for d in decisions:
            for fn in caches:
                fn.cache_clear()
            game.decision(d.state, d.seat)
            game.legal_actions(d.state, d.seat)

    def canonical() -> None:
        for d in decisions:
            game.canonical_action(d.state, d.seat, d.action, d.legal)

    def apply() -> None:
        for step in steps:
            state = step[0].state
            game.to_act(state)
            game.apply(state, {d.seat: d.action for d in step})
            game.is_terminal(state)

    def encode() -> None:
        for d in decisions:
            protocol.encode(protocol.act_body(d.match_id, name, d.seat, d.turn, "turn", 1000, 0, d.view, d.legal, 0.4))

    def sign() -> None:
        for d in decisions:
            protocol.headers(d.match_id, d.turn, "a secret", d.body)

    def wire() -> None:
        for step in steps:
            replies = asker.ask({d.seat: Call(clients[d.url], "POST", "/act", d.body, d.headers, 5.0) for d in step})
            faults = [reply.fault for reply in replies.values() if reply.fault is not None]
            if faults:
                raise RuntimeError(f"the wire phase failed: {faults}")

    def decode() -> None:
        for d in decisions:
            parse_json(d.answer)

    def vet() -> None:
        for d in decisions:
            vet_action(game, d.state, d.seat, d.turn, Reply({"action": d.action}, 0.4), d.legal)

    def commit() -> None:
        for d in decisions:
            commitments.commitment(salt, d.turn, d.seat, d.action)

    def match_ends() -> None:  # per match: new connections for /start, then /end to each seat
        for _ in {d.match_id for d in decisions}:
            seats = {i: BotClient(url) for i, url in enumerate(fleet.urls)}
            for path in ("/start", "/end"):
                body = b'{"protocol":1}'
                asker.ask({i: Call(c, "POST", path, body, protocol.headers("m", 0, "", body), 5.0, empty_ok=True)
                           for i, c in seats.items()})
            for c in seats.values():
                c.close()

    finals = {}  # per match: seed, player count, final state
    for step in steps:
        first = step[0]
        finals[first.match_id] = (first.seed, game.apply(first.state, {d.seat: d.action for d in step}))

    def match_setup() -> None:  # per match, what play_match does besides the steps and the calls
        for seed, final in finals.values():
            game.initial_state(len(fleet.urls), seed, {})
            uuid.uuid4().hex  # noqa: B018
            commitments.new_salt()
            datetime.now(UTC).isoformat(timespec="milliseconds")
            final_result(game.result(final), [])
            game.public_view(final)
            datetime.now(UTC).isoformat(timespec="milliseconds")

    conns: dict[str, http.client.HTTPConnection] = {}
    for url in fleet.urls:
        where = urlsplit(url)
        conns[url] = http.client.HTTPConnection(where.hostname or "", where.port)

    def bare() -> None:  # one request at a time
        for d in decisions:
            conns[d.url].request("POST", "/act", body=d.body, headers={"Content-Type": "application/json"})
            conns[d.url].getresponse().read()

    def bare_fan_out() -> None:  # a step's requests all sent, then all answers read
        for step in steps:
            for d in step:
                conns[d.url].request("POST", "/act", body=d.body, headers={"Content-Type": "application/json"})
            for d in step:
                conns[d.url].getresponse().read()

    return {"view": view, "legal": legal, "legal_cold": legal_cold, "canonical": canonical, "apply": apply,
            "encode": encode, "sign": sign, "wire": wire, "decode": decode, "vet": vet, "commit": commit,
            "match_ends": match_ends, "match_setup": match_setup, "bare": bare, "bare_fan_out": bare_fan_out,
            "nothing": lambda: None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="pajarracos", help="pajarracos (3 seats) or piranha-pedro (6 seats)")
    parser.add_argument("--seats", type=int, default=None, help="seats per match (default: 3 or 6, as above)")
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--callgrind", action="store_true", help="read callgrind's instruction counters")
    args = parser.parse_args(argv)
    counter = Counter(args.callgrind)
    if args.callgrind:
        # callgrind_control lists each live thread's count: a pool thread that ended while idle (after
        # IDLE_S, a minute, which valgrind's slowness spans several phases) would take its count with it
        call_pool.IDLE_S = 1e6
    game = get_game(args.game)
    seats = args.seats or (3 if args.game == "pajarracos" else 6)
    tc = TimeControls(decision_ms=5000)  # no timeouts however slow valgrind makes the referee
    with BotFleet(seats) as fleet:
        play_match(args.game, [BotSpec(u) for u in fleet.urls], seed=1000, time_controls=tc)  # warm-up
        counter.switch(True)
        replays: list[dict[str, Any]] = []
        with ConnectionKeeper() as keeper:  # the matches one after the other, as a worker's batch plays them
            play = _cost(counter, lambda: replays.extend(
                play_match(args.game, [BotSpec(u) for u in fleet.urls], seed=seed, time_controls=tc, keeper=keeper)
                for seed in range(args.matches)))
        steps = steps_of(fleet, game, replays)
        run = parts(game, steps, fleet)
        run["bare"]()  # warm the bare connections, as parts() did for the wire
        costs = {name: _cost(counter, fn) for name, fn in run.items()}
        counter.switch(False)
    report(args.game, len(replays), steps, play, costs, counter.unit)
    return 0


def report(game: str, matches: int, steps: list[list[Decision]], play: int, costs: dict[str, int], unit: str) -> None:
    n = len(steps)
    seats = sum(len(step) for step in steps) / n
    ask = costs.pop("nothing")
    per = {name: (cost - ask) / n for name, cost in costs.items()}
    play_per = (play - ask) / n
    engine = per["view"] + per["legal"] + per["canonical"] + per["apply"]
    in_step = engine + per["encode"] + per["sign"] + per["wire"] + per["vet"] - per["canonical"] + per["commit"]
    k = 1000
    print(f"{matches} {game} matches, {n} steps, {seats:.2f} seats acting per step; {unit} per step "
          f"(cost of asking {ask:,} taken off each part)")
    print(f"  whole match, per step               {play_per / k:9.1f} k")
    print(f"  engine                              {engine / k:9.1f} k  (view {per['view'] / k:.1f}, decision and legal "
          f"actions {per['legal'] / k:.1f}, canonical action {per['canonical'] / k:.1f}, apply {per['apply'] / k:.1f})")
    print(f"  (legal actions with the engine's caches cleared first: {per['legal_cold'] / k:.1f})")
    print(f"  encode /act bodies                  {per['encode'] / k:9.1f} k")
    print(f"  sign                                {per['sign'] / k:9.1f} k")
    print(f"  wire (Asker, kept-alive calls)      {per['wire'] / k:9.1f} k  (of which JSON decode "
          f"{per['decode'] / k:.1f})")
    print(f"  vetting (without canonical action)  {(per['vet'] - per['canonical']) / k:9.1f} k")
    print(f"  commitments                         {per['commit'] / k:9.1f} k")
    print(f"  = a step's parts                    {in_step / k:9.1f} k")
    print(f"  /start and /end (new connections)   {per['match_ends'] / k:9.1f} k  (per match "
          f"{per['match_ends'] * n / matches / k:.0f} k)")
    print(f"  setup (deal, result, final view)    {per['match_setup'] / k:9.1f} k  (per match "
          f"{per['match_setup'] * n / matches / k:.0f} k)")
    print(f"  other (records, replay document)    "
          f"{(play_per - in_step - per['match_ends'] - per['match_setup']) / k:9.1f} k")
    print(f"  bare http.client, one at a time     {per['bare'] / k:9.1f} k  -> a step's parts / bare "
          f"{in_step / per['bare']:.2f}, whole match / bare {play_per / per['bare']:.2f}")
    print(f"  bare http.client fan-out            {per['bare_fan_out'] / k:9.1f} k  -> a step's parts / bare fan-out "
          f"{in_step / per['bare_fan_out']:.2f}", flush=True)


def _cost(counter: Counter, fn: Callable[[], None]) -> int:
    c0 = counter.read()
    fn()
    return counter.read() - c0


if __name__ == "__main__":
    sys.exit(main())

"""One validation episode of ``arena check``: a short match of one game against the bot in every seat,
played the way the referee plays (``/start`` to every seat at once, simultaneous seats asked at once
on their own connections, ``/end``), asking the bot only for the first answers of each decision kind
and moving the rest of the game on with random legal actions, so it stays a second or so long.

Before ``/end`` it replays the last ``/act`` (a stale turn) and sends a fresh one without a signature:
both must be refused, and both must be sent while the bot still remembers the match."""

from __future__ import annotations

import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from referee import protocol
from referee.asker import Asker
from referee.bot_client import BotClient, Call, Reply
from referee.check_report import CheckReport, Status, fault_detail, fault_fix
from referee.faults import FaultKind
from referee.games import get_game
from referee.protocol import TimeControls
from referee.results import final_result
from referee.runner import vet_action

ASKS_PER_KIND = 3  # answers asked of each decision kind per game
MAX_FAULTS = 3  # faults before the check stops calling the bot (each may cost a whole deadline)
_REFUSED = object()  # no usable answer: the walk goes on with a random legal action


@dataclass
class Budget:
    """Shared by all episodes of one check: the faults seen so far and every answer, for the probes."""

    tc: TimeControls
    signed: bool = True  # requests carry a signature under a real secret
    admission: bool = False  # a health check: the bot may not have been given the secret yet
    asks_per_kind: int = ASKS_PER_KIND
    stop_at: float = float("inf")  # perf_counter time after which no new call starts
    faults: int = 0
    replies: list[Reply] = field(default_factory=list)
    largest_request: int = 0

    @property
    def exhausted(self) -> bool:
        return self.faults >= MAX_FAULTS or time.perf_counter() > self.stop_at


@dataclass
class _Asked:
    """Per decision kind: how many answers, how many seats asked at once, the first failure."""

    answers: int = 0
    latencies: list[float] = field(default_factory=list)
    concurrent: int = 1
    failure: tuple[str, str] | None = None


def run_episode(game_name: str, clients: list[BotClient], asker: Asker, budget: Budget, report: CheckReport,
                probe_unsigned: bool, probe_stale: bool = True, seed: int = 1) -> None:
    """Play one short match against ``clients`` (one per seat) and add its lines to ``report``."""
    game = get_game(game_name)
    tc = budget.tc
    match_id = f"check-{uuid.uuid4().hex[:12]}"
    state = game.initial_state(len(clients), seed)
    if not _start(game_name, clients, asker, budget, report, match_id):
        return
    rng = random.Random(seed)
    kinds: dict[str, _Asked] = {}
    last: tuple[int, bytes, dict[str, str]] | None = None  # seat, body, headers of the last /act asked
    turn = 0
    while not game.is_terminal(state):
        turn += 1
        acting = sorted(game.to_act(state))
        calls: dict[int, Call] = {}
        pending: Counter[str] = Counter()
        for seat in acting:
            kind = game.decision(state, seat)
            asked = kinds.setdefault(kind, _Asked())
            if budget.exhausted or asked.answers + pending[kind] >= budget.asks_per_kind or asked.failure:
                continue
            pending[kind] += 1
            body = protocol.encode(protocol.act_body(match_id, game_name, seat, turn, kind, tc.decision_ms, 0,
                                                     game.view(state, seat), game.legal_actions(state, seat), None))
            headers = clients[seat].signed_headers(match_id, turn, body)
            budget.largest_request = max(budget.largest_request, len(body))
            calls[seat] = Call(clients[seat], "POST", "/act", body, headers, tc.decision_ms / 1000)
            last = (seat, body, headers)
        replies = asker.ask(calls) if calls else {}
        actions = {}
        for seat in acting:
            action: Any = _REFUSED
            if seat in replies:
                action = _judge(game, state, seat, turn, replies[seat], kinds[game.decision(state, seat)],
                                len(calls), budget)
            actions[seat] = _steer(game, state, seat, len(acting), kinds, rng) if action is _REFUSED else action
        state = game.apply(state, actions)
    for kind, asked in kinds.items():
        _report_kind(report, game_name, kind, asked, tc)
    if last is not None and not budget.exhausted:
        _stale_probe(clients[last[0]], asker, last, report, game_name, probe_stale)
        _unsigned_probe(clients[last[0]], asker, last[0], match_id, game_name, turn, report, probe_unsigned)
    _end(game, clients, asker, budget, report, match_id, turn, state)


def _steer(game: Any, state: Any, seat: int, acting: int, kinds: dict[str, _Asked], rng: random.Random) -> Any:
    """A random legal action, preferring one that leads to a decision kind not seen yet (rare kinds, such
    as Pajarracos' extra action after a scarecrow, would otherwise seldom come up in a short walk)."""
    legal = game.legal_actions(state, seat)
    if acting > 1 or len(legal) > 64:
        return rng.choice(legal)
    candidates = list(legal)
    rng.shuffle(candidates)
    for action in candidates:
        after = game.apply(state, {seat: action})
        if not game.is_terminal(after) and any(game.decision(after, s) not in kinds for s in game.to_act(after)):
            return action
    return candidates[0]


def _start(game_name: str, clients: list[BotClient], asker: Asker, budget: Budget, report: CheckReport,
           match_id: str) -> bool:
    players = [{"seat": i, "name": f"seat {i}", "bot_id": None} for i in range(len(clients))]
    calls = {}
    for seat, client in enumerate(clients):
        body = protocol.encode(protocol.start_body(match_id, game_name, {}, seat, players, budget.tc))
        calls[seat] = Call(client, "POST", "/start", body, client.signed_headers(match_id, 0, body),
                           budget.tc.start_ms / 1000, empty_ok=True)
    replies = asker.ask(calls)
    failed = [reply for reply in replies.values() if reply.fault is not None]
    name = f"/start {game_name}"
    if failed:
        budget.faults += 1
        timeouts = [reply for reply in failed if reply.fault is not None and reply.fault.kind == FaultKind.TIMEOUT]
        if timeouts:  # every later call would wait as long: stop here
            budget.faults = MAX_FAULTS
        fix = _fix(failed[0], "/start", budget)
        if timeouts and len(failed) < len(calls):
            fix = (f"the bot answered {len(calls) - len(failed)} seat(s) and kept the others waiting: serve "
                   "connections concurrently (a threaded or async server); the referee keeps one connection per "
                   "seat open for the whole match and asks the seats at the same time")
        report.add(name, Status.FAIL, f"{fault_detail(failed[0])} ({len(failed)} of {len(calls)} seats)", fix)
        return False
    slowest = max(reply.latency_ms for reply in replies.values())
    report.add(name, Status.PASS, f"{len(calls)} seats told at once, slowest {slowest:.1f} ms")
    return True


def _judge(game: Any, state: Any, seat: int, turn: int, reply: Reply, asked: _Asked, at_once: int,
           budget: Budget) -> Any:
    """The bot's action if the referee would take it (``null`` is one); otherwise ``_REFUSED``, and the
    failure is noted once per kind."""
    asked.concurrent = max(asked.concurrent, at_once)
    action, fault = vet_action(game, state, seat, turn, reply)
    if fault is None:
        asked.answers += 1
        asked.latencies.append(reply.latency_ms)
        budget.replies.append(reply)
        return action
    budget.faults += 1
    if asked.failure is None:
        shown = reply if reply.fault is not None else Reply(None, reply.latency_ms, fault, reply.status)
        asked.failure = (fault_detail(shown), _fix(shown, "/act", budget))
    return _REFUSED


def _fix(reply: Reply, path: str, budget: Budget) -> str:
    return fault_fix(reply, path, budget.tc.decision_ms, budget.tc.max_response_bytes, budget.signed,
                     budget.admission)


def _report_kind(report: CheckReport, game_name: str, kind: str, asked: _Asked, tc: TimeControls) -> None:
    name = f"/act {game_name} {kind}"
    if asked.failure is not None:
        report.add(name, Status.FAIL, asked.failure[0], asked.failure[1])
    elif asked.answers == 0:
        report.add(name, Status.SKIP, "not asked: the check stopped after earlier failures or its time")
    else:
        how = f", {asked.concurrent} seats asked at once" if asked.concurrent > 1 else ""
        worst = max(asked.latencies)
        plural = "s" if asked.answers > 1 else ""
        report.add(name, Status.PASS, f"{asked.answers} legal answer{plural}{how}, slowest {worst:.1f} ms "
                                      f"of {tc.decision_ms} ms")


def _stale_probe(client: BotClient, asker: Asker, last: tuple[int, bytes, dict[str, str]], report: CheckReport,
                 game_name: str, enabled: bool) -> None:
    """The last /act again, correctly signed: a replayed (stale) turn the bot should refuse with a 4xx."""
    name = f"stale turn ({game_name})"
    if not enabled:
        report.add(name, Status.SKIP, "not probed: the bot does not know its secret yet")
        return
    _seat, body, headers = last
    reply = asker.ask({0: Call(client, "POST", "/act", body, headers, 2.0)})[0]
    if reply.status is not None and 400 <= reply.status < 500:
        report.add(name, Status.PASS, f"a replayed /act was refused (HTTP {reply.status})")
    elif reply.fault is None:
        report.add(name, Status.WARN, "a replayed /act (same match, seat and turn, signed) was answered",
                   "remember the last turn per match and seat; answer HTTP 409 to an /act whose turn is not newer "
                   "(a replayed call can otherwise make your bot act twice)")
    else:
        report.add(name, Status.WARN, f"a replayed /act got {fault_detail(reply)}, not a 4xx",
                   "answer HTTP 409 to an /act whose turn is not newer than the last one for that match and seat")


def _unsigned_probe(client: BotClient, asker: Asker, seat: int, match_id: str, game_name: str, turn: int,
                    report: CheckReport, enabled: bool) -> None:
    """A fresh /act with no signature: anyone who learns the bot's URL could send it."""
    name = f"unsigned request ({game_name})"
    if not enabled:
        report.add(name, Status.SKIP, "not probed: give --secret S, the secret the bot was started with")
        return
    body = protocol.encode(protocol.act_body(match_id, game_name, seat, turn + 1, "probe", 1000, 0, {}, [0], None))
    headers = {key: value for key, value in client.signed_headers(match_id, turn + 1, body).items()
               if key != protocol.SIGNATURE_HEADER}
    reply = asker.ask({0: Call(client, "POST", "/act", body, headers, 2.0)})[0]
    if reply.status in (401, 403):
        report.add(name, Status.PASS, f"refused (HTTP {reply.status}); signed requests were accepted")
    elif reply.fault is None:
        report.add(name, Status.WARN, "an /act without X-Arena-Signature was answered",
                   "check X-Arena-Signature on every POST ('sha256=' + hex HMAC-SHA256 of the body under your "
                   "secret, constant-time compare) and answer HTTP 401 when it is missing or wrong")
    else:
        report.add(name, Status.WARN, f"an unsigned /act got {fault_detail(reply)}, not HTTP 401",
                   "answer HTTP 401 to a POST whose X-Arena-Signature is missing or wrong")


def _end(game: Any, clients: list[BotClient], asker: Asker, budget: Budget, report: CheckReport, match_id: str,
         turn: int, state: Any) -> None:
    name = f"/end {game.spec.name}"
    if budget.exhausted:
        report.add(name, Status.SKIP, "not sent: the check stopped after earlier failures or its time")
        return
    result = final_result(game.result(state), [])
    calls = {}
    for seat, client in enumerate(clients):
        body = protocol.encode(protocol.end_body(match_id, game.spec.name, seat, result, []))
        calls[seat] = Call(client, "POST", "/end", body, client.signed_headers(match_id, turn, body),
                           budget.tc.start_ms / 1000, empty_ok=True)
    failed = [reply for reply in asker.ask(calls).values() if reply.fault is not None]
    if failed:  # a failing /end is recorded in a match, never a strike
        report.add(name, Status.WARN, f"{fault_detail(failed[0])} ({len(failed)} of {len(calls)} seats)",
                   _fix(failed[0], "/end", budget))
    else:
        report.add(name, Status.PASS, f"{len(calls)} seats told the result")


__all__ = ["ASKS_PER_KIND", "MAX_FAULTS", "Budget", "run_episode"]

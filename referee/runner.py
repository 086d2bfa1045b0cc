"""Play one match of any registered game against bots over HTTP: the only code that talks to bots.

The walk: ``/start`` to every seat at once -> for each step, ask every acting seat at once (each gets
only its own view), wait for all, record a commitment per choice, only then apply -> ``/end`` to
every seat. A fault (timeout, bad answer, illegal action, ...) is recorded, the seat plays a seeded
random legal action and gets a strike; at the strike limit the bot forfeits and takes the worst
placing while the match goes on for the others. The outcome is one replay document.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from referee import commitments, protocol
from referee.asker import Asker
from referee.bot_client import BotClient, Call, Reply
from referee.bot_transport import AddressGuard, Resolver, resolve
from referee.call_pool import shared_pool
from referee.connection_keeper import ConnectionKeeper, connection_key
from referee.errors import RulesError, UnsafeURL
from referee.faults import Fault, FaultKind, excerpt
from referee.fence import Fence
from referee.games import get_game
from referee.games.base import Game
from referee.live_view import LiveHook, public_step
from referee.protocol import TimeControls
from referee.replay import REPLAY_FORMAT, default_action
from referee.results import final_result
from referee.url_guard import check_url_shape
from referee.watchdog import shared_watchdog

UNREACHABLE = (FaultKind.CONNECTION, FaultKind.TIMEOUT, FaultKind.UNSAFE_URL)
StepHook = Callable[[int, list[dict[str, Any]]], None]


@dataclass
class BotSpec:
    """Who sits in a seat: where to reach it and how to sign for it."""

    url: str
    secret: str = ""
    name: str = ""
    bot_id: Any = None

    def public(self, seat: int) -> dict[str, Any]:
        """What other seats and the replay may know: never the URL or the secret."""
        return {"seat": seat, "name": self.name or f"seat {seat}", "bot_id": self.bot_id}


@dataclass
class Seat:
    seat: int
    spec: BotSpec
    client: BotClient | None
    bank_ms: float
    strikes: int = 0
    reused: bool = False  # its connection came from an earlier match (``referee.connection_keeper``)
    forfeited: bool = False
    last_latency_ms: float | None = None
    used_ms: float = 0.0  # every answered decision's latency, for the spectators' clock
    faults: list[dict[str, Any]] = field(default_factory=list)

    def record(self, fault: Fault, turn: int, path: str) -> None:
        self.faults.append({"turn": turn, "path": path, **fault.to_json()})


def play_match(
    game_name: str,
    bots: Sequence[BotSpec],
    seed: int,
    params: dict[str, Any] | None = None,
    time_controls: TimeControls | None = None,
    match_id: str | None = None,
    guard: AddressGuard | None = None,
    resolver: Resolver = resolve,
    on_step: StepHook | None = None,
    on_public_step: LiveHook | None = None,
    fence: Fence | None = None,
    keeper: ConnectionKeeper | None = None,
) -> dict[str, Any]:
    """Play a whole match and return its replay document. Raises only for a bad setup (unknown
    game, wrong player count, bad params), never because of anything a bot does.

    ``on_step`` gets every step's decisions (private: views and actions); ``on_public_step`` gets what a
    spectator may see (``referee.live_view``), before the first step and after each one is applied.
    ``fence``: cuts every call once the caller's claim on the match may be over (``referee.fence``); the
    match then raises ``FenceCrossed`` instead of returning a replay. ``keeper``: idle connections from the
    matches before this one, and where this one leaves its own when it ends normally
    (``referee.connection_keeper``)."""
    game = get_game(game_name)
    tc = time_controls or TimeControls()
    params = dict(params or {})
    state = game.initial_state(len(bots), seed, params)
    match_id = match_id or uuid.uuid4().hex
    salt = commitments.new_salt()
    seats: list[Seat] = []
    ended = False
    try:  # (from the first seat on: a connection taken from ``keeper`` is closed however the match ends)
        for i, spec in enumerate(bots):
            seats.append(_open_seat(i, spec, tc, guard, resolver, keeper))
        if keeper is not None:
            keeper.drop_idle()  # what this match does not seat: held no longer
        hold = _guard(fence, seats)
        started_at = _now()
        steps: list[dict[str, Any]] = []
        asker = Asker(shared_pool(), shared_watchdog())
        _start(game, seats, asker, match_id, params, tc)
        hold()
        turn = 0
        public = _tell(on_public_step, game, state, turn, seats)
        while not game.is_terminal(state):
            turn += 1
            decisions, actions = _step(game, state, seats, asker, match_id, seed, turn, tc, salt, public)
            hold()
            steps.append({"turn": turn, "decisions": decisions})
            if on_step is not None:
                on_step(turn, decisions)
            state = game.apply(state, actions)
            public = _tell(on_public_step, game, state, turn, seats)
        result = final_result(game.result(state), [s.seat for s in seats if s.forfeited])
        _end(game, seats, asker, match_id, result, tc, turn)
        hold()
        ended = True
    finally:
        for seat in seats:
            if seat.client is not None:
                kept = seat.client.detach() if ended and keeper is not None else None
                if kept is not None:
                    keeper.give(connection_key(seat.client.url, guard, resolver), kept)
                seat.client.close()
    return {
        "format": REPLAY_FORMAT,
        "match_id": match_id,
        "game": game.spec.name,
        "engine_version": game.spec.engine_version,
        "params": params,
        "seed": seed,
        "players": [seat.spec.public(seat.seat) for seat in seats],
        "time_controls": tc.to_json(),
        "started_at": started_at,
        "finished_at": _now(),
        "commitment_scheme": commitments.SCHEME,
        "steps": steps,
        "result": result,
        "faults": [{"seat": s.seat, **f} for s in seats for f in s.faults],
        "final_view": game.public_view(state),
        "salt": salt,
    }


def _guard(fence: Fence | None, seats: list[Seat]) -> Callable[[], None]:
    """Put every seat's connection behind ``fence``; returns the check that raises once it is crossed
    (a batch of calls it cut holds faults that are the arena's, not the bots')."""
    if fence is None:
        return lambda: None
    for seat in seats:
        if seat.client is not None:
            fence.guard(seat.client.tracker)
    return fence.hold


def _tell(hook: LiveHook | None, game: Game, state: Any, turn: int, seats: list[Seat]) -> dict[str, Any] | None:
    """The spectators' step to ``hook``; returns the state's public view it was built from (the next step's seat
    views may be built on it: ``Game.views``), None without a hook."""
    if hook is None:
        return None
    public = game.public_view(state)
    hook(public_step(game, state, turn, [s.used_ms for s in seats], [s.forfeited for s in seats], public))
    return public


def _open_seat(i: int, spec: BotSpec, tc: TimeControls, guard: AddressGuard | None, resolver: Resolver,
               keeper: ConnectionKeeper | None = None) -> Seat:
    try:
        url = check_url_shape(spec.url)
    except UnsafeURL as exc:
        seat = Seat(i, spec, None, tc.time_bank_ms, forfeited=True)
        seat.record(Fault(FaultKind.UNSAFE_URL, str(exc), 0.0), 0, "/start")
        return seat
    found = keeper.take(connection_key(url, guard, resolver)) if keeper is not None else None
    kept, ahead = found if found is not None else (None, False)
    try:
        client = BotClient(url, spec.secret, tc.max_response_bytes, guard, resolver, kept=kept)
    except BaseException:
        if kept is not None:
            kept.close()
        raise
    # (one opened ahead of this match, ``referee.connect_ahead``, carried nothing yet: a fault on it is the bot's,
    # as on one opened at /start, not the race of an idle connection closed as /start went out)
    return Seat(i, spec, client, tc.time_bank_ms, reused=kept is not None and not ahead)


def _start(game: Game, seats: list[Seat], asker: Asker, match_id: str, params: dict, tc: TimeControls) -> None:
    """Tell every bot about the match; a bot that cannot be reached forfeits at once. On a connection kept
    from an earlier match, a connection fault before the head of any answer is the bot having closed it
    while idle just as the request went out (a close the poll before it could not see): sent once more, on
    a new connection, as a match without a kept one would have sent it, in what is left of the budget of
    the first (the ``/start`` phase never takes longer than ``start_ms``)."""
    players = [seat.spec.public(seat.seat) for seat in seats]
    calls = {}
    for seat in seats:
        if seat.client is not None:
            body = protocol.encode(protocol.start_body(match_id, game.spec.name, params, seat.seat, players, tc))
            headers = seat.client.signed_headers(match_id, 0, body)
            calls[seat.seat] = Call(seat.client, "POST", "/start", body, headers, tc.start_ms / 1000, empty_ok=True)
    sent = time.perf_counter()
    replies = asker.ask(calls)
    left = tc.start_ms / 1000 - (time.perf_counter() - sent)
    again = {index: replace(calls[index], budget_s=left) for index, reply in replies.items()
             if left > 0 and _cut_while_kept(seats[index], reply)}  # (no time left: the fault stands as it came)
    replies.update(asker.ask(again))  # the fault closed the kept connection: these go on new ones
    for index, reply in replies.items():
        seat = seats[index]
        if reply.fault is not None:
            seat.record(reply.fault, 0, "/start")
            if reply.fault.kind in UNREACHABLE:
                seat.forfeited = True
            else:
                _strike(seat, tc)


def _cut_while_kept(seat: Seat, reply: Reply) -> bool:
    """The call went out on a connection kept from an earlier match (no new one was opened: the poll before
    it did not find it closed) and the connection failed before the head of any answer came."""
    return (seat.reused and seat.client is not None and seat.client.tracker.connections == 0
            and reply.fault is not None and reply.fault.kind is FaultKind.CONNECTION and reply.headers_ms is None)


def _step(game: Game, state: Any, seats: list[Seat], asker: Asker, match_id: str, seed: int, turn: int,
          tc: TimeControls, salt: str, public: dict[str, Any] | None = None
          ) -> tuple[list[dict[str, Any]], dict[int, Any]]:
    """Ask every acting seat at once; nothing is applied until every choice is in and committed. ``public``:
    the state's public view, when the spectators' step was built from it already."""
    acting = sorted(game.to_act(state))
    asked: dict[int, tuple[str, dict, list]] = {}
    calls: dict[int, Call] = {}
    views = game.views(state, acting, public)
    for index in acting:
        seat = seats[index]
        decision, view, legal = game.decision(state, index), views[index], game.legal_actions(state, index)
        asked[index] = (decision, view, legal)
        if not seat.forfeited and seat.client is not None:
            body = protocol.encode(protocol.act_body(
                match_id, game.spec.name, index, turn, decision, tc.decision_ms, int(seat.bank_ms), view, legal,
                seat.last_latency_ms,
            ))
            headers = seat.client.signed_headers(match_id, turn, body)
            calls[index] = Call(seat.client, "POST", "/act", body, headers, (tc.decision_ms + seat.bank_ms) / 1000)
    replies = asker.ask(calls) if calls else {}
    decisions, actions = [], {}
    for index in acting:
        decision, view, legal = asked[index]
        seat = seats[index]
        record: dict[str, Any] = {"seat": index, "decision": decision, "view": view}
        reply = replies.get(index)
        fault, latency = None, None
        if reply is None:
            action = default_action(seed, turn, index, legal)
            record["forfeited"] = True
        else:
            latency = reply.latency_ms
            action, fault = vet_action(game, state, index, turn, reply, legal)
            _spend(seat, latency, tc)
            seat.last_latency_ms = latency
            seat.used_ms += latency
            if fault is not None:
                seat.record(fault, turn, "/act")
                _strike(seat, tc)
                action = default_action(seed, turn, index, legal)
        record.update({
            "action": action,
            "default": reply is None or fault is not None,
            "latency_ms": None if latency is None else round(latency, 3),
            "fault": None if fault is None else fault.to_json(),
            "commitment": commitments.commitment(salt, turn, index, action),
        })
        decisions.append(record)
        actions[index] = action
    return decisions, actions


def vet_action(game: Game, state: Any, seat: int, turn: int, reply: Reply,
               legal: list[Any] | None = None) -> tuple[Any, Fault | None]:
    """The bot's action as the engine's own legal value, or the fault that rules it out (``legal``: the
    seat's legal actions, when the caller listed them already)."""
    if reply.fault is not None:
        return None, reply.fault
    data, latency = reply.data, reply.latency_ms
    if not isinstance(data, dict) or "action" not in data:
        return None, Fault(FaultKind.WRONG_SHAPE, 'expected a JSON object {"action": ...}', latency,
                           _excerpt(data))
    if "turn" in data and data["turn"] != turn:
        return None, Fault(FaultKind.WRONG_TURN, f"answered turn {excerpt(repr(data['turn']))} when asked turn {turn}",
                           latency, _excerpt(data))  # the bot's value, cut as an excerpt is
    try:
        return game.canonical_action(state, seat, data["action"], legal), None
    except RulesError as exc:
        return None, Fault(FaultKind.ILLEGAL, str(exc)[:300], latency, _excerpt(data["action"]))
    except Exception as exc:  # a game's check must never let a bot crash the match
        return None, Fault(FaultKind.ILLEGAL, f"unusable action: {exc!r}"[:300], latency, _excerpt(data))


def _spend(seat: Seat, latency_ms: float, tc: TimeControls) -> None:
    """Overruns of the per-decision limit draw down the bank."""
    over = latency_ms - tc.decision_ms
    if over > 0:
        seat.bank_ms = max(0.0, seat.bank_ms - over)


def _strike(seat: Seat, tc: TimeControls) -> None:
    seat.strikes += 1
    if tc.strike_limit and seat.strikes >= tc.strike_limit:
        seat.forfeited = True


def _end(game: Game, seats: list[Seat], asker: Asker, match_id: str, result: dict[str, Any], tc: TimeControls,
         turn: int) -> None:
    """Tell every reachable bot how it went; failures here are recorded but change nothing."""
    calls = {}
    for seat in seats:
        if seat.client is None or any(f["path"] == "/start" and f["kind"] in UNREACHABLE for f in seat.faults):
            continue
        body = protocol.encode(protocol.end_body(match_id, game.spec.name, seat.seat, result, result["forfeited"]))
        headers = seat.client.signed_headers(match_id, turn, body)
        calls[seat.seat] = Call(seat.client, "POST", "/end", body, headers, tc.start_ms / 1000, empty_ok=True)
    for index, reply in asker.ask(calls).items():
        if reply.fault is not None:
            seats[index].record(reply.fault, turn, "/end")


def _excerpt(value: Any) -> str:
    try:
        return excerpt(commitments.canonical_json(value))
    except (TypeError, ValueError):
        return excerpt(repr(value))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


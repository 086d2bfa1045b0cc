"""Health check of a bot before it is admitted: ``GET /`` identity, then a trial ``/act`` on a sample
state of the game, through the same guarded, deadline-bound client the matches use.

The problems reported name the kind of each problem (fault kind, HTTP status, which schema rule)
and never quote what the bot sent: a user could otherwise aim the check at a service the arena can
reach and read its answers back from the refusal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jsonschema

from referee import protocol
from referee.bot_client import BotClient, Reply
from referee.bot_transport import AddressGuard, Resolver, resolve
from referee.errors import RulesError, UnsafeURL
from referee.faults import FaultKind
from referee.games import get_game
from referee.watchdog import Watchdog


@dataclass
class HealthReport:
    ok: bool
    info: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    latency_ms: dict[str, float] = field(default_factory=dict)


def check_bot(url: str, secret: str, game_name: str, guard: AddressGuard | None = None,
              resolver: Resolver = resolve, timeout_ms: int = 3000) -> HealthReport:
    """Everything that failed, in words a bot author can act on; never raises for bot behaviour."""
    report = HealthReport(ok=False)
    try:
        client = BotClient(url, secret, guard=guard, resolver=resolver)
    except UnsafeURL as exc:
        report.problems.append(str(exc))
        return report
    watchdog = Watchdog()
    try:
        info = _identity(client, watchdog, timeout_ms, game_name, report)
        if info is not None:
            report.info = info
            _trial_act(client, watchdog, timeout_ms, game_name, report)
    finally:
        client.close()
        watchdog.close()
    report.ok = not report.problems
    return report


def _describe(reply: Reply, what: str) -> str:
    """The fault's kind and status code; the guard's own message for a refused address (it quotes
    the arena's rule, not the bot)."""
    fault = reply.fault
    assert fault is not None
    if fault.kind == FaultKind.UNSAFE_URL:
        return f"{what}: {fault.kind}: {fault.message}"
    status = f" (HTTP {reply.status})" if reply.status is not None else ""
    return f"{what}: {fault.kind}{status}"


def _schema_rule(exc: jsonschema.ValidationError) -> str:
    """Where the answer broke the schema, in the schema's own words (never the answer's values)."""
    return "/".join(str(part) for part in exc.relative_schema_path)


def _identity(client: BotClient, watchdog: Watchdog, timeout_ms: int, game_name: str,
              report: HealthReport) -> dict[str, Any] | None:
    reply = client.call(watchdog, "GET", "/", None, {}, timeout_ms / 1000)
    report.latency_ms["identity"] = round(reply.latency_ms, 3)
    if reply.fault is not None:
        report.problems.append(_describe(reply, "GET /"))
        return None
    try:
        jsonschema.validate(reply.data, protocol.schema("bot_info"))
    except jsonschema.ValidationError as exc:
        report.problems.append(f"GET / must answer the bot_info schema (rule {_schema_rule(exc)})")
        return None
    games = reply.data["games"]
    if game_name not in games and "*" not in games:
        report.problems.append(f"the bot's games do not include {game_name!r}")
    return dict(reply.data)


def _trial_act(client: BotClient, watchdog: Watchdog, timeout_ms: int, game_name: str, report: HealthReport) -> None:
    game = get_game(game_name)
    state = game.initial_state(game.spec.min_players, seed=0)
    seat = min(game.to_act(state))
    legal = game.legal_actions(state, seat)
    match_id = "health-check"
    body = protocol.encode(protocol.act_body(match_id, game_name, seat, 1, game.decision(state, seat), timeout_ms, 0,
                                             game.view(state, seat), legal, None))
    reply = client.call(watchdog, "POST", "/act", body, client.signed_headers(match_id, 1, body), timeout_ms / 1000)
    report.latency_ms["act"] = round(reply.latency_ms, 3)
    if reply.fault is not None:
        report.problems.append(_describe(reply, "trial POST /act"))
        return
    if not isinstance(reply.data, dict) or "action" not in reply.data:
        report.problems.append('trial POST /act must answer {"action": ...}')
        return
    try:
        game.canonical_action(state, seat, reply.data["action"])
    except RulesError:
        report.problems.append("trial POST /act answered an illegal action")

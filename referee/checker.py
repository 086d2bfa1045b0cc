"""``arena check``: run the protocol against a bot like a validation episode before it may play.

``GET /`` and what it declares, then for each game a short match with the bot in every seat
(``/start``, a few ``/act`` of every decision kind, turn-based and simultaneous, ``/end``), a stale
and an unsigned request, and what the answers show about timing, size, keep-alive and Nagle. Every
call goes through the referee's own client, so the URL guard, the deadlines and the size cap are the
ones a match applies. The same report serves the CLI, the health check of a submission and the
API's 422 (which shows only the failures' lines). Bounded: the check stops calling after a few faults,
so even a silent bot is done in a few deadlines."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import jsonschema

from referee import protocol
from referee.asker import Asker
from referee.bot_client import BotClient
from referee.bot_transport import AddressGuard, Resolver, resolve
from referee.check_episode import ASKS_PER_KIND, Budget, run_episode
from referee.check_report import CheckReport, Status, fault_detail, fault_fix
from referee.errors import UnsafeURL
from referee.faults import printable
from referee.games import GAMES
from referee.protocol import TimeControls
from referee.watchdog import Watchdog

NAGLE_GAP_MS = 30.0  # headers and body this far apart: the body waited for a delayed ACK (40 ms on Linux)


def check_protocol(url: str, secret: str = "", games: Sequence[str] | None = None, guard: AddressGuard | None = None,
                   resolver: Resolver = resolve, time_controls: TimeControls | None = None,
                   identity_ms: int = 3000, probe_signatures: bool | None = None,
                   asks_per_kind: int = ASKS_PER_KIND, max_seconds: float = 20.0) -> CheckReport:
    """The whole checklist for the bot at ``url``; never raises for anything the bot does.

    ``games``: the games to play (default: every arena game the bot declares). ``probe_signatures``:
    send an unsigned request and expect a refusal (default: when a secret is given); False also skips
    the replayed (stale) request: a bot being submitted does not know its secret yet, and the SDK
    refuses replays only when it has one. ``asks_per_kind`` answers of each decision kind are asked;
    no call starts after ``max_seconds`` (a bot that thinks for its whole deadline stays bounded)."""
    began = time.perf_counter()
    tc = time_controls or TimeControls()
    report = CheckReport()
    try:
        check_url = BotClient(url, secret, tc.max_response_bytes, guard, resolver)
    except UnsafeURL as exc:
        report.add("URL", Status.FAIL, str(exc), "submit an http:// or https:// URL of a public host")
        return report
    watchdog = Watchdog()
    pool = ThreadPoolExecutor(max_workers=12, thread_name_prefix="arena-check")
    clients = [check_url]
    try:
        asker = Asker(pool, watchdog)
        admission = probe_signatures is False
        declared = _identity(check_url, watchdog, identity_ms, tc, report, admission)
        if declared is not None:
            budget = Budget(tc, signed=bool(secret), admission=admission, asks_per_kind=asks_per_kind,
                            stop_at=began + max_seconds)
            chosen = _choose_games(declared, games, report)
            for name in chosen:
                seats = GAMES[name].spec.min_players
                while len(clients) < seats:
                    clients.append(BotClient(url, secret, tc.max_response_bytes, guard, resolver))
                run_episode(name, clients[:seats], asker, budget, report,
                            bool(secret) if probe_signatures is None else probe_signatures,
                            probe_signatures is not False)
                if budget.exhausted:
                    rest = chosen[chosen.index(name) + 1:]
                    if rest:
                        report.add("other games", Status.SKIP, f"not checked after {budget.faults} faults or "
                                                               f"{max_seconds:.0f} s: {', '.join(rest)}")
                    break
            if chosen:
                _judge_transport(report, budget, clients, tc)
    finally:
        for client in clients:
            client.close()
        pool.shutdown(wait=False, cancel_futures=True)
        watchdog.close()
        report.elapsed_s = time.perf_counter() - began
    return report


def _identity(client: BotClient, watchdog: Watchdog, identity_ms: int, tc: TimeControls,
              report: CheckReport, admission: bool = False) -> list[str] | None:
    """``GET /`` against the bot_info schema; the declared games, or None when nothing else can run."""
    reply = client.call(watchdog, "GET", "/", None, {}, identity_ms / 1000)
    report.latency_ms["identity"] = round(reply.latency_ms, 3)
    if reply.fault is not None:
        report.add("GET /", Status.FAIL, fault_detail(reply), fault_fix(reply, "GET /", identity_ms,
                                                                       tc.max_response_bytes, bool(client.secret),
                                                                       admission))
        return None
    try:
        jsonschema.validate(reply.data, protocol.schema("bot_info"))
    except jsonschema.ValidationError as exc:
        rule = "/".join(str(part) for part in exc.relative_schema_path)
        report.add("GET /", Status.FAIL, f"the answer does not match the bot_info schema (rule {rule})",
                   'answer {"apiversion": "1", "name": ..., "author": ..., "version": ..., "games": [...]} '
                   "(referee/schemas/bot_info.json)")
        return None
    report.info = _displayable(reply.data)
    games = list(reply.data["games"])
    report.add("GET /", Status.PASS, f"protocol {reply.data['apiversion']}, {len(games)} games declared, "
                                     f"{reply.latency_ms:.1f} ms")
    return games


def _choose_games(declared: list[str], wanted: Sequence[str] | None, report: CheckReport) -> list[str]:
    everything = "*" in declared
    if wanted:
        for name in wanted:
            if name not in declared and not everything:
                report.add(f"games ({name})", Status.FAIL, f"the bot's games do not include {name!r}",
                           f'add "{name}" to the games list GET / answers')
        return [name for name in wanted if name in GAMES]
    known = sorted(GAMES) if everything else [name for name in declared if name in GAMES]
    if not known:
        report.add("games", Status.FAIL, "GET / declares none of the arena's games",
                   f"list the games the bot plays in GET /: any of {', '.join(sorted(GAMES))}")
    return known


def _judge_transport(report: CheckReport, budget: Budget, clients: list[BotClient], tc: TimeControls) -> None:
    """Timing, size, keep-alive and Nagle, from the answers the episodes got."""
    replies = budget.replies
    if not replies:
        return
    latencies = [reply.latency_ms for reply in replies]
    worst, median = max(latencies), statistics.median(latencies)
    report.latency_ms["act_p50"], report.latency_ms["act_max"] = round(median, 3), round(worst, 3)
    timing = f"p50 {median:.1f} ms, slowest {worst:.1f} ms of the {tc.decision_ms} ms limit"
    if worst > tc.decision_ms / 2:
        report.add("timing", Status.WARN, timing, "a slower machine or a busy network will push answers over the "
                   "limit: keep a margin of half the limit, or think less when deadline_ms is short")
    else:
        report.add("timing", Status.PASS, timing)
    biggest = max(reply.body_bytes or 0 for reply in replies)
    size = (f"largest answer {biggest} bytes (cap {tc.max_response_bytes}), largest request the bot read "
            f"{budget.largest_request} bytes")
    if biggest > tc.max_response_bytes / 2:
        report.add("body size", Status.WARN, size, 'answer only {"action": ...}: bigger answers are cut')
    else:
        report.add("body size", Status.PASS, size)
    _keep_alive(report, clients, len(replies))
    _nagle(report, replies)


def _keep_alive(report: CheckReport, clients: list[BotClient], answers: int) -> None:
    opened = sum(client.tracker.connections for client in clients)
    seats = sum(1 for client in clients if client.tracker.connections)
    detail = f"{opened} connections for {answers} answers on {seats} seats"
    if opened > 2 * seats + 2:
        report.add("keep-alive", Status.WARN, detail + ": the bot closes the connection after answers",
                   "keep connections open (HTTP/1.1 keep-alive; no 'Connection: close', an idle timeout of a "
                   "minute or more): a new connection per decision costs a round trip or a TLS handshake")
    else:
        report.add("keep-alive", Status.PASS, detail)


def _nagle(report: CheckReport, replies: list) -> None:
    gaps = [reply.latency_ms - reply.headers_ms for reply in replies if reply.headers_ms is not None]
    stalled = [gap for gap in gaps if gap >= NAGLE_GAP_MS]
    if stalled:
        report.add("nagle", Status.WARN,
                   f"the body came {statistics.median(stalled):.0f} ms after the headers in {len(stalled)} of "
                   f"{len(gaps)} answers: headers and body leave in separate writes with Nagle on",
                   "send headers and body in one write (set Content-Length and write once), or set TCP_NODELAY "
                   "on the socket: each split answer waits for a delayed ACK (40 ms)")
    else:
        report.add("nagle", Status.PASS, "headers and body arrive together")


def _displayable(value: Any) -> Any:
    """The bot's self-description with every text made printable (``faults.printable``): it is stored and
    shown on the bot's page, and a lone surrogate in ``author`` (valid JSON, no valid UTF-8) made that
    page a 500; a NUL is refused by PostgreSQL's text."""
    if isinstance(value, str):
        return printable(value, len(value))
    if isinstance(value, list):
        return [_displayable(item) for item in value]
    if isinstance(value, dict):
        return {_displayable(key): _displayable(item) for key, item in value.items()}
    return value

"""A tiny SDK for bot authors: write one function ``act(request) -> action``, get a compliant server.

    from sample_bots.sdk import Bot, run

    def act(request):
        return request["legal_actions"][0]

    run(Bot(name="first", author="me", games=["piranha-pedro"], act=act))

The server speaks protocol v1 (docs/protocol.md): ``GET /`` identity, ``POST /start``, ``/act``,
``/end``. When a secret is configured (``--secret`` or ``ARENA_BOT_SECRET``) every POST must carry a
valid ``X-Arena-Signature``, and an ``/act`` whose turn is not newer than the last one seen for that
match and seat (or of a match that ended) is refused as stale (HTTP 409), and a body sent to another
route than its own (the signature covers the body, not the path) gets 400. Headers and body leave in
one write with Nagle off, so a kept-alive decision costs about a millisecond, not the 40 ms of a
delayed-ACK stall.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from referee.protocol import API_VERSION, MATCH_HEADER, SIGNATURE_HEADER, TURN_HEADER, verify_signature

MAX_REQUEST_BYTES = 4 * 1024 * 1024
Handler = Callable[[dict[str, Any]], Any]
# What only each route's body carries (docs/protocol.md). The signature covers the body, not the path, so
# a captured body posted to another route would pass it: an /act or /start body sent to /end made the
# bot forget the match's turns, and every earlier turn could then be replayed. Checked with a secret, as
# the turns are: without one, anybody may post anything anyway.
ROUTE_KEYS = {"/start": "time_controls", "/act": "legal_actions", "/end": "result"}
ENDED_KEPT = 4096  # ended matches remembered (their turns are refused): bounded memory


@dataclass
class Bot:
    """A bot: its identity and the functions the server calls."""

    name: str
    act: Handler
    games: list[str]
    author: str = "anonymous"
    version: str = "1"
    capacity: int = 2  # matches it serves at once (declared in GET /): the server is threaded
    on_start: Handler | None = None
    on_end: Handler | None = None
    secret: str | None = None
    _last_turn: dict[tuple[str, int], int] = field(default_factory=dict, repr=False)
    _ended: dict[str, None] = field(default_factory=dict, repr=False)  # insertion order: oldest first
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def info(self) -> dict[str, Any]:
        return {"apiversion": API_VERSION, "name": self.name, "author": self.author, "version": self.version,
                "games": list(self.games), "capacity": self.capacity}

    def fresh_turn(self, match_id: str, seat: int, turn: int) -> bool:
        """True the first time a (match, seat) sees ``turn`` or a later one: older calls are stale."""
        with self._lock:
            key = (match_id, seat)
            if match_id in self._ended or turn <= self._last_turn.get(key, 0):
                return False
            self._last_turn[key] = turn
            return True

    def forget(self, match_id: str) -> None:
        """The match ended: drop its turns, and refuse any turn of it from now on (a replay)."""
        with self._lock:
            for key in [k for k in self._last_turn if k[0] == match_id]:
                del self._last_turn[key]
            self._ended[match_id] = None
            while len(self._ended) > ENDED_KEPT:
                del self._ended[next(iter(self._ended))]


class BotRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    wbufsize = 1 << 16  # headers and body in one write
    disable_nagle_algorithm = True
    server: BotServer

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, payload: Any) -> None:
        body = json.dumps(payload, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "":
            self._send(200, self.server.bot.info())
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        bot = self.server.bot
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            self.close_connection = True
            self._send(413, {"error": "request too large"})
            return
        raw = self.rfile.read(length)
        if bot.secret and not verify_signature(bot.secret, raw, self.headers.get(SIGNATURE_HEADER)):
            self._send(401, {"error": "bad or missing signature"})
            return
        try:
            request = json.loads(raw)
        except ValueError:
            self._send(400, {"error": "body is not JSON"})
            return
        if bot.secret and request.get("match_id") != self.headers.get(MATCH_HEADER):
            self._send(400, {"error": "match header does not match the body"})
            return
        route = self.path.rstrip("/")
        others = [key for path, key in ROUTE_KEYS.items() if path != route]
        if bot.secret and route in ROUTE_KEYS and (not isinstance(request, dict) or ROUTE_KEYS[route] not in request
                                    or any(key in request for key in others)):
            self._send(400, {"error": f"not a {route} body: the body is for another route"})
            return
        if route == "/act":
            if bot.secret and (str(request.get("turn")) != self.headers.get(TURN_HEADER)
                               or not bot.fresh_turn(request["match_id"], request["seat"], request["turn"])):
                self._send(409, {"error": "stale or replayed turn"})
                return
            self._answer(lambda: {"action": bot.act(request)})
        elif route == "/start":
            self._answer(lambda: _call_hook(bot.on_start, request))
        elif route == "/end":
            bot.forget(str(request.get("match_id")))
            self._answer(lambda: _call_hook(bot.on_end, request))
        else:
            self._send(404, {"error": "not found"})

    def _answer(self, produce: Callable[[], Any]) -> None:
        """A bug in the bot's own code becomes an HTTP 500 with its message, not a dropped connection."""
        try:
            payload = produce()
        except Exception as exc:
            self._send(500, {"error": f"{type(exc).__name__}: {exc}"[:500]})
            return
        self._send(200, payload)


def _call_hook(hook: Handler | None, request: dict[str, Any]) -> dict[str, Any]:
    if hook is not None:
        hook(request)
    return {"ok": True}


class BotServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, bot: Bot, host: str = "127.0.0.1", port: int = 0, verbose: bool = False) -> None:
        self.bot = bot
        self.verbose = verbose
        super().__init__((host, port), BotRequestHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A referee that hangs up (its match was cut, its worker died) is routine, not a traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError) and not self.verbose:
            return
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


def start_in_thread(bot: Bot, host: str = "127.0.0.1", port: int = 0) -> BotServer:
    """Serve ``bot`` from a background thread (tests, demos); call ``shutdown()`` when done."""
    server = BotServer(bot, host, port)
    threading.Thread(target=server.serve_forever, daemon=True, name=f"bot-{bot.name}").start()
    return server


def run(bot: Bot, argv: Sequence[str] | None = None) -> None:
    """Command-line entry: ``--host``, ``--port``, ``--secret`` (or ``ARENA_BOT_SECRET``)."""
    parser = argparse.ArgumentParser(description=f"Run the {bot.name} bot (arena protocol v1).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9001)
    parser.add_argument("--secret", default=os.environ.get("ARENA_BOT_SECRET"),
                        help="verify request signatures with this secret")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    bot.secret = args.secret or None
    server = BotServer(bot, args.host, args.port, args.verbose)
    print(f"{bot.name} bot listening on {server.url} (games: {', '.join(bot.games)})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()

"""Misbehaving bots: real servers on loopback that break the protocol in every way we know of.

Each behaviour is a function of the parsed request; the server speaks raw HTTP/1.1 over sockets so
that it can also drip bytes, lie about lengths and hang up mid-body.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Behaviour = Callable[["Request", socket.socket], None]


class Request:
    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        self.method, self.path, self.headers, self.body = method, path, headers, body

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def http_response(status: int, body: bytes, extra: str = "", length: int | None = None) -> bytes:
    length = len(body) if length is None else length
    head = (f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n{extra}"
            f"\r\n").encode()
    return head + body


def ok(sock: socket.socket, payload: Any) -> None:
    sock.sendall(http_response(200, json.dumps(payload).encode()))


def first_legal(req: Request) -> Any:
    return req.json()["legal_actions"][0]


def polite(req: Request, sock: socket.socket) -> None:
    """A correct bot: the first legal action, at once."""
    if req.method == "GET":
        ok(sock, {"apiversion": "1", "name": "polite", "author": "zoo", "version": "1", "games": ["*"]})
    elif req.path == "/act":
        ok(sock, {"action": first_legal(req)})
    else:
        ok(sock, {"ok": True})


def on_act(behaviour: Behaviour) -> Behaviour:
    """Misbehave on /act only; answer /start, /end and GET / politely."""

    def handler(req: Request, sock: socket.socket) -> None:
        (behaviour if req.path == "/act" else polite)(req, sock)

    return handler


def silent(req: Request, sock: socket.socket) -> None:
    """Reads the request and never answers."""
    time.sleep(3600)


def late(delay_s: float) -> Behaviour:
    def handler(req: Request, sock: socket.socket) -> None:
        time.sleep(delay_s)
        polite(req, sock)

    return handler


def slow_after_first(delay_s: float) -> Behaviour:
    """Answers the first request on each connection at once, every later one after ``delay_s``."""
    answered: set[int] = set()

    def handler(req: Request, sock: socket.socket) -> None:
        if id(sock) in answered:
            time.sleep(delay_s)
        answered.add(id(sock))
        ok(sock, {"action": 1})

    return handler


def drip(every_s: float = 0.05) -> Behaviour:
    """A valid answer, one byte at a time."""

    def handler(req: Request, sock: socket.socket) -> None:
        for byte in http_response(200, json.dumps({"action": first_legal(req)}).encode() + b" " * 200):
            sock.sendall(bytes([byte]))
            time.sleep(every_s)

    return handler


def huge(req: Request, sock: socket.socket) -> None:
    """50 MB of body (the size is declared honestly)."""
    size = 50 * 1024 * 1024
    sock.sendall(http_response(200, b"", length=size))
    chunk = b"[" * 65536
    for _ in range(size // len(chunk)):
        sock.sendall(chunk)


def huge_undeclared(req: Request, sock: socket.socket) -> None:
    """A big body without Content-Length (chunked), so the cap must be enforced while reading."""
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"1" * 32768
    for _ in range(200):
        sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
    sock.sendall(b"0\r\n\r\n")


def huge_redirect(req: Request, sock: socket.socket) -> None:
    """A redirect whose body never ends: must not be read, let alone followed."""
    sock.sendall(http_response(302, b"", "Location: http://127.0.0.1:9/\r\n", length=1 << 40))
    chunk = b"x" * 65536
    while True:
        sock.sendall(chunk)


def garbage(req: Request, sock: socket.socket) -> None:
    sock.sendall(http_response(200, b"{this is not json"))


def wrong_shape(req: Request, sock: socket.socket) -> None:
    ok(sock, {"move": first_legal(req)})


def illegal(req: Request, sock: socket.socket) -> None:
    ok(sock, {"action": "definitely not a legal action"})


def wrong_turn(req: Request, sock: socket.socket) -> None:
    ok(sock, {"action": first_legal(req), "turn": req.json()["turn"] - 1})


def status(code: int, extra: str = "") -> Behaviour:
    def handler(req: Request, sock: socket.socket) -> None:
        sock.sendall(http_response(code, b'{"error": "nope"}', extra))

    return handler


def close_mid_body(req: Request, sock: socket.socket) -> None:
    sock.sendall(http_response(200, b'{"action": ', length=200))
    sock.shutdown(socket.SHUT_RDWR)


def fail_start_and_end(req: Request, sock: socket.socket) -> None:
    """Plays correctly, but /start and /end answer 500."""
    if req.path in ("/start", "/end"):
        sock.sendall(http_response(500, b'{"error": "boom"}'))
    else:
        polite(req, sock)


def flood(req: Request, sock: socket.socket) -> None:
    """Answers at once with a megabyte of bytes that are not HTTP at all."""
    noise = bytes((i * 7919) % 251 for i in range(65536))
    for _ in range(16):
        sock.sendall(noise)
    sock.shutdown(socket.SHUT_RDWR)


def hang_up(req: Request, sock: socket.socket) -> None:
    """Closes the connection without a word."""
    sock.shutdown(socket.SHUT_RDWR)


def split_writes(req: Request, sock: socket.socket) -> None:
    """Correct answers, but headers and body in two writes with Nagle on: the body waits for the
    referee's delayed ACK (40 ms on Linux) on every kept-alive call."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
    if req.method == "GET":
        payload: Any = {"apiversion": "1", "name": "split", "author": "zoo", "version": "1", "games": ["*"]}
    else:
        payload = {"action": first_legal(req)} if req.path == "/act" else {"ok": True}
    body = json.dumps(payload).encode()
    head = http_response(200, body)[: -len(body)]
    sock.sendall(head)
    sock.sendall(body)


def close_each(req: Request, sock: socket.socket) -> None:
    """Correct answers with ``Connection: close``, then a hang-up: no keep-alive."""
    if req.method == "GET":
        payload: Any = {"apiversion": "1", "name": "closer", "author": "zoo", "version": "1", "games": ["*"]}
    else:
        payload = {"action": first_legal(req)} if req.path == "/act" else {"ok": True}
    sock.sendall(http_response(200, json.dumps(payload).encode(), "Connection: close\r\n"))
    sock.shutdown(socket.SHUT_RDWR)


def nested(depth: int) -> Behaviour:
    """Valid JSON nested ``depth`` deep, on a new connection every time (``Connection: close``): the
    referee parses it on a thread of its own, with a fresh stack."""

    def handler(req: Request, sock: socket.socket) -> None:
        sock.sendall(http_response(200, b"[" * depth + b"]" * depth, "Connection: close\r\n"))
        sock.shutdown(socket.SHUT_RDWR)

    return handler


class _Handler(socketserver.BaseRequestHandler):
    server: ZooServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        self.server.accepted()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = sock.makefile("rb")
        try:
            while True:
                line = reader.readline(65536)
                if not line:
                    return
                method, path, _ = line.decode().split(" ", 2)
                headers = {}
                while (line := reader.readline(65536)) not in (b"\r\n", b"\n", b""):
                    key, _, value = line.decode().partition(":")
                    headers[key.strip().lower()] = value.strip()
                body = reader.read(int(headers.get("content-length", 0)))
                req = Request(method, path, headers, body)
                self.server.requests.append(req)
                self.server.behaviour(req, sock)
        except (OSError, ValueError):
            return


class ZooServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.requests: list[Request] = []
        self.connections = 0  # accepted, in all
        self._counting = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def accepted(self) -> None:
        with self._counting:
            self.connections += 1

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]


@contextmanager
def zoo_bot(behaviour: Behaviour) -> Iterator[ZooServer]:
    server = ZooServer(behaviour)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    """A loopback port with nothing listening."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

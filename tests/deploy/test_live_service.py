"""The live service as deployed: the compose file's ``live`` command (gunicorn, gevent worker) behind the nginx
of deploy/nginx.conf.template, on a Redis of its own. Many streams are held open at once by one process, and
an event published the way workers publish it reaches every one of them through nginx at once (no
buffering on /live/). The threaded web service refuses streams (pages poll there)."""

from __future__ import annotations

import os
import runpy
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.runtime.live_bus import LiveBus
from arena.runtime.queue import connect
from tests.arena.service_harness import RedisServer, free_port
from tests.deploy import proxy_harness as h

pytestmark = pytest.mark.integration
STREAMS = 60


def open_stream(port: int, topic: str, source: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    sock.sendall(f"GET /live/{topic} HTTP/1.1\r\nHost: arena\r\nAccept: text/event-stream\r\n\r\n".encode())
    return sock


def read_until(sock: socket.socket, needle: bytes, timeout_s: float) -> bytes:
    sock.settimeout(timeout_s)
    data = b""
    deadline = time.monotonic() + timeout_s
    while needle not in data and time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_the_gevent_live_service_streams_through_nginx_to_many_spectators(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path)
    redis.start()
    live_port = free_port()
    env = {**h.web_env(tmp_path, f"sqlite:///{tmp_path / 'arena.db'}", redis.url, free_port()),
           "ARENA_LIVE_BIND": f"127.0.0.1:{live_port}"}
    program, *args = h.compose()["services"]["live"]["command"]
    assert runpy.run_path(str(h.ROOT / args[1]))["worker_class"] == "gevent"
    with open(tmp_path / "live.log", "wb") as log:
        proc = subprocess.Popen([str(Path(sys.executable).parent / program), *args], cwd=h.ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    socks: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        while h.get(live_port, "/healthz", timeout=2)[0] != 200:
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "live.log").read_text()
            time.sleep(0.2)
        with h.nginx(tmp_path / "nginx", f"127.0.0.1:{live_port}",
                     {"NGINX_LIVE_UPSTREAM": f"127.0.0.1:{live_port}"}) as port:
            for n in range(STREAMS):
                # spectators from several addresses: nginx allows 20 connections per address
                socks.append(open_stream(port, "match-3", f"127.0.0.{10 + n // 15}"))
                assert b"retry: 3000" in read_until(socks[-1], b"retry:", 10), n  # through nginx, unbuffered
            bus = LiveBus(connect(redis.url), h.compose()["x-arena-env"].get("ARENA_QUEUE_NAME", "arena-matches"),
                          0)
            sent = time.monotonic()
            bus.publish("match-3", "step", {"match": 3, "turn": 7})
            assert bus.publisher.flush()
            for sock in socks:
                assert b'"turn":7' in read_until(sock, b'"turn":7', 10)
            assert time.monotonic() - sent < 5
            bus.close()
            status = h.get(port, "/live/match-3/last")[0]
            assert status == 204  # nothing kept for this topic: the step was sent, not kept
    finally:
        for sock in socks:
            sock.close()
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        redis.stop()


def test_the_threaded_web_service_sends_spectators_to_polling() -> None:
    """deploy/gunicorn.conf.py sets ARENA_LIVE_STREAMS=0 for its workers (threads are not for idle streams)."""
    saved = os.environ.pop("ARENA_LIVE_STREAMS", None)
    try:
        runpy.run_path(str(h.ROOT / "deploy" / "gunicorn.conf.py"))
        assert os.environ["ARENA_LIVE_STREAMS"] == "0"
    finally:
        os.environ.pop("ARENA_LIVE_STREAMS", None)
        if saved is not None:
            os.environ["ARENA_LIVE_STREAMS"] = saved

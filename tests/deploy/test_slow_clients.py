"""Issue 15, slow clients: with the shipped gunicorn config, slow-header connections starved every thread
and /healthz timed out for 40 s. The shipped shape now puts nginx in front (deploy/nginx.conf.template,
the proxy service of deploy/docker-compose.yml). Here the real nginx binary runs that file in front of a
real gunicorn with deploy/gunicorn.conf.py and the compose file's environment, on PostgreSQL and Redis.

Slow clients come from their own loopback addresses (127.0.1.x, 127.0.2.x, ...) so nginx's per-address
limit sees an attacker apart from the client probing /healthz (127.0.0.1)."""

from __future__ import annotations

import http.client
import re
import runpy
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import compose_spec
import pytest
import redis

from arena.config import Settings
from tests.deploy import proxy_harness as h

pytestmark = pytest.mark.integration

HEADER_ATTACKERS = [f"127.0.1.{i}" for i in range(1, 11)]
BODY_ATTACKERS = [f"127.0.2.{i}" for i in range(1, 6)]


def _directive(name: str) -> str:
    match = re.search(rf"^\s*{name}\s+([^;]+);", h.TEMPLATE.read_text(), re.M)
    assert match, name
    return match.group(1).strip()


def _seconds(name: str) -> float:
    value = _directive(name)
    assert value.endswith("s"), value
    return float(value[:-1])


@pytest.fixture(scope="module")
def web(tmp_path_factory) -> Iterator[h.Web]:
    """gunicorn as the compose file runs it (4 processes x 4 threads), sign-ups limited to 3 an hour."""
    with h.gunicorn(tmp_path_factory.mktemp("web"), {"ARENA_SIGNUP_RATE": "3/hour"}) as started:
        yield started


@pytest.fixture(scope="module")
def proxy(web, tmp_path_factory) -> Iterator[int]:
    with h.nginx(tmp_path_factory.mktemp("nginx"), f"127.0.0.1:{web.port}") as port:
        yield port


def test_the_compose_file_puts_nginx_in_front_and_publishes_nothing_else() -> None:
    text = h.COMPOSE.read_text()
    compose_spec.PyCompose.from_yaml(text).validate()
    services = h.compose()["services"]
    proxy, web = services["proxy"], services["web"]
    assert proxy["image"].startswith("nginx:")
    assert "./nginx.conf.template:/etc/nginx/templates/default.conf.template:ro" in proxy["volumes"]
    assert [name for name, service in services.items() if service.get("ports")] == ["proxy"]
    assert set(proxy["networks"]) & set(web["networks"]) and not set(proxy["networks"]) & {"internal", "bots"}
    # the image fills in exactly the template's placeholders, and only those (nginx's $host stays)
    placeholders = set(h.PLACEHOLDER.findall(h.TEMPLATE.read_text()))
    env = proxy["environment"]
    assert set(env) - {"NGINX_ENVSUBST_FILTER"} == placeholders
    assert all(re.search(env["NGINX_ENVSUBST_FILTER"], name) for name in placeholders)
    assert not any(re.search(env["NGINX_ENVSUBST_FILTER"], name) for name in ("HOSTNAME", "PATH", "NGINX_VERSION"))
    assert env["NGINX_UPSTREAM"] == "web:8000"  # gunicorn.conf.py binds 0.0.0.0:8000 in the container
    # one body limit: the app's setting, the proxy's client_max_body_size
    arena_env = h.compose()["x-arena-env"]
    assert env["ARENA_MAX_REQUEST_BYTES"] == arena_env["ARENA_MAX_REQUEST_BYTES"] == str(Settings().max_request_bytes)
    assert _directive("client_max_body_size") == "${ARENA_MAX_REQUEST_BYTES}"
    assert arena_env["ARENA_PROXY_HOPS"] == "1"


def test_the_bare_host_set_up_keeps_gunicorn_behind_nginx() -> None:
    unit = (h.ROOT / "deploy" / "systemd" / "arena-web.service").read_text()
    assert "Environment=ARENA_BIND=127.0.0.1:8000 ARENA_PROXY_HOPS=1" in unit
    readme = (h.ROOT / "deploy" / "README.md").read_text()
    placeholders = sorted(set(h.PLACEHOLDER.findall(h.TEMPLATE.read_text())))
    step = re.search(r"envsubst '([^']+)'\s*\\\n\s*< deploy/nginx.conf.template", readme)
    assert step and sorted(h.PLACEHOLDER.findall(step.group(1))) == placeholders


def test_slow_header_connections_starve_gunicorn_alone(web) -> None:
    """The bug, reproduced on gunicorn without the proxy: every thread waits on a slow client's headers."""
    assert h.get(web.port, "/healthz")[0] == 200
    threads = runpy.run_path(str(h.ROOT / "deploy" / "gunicorn.conf.py"))["threads"]
    slow = h.SlowClients(web.port)
    try:
        slow.open("header", 200, HEADER_ATTACKERS)
        # the kernel hands each connection to one of the processes, not always evenly: open more, as an
        # attacker would, until each holds one per thread
        while min(web.connections_per_worker().values()) < threads and len(slow.socks) < 1500:
            slow.open("header", 20, HEADER_ATTACKERS)
        assert min(web.connections_per_worker().values()) >= threads, web.connections_per_worker()
        time.sleep(1)
        probes = [h.get(web.port, "/healthz", timeout=2) for _ in range(5)]
        assert all(status is None for status, _, _ in probes), probes  # 2 s without an answer
    finally:
        slow.close()
    assert h.get(web.port, "/healthz", timeout=10)[0] == 200  # the slow clients gone, it answers again


def test_slowloris_starving_gunicorn_threads_healthz_answers_within_a_second_behind_nginx(web, proxy) -> None:
    """The regression test: 200 slow-header and 50 slow-body connections at nginx while /healthz and the
    home page answer within a second; nginx then drops headers slower than client_header_timeout and
    bodies stalled longer than client_body_timeout."""
    slow = h.SlowClients(proxy)
    try:
        opened = time.monotonic()
        slow.open("header", 200, HEADER_ATTACKERS)
        slow.open("body", 40, BODY_ATTACKERS)
        slow.open("silent", 10, BODY_ATTACKERS)
        time.sleep(1)
        probes = []
        for _ in range(8):
            probes += [h.get(proxy, "/healthz", timeout=3), h.get(proxy, "/", timeout=3)]
            time.sleep(0.25)
        assert all(status == 200 for status, _, _ in probes), [p[:2] for p in probes]
        assert max(seconds for _, seconds, _ in probes) < 1.0, [p[:2] for p in probes]
        # the attack was on all along, and gunicorn saw none of it: it holds nginx's kept-alive connections only
        assert (slow.open_count("header"), slow.open_count("body"), slow.open_count("silent")) == (200, 40, 10)
        assert sum(web.connections_per_worker().values()) <= 4, web.connections_per_worker()
        deadline = opened + max(_seconds("client_header_timeout"), _seconds("client_body_timeout")) + 5
        while (slow.open_count("header") or slow.open_count("silent")) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert (slow.open_count("header"), slow.open_count("silent")) == (0, 0)
        assert slow.open_count("body") == 40  # a body moving every 2 s is let through, at 20 per address
    finally:
        slow.close()
    assert h.get(web.port, "/healthz")[0] == 200


def test_one_address_has_at_most_20_requests_in_progress(proxy) -> None:
    limit = int(_directive("limit_conn arena_per_address"))
    slow = h.SlowClients(proxy)
    try:
        slow.open("body", limit + 5, ["127.0.3.1"])
        time.sleep(0.5)
        answers = slow.answers("body")
        assert len(answers) == 5 and all(a.startswith(b"HTTP/1.1 429") for a in answers), answers
        assert h.get(proxy, "/healthz", source="127.0.3.1")[0] == 429
        assert h.get(proxy, "/healthz", source="127.0.3.2")[0] == 200  # another address is not held back
    finally:
        slow.close()
    assert h.get(proxy, "/healthz", source="127.0.3.1")[0] == 200


def test_a_body_over_arena_max_request_bytes_is_refused_by_nginx(proxy) -> None:
    limit = Settings().max_request_bytes
    headers = {"Content-Type": "application/json"}
    status, _, body = h.get(proxy, "/api/accounts", "127.0.4.1", method="POST", body=b" " * (limit + 1),
                            headers=headers)
    assert status == 413 and b"nginx" in body
    status, _, body = h.get(proxy, "/api/accounts", "127.0.4.1", method="POST", body=b" " * limit, headers=headers)
    assert status == 422 and body.startswith(b"{")  # the app's own answer to a body of blanks


def test_rate_limits_count_the_client_address_not_nginx_nor_a_forged_header(web, proxy) -> None:
    def sign_up(n: int, source: str) -> int | None:
        """A new account each time, each claiming to come from another address."""
        return h.get(proxy, "/api/accounts", source, method="POST", body=f'{{"name": "user{n}"}}'.encode(),
                     headers={"Content-Type": "application/json", "X-Forwarded-For": f"198.51.100.{n}"})[0]

    assert [sign_up(n, "127.0.5.1") for n in range(1, 5)] == [201, 201, 201, 429]  # ARENA_SIGNUP_RATE=3/hour
    assert sign_up(5, "127.0.5.2") == 201
    client = redis.Redis.from_url(web.redis_url)
    keys = " ".join(k.decode() for k in client.keys("*"))
    client.close()
    assert "127.0.5.1" in keys and "127.0.5.2" in keys
    assert "198.51.100" not in keys and "127.0.0.1" not in keys


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        type(self).seen.append({k.lower(): v for k, v in self.headers.items()})
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_nginx_replaces_every_forwarded_header_a_client_sends(tmp_path: Path) -> None:
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=upstream.serve_forever, daemon=True)
    thread.start()
    try:
        with h.nginx(tmp_path, f"127.0.0.1:{upstream.server_address[1]}") as port:
            forged = {"Host": "arena.example", "X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https",
                      "X-Forwarded-Host": "evil.example", "X-Forwarded-Port": "443", "X-Forwarded-Prefix": "/x",
                      "X-Forwarded-Ssl": "on", "X-Forwarded-Protocol": "ssl", "Forwarded": "for=203.0.113.9"}
            assert h.get(port, "/healthz", "127.0.6.1", headers=forged)[0] == 204
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/")
            response = conn.getresponse()
            assert (response.getheader("Server"), response.getheader("X-Content-Type-Options")) == ("nginx", "nosniff")
            conn.close()
    finally:
        upstream.shutdown()
        upstream.server_close()
    seen = _Recorder.seen[-2]  # the forged request (the last one checked the answer's headers)
    # ProxyFix with ARENA_PROXY_HOPS=1 reads the last X-Forwarded-For, -Proto and -Host: nginx's own
    assert (seen["x-forwarded-for"], seen["x-forwarded-proto"], seen["x-forwarded-host"]) == (
        "127.0.6.1", "http", "arena.example")
    assert seen["host"] == "arena.example"
    assert not {"x-forwarded-port", "x-forwarded-prefix", "x-forwarded-ssl", "x-forwarded-protocol",
                "forwarded"} & set(seen)

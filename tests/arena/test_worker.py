"""``arena worker`` on its own: it stops when asked, also while its Redis is unreachable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.arena.service_harness import ROOT, RedisServer

pytestmark = pytest.mark.integration


def test_a_stopped_worker_kept_retrying_while_redis_was_gone(tmp_path) -> None:
    """Regression: a worker told to stop while its Redis was down (``arena up`` stops the embedded
    Redis last, but a SIGTERM may come at any moment) went on retrying every second, for ever."""
    redis = RedisServer(tmp_path)
    redis.start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update({"ARENA_DATA_DIR": str(tmp_path), "ARENA_REDIS_URL": redis.url, "PYTHONPATH": str(ROOT),
                "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}"})
    subprocess.run([sys.executable, "-m", "arena.cli", "db", "upgrade"], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen([sys.executable, "-m", "arena.cli", "worker"], cwd=ROOT, env=env, stdout=out,
                                  stderr=subprocess.STDOUT)
    try:
        time.sleep(3)
        redis.stop()
        deadline = time.monotonic() + 20
        while "Redis unavailable" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "Redis unavailable" in log.read_text()
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=5) == 0, log.read_text()[-3000:]
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        redis.stop()


def test_a_worker_died_when_redis_went_away_while_it_was_starting(tmp_path) -> None:
    """Regression: building RQ's worker talks to Redis (CLIENT SETNAME) before the retry loop; a worker
    whose Redis was unreachable at that moment (a busy machine, Redis restarting) exited with a
    traceback instead of waiting for Redis like a running worker does."""
    redis = RedisServer(tmp_path)
    redis.start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update({"ARENA_DATA_DIR": str(tmp_path), "ARENA_REDIS_URL": redis.url, "PYTHONPATH": str(ROOT),
                "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}"})
    subprocess.run([sys.executable, "-m", "arena.cli", "db", "upgrade"], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    redis.stop()  # gone before the worker starts
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen([sys.executable, "-m", "arena.cli", "worker"], cwd=ROOT, env=env, stdout=out,
                                  stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while "Redis unavailable" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)  # at least one more retry
        assert worker.poll() is None, log.read_text()[-3000:]
        assert "Traceback" not in log.read_text()
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()

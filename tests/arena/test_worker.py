"""``arena worker`` on its own: it stops when asked, also while its Redis is unreachable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from arena.runtime.queue import connect
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


def test_the_arena_worker_spends_ten_round_trips_a_job_and_its_key_stays_alive_and_busy(tmp_path, monkeypatch) -> None:
    """RQ's worker beat three times and wrote "idle" twice between two jobs, within milliseconds: 14 Redis
    round trips per job (2-3 ms of a 5 ms budget per match). ``ArenaWorker`` skips a beat that follows one
    less than a second old and a state that did not change: 10. Every job still sees its worker's key
    alive (as long as RQ itself keeps it: the job's timeout + 60 s) and saying "busy" (what RQ's
    monitoring and cleanup read)."""
    from redis.connection import AbstractConnection
    from rq import Queue

    from arena.runtime.worker import ArenaWorker

    server = RedisServer(tmp_path)
    server.start()
    try:
        redis = connect(server.url)
        queue = Queue("probe", connection=redis)
        noops = queue.enqueue_many([Queue.prepare_data("builtins.len", ("abc",), job_id=f"noop-{n}", result_ttl=600)
                                    for n in range(100)])
        trips = [0]
        send = AbstractConnection.send_packed_command

        def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            trips[0] += 1  # one call per command sent alone, one per pipeline
            return send(self, *args, **kwargs)

        monkeypatch.setattr(AbstractConnection, "send_packed_command", counted)
        ArenaWorker([queue], connection=redis).work(burst=True, logging_level="WARNING")
        monkeypatch.undo()
        per_job = trips[0] / len(noops)  # the worker's start and end included: about 0.4 a job here
        assert per_job <= 12, per_job  # RQ alone: 14.3
        probes = queue.enqueue_many([Queue.prepare_data("tests.arena.rq_probe.worker_key", job_id=f"probe-{n}",
                                                        result_ttl=600) for n in range(10)])
        ArenaWorker([queue], connection=redis).work(burst=True, logging_level="WARNING")
        for job in probes:
            ttl, state = job.latest_result().return_value
            assert ttl >= 200 and state == "busy", (job.id, ttl, state)  # RQ: the job's timeout + 60 s
    finally:
        server.stop()


def test_regression_a_stopped_worker_waited_a_minute_for_its_command_listener(tmp_path) -> None:
    """RQ's teardown unsubscribes from the worker's command channel and stops the thread listening to it; since
    redis-py 8 the stop waits for that thread, which, once it had seen the channel go, slept its whole period
    (60 s in RQ) before looking again. A SIGTERMed worker under load outlived the test's 15 s. Here the
    thread is made to see the channel go first, as load made it then: the stop must still be quick."""
    import threading
    import time

    from rq import Queue

    from arena.runtime.worker import ArenaWorker

    server = RedisServer(tmp_path)
    server.start()
    try:
        redis = connect(server.url)
        worker = ArenaWorker([Queue("probe", connection=redis)], connection=redis)
        worker.subscribe()
        time.sleep(0.2)  # the thread is listening
        worker.pubsub.unsubscribe()  # it sees the channel go and sleeps until its next look
        time.sleep(0.3)
        started = time.monotonic()
        stopping = threading.Thread(target=worker.unsubscribe, daemon=True)
        stopping.start()
        stopping.join(10)
        assert not stopping.is_alive() and time.monotonic() - started < ArenaWorker.PUBSUB_WAKE_S + 1.5
    finally:
        server.stop()


def test_regression_a_worker_exiting_right_after_a_match_lost_its_last_live_events(tmp_path) -> None:
    """A worker's live events wait up to ``LINGER_S`` in its publisher's daemon thread, to go out together. A worker
    that stopped right after a match (a deploy's SIGTERM, ``--burst``) ended with them unsent: the match's page
    never heard that it ended (a helper's review: 1 event of 15 arrived). ``run_worker`` now sends them first."""
    from dataclasses import replace

    from arena.composition import Context
    from arena.config import Settings
    from arena.runtime.jobs import set_worker_context
    from arena.runtime.live_bus import PREFIX, LiveBus
    from arena.runtime.queue import MatchQueue
    from arena.runtime.worker import run_worker
    from arena.storage.db import Database

    server = RedisServer(tmp_path)
    server.start()
    try:
        redis = connect(server.url)
        settings = replace(Settings(), redis_url=server.url, data_dir=tmp_path, queue_name="exit-probe")
        db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
        db.migrate()
        context = Context(settings=settings, db=db, queue=MatchQueue(redis, settings),
                          live=LiveBus(redis, settings.queue_name, settings.live_streams))
        for n in range(5):
            context.queue.queue.enqueue("tests.arena.rq_live_probe.publish_status", f"match-{n}")
        try:
            assert run_worker(context, burst=True, reconcile_in_background=False) == 0
            prefix = PREFIX.format(queue=settings.queue_name)
            assert [redis.get(f"{prefix}match-{n}:last") is not None for n in range(5)] == [True] * 5
        finally:
            set_worker_context(None)
            context.live.close()
            db.dispose()
    finally:
        server.stop()

"""The production shape on this machine, started with the commands of deploy/docker-compose.yml:
PostgreSQL, Redis with persistence, gunicorn with several workers, several RQ worker processes, a
100-match tournament through the API, results checked in PostgreSQL, /healthz and /metrics."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import compose_spec
import pytest
import requests
import yaml
from sqlalchemy import func, select

from arena.storage.models import LiveRating, Match, MatchSeat, MatchStatus
from sample_bots.random_bot import make_bot
from sample_bots.sdk import start_in_thread
from tests.arena.service_harness import free_port, redis_binary

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "docker-compose.yml"

pytestmark = pytest.mark.integration


def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_the_compose_file_follows_the_compose_specification() -> None:
    text = COMPOSE.read_text()
    parsed = compose_spec.PyCompose.from_yaml(text)
    parsed.validate()
    assert {"postgres", "redis", "migrate", "web", "worker", "random-bot", "heuristic-bot"} <= set(parsed.services)
    assert parsed.services["worker"].deploy.replicas >= 2
    assert "--appendonly" in parsed.services["redis"].command
    with pytest.raises(ValueError):
        compose_spec.PyCompose.from_yaml(text.replace("restart: unless-stopped", "restart: sometimes", 1)).validate()


def test_every_arena_setting_in_the_compose_file_exists() -> None:
    from arena.config import Settings

    known = {f"ARENA_{name.upper()}" for name in Settings.__dataclass_fields__} | {
        "ARENA_BIND", "ARENA_WEB_THREADS", "ARENA_FORWARDED_ALLOW_IPS"}
    env = _compose()["x-arena-env"]
    assert {k for k in env if k.startswith("ARENA_")} <= known


def _command(service: str) -> list[str]:
    command = _compose()["services"][service]["command"]
    assert isinstance(command, list)
    return command


def _executable(command: list[str]) -> list[str]:
    """The compose image has the project installed; here the same commands run from the venv."""
    program, *rest = command
    if program == "python":
        return [sys.executable, *rest]
    return [str(Path(sys.executable).parent / program), *rest]


@pytest.fixture
def services(pg_database, tmp_path):
    """PostgreSQL (the test schema), a Redis started with the compose file's options, the environment."""
    database = pg_database
    port = free_port()
    redis_cmd = _command("redis")
    redis = subprocess.Popen([redis_binary(), *redis_cmd[1:], "--port", str(port), "--bind", "127.0.0.1",
                              "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ)
    env.update({k: str(v) for k, v in _compose()["x-arena-env"].items()})
    web_port = free_port()
    env.update({
        "ARENA_SECRET_KEY": "0123456789abcdef" * 4,
        "ARENA_DATABASE_URL": database.url,
        "ARENA_REDIS_URL": f"redis://127.0.0.1:{port}/0",
        "ARENA_DATA_DIR": str(tmp_path / "data"),
        "ARENA_BIND": f"127.0.0.1:{web_port}",
        "WEB_CONCURRENCY": "3",
        # the one deviation from the compose file: this test's bots listen on loopback
        "ARENA_ALLOW_LOOPBACK_BOTS": "1",
        "ARENA_RECONCILE_INTERVAL_S": "2",
        "PYTHONPATH": str(ROOT),
    })
    yield env, f"http://127.0.0.1:{web_port}"
    redis.kill()
    redis.wait(timeout=10)


def _start(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    with open(log, "wb") as handle:
        return subprocess.Popen(_executable(command), cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _wait_http(url: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer")


def test_a_100_match_tournament_on_gunicorn_postgresql_redis_and_rq_workers(services, pg_database, tmp_path) -> None:
    database = pg_database
    env, base = services
    migrate = subprocess.run(_executable(_command("migrate")), cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120)
    assert migrate.returncode == 0, migrate.stderr
    procs = [_start(_command("web"), env, tmp_path / "web.log")]
    procs += [_start(_command("worker"), env, tmp_path / f"worker-{i}.log") for i in range(3)]
    bots = [start_in_thread(make_bot(i)) for i in range(5)]
    try:
        _wait_http(base + "/healthz")
        token_run = subprocess.run([str(Path(sys.executable).parent / "arena"), "token", "create", "admin", "--admin"],
                                   cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert token_run.returncode == 0, token_run.stderr
        headers = {"Authorization": f"Bearer {token_run.stdout.split()[-1]}"}
        ids = []
        for i, bot in enumerate(bots):
            response = requests.post(base + "/api/bots", json={"name": f"r{i}", "url": bot.url,
                                                               "game": "piranha-pedro"}, headers=headers, timeout=30)
            assert response.status_code == 201, response.text
            bot.bot.secret = response.json()["secret"]
            ids.append(response.json()["id"])
        created = requests.post(base + "/api/tournaments", headers=headers, timeout=30, json={
            "game": "piranha-pedro", "bots": ids, "seats": 2, "cycles": 5, "time_limit_ms": 2000, "seed": 9})
        assert created.status_code == 201, created.text
        tournament = created.json()
        assert tournament["progress"]["total"] == 100
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            tournament = requests.get(f"{base}/api/tournaments/{tournament['id']}", timeout=30).json()
            if tournament["status"] == "finished":
                break
            time.sleep(0.5)
        assert tournament["status"] == "finished", tournament["progress"]
        health = requests.get(base + "/healthz", timeout=10)
        assert health.status_code == 200 and health.json() == {"status": "ok", "database": "ok", "redis": "ok"}
        metrics = requests.get(base + "/metrics", timeout=10).text
        assert 'arena_matches_played_total{game="piranha-pedro"} 100.0' in metrics
        assert "arena_decision_latency_seconds_bucket" in metrics and "arena_queue_depth 0.0" in metrics
    finally:
        for bot in bots:
            bot.shutdown()
            bot.server_close()
        for proc in procs:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    with database.session(readonly=True) as session:
        statuses = dict(session.execute(select(Match.status, func.count()).group_by(Match.status)).all())
        assert statuses == {MatchStatus.FINISHED: 100}
        assert session.scalar(select(func.count()).select_from(MatchSeat).where(MatchSeat.rank.is_(None))) == 0
        assert dict(session.execute(select(LiveRating.bot_id, LiveRating.games)).all()) == {i: 40 for i in ids}
    worker_log = (tmp_path / "worker-0.log").read_text()
    events = [json.loads(line) for line in worker_log.splitlines() if line.startswith("{")]
    assert any(e.get("message") == "match played" and "match_id" in e for e in events), worker_log[-2000:]
    web_log = (tmp_path / "web.log").read_text()
    assert any(line.startswith("{") for line in web_log.splitlines())


def test_production_refuses_to_start_without_a_secret_key(tmp_path) -> None:
    env = {**os.environ, "ARENA_ENV": "production", "ARENA_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("ARENA_SECRET_KEY", None)
    run = subprocess.run([sys.executable, "-c", "import arena.web.wsgi"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode != 0 and "ARENA_SECRET_KEY is required" in run.stderr

"""``arena up`` runs the ladder (issue 17): bots submitted through the API play rated matches with no
tournament, a killed scheduler is started again by the supervisor, and Ctrl-C leaves nothing behind."""

from __future__ import annotations

import signal
import time

import pytest
import requests

from sample_bots import random_bot
from sample_bots.sdk import start_in_thread
from tests.arena.arena_process import ArenaProcess

pytestmark = pytest.mark.integration


def _api(run: ArenaProcess, method: str, path: str, token: str | None = None, **kwargs) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.request(method, run.url + path, headers=headers, timeout=30, **kwargs)


def test_arena_up_plays_the_ladder_and_survives_a_killed_scheduler(tmp_path) -> None:
    run = ArenaProcess(tmp_path, "up", env={"ARENA_LADDER": "1"})
    servers = []
    try:
        run.wait_until_serving()
        assert len(run.scheduler()) == 1
        for i in range(3):
            token = _api(run, "POST", "/api/accounts", json={"name": f"owner-{i}"}).json()["token"]  # owners apart
            server = start_in_thread(random_bot.make_bot(i))
            servers.append(server)
            answer = _api(run, "POST", "/api/bots", token, json={"name": f"bot-{i}", "url": server.url,
                                                                  "game": "piranha-pedro"})
            assert answer.status_code == 201, answer.text
            server.bot.secret = answer.json()["secret"]  # as its owner restarts it with the secret
            resumed = _api(run, "POST", f"/api/bots/{answer.json()['id']}/resume", token)
            assert resumed.status_code == 200, resumed.text
        deadline = time.monotonic() + 60
        board: dict = {}
        while time.monotonic() < deadline:
            board = _api(run, "GET", "/api/leaderboards/piranha-pedro?players=3").json()
            if len(board["entries"]) == 3:
                break
            time.sleep(0.5)
        assert len(board["entries"]) == 3, run.output()[-3000:]
        assert board["ladder"]["status"] == "running"
        ladders = _api(run, "GET", "/api/ladders").json()
        assert {(lad["game"], lad["players"]) for lad in ladders} >= {("piranha-pedro", 3), ("pajarracos", 3)}
        first = run.scheduler()[0]
        first.kill()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not [p for p in run.scheduler() if p.pid != first.pid]:
            time.sleep(0.2)
        assert [p for p in run.scheduler() if p.pid != first.pid], run.output()[-3000:]
        assert "ladder scheduler 1 (pid" in run.output()
        sent = run.signal_group(signal.SIGINT)
        assert run.wait_exit(sent) < 10
        assert run.leftovers() == []
    finally:
        run.stop()
        for server in servers:
            server.shutdown()
            server.server_close()

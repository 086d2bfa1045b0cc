"""``python -m bench.wire_floor`` replays the referee's own traffic from a process of its own: every request of every
match, in the referee's order (each seat's /start, each turn's /act, each seat's /end), byte for byte, so its rate
is of the same exchanges the referee made, and nothing else."""

from __future__ import annotations

import json
import re
import threading
import types
from collections.abc import Iterator

import pytest

from bench import wire_floor
from tests import bot_zoo


@pytest.fixture
def bots() -> Iterator[list[bot_zoo.ZooServer]]:
    servers = [bot_zoo.ZooServer(bot_zoo.polite) for _ in range(2)]
    for server in servers:
        server.bot = types.SimpleNamespace(secret=None)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


def test_each_match_is_its_starts_then_its_turns_then_its_ends(bots: list[bot_zoo.ZooServer]) -> None:
    plan = wire_floor.traffic("piranha-pedro", bots, 3)
    assert len(plan["matches"]) == 3
    sent = sum(len(server.requests) for server in bots)
    assert sum(len(group) for match in plan["matches"] for group in match["groups"]) == sent
    for match in plan["matches"]:
        paths = [[path for _bot, path, _body in group] for group in match["groups"]]
        assert paths[0] == ["/start", "/start"] and paths[-1] == ["/end", "/end"]
        assert all(set(group) == {"/act"} for group in paths[1:-1]) and len(paths) > 3
        turns = [json.loads(group[0][2])["turn"] for group in match["groups"][1:-1]]
        assert turns == sorted(set(turns))  # each turn once, in order
        assert sum(len(group) for group in match["groups"][1:-1]) == sum(len(step) for step in match["steps"])


def test_the_floor_sends_the_very_requests_again(bots: list[bot_zoo.ZooServer], tmp_path,  # type: ignore[no-untyped-def]
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    plan = wire_floor.traffic("piranha-pedro", bots, 2)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    recorded = [[(r.path, r.body) for r in server.requests] for server in bots]
    for server in bots:
        server.requests.clear()
    wire_floor.floor_child(str(path), repeat=1)
    figures = json.loads(capsys.readouterr().out)
    assert figures["wall_ms"] > 0 and figures["cpu_ms"] > 0
    for index, server in enumerate(bots):  # a warm-up match (the plan's first), then every match once
        warm_up = [(p, body.encode()) for group in plan["matches"][0]["groups"] for i, p, body in group if i == index]
        assert warm_up and [(r.path, r.body) for r in server.requests] == warm_up + recorded[index]


def test_main_reports_the_floor_against_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    assert wire_floor.main(["--games", "piranha-pedro", "--matches", "2", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^piranha-pedro, 0 busy loop\(s\): [\d.]+ decisions, [\d.]+ calls a match; .* bound [\d.]+ ms a "
                     r"match, so goal 5 allows a worker [\d.]+ ms a match$", out, re.MULTILINE), out
    assert re.search(r"^  the floor worker: [\d.]+ ms a match \(its CPU [\d.]+\): [\d.]+ of the bound; left for "
                     r"everything else a worker does: -?[\d.]+ ms a match$", out, re.MULTILINE), out

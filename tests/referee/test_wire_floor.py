"""``python -m bench.wire_floor`` replays the referee's own traffic from a process of its own: every request of every
match (bodies and headers), in the referee's order (each seat's /start, each turn's /act, each seat's /end), the
calls of a phase in flight together, and the engine's work on each match; so its rate is of the same exchanges the
referee made, and nothing else."""

from __future__ import annotations

import collections
import json
import re
import socket
import threading
import types
from collections.abc import Iterator
from typing import Any

import pytest

from bench import wire_floor
from referee.errors import RulesError
from tests import bot_zoo

Key = tuple[Any, str, Any]  # a request's group: (match, path, turn)


class Together:
    """Every seat's bot at once: a request is answered (as ``polite`` does) only once every request of its group
    has arrived (``expected``, per group; up to 2 s, else it is listed as ``alone``), and arrivals are logged in one
    order across the bots. A floor that waited for one answer before sending the next call of a phase, or that
    went bot by bot, shows here."""

    def __init__(self) -> None:
        self.expected: dict[Key, int] = {}
        self.arrived: collections.Counter[Key] = collections.Counter()
        self.order: list[Key] = []
        self.alone: list[Key] = []
        self.changed = threading.Condition()

    def __call__(self, req: bot_zoo.Request, sock: socket.socket) -> None:
        body = req.json() or {}
        key = (body.get("match_id"), req.path, body.get("turn"))
        with self.changed:
            self.order.append(key)
            self.arrived[key] += 1
            need = self.expected.get(key, 1)
            target = -(-self.arrived[key] // need) * need  # (the group's arrivals, in this playing of it)
            self.changed.notify_all()
            if not self.changed.wait_for(lambda: self.arrived[key] >= target, timeout=2):
                self.alone.append(key)
        bot_zoo.polite(req, sock)


@pytest.fixture
def together() -> Iterator[tuple[Together, list[bot_zoo.ZooServer]]]:
    behaviour = Together()
    servers = [bot_zoo.ZooServer(behaviour) for _ in range(2)]
    for server in servers:
        server.bot = types.SimpleNamespace(secret=None)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield behaviour, servers
    for server in servers:
        server.shutdown()
        server.server_close()


def _key(entry: list) -> Key:
    _bot, path, body, _headers = entry
    return json.loads(body)["match_id"], path, json.loads(body).get("turn")


def _replayed(plan: dict, tmp_path, behaviour: Together, servers: list[bot_zoo.ZooServer]) -> None:  # type: ignore[no-untyped-def]
    """Run the floor on ``plan`` once (after its warm-up match), every group expected whole."""
    behaviour.expected = {_key(group[0]): len(group) for match in plan["matches"] for group in match["groups"]}
    behaviour.order.clear()
    for server in servers:
        server.requests.clear()
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    wire_floor.floor_child(str(path), repeat=1)


def test_each_match_is_its_starts_then_its_turns_then_its_ends(together) -> None:  # type: ignore[no-untyped-def]
    _behaviour, servers = together
    plan = wire_floor.traffic("piranha-pedro", servers, 3)
    assert len(plan["matches"]) == 3
    sent = sum(len(server.requests) for server in servers)
    assert sum(len(group) for match in plan["matches"] for group in match["groups"]) == sent
    for match in plan["matches"]:
        paths = [[entry[1] for entry in group] for group in match["groups"]]
        assert paths[0] == ["/start", "/start"] and paths[-1] == ["/end", "/end"]
        assert all(set(group) == {"/act"} for group in paths[1:-1]) and len(paths) > 3
        turns = [_key(group[0])[2] for group in match["groups"][1:-1]]
        assert turns == sorted(set(turns))  # each turn once, in order
        assert sum(len(group) for group in match["groups"][1:-1]) == sum(len(step) for step in match["steps"])


def test_the_floor_sends_the_very_requests_again_a_phases_calls_together_in_the_referees_order(
        together, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    behaviour, servers = together
    plan = wire_floor.traffic("piranha-pedro", servers, 2)
    assert any(len(group) == 2 for group in plan["matches"][0]["groups"][1:-1])  # simultaneous /acts too
    recorded = [[(r.path, r.headers, r.body) for r in server.requests] for server in servers]
    _replayed(plan, tmp_path, behaviour, servers)
    figures = json.loads(capsys.readouterr().out)
    assert figures["wall_ms"] > 0 and figures["cpu_ms"] > 0
    assert behaviour.alone == []  # every phase's calls were in flight together
    played = [plan["matches"][0], *plan["matches"]]  # the warm-up match, then every match once
    groups = [_key(group[0]) for match in played for group in match["groups"]]
    arrived = [key for i, key in enumerate(behaviour.order) if i == 0 or behaviour.order[i - 1] != key]
    assert arrived == groups  # phase after phase, as the referee sent them
    for index, server in enumerate(servers):
        warm_up = [(p, h, b.encode()) for group in plan["matches"][0]["groups"] for i, p, b, h in group if i == index]
        assert [(r.path, r.headers, r.body) for r in server.requests] == warm_up + recorded[index]


def test_the_floor_does_the_engines_work_on_each_match(together, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The actions it applies are the match's: one made illegal is refused by the rules."""
    behaviour, servers = together
    plan = wire_floor.traffic("piranha-pedro", servers, 2)
    step = plan["matches"][1]["steps"][0]
    step[next(iter(step))] = {"not": "an action"}
    with pytest.raises(RulesError):
        _replayed(plan, tmp_path, behaviour, servers)


def test_main_reports_the_floor_against_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    assert wire_floor.main(["--games", "piranha-pedro", "--matches", "2", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^piranha-pedro, 0 busy loop\(s\): [\d.]+ decisions, [\d.]+ calls a match; .* bound [\d.]+ ms "
                     r"a match, so goal 5 allows a worker [\d.]+ ms a match$", out, re.MULTILINE), out
    assert re.search(r"^  the floor worker: [\d.]+ ms a match \(its CPU [\d.]+\): [\d.]+ of the bound; left for "
                     r"everything else a worker does: -?[\d.]+ ms a match$", out, re.MULTILINE), out

"""The search bot over HTTP: it serves every game, remembers a match's parameters from /start to
/end, answers legal actions within its share of the deadline, and is reproducible with a seed."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator

import pytest
import requests

from referee.games import GAMES, get_game
from sample_bots.sdk import BotServer, start_in_thread
from sample_bots.search_bot import decision_rng, make_bot
from sample_bots.search_core import TIME_SHARE

BARRELS = [{"effect": "keep"}] * 27


@pytest.fixture
def server() -> Iterator[BotServer]:
    server = start_in_thread(make_bot(seed=3))
    yield server
    server.shutdown()
    server.server_close()


def _act_body(game_name: str, match_id: str, players: int, params: dict, deadline_ms: int) -> dict:
    game = get_game(game_name)
    state = game.initial_state(players, 5, params)
    rng = random.Random(5)
    for _ in range(3):
        state = game.apply(state, {s: rng.choice(game.legal_actions(state, s)) for s in game.to_act(state)})
    seat = min(game.to_act(state))
    return {"protocol": 1, "match_id": match_id, "game": game_name, "seat": seat, "turn": 4,
            "decision": game.decision(state, seat), "deadline_ms": deadline_ms, "time_bank_ms": 0,
            "last_latency_ms": None, "view": json.loads(json.dumps(game.view(state, seat))),
            "legal_actions": game.legal_actions(state, seat)}


def test_identity_lists_every_game(server: BotServer) -> None:
    info = requests.get(server.url + "/", timeout=5).json()
    assert info["name"] == "search" and info["games"] == sorted(GAMES)


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_answers_every_game_over_http_in_time(server: BotServer, game_name: str) -> None:
    players = 3
    params = {"barrels": BARRELS} if game_name.endswith("advanced") else {}
    match_id = f"m-{game_name}"
    start = {"protocol": 1, "match_id": match_id, "game": game_name, "params": params, "seat": 0,
             "players": [{"seat": s, "name": f"p{s}", "bot_id": s} for s in range(players)],
             "time_controls": {"decision_ms": 400}}
    assert requests.post(server.url + "/start", json=start, timeout=5).ok
    body = _act_body(game_name, match_id, players, params, deadline_ms=400)
    started = time.perf_counter()
    reply = requests.post(server.url + "/act", json=body, timeout=5)
    assert time.perf_counter() - started < TIME_SHARE * 0.4 - 0.08 + 0.1
    assert reply.json()["action"] in body["legal_actions"]
    assert requests.post(server.url + "/end", json={"match_id": match_id, "game": game_name}, timeout=5).ok


def test_a_seeded_bot_gives_each_decision_its_own_stream() -> None:
    a = {"match_id": "x", "seat": 1, "turn": 7}
    assert decision_rng(3, a).random() == decision_rng(3, dict(a)).random()
    assert decision_rng(3, a).random() != decision_rng(3, {**a, "turn": 8}).random()
    assert decision_rng(4, a).random() != decision_rng(3, a).random()

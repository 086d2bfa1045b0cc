"""Full matches against real bot servers on loopback: every game, every player count."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from referee import protocol
from referee.games import GAMES
from referee.protocol import TimeControls
from referee.replay import verify_replay
from referee.runner import BotSpec, play_match
from tests import bot_zoo

CASES = [(name, n) for name in sorted(GAMES) for n in range(GAMES[name].spec.min_players,
                                                             GAMES[name].spec.max_players + 1)]


@pytest.mark.parametrize(("game", "players"), CASES, ids=[f"{g}-{n}" for g, n in CASES])
def test_full_match_with_random_bots_verifies(game: str, players: int, random_bots) -> None:
    bots = [BotSpec(server.url, name=f"random-{i}") for i, server in enumerate(random_bots[:players])]
    replay = play_match(game, bots, seed=players * 101, time_controls=TimeControls(decision_ms=2000))
    assert replay["faults"] == []
    assert sorted(replay["result"]["ranks"])[0] == 1
    doc = json.loads(json.dumps(replay))
    jsonschema.validate(doc, protocol.schema("replay"))
    report = verify_replay(doc)
    assert report.ok, report.summary()
    assert report.decisions == sum(len(s["decisions"]) for s in replay["steps"]) > 0


def test_every_body_sent_matches_its_schema_and_is_signed() -> None:
    game = "piranha-pedro-ko-advanced"
    secrets = ["s3cret-a", "s3cret-b", "s3cret-c"]
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, \
            bot_zoo.zoo_bot(bot_zoo.polite) as c:
        servers = [a, b, c]
        bots = [BotSpec(s.url, secret=secret, name=f"bot{i}") for i, (s, secret) in enumerate(zip(servers, secrets,
                                                                                                     strict=True))]
        replay = play_match(game, bots, seed=9, match_id="m-123")
    view_schema = protocol.view_schema(game)
    for seat, server in enumerate(servers):
        paths = server.paths()
        assert paths[0] == "/start" and paths[-1] == "/end" and set(paths[1:-1]) == {"/act"}
        for req in server.requests:
            body = req.json()
            assert protocol.verify_signature(secrets[seat], req.body, req.headers["x-arena-signature"])
            assert not protocol.verify_signature(secrets[(seat + 1) % 3], req.body, req.headers["x-arena-signature"])
            assert req.headers["x-arena-match"] == "m-123"
            name = {"/start": "start", "/act": "act", "/end": "end"}[req.path]
            jsonschema.validate(body, protocol.schema(name))
            assert body["seat"] == seat
            if name == "act":
                assert req.headers["x-arena-turn"] == str(body["turn"])
                jsonschema.validate(body["view"], view_schema)
                assert body["view"]["seat"] == seat
                assert body["decision"] == body["view"]["decision"]
    assert verify_replay(json.loads(json.dumps(replay))).ok


def test_simultaneous_choices_are_all_asked_before_any_is_applied() -> None:
    """Nothing of any seat's choice reaches anyone until all have committed: every seat's view of a
    simultaneous step is the same public state."""
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b:
        play_match("piranha-pedro", [BotSpec(a.url), BotSpec(b.url)], seed=4)
        acts_a = [r.json() for r in a.requests if r.path == "/act"]
        acts_b = {r.json()["turn"]: r.json() for r in b.requests if r.path == "/act"}
    for body in acts_a:
        other = acts_b.get(body["turn"])
        if other is None:
            continue
        public_a = {k: v for k, v in body["view"].items() if k not in ("seat", "hand", "my_unrevealed",
                                                                       "decision", "must_commit")}
        public_b = {k: v for k, v in other["view"].items() if k not in ("seat", "hand", "my_unrevealed",
                                                                        "decision", "must_commit")}
        assert public_a == public_b


@pytest.fixture(scope="module")
def recorded(random_bots) -> dict:
    bots = [BotSpec(s.url, name=f"r{i}") for i, s in enumerate(random_bots[:3])]
    return json.loads(json.dumps(play_match("piranha-pedro", bots, seed=77)))


@pytest.mark.parametrize(
    "tamper",
    [
        "action",
        "commitment",
        "view",
        "result",
        "salt",
        "seed",
        "drop_step",
        "decision",
    ],
)
def test_replay_catches_tampering(recorded: dict, tamper: str) -> None:
    assert verify_replay(recorded).ok
    doc = copy.deepcopy(recorded)
    first = doc["steps"][0]["decisions"][0]
    if tamper == "action":
        legal = ["N1", "N2", "N3", "E1", "E2", "E3", "S1", "S2", "S3", "W1", "W2", "W3"]
        first["action"] = next(card for card in legal if card != first["action"])
    elif tamper == "commitment":
        first["commitment"] = "0" * 64
    elif tamper == "view":
        first["view"]["stones"][0] += 1
    elif tamper == "result":
        doc["result"]["ranks"] = [rank + 1 for rank in doc["result"]["ranks"]]  # always differs
    elif tamper == "salt":
        doc["salt"] = "f" * 32
    elif tamper == "seed":
        doc["seed"] += 1
    elif tamper == "drop_step":
        doc["steps"].pop()
    elif tamper == "decision":
        first["decision"] = "take_piranha"
    report = verify_replay(doc)
    assert not report.ok
    assert report.problems


def test_replay_of_garbage_reports_instead_of_raising() -> None:
    for doc in ({}, {"format": "arena-replay/1"}, {"format": "arena-replay/1", "game": "chess", "players": [],
                                                     "seed": 1, "params": {}}):
        assert not verify_replay(doc).ok


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_views_sent_are_the_same_whether_or_not_spectators_watch(game: str) -> None:
    """With a live hook the runner builds each step's seat views on the public view it built for the
    spectators (``Game.views``' ``public``): the bots must be sent byte for byte the same views."""
    players = GAMES[game].spec.min_players
    sent = []
    for hook in (None, lambda step: None):
        with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, \
                bot_zoo.zoo_bot(bot_zoo.polite) as c:
            servers = [a, b, c][:players]
            play_match(game, [BotSpec(s.url) for s in servers], seed=5, match_id="m-1", on_public_step=hook)
            sent.append([json.dumps(r.json()["view"]) for s in servers for r in s.requests if r.path == "/act"])
    assert sent[0] == sent[1] and len(sent[0]) > 10

"""The starter bots of sample_bots/starters/ (Python, Node.js, Go) play a real match of every game
through ``arena play`` with signatures on; the replays verify and no seat faults."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from arena.cli import main
from referee import protocol
from referee.games import GAMES
from referee.replay import verify_replay
from tests.sample_bots.starter_processes import LANGUAGES, build_go, starter

SECRET = "starter-test-secret"


@pytest.fixture(scope="module")
def go_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_go(tmp_path_factory.mktemp("go"))


@pytest.fixture(scope="module", params=LANGUAGES)
def starter_url(request: pytest.FixtureRequest, go_binary: Path) -> Iterator[str]:
    with starter(request.param, SECRET, go_binary) as url:
        yield url


@pytest.mark.parametrize("game", sorted(GAMES))
def test_starter_plays_every_game_with_signatures(starter_url: str, game: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "replay.json"
    seats = ["--bot", starter_url] * 3
    assert main(["play", "--game", game, "--secret", SECRET, "--seed", "7", *seats, "--out", str(out)]) == 0
    replay = json.loads(out.read_text())
    assert replay["faults"] == []
    assert main(["replay", str(out)]) == 0
    assert verify_replay(replay).ok
    assert "OK" in capsys.readouterr().out


def test_starter_plays_the_two_player_korean_game(starter_url: str, tmp_path: Path) -> None:
    """Two seats answer a choose_card with two cards, and the sombrero a move_piranha."""
    out = tmp_path / "replay.json"
    args = ["play", "--game", "piranha-pedro-ko", "--secret", SECRET, "--seed", "3", "--bot", starter_url,
            "--bot", starter_url, "--out", str(out)]
    assert main(args) == 0
    replay = json.loads(out.read_text())
    assert replay["faults"] == [] and verify_replay(replay).ok


def _act(url: str, turn: int, secret: str, header_turn: int | None = None) -> int:
    body = protocol.encode(protocol.act_body("m-stale", "piranha-pedro", 0, turn, "choose_card", 1000, 0, {},
                                             ["N1", "E2"], None))
    headers = protocol.headers("m-stale", turn if header_turn is None else header_turn, secret, body)
    return requests.post(url + "/act", data=body, headers=headers, timeout=5).status_code


def test_starter_refuses_forged_and_stale_requests(starter_url: str) -> None:
    assert _act(starter_url, 1, "not the secret") == 401
    assert _act(starter_url, 2, SECRET) == 200
    assert _act(starter_url, 2, SECRET) == 409  # replayed
    assert _act(starter_url, 1, SECRET) == 409  # older
    assert _act(starter_url, 3, SECRET, header_turn=4) == 409  # header and body disagree
    assert _act(starter_url, 3, SECRET) == 200


def _post(url: str, path: str, body: dict, turn: int) -> int:
    raw = protocol.encode(body)
    headers = protocol.headers(body["match_id"], turn, SECRET, raw)
    return requests.post(url + path, data=raw, headers=headers, timeout=5).status_code


def test_starter_regression_a_signed_body_replayed_to_end_reset_the_stale_turn_check(starter_url: str) -> None:
    """The signature covers the body, not the path: a captured /act or /start body posted to /end was
    signed right, and /end forgot the match's turns, so earlier turns of the running match were answered
    again. Each route now takes only its own kind of body, and an ended match's turns are stale."""
    match = "m-route"
    acts = {turn: protocol.act_body(match, "piranha-pedro", 0, turn, "choose_card", 1000, 0, {}, ["N1", "E2"], None)
            for turn in (1, 2)}
    start = protocol.start_body(match, "piranha-pedro", {}, 0, [{"seat": 0, "name": "a"}, {"seat": 1, "name": "b"}],
                                protocol.TimeControls())
    end = protocol.end_body(match, "piranha-pedro", 0, {"ranks": [1, 2], "scores": [1, 0]}, [])
    assert _post(starter_url, "/start", start, 0) == 200
    for turn, body in acts.items():
        assert _post(starter_url, "/act", body, turn) == 200
    for path, body in (("/end", acts[2]), ("/end", start), ("/start", acts[1]), ("/act", start)):
        assert _post(starter_url, path, body, 2) == 400, path
    assert _post(starter_url, "/act", acts[1], 1) == 409  # still stale: nothing was forgotten
    assert _post(starter_url, "/end", end, 0) == 200
    assert _post(starter_url, "/act", acts[2], 2) == 409  # the match is over: no turn of it is answered


def test_starter_declares_every_game(starter_url: str) -> None:
    info = requests.get(starter_url + "/", timeout=5).json()
    assert info["apiversion"] == "1" and set(info["games"]) == set(GAMES)


def test_starter_passes_every_line_of_arena_check(starter_url: str, capsys) -> None:
    """Signatures on: no failure and no warning (stale and unsigned requests refused, keep-alive, no Nagle)."""
    assert main(["check", starter_url, "--secret", SECRET]) == 0
    out = capsys.readouterr().out
    assert "0 failed, 0 warnings, 0 skipped" in out and "ready to play" in out, out


def test_python_starter_sdk_is_the_sdk() -> None:
    """sample_bots/starters/python/arena_sdk.py is sample_bots/sdk.py without the referee import: the
    server code must not drift apart (a fix to one is copied to the other)."""
    import ast

    from tests.sample_bots.starter_processes import ROOT, STARTERS

    def segments(path: Path) -> dict[str, str]:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        return {node.name: ast.get_source_segment(text, node) or "" for node in tree.body
                if isinstance(node, ast.FunctionDef | ast.ClassDef)}

    sdk, copy = segments(ROOT / "sample_bots" / "sdk.py"), segments(STARTERS / "python" / "arena_sdk.py")
    assert set(sdk) <= set(copy)
    assert {name: copy[name] for name in sdk} == sdk

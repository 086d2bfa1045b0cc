"""The hostile bot zoo, every behaviour in every game: each match finishes, with the fault recorded,
and its replay verifies."""

from __future__ import annotations

import json

import pytest

from referee.games import GAMES
from referee.protocol import TimeControls
from referee.replay import verify_replay
from referee.runner import BotSpec, play_match
from tests import bot_zoo

ZOO = {
    "never_answers": (bot_zoo.on_act(bot_zoo.silent), "timeout"),
    "after_the_deadline": (bot_zoo.on_act(bot_zoo.late(0.5)), "timeout"),
    "drips_bytes": (bot_zoo.on_act(bot_zoo.drip(0.05)), "timeout"),
    "sends_50_mb": (bot_zoo.on_act(bot_zoo.huge), "too_large"),
    "endless_chunked_body": (bot_zoo.on_act(bot_zoo.huge_undeclared), "too_large"),
    "invalid_json": (bot_zoo.on_act(bot_zoo.garbage), "bad_json"),
    "wrong_shape": (bot_zoo.on_act(bot_zoo.wrong_shape), "wrong_shape"),
    "illegal_action": (bot_zoo.on_act(bot_zoo.illegal), "illegal_action"),
    "action_for_another_turn": (bot_zoo.on_act(bot_zoo.wrong_turn), "wrong_turn"),
    "status_500": (bot_zoo.on_act(bot_zoo.status(500)), "http_status"),
    "status_404": (bot_zoo.on_act(bot_zoo.status(404)), "http_status"),
    "redirect_302": (bot_zoo.on_act(bot_zoo.status(302, "Location: http://127.0.0.2:9/act\r\n")), "http_status"),
    "redirect_with_endless_body": (bot_zoo.on_act(bot_zoo.huge_redirect), "http_status"),
    "closes_mid_body": (bot_zoo.on_act(bot_zoo.close_mid_body), "connection_error"),
    "hangs_up": (bot_zoo.on_act(bot_zoo.hang_up), "connection_error"),
    "floods_garbage": (bot_zoo.on_act(bot_zoo.flood), "connection_error"),
}
LIMIT_MS = 300
FAST = TimeControls(decision_ms=LIMIT_MS, start_ms=1000, strike_limit=2)


@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("behaviour", sorted(ZOO))
def test_every_hostile_bot_in_every_game(game: str, behaviour: str, random_bots) -> None:
    handler, kind = ZOO[behaviour]
    players = GAMES[game].spec.min_players
    with bot_zoo.zoo_bot(handler) as zoo:
        bots = [BotSpec(zoo.url, name="zoo")] + [BotSpec(s.url, name=f"r{i}") for i, s in
                                                 enumerate(random_bots[1:players])]
        replay = play_match(game, bots, seed=17, time_controls=FAST)
    act_faults = [f for f in replay["faults"] if f["path"] == "/act" and f["seat"] == 0]
    assert [f["kind"] for f in act_faults] == [kind, kind]
    assert all(f["latency_ms"] < LIMIT_MS + 60 for f in act_faults)
    assert replay["result"]["forfeited"] == [0] and replay["result"]["ranks"][0] == players
    assert verify_replay(json.loads(json.dumps(replay))).ok


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_bot_failing_start_and_end_still_plays_and_both_faults_are_recorded(game: str, random_bots) -> None:
    players = GAMES[game].spec.min_players
    with bot_zoo.zoo_bot(bot_zoo.fail_start_and_end) as zoo:
        bots = [BotSpec(zoo.url)] + [BotSpec(s.url) for s in random_bots[1:players]]
        replay = play_match(game, bots, seed=5, time_controls=TimeControls(decision_ms=1000, strike_limit=3))
        asked = zoo.paths().count("/act")
    assert [(f["path"], f["kind"]) for f in replay["faults"]] == [("/start", "http_status"), ("/end", "http_status")]
    assert asked > 0 and replay["result"]["forfeited"] == []


@pytest.mark.parametrize("depth", [900, 985])
def test_regression_a_deeply_nested_answer_crashed_the_match(depth: int, random_bots) -> None:
    """An answer nested ~1,000 deep parses on the fresh stack of the thread that reads it, and quoting it in
    the fault (its excerpt) on the referee's deeper stack raised RecursionError: the match crashed, so the
    worker played the same deal again, up to 5 times, then gave it up unrated: a bot about to lose could
    void the match and replay the deal it had just seen."""
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.nested(depth))) as zoo:
        bots = [BotSpec(zoo.url, name="zoo")] + [BotSpec(s.url, name=f"r{i}") for i, s in enumerate(random_bots[1:3])]
        replay = play_match("piranha-pedro", bots, seed=17, time_controls=FAST)
    act_faults = [f for f in replay["faults"] if f["path"] == "/act" and f["seat"] == 0]
    assert len(act_faults) == 2 and {f["kind"] for f in act_faults} <= {"wrong_shape", "bad_json"}
    assert replay["result"]["forfeited"] == [0]
    assert verify_replay(json.loads(json.dumps(replay))).ok

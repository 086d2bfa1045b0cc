"""The replay viewer's data: the public view after every step, recomputed by the engine, equals what
the acting seats were sent minus their private fields; the fallback for replays the engine cannot
re-run gives the same frames; per-step changes rebuild every frame."""

from __future__ import annotations

import copy
import json

import pytest

from arena.web.pages.replay_data import PRIVATE_VIEW_KEYS, replay_frames, replay_steps
from referee.commitments import canonical_json
from referee.games import get_game
from referee.live_view import view_changes
from referee.runner import BotSpec, play_match


def rebuild(frames: dict) -> list[dict]:
    """What replay.js does with the embedded frames."""
    out = [frames["initial"]]
    for change in frames["changes"]:
        view = dict(out[-1])
        view.update(change.get("set", {}))
        for key, tail in change.get("append", {}).items():
            view[key] = list(out[-1].get(key, [])) + list(tail)
        for key in change.get("unset", []):
            view.pop(key)
        out.append(view)
    return json.loads(json.dumps(out))


def public(view: dict) -> dict:
    return {k: v for k, v in view.items() if k not in PRIVATE_VIEW_KEYS}


@pytest.fixture(scope="module", params=[("pajarracos", 4), ("piranha-pedro-ko-advanced", 3), ("piranha-pedro", 2)])
def replay(request, random_bots) -> dict:
    game, players = request.param
    bots = [BotSpec(url=b.url, name=f"r{i}") for i, b in enumerate(random_bots[:players])]
    return play_match(game, bots, seed=11)


def test_engine_frames_are_the_recorded_public_views_step_by_step(replay) -> None:
    frames = replay_frames(replay)
    assert frames["source"] == "engine" and frames["final_view_matches"]
    views = rebuild(frames)
    assert len(views) == len(replay["steps"]) + 1
    for k, step in enumerate(replay["steps"]):
        for decision in step["decisions"]:
            assert canonical_json(views[k]) == canonical_json(public(decision["view"])), f"step {k + 1}"
    assert canonical_json(views[-1]) == canonical_json(replay["final_view"])


def test_a_replay_the_engine_cannot_rerun_falls_back_to_the_recorded_views(replay) -> None:
    old = copy.deepcopy(replay)
    old["engine_version"] = "0-retired"
    frames = replay_frames(old)
    assert frames["source"] == "recorded views" and frames["final_view_matches"]
    assert canonical_json(rebuild(frames)) == canonical_json(rebuild(replay_frames(replay)))


def test_changes_are_small_appends_where_lists_only_grow(replay) -> None:
    frames = replay_frames(replay)
    assert all("board" not in change.get("set", {}) for change in frames["changes"])
    grows = "history" if replay["game"].startswith("piranha") else "discard"
    assert any(grows in change.get("append", {}) for change in frames["changes"])
    assert len(json.dumps(frames)) < len(json.dumps([public(s["decisions"][0]["view"]) for s in replay["steps"]]))


def test_view_changes_sets_appends_and_unsets() -> None:
    before = {"a": 1, "log": [1, 2], "gone": True, "same": [1]}
    after = {"a": 2, "log": [1, 2, 3], "same": [1], "new": None}
    assert view_changes(before, after) == {"set": {"a": 2, "new": None}, "append": {"log": [3]}, "unset": ["gone"]}
    assert view_changes(after, after) == {}
    assert view_changes({"log": [1, 2]}, {"log": [2]}) == {"set": {"log": [2]}}


def test_steps_list_every_decision_with_its_commitment_and_only_the_kind_of_a_fault(replay) -> None:
    doc = copy.deepcopy(replay)
    doc["steps"][0]["decisions"][0]["fault"] = {"kind": "timeout", "message": "said SECRET", "latency_ms": 1.0,
                                                "excerpt": "SECRET"}
    steps = replay_steps(doc)
    assert [len(s["decisions"]) for s in steps] == [len(s["decisions"]) for s in doc["steps"]]
    assert steps[0]["decisions"][0]["fault"] == "timeout" and "SECRET" not in json.dumps(steps)
    first = doc["steps"][0]["decisions"][0]
    assert steps[0]["decisions"][0]["commitment"] == first["commitment"]
    assert steps[0]["decisions"][0]["action"] == first["action"]


def scripted_replay(game_name: str, players: int, seed: int, params: dict, script: list[dict]) -> dict:
    """A replay document of a match played by ``script`` (the fields replay_frames reads), as JSON stores it."""
    game = get_game(game_name)
    state = game.initial_state(players, seed, params)
    steps = []
    for turn, actions in enumerate(script, start=1):
        steps.append({"turn": turn, "decisions": [
            {"seat": seat, "decision": game.decision(state, seat), "view": game.view(state, seat), "action": action,
             "commitment": "-"} for seat, action in sorted(actions.items())]})
        state = game.apply(state, actions)
    doc = {"game": game_name, "engine_version": game.spec.engine_version, "players": [f"p{i}" for i in range(players)],
           "seed": seed, "params": params, "steps": steps, "final_view": game.public_view(state)}
    return json.loads(json.dumps(doc))


def test_regression_the_final_frame_showed_the_scored_logs_still_held() -> None:
    """Issue 22: the game-ending round's exchange sends the logs back to the supply, and the replay's final
    frame shows it (replay_boards.js prints view.stones per seat and view.supply)."""
    script = [{3: None}, {0: "S3", 1: "N1", 2: "S2", 3: "W2"}, {2: [10, 1]}, {0: None},
              {0: "E2", 1: "S3", 2: "S1", 3: "W3"}, {2: [0, 6]}]
    doc = scripted_replay("piranha-pedro-ko-advanced", 4, 0, {"barrels": [{"effect": "keep"}] * 27}, script)
    frames = replay_frames(doc)
    assert frames["source"] == "engine" and frames["final_view_matches"]
    before_end, end = rebuild(frames)[-2:]
    assert (before_end["phase"], before_end["stones"], before_end["supply"]) == ("take_piranha", [4, 2, 5, 5], 66)
    assert before_end["kept_barrels"] == [0, 1, 0, 0]
    assert end["phase"] == "over" and end["stones"] == [0, 0, 0, 0] and end["supply"] == 82
    assert end["kept_barrels"] == [0, 0, 0, 0] and len(end["board_stones"]) == 8
    assert end["scores"] == end["result"]["scores"] == [8, 9, 0, 11] and end["result"]["ranks"] == [3, 2, 4, 1]
    assert frames["changes"][-1]["set"]["stones"] == [0, 0, 0, 0] and frames["changes"][-1]["set"]["supply"] == 82
    old = copy.deepcopy(doc)
    old["engine_version"] = "0-retired"
    assert canonical_json(rebuild(replay_frames(old))) == canonical_json(rebuild(frames))

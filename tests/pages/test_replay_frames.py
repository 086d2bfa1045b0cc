"""The replay viewer's data: the public view after every step, recomputed by the engine, equals what
the acting seats were sent minus their private fields; the fallback for replays the engine cannot
re-run gives the same frames; per-step changes rebuild every frame."""

from __future__ import annotations

import copy
import json

import pytest

from arena.web.pages.replay_data import PRIVATE_VIEW_KEYS, replay_frames, replay_steps, view_changes
from referee.commitments import canonical_json
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

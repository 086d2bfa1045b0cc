"""Every fault kind, provoked by a deliberately broken bot on loopback: recorded, and the match ends."""

from __future__ import annotations

import json
import time

import pytest

from referee.faults import FaultKind
from referee.protocol import TimeControls
from referee.replay import verify_replay
from referee.runner import BotSpec, play_match
from tests import bot_zoo

FAST = TimeControls(decision_ms=150, start_ms=500, strike_limit=3)

CASES = [
    ("silent", bot_zoo.on_act(bot_zoo.silent), FaultKind.TIMEOUT),
    ("late", bot_zoo.on_act(bot_zoo.late(0.4)), FaultKind.TIMEOUT),
    ("drip", bot_zoo.on_act(bot_zoo.drip(0.02)), FaultKind.TIMEOUT),
    ("huge", bot_zoo.on_act(bot_zoo.huge), FaultKind.TOO_LARGE),
    ("huge_undeclared", bot_zoo.on_act(bot_zoo.huge_undeclared), FaultKind.TOO_LARGE),
    ("garbage", bot_zoo.on_act(bot_zoo.garbage), FaultKind.BAD_JSON),
    ("wrong_shape", bot_zoo.on_act(bot_zoo.wrong_shape), FaultKind.WRONG_SHAPE),
    ("illegal", bot_zoo.on_act(bot_zoo.illegal), FaultKind.ILLEGAL),
    ("wrong_turn", bot_zoo.on_act(bot_zoo.wrong_turn), FaultKind.WRONG_TURN),
    ("500", bot_zoo.on_act(bot_zoo.status(500)), FaultKind.HTTP_STATUS),
    ("404", bot_zoo.on_act(bot_zoo.status(404)), FaultKind.HTTP_STATUS),
    ("302", bot_zoo.on_act(bot_zoo.status(302, "Location: http://10.0.0.1/act\r\n")), FaultKind.HTTP_STATUS),
    ("302_with_huge_body", bot_zoo.on_act(bot_zoo.huge_redirect), FaultKind.HTTP_STATUS),
    ("close_mid_body", bot_zoo.on_act(bot_zoo.close_mid_body), FaultKind.CONNECTION),
    ("hang_up", bot_zoo.on_act(bot_zoo.hang_up), FaultKind.CONNECTION),
]


def _play(url: str, other_url: str, game: str = "piranha-pedro", tc: TimeControls = FAST) -> dict:
    return play_match(game, [BotSpec(url, name="zoo"), BotSpec(other_url, name="random")], seed=3,
                      time_controls=tc)


@pytest.mark.parametrize(("label", "behaviour", "kind"), CASES, ids=[c[0] for c in CASES])
def test_each_fault_is_recorded_and_the_match_still_ends(label, behaviour, kind, random_bots) -> None:
    with bot_zoo.zoo_bot(behaviour) as zoo:
        replay = _play(zoo.url, random_bots[0].url)
    act_faults = [f for f in replay["faults"] if f["path"] == "/act"]
    assert act_faults and {f["kind"] for f in act_faults} == {kind}, act_faults
    assert all(f["seat"] == 0 for f in act_faults), act_faults  # (the random bot timed out once, in CI)
    # three strikes and the bot forfeits: worst placing, the match still ends for the other seat
    assert len(act_faults) == 3
    assert replay["result"]["forfeited"] == [0]
    assert replay["result"]["ranks"] == [2, 1]
    faulty = [d for s in replay["steps"] for d in s["decisions"] if d["fault"]]
    assert all(d["default"] for d in faulty)
    report = verify_replay(json.loads(json.dumps(replay)))
    assert report.ok, report.summary()


def test_a_redirect_is_never_followed(random_bots) -> None:
    with bot_zoo.zoo_bot(bot_zoo.polite) as target:
        redirect = bot_zoo.status(302, f"Location: {target.url}/act\r\n")
        with bot_zoo.zoo_bot(bot_zoo.on_act(redirect)) as zoo:
            replay = _play(zoo.url, random_bots[0].url)
        assert "/act" not in target.paths()
    fault = next(f for f in replay["faults"] if f["path"] == "/act")
    assert "not followed" in fault["message"]


def test_a_bot_that_cannot_be_reached_at_start_forfeits_at_once(random_bots) -> None:
    replay = _play(f"http://127.0.0.1:{bot_zoo.closed_port()}", random_bots[0].url)
    assert [f["kind"] for f in replay["faults"]] == ["connection_error"]
    assert replay["faults"][0]["path"] == "/start"
    assert replay["result"]["forfeited"] == [0] and replay["result"]["ranks"] == [2, 1]
    assert all(d.get("forfeited") for s in replay["steps"] for d in s["decisions"] if d["seat"] == 0)


def test_failing_start_or_end_is_recorded_without_forfeit(random_bots) -> None:
    def broken_start_and_end(req, sock):
        if req.path in ("/start", "/end"):
            bot_zoo.status(500)(req, sock)
        else:
            bot_zoo.polite(req, sock)

    with bot_zoo.zoo_bot(broken_start_and_end) as zoo:
        replay = _play(zoo.url, random_bots[0].url, tc=TimeControls(decision_ms=300, strike_limit=3))
    paths = [(f["path"], f["kind"]) for f in replay["faults"]]
    assert ("/start", "http_status") in paths and ("/end", "http_status") in paths
    assert replay["result"]["forfeited"] == []


def test_strike_limit_zero_never_forfeits(random_bots) -> None:
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.garbage)) as zoo:
        replay = _play(zoo.url, random_bots[0].url, tc=TimeControls(decision_ms=200, strike_limit=0))
    decisions = [d for s in replay["steps"] for d in s["decisions"] if d["seat"] == 0]
    assert all(d["fault"]["kind"] == "bad_json" for d in decisions)
    assert replay["result"]["forfeited"] == []


def test_the_time_bank_absorbs_overruns_then_runs_out(random_bots) -> None:
    """Kaggle style: overruns of the per-decision limit draw down the bank; past it, a timeout."""
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.late(0.15))) as zoo:
        tc = TimeControls(decision_ms=100, time_bank_ms=260, strike_limit=0)
        replay = _play(zoo.url, random_bots[0].url, tc=tc)
        banks = [r.json()["time_bank_ms"] for r in zoo.requests if r.path == "/act"]
    decisions = [d for s in replay["steps"] for d in s["decisions"] if d["seat"] == 0]
    kinds = [d["fault"]["kind"] if d["fault"] else None for d in decisions]
    # each answer overruns by ~50 ms: the 260 ms bank covers the first few, then every call times out
    assert kinds[0] is None and kinds[1] is None
    assert "timeout" in kinds
    first_timeout = kinds.index("timeout")
    assert all(k == "timeout" for k in kinds[first_timeout:])
    assert banks[0] == 260 and banks == sorted(banks, reverse=True) and banks[-1] < 60


def test_a_silent_bot_costs_the_limit_and_no_more(random_bots) -> None:
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.silent)) as zoo:
        t0 = time.perf_counter()
        replay = _play(zoo.url, random_bots[0].url, tc=TimeControls(decision_ms=200, strike_limit=2))
        elapsed = time.perf_counter() - t0
    timeouts = [f for f in replay["faults"] if f["kind"] == "timeout"]
    assert len(timeouts) == 2
    assert all(195 <= f["latency_ms"] <= 400 for f in timeouts)
    assert elapsed < 5


@pytest.mark.parametrize("status", [200, 204])
def test_empty_2xx_to_start_or_end_counted_as_bad_json(status, random_bots) -> None:
    """docs/protocol.md: any 2xx with an empty or JSON body answers /start and /end; only a body that
    is there and is not JSON is a bad_json fault (and an empty /act answer still is)."""

    def empty_start_and_end(req, sock):
        if req.path in ("/start", "/end"):
            sock.sendall(bot_zoo.http_response(status, b"" if status == 204 else b" \r\n"))
        else:
            bot_zoo.polite(req, sock)

    def text_start(req, sock):
        if req.path == "/start":
            sock.sendall(bot_zoo.http_response(200, b"OK"))
        else:
            bot_zoo.polite(req, sock)

    with bot_zoo.zoo_bot(empty_start_and_end) as zoo:
        replay = _play(zoo.url, random_bots[0].url, tc=TimeControls(decision_ms=300, strike_limit=1))
        assert {"/start", "/end"} <= set(zoo.paths())
    assert replay["faults"] == [] and replay["result"]["forfeited"] == []
    with bot_zoo.zoo_bot(text_start) as zoo:
        replay = _play(zoo.url, random_bots[0].url, tc=TimeControls(decision_ms=300, strike_limit=3))
    assert [(f["path"], f["kind"]) for f in replay["faults"]] == [("/start", "bad_json")]
    with bot_zoo.zoo_bot(bot_zoo.on_act(lambda req, sock: sock.sendall(bot_zoo.http_response(200, b"")))) as zoo:
        replay = _play(zoo.url, random_bots[0].url)
    assert {f["kind"] for f in replay["faults"] if f["path"] == "/act"} == {"bad_json"}

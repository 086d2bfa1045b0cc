"""The fence: once the claim on a match may be over, no call of the match goes on or starts."""

from __future__ import annotations

import time

import pytest

from referee.fence import Fence, FenceCrossed
from referee.protocol import TimeControls
from referee.runner import BotSpec, play_match
from tests import bot_zoo

PATIENT = TimeControls(decision_ms=3000, start_ms=3000, strike_limit=3)


def test_a_call_in_flight_when_the_fence_is_crossed_is_cut_then_not_at_its_deadline(random_bots) -> None:
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.silent)) as zoo:
        started = time.perf_counter()
        fence = Fence(started + 0.4)
        with pytest.raises(FenceCrossed):
            play_match("piranha-pedro", [BotSpec(zoo.url), BotSpec(random_bots[0].url)], seed=3,
                       time_controls=PATIENT, fence=fence)
        elapsed = time.perf_counter() - started
    assert fence.crossed
    assert "/act" in zoo.paths()  # the silent bot was being asked when the fence came
    assert elapsed < 1.5, f"the call ran on for {elapsed:.2f} s, towards its 3 s deadline"


def test_no_request_is_written_once_the_fence_is_crossed() -> None:
    fence = Fence(time.perf_counter() + 60)
    fence.abort()  # the owner learnt its claim is gone
    with bot_zoo.zoo_bot(bot_zoo.polite) as first, bot_zoo.zoo_bot(bot_zoo.polite) as second:
        with pytest.raises(FenceCrossed):
            play_match("piranha-pedro", [BotSpec(first.url), BotSpec(second.url)], seed=3, time_controls=PATIENT,
                       fence=fence)
        assert first.paths() == [] and second.paths() == []  # not even /start
    fence.close()


def test_a_fence_moved_forward_in_time_cuts_nothing(random_bots) -> None:
    fence = Fence(time.perf_counter() + 0.2)
    fence.move(time.perf_counter() + 60)
    time.sleep(0.4)
    assert not fence.crossed
    replay = play_match("piranha-pedro", [BotSpec(bot.url) for bot in random_bots[:2]], seed=3, fence=fence)
    fence.close()
    assert replay["faults"] == []


def test_a_closed_fence_is_never_crossed() -> None:
    fence = Fence(time.perf_counter() + 0.1)
    fence.close()
    time.sleep(0.3)
    assert not fence.crossed
    fence.hold()


def test_a_fence_whose_time_is_already_past_is_crossed() -> None:
    fence = Fence(time.perf_counter() - 1)
    deadline = time.perf_counter() + 2
    while not fence.crossed and time.perf_counter() < deadline:
        time.sleep(0.01)
    assert fence.crossed
    with pytest.raises(FenceCrossed):
        fence.hold()
